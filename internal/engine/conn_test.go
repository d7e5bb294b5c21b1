package engine

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/targets"
)

// rawServe answers every request on loopback with the bytes reply, closing
// the connection after each response when closeAfter is set. It returns
// the target and a count of the requests it read.
func rawServe(t *testing.T, reply string, closeAfter bool) ([]targets.Target, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					n.Add(1)
					if _, err := io.WriteString(c, reply); err != nil || closeAfter {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	u, _ := url.Parse("http://" + ln.Addr().String() + "/")
	return []targets.Target{{Method: "GET", URL: u, Header: http.Header{}}}, &n
}

// A worker's own connection reads every framing a server may use, drops a
// connection the server closes, and sends a GET again when the server had
// closed a kept connection before answering: none of it is the target's
// failure.
func TestConnFraming(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		reply      string
		closeAfter bool
		head       bool
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n", false, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nok\n\r\n0\r\n\r\n", false, false},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nok\n", true, false},
		{"until close", "HTTP/1.0 200 OK\r\n\r\nok\n", true, false},
		{"closed while kept", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n", true, false},
		{"interim 100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n", false, false},
		{"head", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tgts, n := rawServe(t, tc.reply, tc.closeAfter)
			if tc.head {
				tgts[0].Method = "HEAD"
			}
			res := run(t, Config{Targets: tgts, Limits: fastLimits(governor.Concurrency, 2, 2), Fixed: true, Duration: 100 * time.Millisecond, Timeout: 2 * time.Second})
			c := res.Counts
			if c.OK == 0 || c.Failed != 0 || c.Aborted != 0 {
				t.Fatalf("counts %+v: every attempt must succeed", c)
			}
			if got := n.Load(); got < int64(c.OK) {
				t.Errorf("server read %d requests, engine counted %d ok", got, c.OK)
			}
		})
	}
}

// A response cut short is the target's failure, classed reset.
func TestConnTruncated(t *testing.T) {
	t.Parallel()
	tgts, _ := rawServe(t, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok", true)
	res := run(t, Config{Targets: tgts, Limits: fastLimits(governor.Concurrency, 1, 1), Fixed: true, Duration: 100 * time.Millisecond})
	if c := res.Counts; c.Failed == 0 || c.Classes[ClassReset] != c.Failed || c.OK != 0 {
		t.Errorf("counts %+v: every attempt must fail as reset", c)
	}
}
