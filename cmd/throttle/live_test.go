package main

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/testwait"
)

// On a terminal a line printed while a status line shows erases it, prints
// the line and redraws the status below; off a terminal lines are plain.
func TestConsole(t *testing.T) {
	var b bytes.Buffer
	c := newConsole(&b, true)
	c.line("first")
	c.setStatus("status 1")
	c.line("moved")
	c.setStatus(strings.Repeat("x", 500))
	c.clearStatus()
	want := "first\n" + eraseLine + "status 1" + eraseLine + "moved\nstatus 1" + eraseLine + strings.Repeat("x", 119) + eraseLine
	if b.String() != want {
		t.Errorf("tty output\n%q\nwant\n%q", b.String(), want)
	}

	b.Reset()
	c = newConsole(&b, false)
	c.setStatus("s")
	c.line("l")
	c.clearStatus()
	if b.String() != "s\nl\n" {
		t.Errorf("plain output %q", b.String())
	}
}

func TestLineHandler(t *testing.T) {
	var b bytes.Buffer
	h := newLineHandler(newConsole(&b, false), slog.LevelInfo)
	log := slog.New(h).With("phase", "main")
	log.Info("throttle", "offer", "400→800", "signal", "slow-start", "note", "two words")
	log.Debug("throttle", "signal", "dead-band")
	log.WithGroup("g").Info("x", "k", 1)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("debug must be filtered at info level: %q", lines)
	}
	if !strings.HasPrefix(lines[0], "[") || !strings.HasSuffix(lines[0], `] throttle phase=main offer=400→800 signal=slow-start note="two words"`) {
		t.Errorf("line %q", lines[0])
	}
	if !strings.HasSuffix(lines[1], "] x phase=main g.k=1") {
		t.Errorf("grouped line %q", lines[1])
	}
}

func TestStatusLine(t *testing.T) {
	prev := engine.Snapshot{Elapsed: time.Second, Counts: engine.Counts{OK: 100, Failed: 0, IterOK: 100}}
	cur := engine.Snapshot{
		Elapsed:  2 * time.Second,
		Counts:   engine.Counts{OK: 860, Failed: 40, IterOK: 880, IterFailed: 20, Dropped: 3},
		Offer:    800,
		Governor: governor.State{Offer: 800, LastBad: 1600, Windows: 7, Last: governor.Decision{Signal: governor.SignalProbe}},
	}
	lat := report.Latency{Count: 10, P50: 5200 * time.Microsecond, P99: 31 * time.Millisecond}
	got := statusLine(prev, cur, lat, governor.Rate)
	want := "   2.0s  offer 800/s  800 attempts/s  fail 5.0%  ok 97.5%  p50 5.2ms  p99 31ms  [probe, last bad 1600]  dropped 3"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	cur.Governor = governor.State{Offer: 8, Pending: true, Windows: 2}
	cur.Offer = 8
	got = statusLine(cur, cur, report.Latency{}, governor.Concurrency)
	if !strings.Contains(got, "offer 8 in flight  0 attempts/s  fail -  ok -  p50 -  p99 -  [applying]") {
		t.Errorf("got %q", got)
	}
	cur.Generator = engine.GeneratorStatus{Saturated: true, Signal: "cpu", Rate: 41234}
	if got = statusLine(cur, cur, report.Latency{}, governor.Rate); !strings.HasSuffix(got, "  generator saturated at 41234/s (cpu)") {
		t.Errorf("a saturated generator says so: %q", got)
	}
}

// A second Ctrl-C aborts in-flight attempts at once instead of waiting out
// the grace period, and the report is still written. The first comes once
// all four requests are in flight, the second once the first has stopped the
// phase.
func TestSecondSignalAborts(t *testing.T) {
	var arrived atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		<-r.Context().Done()
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	sig := make(chan os.Signal, 2)
	first := interruptWhen(t, sig, "4 requests in flight", func() bool { return arrived.Load() >= 4 })
	interruptWhen(t, sig, "the command to take the first interrupt", func() bool {
		select {
		case <-first:
			return len(sig) == 0
		default:
			return false
		}
	})
	begin := time.Now()
	r := cli(t, "", sig, "run", "--concurrency", "4", "--no-governor", "--grace", "1m", "--timeout", "1m",
		"--duration", "1m", "--out", out, srv.URL)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if took := time.Since(begin); took > testwait.Deadline {
		t.Errorf("took %v: the second signal must cut the grace period short", took)
	}
	if !strings.Contains(r.stderr, "aborting in-flight attempts") {
		t.Errorf("stderr: %s", r.stderr)
	}
	m := readJSON(t, out)
	if m["aborted_attempts"].(float64) != 4 || m["run"].(map[string]any)["interrupted"] != true {
		t.Errorf("aborted %v, run %v", m["aborted_attempts"], m["run"])
	}
}
