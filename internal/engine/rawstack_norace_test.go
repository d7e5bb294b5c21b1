//go:build !race

// Not in the race detector's build (make test runs it without): there the
// instrumented frames are half again as deep and the stack guard 1.7 KiB
// instead of 0.9, so a script VU's request needs more than 8 KiB whatever
// the transport does. The claim tested is about the build that runs load;
// TestRawConnectNoDeeperThanRequest holds in both.

package engine

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/teststack"
)

// vuDepth is how much of a script VU's goroutine stack is in use where it
// calls Runner.Iterate, rounded up: 3 096 bytes in the CLI for
// bench/vus.sh's http.get (the phase's worker loop, the VU's iteration,
// sobek's calls of the default function and of http.get,
// httpModule.request; docs/performance.md, "A request in the VU's 8 KiB
// stack").
const vuDepth = 3<<10 + 256

// A script VU's requests on the raw transport fit the 8 KiB stack a GC
// leaves a sleeping VU: its first request (the host's first dial and its
// wire request built), then keep-alive requests, and requests that dial
// every time (noConnectionReuse), with the headers kept or not. The
// runtime grows a goroutine's stack only by copying it to one twice the
// size, so a request that needs more than 8 KiB leaves every VU holding
// 16 KiB until a GC halves it again, which at 100 000 VUs is rare.
func TestRawRequestFitsVUStack(t *testing.T) {
	s := newRawServer(t, answer(nginxAnswer, true))
	abort, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		name string
		req  Request
	}{
		{"keep-alive", Request{Method: "GET", URL: s.url + "/index.html"}},
		{"keep-alive, body discarded", Request{Method: "GET", URL: s.url + "/index.html", DiscardBody: true}},
		{"connection close", Request{Method: "GET", URL: s.url + "/index.html", Header: http.Header{"Connection": {"close"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := lane(t, true, DriverConfig{Abort: abort})
			var (
				res Response
				bad string
			)
			grew := teststack.Grows(t, vuDepth, func() {
				for i := 0; i < 20 && bad == ""; i++ {
					r.Iterate(&c.req, time.Time{}, &res)
					if res.Err != nil || res.Status != 200 {
						bad = res.Class.String()
					}
				}
			})
			if bad != "" {
				t.Fatalf("a request failed: %s", bad)
			}
			if grew {
				t.Errorf("the requests grew an 8 KiB stack with %d bytes in use above them", vuDepth)
			}
		})
	}
}
