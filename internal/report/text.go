package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// WriteText writes the report for people: the verdict first, then the
// capacity and the evidence for it.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	s := r.Settings
	mode := "governed"
	if !s.Governed {
		mode = "not governed"
	}
	fmt.Fprintf(&b, "throttle report: %s %s phase", mode, s.Mode)
	if s.Target != "" {
		fmt.Fprintf(&b, " against %s", s.Target)
	}
	if s.Transport != "" {
		fmt.Fprintf(&b, " (transport %s)", s.Transport)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "verdict      %s\n", r.Verdict)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note         %s\n", n)
	}
	b.WriteString("\n")

	unit := r.unit()
	if c := r.Capacity; c.Found {
		held := ""
		if c.HeldBy != "" {
			held = "   held by " + c.HeldBy
		}
		fmt.Fprintf(&b, "capacity     offer %s%s   goodput %s req/s   throughput %s req/s   attempt failures %s%s\n",
			num(c.Offer), unit, num(c.GoodputPerS), num(c.ThroughputPerS), pct(c.AttemptFailFrac), held)
	}
	if sat, n, byOther := r.saturated(); n > 0 {
		// A window decided by evidence beyond failed attempts (latency,
		// unserved load) breached without failures: say damage, not failures.
		what := "attempt failures"
		if byOther {
			what = "damage"
		}
		fmt.Fprintf(&b, "saturated    %s excluded (%s > %s): %s\n", plural(n, "window"), what, pct(s.High), strings.Join(sat, ", "))
	}

	if out := r.outages(); len(out) > 0 {
		fmt.Fprintf(&b, "outages      %s (target unreachable, offer held): %s\n", plural(len(out), "interval"), strings.Join(out, ", "))
	}

	const latRow = "%-12s %9s %9s %9s %9s %9s %9s\n"
	fmt.Fprintf(&b, latRow, "latency", "count", "p50", "p90", "p99", "p99.9", "max")
	for _, row := range []struct {
		name string
		p    Percentiles
	}{{"at capacity", r.Latency.AtCapacity}, {"overall", r.Latency.Overall}} {
		if row.name == "at capacity" && !r.Capacity.Found {
			continue
		}
		p := row.p
		fmt.Fprintf(&b, latRow, " "+row.name, strconv.FormatInt(p.Count, 10),
			msDur(p.P50Ms), msDur(p.P90Ms), msDur(p.P99Ms), msDur(p.P999Ms), msDur(p.MaxMs))
	}

	a := r.Attempts
	fmt.Fprintf(&b, "attempts     %d: ok %d, failed %d (%s)", a.Total, a.OK, a.Failed, pct(a.FailFrac))
	if classes := a.ByClass.nonZero(); classes != "" {
		fmt.Fprintf(&b, ": %s", classes)
	}
	b.WriteString("\n")
	it := r.Iterations
	fmt.Fprintf(&b, "iterations   %d: ok after tries %d (%s), failed %d\n", it.Total, it.OK, pct(it.OKFrac), it.Failed)
	fmt.Fprintf(&b, "dropped      %d arrivals\n", r.DroppedArrivals)
	if r.MissedArrivals > 0 {
		fmt.Fprintf(&b, "missed       %d arrivals: the generator fell behind the schedule\n", r.MissedArrivals)
	}
	if g := r.Generator; g.Saturated {
		fmt.Fprintf(&b, "generator    saturated at %s/s (%d of %d watch ticks: %s)\n", num(g.SaturatedAtPerS), g.SaturatedTicks, g.Ticks, signalCounts(map[string]int{"cpu": g.Signals.CPU, "wait": g.Signals.Wait, "read": g.Signals.Read, "lag": g.Signals.Lag, "schedule": g.Signals.Schedule, "drop": g.Signals.Drop}))
	}
	if r.AbortedAttempts > 0 {
		fmt.Fprintf(&b, "aborted      %d attempts cut off by the stop (neither ok nor failed)\n", r.AbortedAttempts)
	}
	if d := r.ReadDelay; d.Answers > 0 {
		fmt.Fprintf(&b, "read delay   mean %s ms, max %s ms over %d answers: their wait for the generator, left out of the latencies\n", num(d.MeanMS), num(d.MaxMS), d.Answers)
	}
	early := 0
	for _, w := range r.Windows {
		if w.Early {
			early++
		}
	}
	cadence := ""
	switch {
	case early > 0:
		cadence = fmt.Sprintf(", %d closed early by a gross breach", early)
	case s.Governed && !s.EarlyBreach:
		cadence = ", early breach off"
	}
	fmt.Fprintf(&b, "run          %s, %s (window %v, tick %v%s)\n",
		secs(r.Run.DurationS), plural(r.EarlierWindows+len(r.Windows), "window"), seconds(s.WindowS), seconds(s.TickS), cadence)
	if s.Governed {
		by := map[string]int{}
		drained := 0
		for _, w := range r.Windows {
			if w.By != "" {
				by[w.By]++
			}
			if w.DrainedS > 0 {
				drained++
			}
		}
		line := "evidence     " + s.Evidence
		for _, k := range []string{"unserved", "latency", "generator"} {
			if by[k] > 0 {
				line += fmt.Sprintf("; %s decided by %s", plural(by[k], "window"), k)
			}
		}
		if drained > 0 {
			line += fmt.Sprintf("; %s waited for a drain", plural(drained, "window"))
		}
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "limits       ceiling %s%s, floor %s%s, start %s%s, high %s, low %s, min attempts %d\n",
		num(s.Ceiling), unit, num(s.Floor), unit, num(s.Start), unit, pct(s.High), pct(s.Low), s.MinAttempts)
	_, err := io.WriteString(w, b.String())
	return err
}

