package live

import (
	"go.uber.org/goleak"

	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/report"
)

// On a terminal a line printed while a status line shows erases it, prints
// the line and redraws the status below; off a terminal lines are plain.
func TestConsole(t *testing.T) {
	var b bytes.Buffer
	c := NewConsole(&b, true)
	c.Line("first")
	c.SetStatus("status 1")
	c.Line("moved")
	c.SetStatus(strings.Repeat("x", 500))
	c.ClearStatus()
	want := "first\n" + EraseLine + "status 1" + EraseLine + "moved\nstatus 1" + EraseLine + strings.Repeat("x", 119) + EraseLine
	if b.String() != want {
		t.Errorf("tty output\n%q\nwant\n%q", b.String(), want)
	}

	b.Reset()
	c = NewConsole(&b, false)
	c.SetStatus("s")
	c.Line("l")
	c.ClearStatus()
	if b.String() != "s\nl\n" {
		t.Errorf("plain output %q", b.String())
	}
}

func TestLineHandler(t *testing.T) {
	var b bytes.Buffer
	h := NewHandler(NewConsole(&b, false), slog.LevelInfo)
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
	got := StatusLine(prev, cur, lat, governor.Rate)
	want := "   2.0s  offer 800/s  800 attempts/s  fail 5.0%  ok 97.5%  p50 5.2ms  p99 31ms  [probe, last bad 1600]  dropped 3"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	cur.Governor = governor.State{Offer: 8, Pending: true, Windows: 2}
	cur.Offer = 8
	got = StatusLine(cur, cur, report.Latency{}, governor.Concurrency)
	if !strings.Contains(got, "offer 8 in flight  0 attempts/s  fail -  ok -  p50 -  p99 -  [applying]") {
		t.Errorf("got %q", got)
	}
	cur.Generator = engine.GeneratorStatus{Saturated: true, Signal: "cpu", Rate: 41234}
	if got = StatusLine(cur, cur, report.Latency{}, governor.Rate); !strings.HasSuffix(got, "  generator saturated at 41234/s (cpu)") {
		t.Errorf("a saturated generator says so: %q", got)
	}
	cur.Generator = engine.GeneratorStatus{Saturated: true, Signal: "wait", Rate: 41234, Wait: 117440512}
	if got = StatusLine(cur, cur, report.Latency{}, governor.Rate); !strings.HasSuffix(got, "  generator saturated at 41234/s (wait p99 117ms)") {
		t.Errorf("a generator saturated by the wait rule says how long its goroutines waited: %q", got)
	}
	cur.Generator = engine.GeneratorStatus{Saturated: true, Signal: "read", Rate: 41234, ReadDelay: 7260 * time.Microsecond}
	if got = StatusLine(cur, cur, report.Latency{}, governor.Rate); !strings.HasSuffix(got, "  generator saturated at 41234/s (read mean 7.3ms)") {
		t.Errorf("a generator saturated by the read rule says how long its answers sat unread: %q", got)
	}
	// In an outage, and after it until the next window closes: the outage
	// window is still the newest decision, but the target answers again.
	cur.Generator = engine.GeneratorStatus{}
	cur.Governor = governor.State{Offer: 300, Windows: 9, Outage: true, Last: governor.Decision{Signal: governor.SignalOutage}}
	if got = StatusLine(cur, cur, report.Latency{}, governor.Rate); !strings.Contains(got, "  [outage]  ") {
		t.Errorf("in an outage: %q", got)
	}
	cur.Governor.Outage = false
	if got = StatusLine(cur, cur, report.Latency{}, governor.Rate); !strings.Contains(got, "  [outage over]  ") {
		t.Errorf("after an outage: %q", got)
	}
	// Arrivals the generator never made are named as its shortfall.
	cur.Counts.Missed = 12
	if got = StatusLine(cur, cur, report.Latency{}, governor.Rate); !strings.Contains(got, "  dropped 3  missed 12 (generator behind schedule)") {
		t.Errorf("missed arrivals: %q", got)
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// An ungoverned phase's snapshot has the pinned window loop's state
// (memory-cleared after a bad window, at-ceiling, last bad): the view
// shows none of it, only that no governor decides.
func TestStatusLineUngoverned(t *testing.T) {
	cur := engine.Snapshot{Elapsed: 2 * time.Second, Offer: 4,
		Governor: governor.State{Offer: 4, LastBad: 4, Windows: 5, Last: governor.Decision{Signal: governor.SignalMemoryCleared}}}
	if got := statusLine(cur, cur, report.Latency{}, governor.Concurrency, false); !strings.HasSuffix(got, "  [not governed]") || strings.Contains(got, "memory-cleared") {
		t.Errorf("ungoverned: %q", got)
	}
	if got := statusLine(cur, cur, report.Latency{}, governor.Concurrency, true); !strings.HasSuffix(got, "  [memory-cleared, last bad 4]") {
		t.Errorf("governed: %q", got)
	}
}
