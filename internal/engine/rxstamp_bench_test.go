//go:build linux

package engine

import (
	"net"
	"testing"
)

// BenchmarkRxRecv is one 200-byte answer over a loopback TCP connection,
// written and read back on one goroutine, both as raw system calls: read
// (as without the stamps) against rxReader's recvmsg on a connection
// not stamped and on a stamped one, so the differences are recvmsg's own
// price and the stamps' (the clock reading per packet, the control
// message). Run each in a process of its own: once a socket asks for
// stamps the kernel stamps every packet (rxKeyOn).
func BenchmarkRxRecv(b *testing.B) {
	for _, c := range []struct {
		name             string
		recvmsg, stamped bool
	}{{"read", false, false}, {"recvmsg", true, false}, {"recvmsg-stamped", true, true}} {
		stamped := c.stamped
		b.Run(c.name, func(b *testing.B) {
			fd, srv := loopbackPair(b, stamped)
			sc, _ := srv.(*net.TCPConn).SyscallConn()
			var sfd int
			sc.Control(func(f uintptr) { sfd = int(f) })
			answer, buf := make([]byte, 200), make([]byte, 4096)
			var rx rxReader
			var stamps int
			b.ResetTimer()
			for range b.N {
				if _, err := rawWrite(sfd, answer); err != nil {
					b.Fatal(err)
				}
				var (
					n   int
					err error
				)
				if c.recvmsg {
					var st int64
					n, st, err = rx.recv(fd, buf)
					if st != 0 {
						stamps++
					}
				} else {
					n, err = rawRead(fd, buf)
				}
				if err != nil || n != len(answer) {
					b.Fatalf("read %d, %v", n, err)
				}
			}
			b.StopTimer()
			if stamped && stamps < b.N/2 {
				b.Fatalf("%d stamped reads of %d", stamps, b.N)
			}
		})
	}
}
