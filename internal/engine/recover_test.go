package engine

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/target"
)

// lockedBuf is a log sink several workers write to.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A Go panic in the URL engine's request path (a bug of throttle's) fails
// that attempt, class other, is logged once with where it happened and
// counted; the workers go on and the run ends with its result, every
// attempt accounted for.
func TestRequestPanicRecovered(t *testing.T) {
	var n atomic.Int64
	attemptHook = func(*Request) {
		if n.Add(1)%3 == 0 {
			var m map[string]int
			m["boom"]++ // a nil map: a runtime panic, as a real bug makes
		}
	}
	t.Cleanup(func() { attemptHook = nil })
	for _, tr := range append(transports, struct {
		name  string
		http2 bool
	}{TransportEvLoop, false}) {
		t.Run(tr.name, func(t *testing.T) {
			_, tgts := builtin(t, target.NewConfig(1000))
			buf := &lockedBuf{}
			l, ev := fastLimits(governor.Rate, 100, 100), tr.name == TransportEvLoop
			if ev {
				l = fastLimits(governor.Concurrency, 2, 2) // the loop runs a closed loop
			}
			transport := TransportFastHTTP
			if ev {
				transport = TransportEvLoop
			}
			e, err := New(Config{Targets: tgts, Limits: l, Fixed: true, MaxVUs: 4, Duration: 500 * time.Millisecond,
				Tick: 50 * time.Millisecond, HTTP2: tr.http2, Transport: transport, Logger: slog.New(slog.NewTextHandler(buf, nil))})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			c := res.Counts
			if ev && res.Transport != TransportEvLoop {
				t.Fatalf("transport %s", res.Transport)
			}
			if res.Panics == 0 || c.Classes[ClassOther] != uint64(res.Panics) || c.OK == 0 || c.Started != c.OK+c.Failed+c.Aborted {
				t.Fatalf("panics %d, counts %+v: want every panic an attempt of class other, the others ok, all accounted for", res.Panics, c)
			}
			logged := buf.String()
			if strings.Count(logged, "Go panic") != 1 || !strings.Contains(logged, "in a request") ||
				!strings.Contains(logged, "recover_test.go") || !strings.Contains(logged, "assignment to entry in nil map") {
				t.Fatalf("want the panic logged once with its site and value, got:\n%s", logged)
			}
		})
	}
}
