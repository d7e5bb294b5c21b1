package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	chart "github.com/wcharczuk/go-chart/v2"
	"github.com/wcharczuk/go-chart/v2/drawing"
)

// ChartFormat is the file format of a chart.
type ChartFormat uint8

// The chart formats. HTML is a self-contained page that embeds the SVG
// chart inline beside the text report; it opens offline and runs no
// scripts.
const (
	SVG ChartFormat = iota
	PNG
	HTML
)

func (f ChartFormat) String() string {
	switch f {
	case PNG:
		return "png"
	case HTML:
		return "html"
	default:
		return "svg"
	}
}

// ChartFormatFor picks the chart format from a file name's extension: .svg,
// .png, .html or .htm (any case).
func ChartFormatFor(path string) (ChartFormat, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return SVG, nil
	case ".png":
		return PNG, nil
	case ".html", ".htm":
		return HTML, nil
	}
	return 0, fmt.Errorf("chart file %q needs a .svg, .png or .html extension", path)
}

// SaveChart writes the chart to the file at path in the format its
// extension names (ChartFormatFor).
func (r *Report) SaveChart(path string) error {
	f, err := ChartFormatFor(path)
	if err != nil {
		return err
	}
	if len(r.Windows) == 0 {
		return ErrNoWindows
	}
	return saveFile(path, func(w io.Writer) error { return r.WriteChart(w, f) })
}

// Chart size in pixels.
const (
	chartWidth  = 1100
	chartHeight = 520
)

// WriteChart draws the run over time: the offer, the throughput and the
// goodput per window against the left axis; the attempt-failure percentage
// per window against the right axis, with the failure bound (high) drawn
// across it, and the capacity found as a dotted line. It returns
// ErrNoWindows when there is nothing to draw.
func (r *Report) WriteChart(w io.Writer, f ChartFormat) error {
	if len(r.Windows) == 0 {
		return ErrNoWindows
	}
	switch f {
	case SVG:
		return r.renderChart(w, chart.SVG)
	case PNG:
		return r.renderChart(w, chart.PNG)
	case HTML:
		return r.writeHTML(w)
	}
	return fmt.Errorf("unknown chart format %d", f)
}

var (
	colorOffer   = drawing.ColorFromHex("1f4e9c")
	colorTput    = drawing.ColorFromHex("8a8a8a")
	colorGoodput = drawing.ColorFromHex("2a9d3a")
	colorFail    = drawing.ColorFromHex("d1342f")
)

// steps turns per-window values into a step line: each window a flat
// segment from its start to its end.
func (r *Report) steps(value func(WindowJSON) float64) (xs, ys []float64) {
	for _, w := range r.Windows {
		v := value(w)
		xs = append(xs, w.StartS, w.EndS)
		ys = append(ys, v, v)
	}
	return xs, ys
}

