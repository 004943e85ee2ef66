package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// loopbackUp brings up the namespace's loopback interface, so that a
// command may still serve and reach itself on 127.0.0.1 (the init drops
// every capability after it; the caller has locked its thread, which starts
// the command).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring up lo: %w", err)
	}
	defer unix.Close(fd)
	req, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bring up lo: %w", err)
	}
	req.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, req); err != nil {
		return fmt.Errorf("bring up lo: %w", err)
	}
	return nil
}
