package faults

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/engine"
)

// rawServer accepts connections on loopback and hands each to handle on
// its own goroutine; it closes every connection when the test ends.
func rawServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); handle(c) }()
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
	return ln.Addr().String()
}

// requests reads requests off c and calls answer for each until c fails.
func requests(c net.Conn, answer func(w *bufio.Writer) bool) {
	defer c.Close()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	for {
		req, err := http.ReadRequest(r)
		if err != nil {
			return
		}
		req.Body.Close()
		if !answer(w) || w.Flush() != nil {
			return
		}
	}
}

const okHead = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

var chunk = make([]byte, 32<<10)

// The faults, each a server (or an address) and what its attempts must be.
var faults = []struct {
	name   string
	scheme string
	addr   func(t *testing.T) string
	class  engine.Class // every attempt's class
}{
	{"latency", "http", func(t *testing.T) string {
		return rawServer(t, func(c net.Conn) {
			requests(c, func(w *bufio.Writer) bool { time.Sleep(50 * time.Millisecond); w.WriteString(okHead); return true })
		})
	}, engine.ClassOK},
	{"refused", "http", func(t *testing.T) string {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}, engine.ClassRefused},
	{"reset mid-body", "http", func(t *testing.T) string {
		return rawServer(t, func(c net.Conn) {
			requests(c, func(w *bufio.Writer) bool {
				w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
				w.Write(chunk[:1000])
				w.Flush()
				c.(*net.TCPConn).SetLinger(0) // RST, not FIN
				return false
			})
		})
	}, engine.ClassReset},
	{"half-open", "http", func(t *testing.T) string {
		// Reads the request and never answers, until the connection closes.
		return rawServer(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	}, engine.ClassTimeout},
	{"slow-loris body", "http", func(t *testing.T) string {
		return rawServer(t, func(c net.Conn) {
			requests(c, func(w *bufio.Writer) bool {
				w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
				for w.Flush() == nil {
					w.WriteByte('x')
					time.Sleep(50 * time.Millisecond)
				}
				return false
			})
		})
	}, engine.ClassTimeout},
	{"endless body", "http", func(t *testing.T) string {
		return rawServer(t, func(c net.Conn) {
			requests(c, func(w *bufio.Writer) bool {
				w.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
				for {
					w.WriteString(strconv.FormatInt(int64(len(chunk)), 16) + "\r\n")
					w.Write(chunk)
					if _, err := w.WriteString("\r\n"); err != nil {
						return false
					}
				}
			})
		})
	}, engine.ClassTimeout},
	{"2 GiB body", "http", func(t *testing.T) string {
		return rawServer(t, func(c net.Conn) {
			requests(c, func(w *bufio.Writer) bool {
				w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(2<<30) + "\r\n\r\n")
				for {
					if _, err := w.Write(chunk); err != nil {
						return false
					}
				}
			})
		})
	}, engine.ClassTimeout},
	{"TLS handshake failure", "https", func(t *testing.T) string {
		// Speaks plain HTTP where a handshake is expected.
		return rawServer(t, func(c net.Conn) { c.Write([]byte(okHead)); c.Close() })
	}, engine.ClassTLS},
	{"unresolvable name", "http", func(t *testing.T) string { return "throttle-fault.invalid:80" }, engine.ClassDNS},
}

func TestFaults(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			r := runURL(t, f.scheme+"://"+f.addr(t)+"/", 1500*time.Millisecond, 300*time.Millisecond)
			checkRun(t, r)
			// Every resolved attempt has the fault's class. On a loaded
			// machine a fault server can be slower than the attempt's
			// timeout to show its fault (to reset, to answer in plain text):
			// such an attempt is rightly a timeout. They may be a minority
			// only, so the fault's own class still has to be seen.
			c := r.res.Counts
			resolved := c.OK + c.Failed
			late := uint64(0)
			if f.class != engine.ClassTimeout {
				late = c.Classes[engine.ClassTimeout]
			}
			if resolved == 0 || c.Classes[f.class]+late != resolved || late*2 > resolved {
				t.Errorf("classes %v: want every one of %d resolved attempts %v (a minority timed out on a loaded machine at most)", c.Classes, resolved, f.class)
			}
		})
	}
}
