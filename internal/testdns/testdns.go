// Package testdns gives tests a resolver that never leaves the machine: a
// DNS server on loopback that answers every question "no such name"
// (NXDOMAIN). A test of what throttle does with a name that does not
// resolve then sends no query to the machine's configured nameserver, which
// may be anywhere on the network.
package testdns

import (
	"context"
	"net"
	"testing"
)

// Resolver returns a resolver whose every lookup is answered by a loopback
// server with NXDOMAIN (names in /etc/hosts still resolve, as with any Go
// resolver). The server stops when the test ends.
func Resolver(t testing.TB) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go serve(pc)
	addr := pc.LocalAddr().String()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", addr)
		},
	}
}

// serve answers each query with its own header and question and rcode 3
// (NXDOMAIN), until pc is closed.
func serve(pc net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if n < 12 {
			continue // not a DNS message
		}
		q := buf[:n]
		q[2] = 0x80 | q[2]&0x01 // QR set, opcode 0, RD copied
		q[3] = 0x80 | 0x03      // RA set, rcode NXDOMAIN
		// One question stays; no answer, authority or additional records
		// (an EDNS OPT record in the query is dropped with the rest).
		q[6], q[7], q[8], q[9], q[10], q[11] = 0, 0, 0, 0, 0, 0
		end := questionEnd(q)
		if end < 0 {
			continue
		}
		_, _ = pc.WriteTo(q[:end], from)
	}
}

// questionEnd returns where the first question of message m ends (its
// name, type and class), or -1 when m is malformed.
func questionEnd(m []byte) int {
	i := 12
	for i < len(m) {
		l := int(m[i])
		if l == 0 {
			i++
			if i+4 > len(m) {
				return -1
			}
			return i + 4
		}
		if l&0xC0 != 0 {
			return -1 // a query's name is never compressed
		}
		i += 1 + l
	}
	return -1
}