func (r *Report) renderChart(w io.Writer, rp chart.RendererProvider) error {
	first, last := r.Windows[0].StartS, r.Windows[len(r.Windows)-1].EndS
	if last <= first {
		last = first + 1
	}
	var top, worst float64
	for _, x := range r.Windows {
		top = math.Max(top, math.Max(x.Offer, x.AttemptsPerS))
		worst = math.Max(worst, x.Frac)
	}
	if top <= 0 {
		top = 1
	}
	leftTicks := niceTicks(0, top*1.05, 10)
	failTicks := niceTicks(0, math.Min(100, math.Max(worst, 2*r.Settings.High)*105), 10)

	line := func(name string, c drawing.Color, width float64, dash []float64, secondary bool, xs, ys []float64) chart.ContinuousSeries {
		s := chart.ContinuousSeries{
			Name:    name,
			XValues: xs,
			YValues: ys,
			Style:   chart.Style{StrokeColor: c, StrokeWidth: width, StrokeDashArray: dash},
		}
		if secondary {
			s.YAxis = chart.YAxisSecondary
		}
		return s
	}
	unit := r.unit()
	offerX, offerY := r.steps(func(w WindowJSON) float64 { return w.Offer })
	tputX, tputY := r.steps(func(w WindowJSON) float64 { return w.AttemptsPerS })
	goodX, goodY := r.steps(func(w WindowJSON) float64 { return w.GoodputPerS })
	failX, failY := r.steps(func(w WindowJSON) float64 { return w.Frac * 100 })
	series := []chart.Series{
		line("attempt failures % (left axis)", colorFail, 1.5, nil, true, failX, failY),
		line("high bound "+pct(r.Settings.High)+" (left axis)", colorFail, 1, []float64{6, 4}, true,
			[]float64{first, last}, []float64{r.Settings.High * 100, r.Settings.High * 100}),
		line("throughput req/s", colorTput, 1.5, nil, false, tputX, tputY),
		line("goodput req/s", colorGoodput, 2, nil, false, goodX, goodY),
		line("offer"+unit, colorOffer, 2.5, nil, false, offerX, offerY),
	}
	if c := r.Capacity; c.Found {
		series = append(series, line("capacity ≈ "+num(c.GoodputPerS)+" req/s", colorGoodput, 1, []float64{2, 3}, false,
			[]float64{first, last}, []float64{c.GoodputPerS, c.GoodputPerS}))
	}

	// go-chart draws the primary axis on the right and the secondary on
	// the left; the legend says which axis a line reads against.
	graph := chart.Chart{
		Width:      chartWidth,
		Height:     chartHeight,
		Background: chart.Style{Padding: chart.Box{Top: 64, Left: 36, Right: 20, Bottom: 20}},
		XAxis: chart.XAxis{
			Name:  "seconds since start",
			Range: &chart.ContinuousRange{Min: first, Max: last},
			Ticks: niceTicks(first, last, 15),
		},
		YAxis: chart.YAxis{
			Name:  "offer" + unit + ", req/s",
			Range: &chart.ContinuousRange{Min: 0, Max: leftTicks[len(leftTicks)-1].Value},
			Ticks: leftTicks,
		},
		// Only a range here: go-chart v2.1.2 sizes the secondary axis from
		// the primary axis's ticks when the secondary has ticks of its own.
		// No name on the secondary axis: go-chart draws it over the tick
		// labels; the legend says which lines read against it.
		YAxisSecondary: chart.YAxis{
			Range:          &chart.ContinuousRange{Min: 0, Max: failTicks[len(failTicks)-1].Value},
			ValueFormatter: func(v interface{}) string { return strconv.FormatFloat(math.Round(v.(float64)*100)/100, 'f', -1, 64) },
		},
		Series: series,
	}
	graph.Elements = []chart.Renderable{chart.LegendThin(&graph), caption("throttle: " + r.Verdict)}
	if err := graph.Render(rp, w); err != nil {
		return fmt.Errorf("drawing the chart: %w", err)
	}
	return nil
}

// caption draws one line of text above the legend.
func caption(text string) chart.Renderable {
	return func(r chart.Renderer, cb chart.Box, defaults chart.Style) {
		r.SetFont(defaults.GetFont())
		r.SetFontColor(chart.DefaultTextColor)
		r.SetFontSize(10)
		r.Text(text, cb.Left, 14)
	}
}

// niceTicks labels [lo, hi] at a round step (1, 2 or 5 × 10^k) giving at
// most max+1 ticks, the last at or above hi, so an axis ends on a label.
func niceTicks(lo, hi float64, max int) []chart.Tick {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(max)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []chart.Tick
	for i := math.Floor(lo / step); ; i++ {
		v := i * step
		ticks = append(ticks, chart.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		if v >= hi-1e-9*step {
			return ticks
		}
	}
}

// writeHTML writes a page with the verdict, the chart inline and the text
// report. Everything is in the page: it needs no network and runs no script.
func (r *Report) writeHTML(w io.Writer) error {
	var svg, text bytes.Buffer
	if err := r.renderChart(&svg, chart.SVG); err != nil {
		return err
	}
	if err := r.WriteText(&text); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>throttle report: %s</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1150px; color: #222; }
h1 { font-size: 1.3em; }
.chart svg { width: 100%%; height: auto; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; }
</style>
</head>
<body>
<h1>%s</h1>
<div class="chart">
%s
</div>
<pre>%s</pre>
</body>
</html>
`, html.EscapeString(string(r.Outcome)), html.EscapeString(r.Verdict), svg.String(), html.EscapeString(text.String()))
	return err
}
