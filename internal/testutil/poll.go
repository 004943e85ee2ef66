// Package testutil holds what proctor's tests share across packages: waiting
// for something that happens in the background, and building the test
// agents.
package testutil

import (
	"testing"
	"time"
)

// Eventually polls cond every 20 ms until it holds, and fails the test,
// saying what never happened, when it does not within the given time.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
