package script

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// holdServer serves WebSockets that stay open, doing nothing, until
// release is closed; open counts the sessions it holds.
func holdServer(b *testing.B) (url string, open *atomic.Int64, release chan struct{}) {
	open, release = &atomic.Int64{}, make(chan struct{})
	up := websocket.Upgrader{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		open.Add(1)
		<-release
		_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		_ = c.Close()
	})}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "ws://" + ln.Addr().String(), open, release
}

// inUse is the live heap and goroutine stacks, after a GC.
func inUse() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc + m.StackInuse)
}

// waitFor polls cond (a benchmark's wait, not a test's assertion).
func waitFor(b *testing.B, what string, cond func() bool) {
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("timed out waiting for %s", what)
		}
	}
}

// BenchmarkWebSocketSessions holds 1 000 WebSocket sessions that one VU
// opened (k6/websockets) and reports the memory they take per session:
// KiB/session is the script's sessions with the loopback server's side
// of each (one process); KiB/raw-pair is the same server with bare
// gorilla/websocket clients, so the difference is what a scripted
// session adds.
func BenchmarkWebSocketSessions(b *testing.B) {
	const n = 1000
	for range b.N {
		url, open, release := holdServer(b)
		path := writeScriptB(b, "hold.js", `
import { WebSocket } from 'k6/websockets';
export const options = { iterations: 1 };
export default function () {
  for (let i = 0; i < `+strconv.Itoa(n)+`; i++) new WebSocket(__ENV.BASE);
}
`)
		r, err := Load(path, Config{Env: map[string]string{"BASE": url}})
		if err != nil {
			b.Fatal(err)
		}
		before := inUse()
		done := make(chan error, 1)
		go func() {
			_, err := r.Run(context.Background())
			done <- err
		}()
		sessions := func() uint64 {
			for _, m := range r.Metrics() {
				if m.Name == "ws_sessions" {
					return m.Stats().Count
				}
			}
			return 0
		}
		waitFor(b, "the script's sessions", func() bool { return open.Load() == n && sessions() == n })
		b.ReportMetric((inUse()-before)/n/1024, "KiB/session")
		close(release)
		if err := <-done; err != nil {
			b.Fatal(err)
		}

		url, open, release = holdServer(b)
		before = inUse()
		conns := make([]*websocket.Conn, 0, n)
		for range n {
			c, _, err := websocket.DefaultDialer.Dial(url, nil)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
		}
		waitFor(b, "the raw sessions", func() bool { return open.Load() == n })
		b.ReportMetric((inUse()-before)/n/1024, "KiB/raw-pair")
		close(release)
		for _, c := range conns {
			_ = c.Close()
		}
	}
}
