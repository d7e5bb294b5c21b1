package engine

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// BenchmarkRawDial is one request per new connection on the raw transport,
// as a script with noConnectionReuse makes them (Connection: close): the
// connect's own cost, on top of a loopback round trip. The server answers
// each connection in its accept loop with one buffer; allocs/op includes
// its accept (a net.Conn and its addresses, the same on every branch).
func BenchmarkRawDial(b *testing.B) {
	ln := serveClose(b)
	// A phase's abort, as a script run has it: a context that can be
	// cancelled, so each dial's hooks register with it.
	abort, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := NewDriver(DriverConfig{Abort: abort, Meter: NewMeter(), RawHTTP: true, Timeout: 5 * time.Second, Failed: scriptFailed})
	if err != nil {
		b.Fatal(err)
	}
	if d.Transport() != TransportRaw {
		b.Fatalf("transport %s, want %s", d.Transport(), TransportRaw)
	}
	r := d.Runner()
	defer func() { r.Close(); d.Close() }()
	req := Request{URL: "http://" + ln.Addr().String() + "/", Header: http.Header{"Connection": {"close"}}}
	var res Response
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res = Response{}
		if r.Iterate(&req, time.Time{}, &res); res.Err != nil || res.Status != 200 || res.Timings.Connecting == 0 {
			b.Fatalf("status %d, err %v, connecting %v", res.Status, res.Err, res.Timings.Connecting)
		}
	}
}

// serveClose answers every request on a loopback listener with "ok" and
// closes the connection, one connection at a time; it stops at cleanup.
func serveClose(b *testing.B) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 4096)
		crlf2 := []byte("\r\n\r\n")
		answer := []byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			have := 0
			for !bytes.Contains(buf[:have], crlf2) && have < len(buf) {
				n, err := c.Read(buf[have:])
				if err != nil {
					break
				}
				have += n
			}
			c.Write(answer)
			c.Close()
		}
	}()
	b.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln
}
