package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// directTo connects to addr with connectDirect, as the raw transport's
// first request to a literal IPv4 address does.
func directTo(t *testing.T, addr string, deadline time.Time) (net.Conn, error) {
	t.Helper()
	ap := netip.MustParseAddrPort(addr)
	h := &rawHost{addr: addr, literal: true, direct: newDirect(ap)}
	if h.direct == nil {
		t.Fatalf("%s is not dialled directly", addr)
	}
	c := &rawConn{s: &fastShared{abort: context.Background(), rxStamp: true}}
	sc, err := c.connectDirect(h, context.Background(), deadline)
	if err != nil {
		return nil, err
	}
	return sc, nil
}

// same is an error's text with the connection's addresses named, so that
// two connections' errors compare.
func same(err error, c net.Conn) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	if a := c.LocalAddr(); a != nil {
		s = strings.ReplaceAll(s, a.String(), "LOCAL")
	}
	return s
}

// A connection connectDirect made behaves as net's *net.TCPConn to the
// same server: its options, its addresses, and the errors of each
// operation — their texts, their net.OpError operation, and the errno,
// deadline, EOF and closed errors the classes are read from — side by
// side with one net.Dial made.
func TestSockConnLikeNet(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	addr := ln.Addr().String()
	mk := map[string]func() (net.Conn, net.Conn){
		"net": func() (net.Conn, net.Conn) {
			c, err := (&net.Dialer{KeepAlive: 30 * time.Second}).Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			return c, testwait.Receive(t, accepted, "the server's side")
		},
		"direct": func() (net.Conn, net.Conn) {
			c, err := directTo(t, addr, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			return c, testwait.Receive(t, accepted, "the server's side")
		},
	}
	type step struct {
		name string
		do   func(c, peer net.Conn) error
	}
	buf := make([]byte, 64)
	steps := []step{
		{"options", func(c, _ net.Conn) error {
			rc, err := c.(syscall.Conn).SyscallConn()
			if err != nil {
				return err
			}
			var got []int
			rc.Control(func(fd uintptr) {
				for _, o := range [][2]int{{syscall.IPPROTO_TCP, syscall.TCP_NODELAY}, {syscall.SOL_SOCKET, syscall.SO_KEEPALIVE},
					{syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE}, {syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL}, {syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT}} {
					v, _ := syscall.GetsockoptInt(int(fd), o[0], o[1])
					got = append(got, v)
				}
			})
			return fmt.Errorf("options %v", got)
		}},
		{"addresses", func(c, peer net.Conn) error {
			if c.RemoteAddr().String() != addr || c.LocalAddr().String() != peer.RemoteAddr().String() {
				return errors.New("wrong addresses " + c.LocalAddr().String() + " " + c.RemoteAddr().String())
			}
			return errors.New(c.LocalAddr().Network() + " " + c.RemoteAddr().Network())
		}},
		{"write and read", func(c, peer net.Conn) error {
			if _, err := c.Write([]byte("ping")); err != nil {
				return err
			}
			if _, err := io.ReadFull(peer, buf[:4]); err != nil {
				t.Fatal(err)
			}
			peer.Write([]byte("pong"))
			n, err := io.ReadFull(c, buf[:4])
			if string(buf[:n]) != "pong" {
				t.Fatalf("read %q", buf[:n])
			}
			return err
		}},
		// more than the socket's buffers hold: the write waits in the
		// poller for room and goes on where it stopped
		{"large write", func(c, peer net.Conn) error {
			big := make([]byte, 8<<20)
			for i := range big {
				big[i] = byte(i % 251)
			}
			got := make(chan []byte, 1)
			go func() {
				b := make([]byte, len(big))
				n, _ := io.ReadFull(peer, b)
				got <- b[:n]
			}()
			n, err := c.Write(big)
			if b := testwait.Receive(t, got, "the peer's read"); n != len(big) || string(b) != string(big) {
				t.Fatalf("wrote %d of %d, the peer read %d, same bytes: %v", n, len(big), len(b), string(b) == string(big))
			}
			return err
		}},
		// the peer reads nothing: the write fills the buffers and times out
		{"write deadline", func(c, _ net.Conn) error {
			c.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
			n, err := c.Write(make([]byte, 64<<20))
			c.SetWriteDeadline(time.Time{})
			if n <= 0 || n >= 64<<20 {
				t.Errorf("a write that timed out wrote %d bytes", n)
			}
			return err
		}},
		{"read deadline", func(c, _ net.Conn) error {
			c.SetReadDeadline(time.Now().Add(time.Millisecond))
			_, err := c.Read(buf)
			c.SetReadDeadline(time.Time{})
			return err
		}},
		{"raw read deadline", func(c, _ net.Conn) error {
			rc, _ := c.(syscall.Conn).SyscallConn()
			c.SetReadDeadline(time.Now().Add(time.Millisecond))
			err := rc.Read(func(uintptr) bool { return false })
			c.SetReadDeadline(time.Time{})
			return err
		}},
		{"reset by the peer", func(c, peer net.Conn) error {
			peer.(*net.TCPConn).SetLinger(0)
			peer.Close()
			_, err := c.Read(buf)
			return err
		}},
		{"write after reset", func(c, _ net.Conn) error {
			_, err := c.Write([]byte("x"))
			return err
		}},
		{"close", func(c, _ net.Conn) error { return c.Close() }},
		{"close again", func(c, _ net.Conn) error { return c.Close() }},
		{"read after close", func(c, _ net.Conn) error { _, err := c.Read(buf); return err }},
		{"write after close", func(c, _ net.Conn) error { _, err := c.Write(buf); return err }},
		{"deadline after close", func(c, _ net.Conn) error { return c.SetDeadline(time.Now()) }},
		{"raw read after close", func(c, _ net.Conn) error {
			rc, _ := c.(syscall.Conn).SyscallConn()
			return rc.Read(func(uintptr) bool { return true })
		}},
	}
	got := map[string][]error{}
	texts := map[string][]string{}
	for _, kind := range []string{"net", "direct"} {
		c, peer := mk[kind]()
		for _, s := range steps {
			err := s.do(c, peer)
			got[kind] = append(got[kind], err)
			texts[kind] = append(texts[kind], same(err, c))
		}
		peer.Close()
	}
	for i, s := range steps {
		n, d := got["net"][i], got["direct"][i]
		t.Logf("%s: %s", s.name, texts["direct"][i])
		if texts["net"][i] != texts["direct"][i] {
			t.Errorf("%s: net %q, direct %q", s.name, texts["net"][i], texts["direct"][i])
		}
		var no, do *net.OpError
		if errors.As(n, &no) != errors.As(d, &do) || no != nil && (no.Op != do.Op || no.Timeout() != do.Timeout()) {
			t.Errorf("%s: net %#v, direct %#v", s.name, n, d)
		}
		for _, target := range []error{io.EOF, os.ErrDeadlineExceeded, net.ErrClosed, syscall.ECONNRESET, syscall.EPIPE} {
			if errors.Is(n, target) != errors.Is(d, target) {
				t.Errorf("%s: errors.Is(%v): net %v, direct %v", s.name, target, errors.Is(n, target), errors.Is(d, target))
			}
		}
		if errClass(n) != errClass(d) && n != nil {
			t.Errorf("%s: class net %v, direct %v", s.name, errClass(n), errClass(d))
		}
	}
}

// A connect connectDirect makes fails as net's dial does: refused, and
// timed out at its deadline, with net's texts and classes.
func TestSockConnConnectErrorsLikeNet(t *testing.T) {
	for _, c := range []struct {
		name string
		addr func(*testing.T) string
	}{
		{"refused", func(t *testing.T) string {
			return strings.TrimSuffix(strings.TrimPrefix(refusedURL(t), "http://"), "/")
		}},
		{"timed out", func(t *testing.T) string {
			return strings.TrimSuffix(strings.TrimPrefix(fullBacklog(t), "http://"), "/")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := c.addr(t)
			deadline := time.Now().Add(100 * time.Millisecond)
			_, nerr := (&net.Dialer{Deadline: deadline}).Dial("tcp", addr)
			_, derr := directTo(t, addr, time.Now().Add(100*time.Millisecond))
			if nerr == nil || derr == nil || nerr.Error() != derr.Error() || errClass(nerr) != errClass(derr) ||
				errorCode(nerr, errClass(nerr)) != errorCode(derr, errClass(derr)) {
				t.Errorf("net %v, direct %v", nerr, derr)
			}
		})
	}
}
