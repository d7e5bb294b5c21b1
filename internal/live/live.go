// Package live is what a person watching a run sees on stderr: the
// console (one status line redrawn in place on a terminal, plain lines
// elsewhere), the movement lines of the governor as a slog handler, the
// status line's figures, and the Ctrl-C handling (the first stops the run
// gracefully, the second aborts what is in flight).
package live

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/report"
)

// Console serialises everything the live view writes. On a terminal it keeps
// one status line at the bottom, redrawn in place, and prints other lines
// (the governor's movements) above it; elsewhere every line is plain.
type Console struct {
	mu     sync.Mutex
	w      io.Writer
	tty    bool
	width  int
	status string // the status line on screen; "" for none
}

func NewConsole(w io.Writer, tty bool) *Console {
	c := &Console{w: w, tty: tty, width: 120}
	if f, ok := w.(*os.File); ok && tty {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 20 {
			c.width = cols
		}
	}
	return c
}

const EraseLine = "\r\x1b[2K"

// Line prints s on its own line, above the status line.
func (c *Console) Line(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tty && c.status != "" {
		io.WriteString(c.w, EraseLine+s+"\n"+c.status)
		return
	}
	io.WriteString(c.w, s+"\n")
}

// SetStatus replaces the status line (on a terminal) or prints it.
func (c *Console) SetStatus(s string) {
	if !c.tty {
		c.Line(s)
		return
	}
	// A status line that wraps cannot be redrawn in place: cut it to fit.
	if utf8.RuneCountInString(s) >= c.width {
		s = string([]rune(s)[:c.width-1])
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = s
	io.WriteString(c.w, EraseLine+s)
}

// ClearStatus removes the status line.
func (c *Console) ClearStatus() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tty && c.status != "" {
		io.WriteString(c.w, EraseLine)
	}
	c.status = ""
}

// Handler is a slog.Handler that prints each record as one line through
// the console, prefixed with the time since the phase started:
//
//	[  4.2s] throttle phase=main offer=400→800 signal=slow-start frac=0% ...
type Handler struct {
	con    *Console
	level  slog.Level
	start  time.Time
	prefix string // attributes from WithAttrs, preformatted
	group  string
}

// NewHandler prints records at level and above through con.
func NewHandler(con *Console, level slog.Level) *Handler {
	return &Handler{con: con, level: level, start: time.Now()}
}

func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "[%6.1fs] %s", time.Since(h.start).Seconds(), r.Message)
	b.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.group, a)
		return true
	})
	h.con.Line(b.String())
	return nil
}

func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	var b strings.Builder
	for _, a := range attrs {
		appendAttr(&b, h.group, a)
	}
	c.prefix += b.String()
	return &c
}

func (h *Handler) WithGroup(name string) slog.Handler {
	c := *h
	c.group += name + "."
	return &c
}

func appendAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, g := range a.Value.Group() {
			appendAttr(b, group+a.Key+".", g)
		}
		return
	}
	v := a.Value.String()
	if v == "" || strings.ContainsAny(v, " =\"") {
		v = strconv.Quote(v)
	}
	fmt.Fprintf(b, " %s%s=%s", group, a.Key, v)
}

// View refreshes the status line: four times a second on a terminal,
// every five seconds as a plain line elsewhere.
type View struct {
	quit, done chan struct{}
}

// Source is what the live view follows, read at each refresh. A script
// run's source moves from scenario to scenario as they run.
type Source func() Reading

// Reading is a phase as the live view reads it: its snapshot, mode and
// latency recorder, its name ("" for a URL run's one phase), and whether
// the governor moves its offer. An ungoverned phase's snapshot still has
// a governor's state (the window loop judges it with the offer pinned),
// which the view does not show: no governor decides there.
type Reading struct {
	Snapshot engine.Snapshot
	Mode     governor.Mode
	Rec      *report.Recorder
	Name     string
	Governed bool
}

// Start refreshes the status line from src until Stop.
func Start(con *Console, src Source) *View {
	v := &View{quit: make(chan struct{}), done: make(chan struct{})}
	every, span := 5*time.Second, 5*time.Second
	if con.tty {
		// Rates over the last second, refreshed 4×/s: steady enough to
		// read, fresh enough to follow a move of the offer.
		every, span = 250*time.Millisecond, time.Second
	}
	go func() {
		defer close(v.done)
		t := time.NewTicker(every)
		defer t.Stop()
		first := src()
		name := first.Name
		ring := []engine.Snapshot{first.Snapshot}
		keep := int(span / every)
		var lat report.Latency // the latest non-empty: a window that just closed has none yet
		for {
			select {
			case <-v.quit:
				return
			case <-t.C:
			}
			r := src()
			s, now := r.Snapshot, r.Name
			if now != name {
				// Another phase: its counters start afresh.
				ring, name, lat = []engine.Snapshot{s}, now, report.Latency{}
			}
			ring = append(ring, s)
			if len(ring) > keep+1 {
				ring = ring[1:]
			}
			if l := r.Rec.Recent(); l.Count > 0 {
				lat = l
			}
			line := statusLine(ring[0], s, lat, r.Mode, r.Governed)
			if name != "" {
				line = name + "  " + line
			}
			con.SetStatus(line)
		}
	}()
	return v
}

