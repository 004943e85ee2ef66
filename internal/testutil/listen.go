package testutil

import (
	"net"
	"sync/atomic"
	"testing"
)

// Listener listens on network and address — a port of the host's loopback,
// an abstract or a pathname unix socket — until the test ends, counting in
// accepted every connection that reaches it (and closing it): a target an
// escape from a sandbox must not reach.
func Listener(t testing.TB, network, address string, accepted *atomic.Int32) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return ln
}
