package model

import (
	"context"
	"time"
)

// NewClientSleeping is NewClient with its waits between attempts handed to
// sleep, so a test sees them without taking them.
func NewClientSleeping(endpoint Endpoint, retry RetryPolicy, record Recorder, sleep func(context.Context, time.Duration) error) *Client {
	c := NewClient(endpoint, retry, record)
	c.sleep = sleep
	return c
}