// Stop ends the view and clears its status line.
func (v *View) Stop(con *Console) {
	close(v.quit)
	<-v.done
	con.ClearStatus()
}

// StatusLine formats the live figures between two snapshots of a
// governed phase.
func StatusLine(prev, cur engine.Snapshot, lat report.Latency, mode governor.Mode) string {
	return statusLine(prev, cur, lat, mode, true)
}

// statusLine is StatusLine; ungoverned, the governor's part is
// "[not governed]", as the report says, whatever the pinned window loop
// judged (at-ceiling, last bad, memory-cleared are no decision there).
func statusLine(prev, cur engine.Snapshot, lat report.Latency, mode governor.Mode, governed bool) string {
	secs := (cur.Elapsed - prev.Elapsed).Seconds()
	dOK := cur.Counts.OK - prev.Counts.OK
	dFail := cur.Counts.Failed - prev.Counts.Failed
	dIterOK := cur.Counts.IterOK - prev.Counts.IterOK
	dIterFail := cur.Counts.IterFailed - prev.Counts.IterFailed
	var rate float64
	if secs > 0 {
		rate = float64(dOK+dFail) / secs
	}
	offer := fmt.Sprintf("%s/s", Short(cur.Offer))
	if mode == governor.Concurrency {
		offer = Short(cur.Offer) + " in flight"
	}
	s := fmt.Sprintf("%6.1fs  offer %s  %s attempts/s  fail %s  ok %s  p50 %s  p99 %s  %s",
		cur.Elapsed.Seconds(), offer, Short(rate), percent(dFail, dOK+dFail), percent(dIterOK, dIterOK+dIterFail),
		dur(lat.P50, lat.Count), dur(lat.P99, lat.Count), state(cur.Governor, governed))
	if cur.Counts.Dropped > 0 {
		s += fmt.Sprintf("  dropped %d", cur.Counts.Dropped)
	}
	if cur.Counts.Missed > 0 {
		// Arrivals asked for and never made: the generator's shortfall,
		// not the target's.
		s += fmt.Sprintf("  missed %d (generator behind schedule)", cur.Counts.Missed)
	}
	// Name the failures a person has to fix on their side, not the
	// target's: a host that does not resolve, a handshake that fails.
	if n := cur.Counts.Classes[engine.ClassDNS]; n > 0 {
		s += fmt.Sprintf("  dns %d (could not resolve)", n)
	}
	if n := cur.Counts.Classes[engine.ClassTLS]; n > 0 {
		s += fmt.Sprintf("  tls %d (handshake failed)", n)
	}
	if g := cur.Generator; g.Saturated {
		why := g.Signal
		if why == "wait" {
			// The wait rule's reading says how far behind its goroutines ran.
			why += fmt.Sprintf(" p99 %s", g.Wait.Round(time.Millisecond))
		}
		if why == "read" {
			// The read rule's reading: how long answers sat unread.
			why += fmt.Sprintf(" mean %s", g.ReadDelay.Round(100*time.Microsecond))
		}
		s += fmt.Sprintf("  generator saturated at %s/s (%s)", Short(g.Rate), why)
	}
	return s
}

func state(g governor.State, governed bool) string {
	switch {
	case !governed:
		return "[not governed]"
	case g.Windows == 0 && g.Offer == 0:
		return "[starting]"
	case g.Pending:
		return "[applying]"
	case g.Windows == 0:
		return "[first window]"
	}
	s := "[" + g.Last.Signal.String()
	if g.Last.Signal == governor.SignalOutage && !g.Outage {
		// The outage's last window is still the newest: the target
		// answers again, the held offer runs, no window has closed since.
		s = "[outage over"
	}
	if g.LastBad > 0 {
		s += ", last bad " + Short(g.LastBad)
	}
	return s + "]"
}

// Short prints a rate or a count: whole from 100 up, one decimal below.
func Short(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func percent(part, whole uint64) string {
	if whole == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(part)/float64(whole), 'f', 1, 64) + "%"
}

func dur(d time.Duration, n int64) string {
	if n == 0 {
		return "-"
	}
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	case d >= 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e6, 'f', 0, 64) + "ms"
	}
	return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) + "ms"
}

// WatchSignals turns the first signal into a graceful stop and the second
// into an abort of what is still in flight; it returns when done closes.
func WatchSignals(sig <-chan os.Signal, done <-chan struct{}, stop context.CancelFunc, abort func(), inFlight func() int64, con *Console, grace time.Duration) {
	if sig == nil {
		return
	}
	select {
	case <-sig:
	case <-done:
		return
	}
	stop()
	con.Line(fmt.Sprintf("interrupted: no new arrivals; waiting up to %v for %d in flight (Ctrl-C again to abort them)",
		grace, inFlight()))
	select {
	case <-sig:
	case <-done:
		return
	}
	abort()
	con.Line("aborting in-flight attempts")
}
