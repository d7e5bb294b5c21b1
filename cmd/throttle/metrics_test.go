package main

import (
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/metrics/metricstest"
	"github.com/throttlekit/throttle/internal/testwait"
)

// started runs a command on its own goroutine, the way main runs it, and
// returns its output buffers and exit code channel.
func started(args []string, sig <-chan os.Signal, onEngine func(*engine.Engine)) (out, errb *testwait.Buffer, code <-chan int) {
	out, errb = &testwait.Buffer{}, &testwait.Buffer{}
	c := make(chan int, 1)
	go func() {
		c <- run(args, env{stdin: strings.NewReader(""), stdout: out, stderr: errb, signals: sig, started: onEngine})
	}()
	return out, errb, c
}

// metricsURL waits for the command to print the metrics address it bound.
func metricsURL(t *testing.T, errb *testwait.Buffer, code <-chan int) string {
	t.Helper()
	var url string
	testwait.Until(t, testwait.Deadline, "the metrics address announced on stderr", func() bool {
		select {
		case c := <-code:
			t.Fatalf("exited %d before announcing the metrics address: %s", c, errb.String())
		default:
		}
		if _, rest, ok := strings.Cut(errb.String(), "metrics: serving "); ok {
			url, _, ok = strings.Cut(rest, "\n")
			return ok
		}
		return false
	})
	return url
}

// A demo run with --metrics: scraped mid-run, the exposition (read with
// the Prometheus text parser) shows the governor's current offer, and the
// attempt counters only grow; the server is gone when the run ends.
func TestDemoServesMetrics(t *testing.T) {
	engines := make(chan *engine.Engine, 1)
	sig := make(chan os.Signal, 1)
	out, errb, code := started([]string{"demo", "--metrics", "127.0.0.1:0", "--capacity", "400", "--floor", "50", "--start", "100",
		"--window", "300ms", "--tick", "50ms", "--duration", "2m", "--quiet"}, sig, func(e *engine.Engine) { engines <- e })
	url := metricsURL(t, errb, code)
	var eng *engine.Engine
	select {
	case eng = <-engines:
	case <-time.After(testwait.Deadline):
		t.Fatal("the phase never started")
	}

	// The offer is compared only when the governor's state is the same
	// before and after the scrape and no write is on its way to the gate:
	// the committed offer changes only when a confirmation is adopted, and
	// a confirmation follows a pending write, so the offer the scrape read
	// is exactly the one held throughout.
	// The scrapes go on until the comparison has held at two different
	// offers (the governor moved while it was watched).
	var compared, scrapes int
	var first, last float64
	prev := map[string]float64{}
	offers := map[float64]bool{}
	deadline := time.Now().Add(2 * testwait.Deadline)
	for len(offers) < 2 || scrapes < 5 || last <= first {
		select {
		case c := <-code:
			t.Fatalf("the run ended (exit %d) after %d scrapes, %d offer comparisons at %v, attempts %v → %v", c, scrapes, compared, offers, first, last)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d scrapes: %d offer comparisons at %v, attempts %v → %v", scrapes, compared, offers, first, last)
		}
		before := eng.Snapshot().Governor
		f, err := metricstest.Scrape(url)
		after := eng.Snapshot().Governor
		if err != nil {
			t.Fatalf("scrape %d: %v", scrapes, err)
		}
		scrapes++

		total := 0.0
		for _, m := range f.Series("throttle_attempts_total", map[string]string{"phase": "main"}) {
			key := metricstest.String(m)
			v := m.GetCounter().GetValue()
			if v < prev[key] {
				t.Errorf("scrape %d: throttle_attempts_total%s fell from %v to %v", scrapes, key, prev[key], v)
			}
			prev[key] = v
			total += v
		}
		if scrapes == 1 {
			first = total
		}
		last = total

		if before == after && !before.Pending && before.Offer > 0 {
			offer, err := f.Value("throttle_offer", map[string]string{"phase": "main"})
			if err != nil {
				t.Fatal(err)
			}
			if offer != before.Offer {
				t.Fatalf("scrape %d: throttle_offer %v, the governor's offer %v (state %+v)", scrapes, offer, before.Offer, before)
			}
			lastBad, _ := f.Value("throttle_last_bad", map[string]string{"phase": "main"})
			if before.LastBad == 0 && !math.IsNaN(lastBad) || before.LastBad != 0 && lastBad != before.LastBad {
				t.Fatalf("scrape %d: throttle_last_bad %v, the governor's %v", scrapes, lastBad, before.LastBad)
			}
			compared++
			offers[offer] = true
		}
		if f["throttle_target_served_total"] == nil {
			t.Fatal("the demo's built-in target is not exported")
		}
		time.Sleep(20 * time.Millisecond) // pace the scrapes; nothing waits on this
	}

	// Stop the run, as Ctrl-C would: the report is written and the metrics
	// server goes with the run.
	sig <- os.Interrupt
	select {
	case c := <-code:
		if c != 0 || !strings.Contains(out.String(), "verdict") {
			t.Fatalf("exit %d: %s\n%s", c, errb.String(), out.String())
		}
	case <-time.After(testwait.Deadline):
		t.Fatal("the run did not end")
	}
	if _, err := metricstest.Scrape(url); err == nil {
		t.Error("the metrics server outlived the run")
	}
}

// throttle target --metrics exports the standalone target's counters.
func TestTargetServesMetrics(t *testing.T) {
	sig := make(chan os.Signal, 1)
	out, errb, code := started([]string{"target", "--listen", "127.0.0.1:0", "--capacity", "100", "--metrics", "127.0.0.1:0"}, sig, nil)
	url := metricsURL(t, errb, code)
	var target string
	testwait.Until(t, testwait.Deadline, "the target's address announced on stdout", func() bool {
		if _, rest, ok := strings.Cut(out.String(), " on http://"); ok && strings.Contains(rest, " ") {
			target = "http://" + strings.Fields(rest)[0]
			return true
		}
		return false
	})
	resp, err := http.Get(target + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	f, err := metricstest.Scrape(url)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"throttle_target_served_total": 1, "throttle_target_capacity": 100} {
		if v, err := f.Value(name, map[string]string{"phase": "target"}); err != nil || v != want {
			t.Errorf("%s = %v (%v), want %v", name, v, err, want)
		}
	}
	sig <- os.Interrupt
	if c := <-code; c != 0 {
		t.Fatalf("exit %d: %s", c, errb.String())
	}
	if _, err := metricstest.Scrape(url); err == nil {
		t.Error("the metrics server outlived the target")
	}
}

// A --metrics address already in use is a runtime failure (exit 1), found
// before any traffic is sent.
func TestMetricsBusyExit1(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().String()
	for _, args := range [][]string{
		{"run", "--rate", "50", "--duration", "2s", "--metrics", busy, srv.URL},
		{"demo", "--duration", "2s", "--metrics", busy},
		{"target", "--listen", "127.0.0.1:0", "--metrics", busy},
	} {
		r := cli(t, "", nil, args...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "throttle: --metrics "+busy+": ") || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "in use") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and one line saying the address is in use", args, r.code, r.stderr)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests sent before the busy address was found", n)
	}
}
