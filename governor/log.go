// The movement line: one log line per decision (see the package doc,
// "Visible, never silent").

package governor

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"
)

// logWindowAt logs a window; a hold is a debug line unless loud (an
// outage's first window: the movement line that says the target is out).
func (g *Governor) logWindowAt(w Window, n uint64, loud bool) {
	d := w.Decision
	level := slog.LevelInfo
	if d.Kind == KindHold && d.Signal != SignalMemoryCleared && !loud {
		level = slog.LevelDebug
	}
	if !g.log.Enabled(context.Background(), level) {
		return
	}
	attrs := []any{
		"phase", g.phase,
		"offer", arrow(d.From, d.Offer),
		"signal", d.Signal.String(),
		"frac", pct(w.Frac),
		"low", pct(g.limits.Low),
		"high", pct(g.limits.High),
		"attempts", n,
		"last_bad", num(d.LastBad),
		"streak", w.Streak,
		"early", w.Early,
	}
	if w.Tail > 0 {
		attrs = append(attrs, "tail", sinceDur(w.Tail))
	}
	// The evidence beyond failed attempts, named when there is any, so a
	// reader can tell what moved the offer.
	if w.By != "" {
		attrs = append(attrs, "by", w.By)
	}
	if g.loadc != nil && g.evidence != EvidenceNone {
		attrs = append(attrs, "failed", pct(w.FailFrac))
		if w.Unserved > 0 {
			attrs = append(attrs, "unserved", w.Unserved, "dropped", w.Dropped, "queued", w.Queued)
		}
		if w.Inflation > 0 {
			attrs = append(attrs, "latency", sinceDur(w.Latency), "inflation", strconv.FormatFloat(w.Inflation, 'f', 2, 64))
		}
		if w.Drained > 0 {
			attrs = append(attrs, "drained", sinceDur(w.Drained))
		}
		if w.GeneratorSaturated {
			attrs = append(attrs, "generator_saturated", true)
		}
	}
	g.log.Log(context.Background(), level, "throttle", attrs...)
}

func arrow(from, to float64) string {
	if from == to {
		return num(to)
	}
	return num(from) + "→" + num(to)
}

// num prints an offer with at most two decimals and no exponent.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

func pct(f float64) string { return fmt.Sprintf("%.3g%%", f*100) }

// sinceDur is a helper for the movement line: a duration rounded to ms.
func sinceDur(d time.Duration) string { return d.Round(time.Millisecond).String() }
