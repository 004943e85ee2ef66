package sandbox

import (
	"fmt"
	"io"
	"net"
	"strconv"

	"golang.org/x/sys/unix"
)

// loopbackUp brings up the loopback interface of the command's network
// namespace — the only interface it has — so that a command may still
// reach itself on 127.0.0.1, and the proxy's relay be reached there.
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

// relay serves the model proxy inside the command's network namespace:
// every connection to 127.0.0.1:port is passed, byte for byte, to the
// proxy's unix socket, which the view holds at socket. It is the
// command's one way out of its namespace, and it leads to the proxy alone.
// The relay runs on the init's other threads until the init ends.
func relay(port int, socket string) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("relay the model proxy to 127.0.0.1:%d: %w", port, err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go pipe(c, socket)
		}
	}()
	return nil
}

// pipe copies a connection to the proxy's socket and back until either
// side closes.
func pipe(c net.Conn, socket string) {
	defer c.Close()
	up, err := net.Dial("unix", socket)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(up, c)
		up.(*net.UnixConn).CloseWrite()
		close(done)
	}()
	io.Copy(c, up)
	c.(*net.TCPConn).CloseWrite()
	<-done
}