// saturated lists the saturated windows as "12.0–13.0 s at 1600/s (52 %)",
// at most five, then how many more.
// saturated lists the first saturated windows, counts them all, and says
// whether any was decided by evidence other than failed attempts.
func (r *Report) saturated() (out []string, n int, byOther bool) {
	for _, w := range r.Windows {
		if !w.Saturated {
			continue
		}
		n++
		by := ""
		if w.By != "" {
			by, byOther = " by "+w.By, true
		}
		if len(out) < 5 {
			out = append(out, fmt.Sprintf("%.1f–%.1f s at %s%s (%s%s)", w.StartS, w.EndS, num(w.Offer), r.unit(), pct(w.Frac), by))
		}
	}
	if n > len(out) {
		out = append(out, fmt.Sprintf("%d more", n-len(out)))
	}
	return out, n, byOther
}

// unit is the offer's unit as printed after a number.
func (r *Report) unit() string {
	if r.Settings.Mode == "concurrency" {
		return " concurrent"
	}
	return "/s"
}

// signalCounts prints saturated ticks by rule: "cpu 3, lag 1".
func signalCounts(m map[string]int) string {
	var parts []string
	for _, k := range []string{"cpu", "wait", "read", "lag", "drop", "schedule"} {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}

func (c ClassesJSON) nonZero() string {
	var parts []string
	for _, x := range []struct {
		name string
		n    uint64
	}{{"5xx", c.Status5xx}, {"429", c.Status429}, {"timeout", c.Timeout}, {"refused", c.Refused}, {"reset", c.Reset},
		{"dns", c.DNS}, {"tls", c.TLS}, {"other", c.Other}, {"slow", c.Slow}} {
		if x.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d%s", x.name, x.n, classMeaning[x.name]))
		}
	}
	return strings.Join(parts, ", ")
}

// classMeaning says in words what the classes a class name alone leaves
// unclear mean (the live line says the same).
var classMeaning = map[string]string{"dns": " (could not resolve)", "tls": " (TLS handshake failed)"}

// num prints a rate or an offer: whole above 100, otherwise up to two
// decimals, never an exponent.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	case a >= 10:
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	default:
		return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	}
}

// pct prints a fraction as a percentage with up to two decimals: "4.96 %".
func pct(f float64) string {
	return strconv.FormatFloat(math.Round(f*10000)/100, 'f', -1, 64) + " %"
}

// msDur prints milliseconds as a short duration with three significant
// digits: "850µs", "5.21ms", "1.52s"; "-" for nothing recorded.
func msDur(v float64) string {
	d := time.Duration(v * float64(time.Millisecond))
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return strconv.FormatFloat(sig3(float64(d)/1e3), 'f', -1, 64) + "µs"
	case d < time.Second:
		return strconv.FormatFloat(sig3(float64(d)/1e6), 'f', -1, 64) + "ms"
	default:
		return strconv.FormatFloat(sig3(d.Seconds()), 'f', -1, 64) + "s"
	}
}

func sig3(v float64) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

func secs(s float64) string { return strconv.FormatFloat(math.Round(s*10)/10, 'f', 1, 64) + " s" }

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}
