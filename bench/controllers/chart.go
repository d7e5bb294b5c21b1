package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	chart "github.com/wcharczuk/go-chart/v2"
	"github.com/wcharczuk/go-chart/v2/drawing"

	"github.com/throttlekit/throttle/internal/sim"
)

// seriesColors tells the controllers apart in the chart, in report order.
var seriesColors = []drawing.Color{
	{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // throttle
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // aimd
	{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // ramp
	{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, // fixed
}

// writeChart draws the offer after every decision of each run against the
// window count, on a logarithmic offer axis (the offers span 1 to the
// ceiling), with the model's capacity as a dashed line: c at the start and,
// for a model whose capacity changes, m.C after the change (each controller
// meets the change at a different window, since windows last longer at low
// offers).
func writeChart(path string, runs []sim.Result, m sim.Model, c float64) error {
	var series []chart.Series
	longest := 0
	for i, r := range runs {
		offers := r.Offers()
		xs := make([]float64, len(offers))
		for k := range xs {
			xs[k] = float64(k)
		}
		longest = max(longest, len(offers))
		series = append(series, chart.ContinuousSeries{
			Name:    r.Controller,
			XValues: xs,
			YValues: offers,
			Style:   chart.Style{StrokeColor: seriesColors[i%len(seriesColors)], StrokeWidth: 2},
		})
	}
	levels := []float64{c}
	if m.C != c {
		levels = append(levels, m.C)
	}
	for i, level := range levels {
		name := fmt.Sprintf("capacity %g", level)
		if len(levels) > 1 {
			name += [...]string{" (before the change)", " (after)"}[i]
		}
		series = append(series, chart.ContinuousSeries{
			Name:    name,
			XValues: []float64{0, float64(longest - 1)},
			YValues: []float64{level, level},
			Style:   chart.Style{StrokeColor: drawing.ColorBlack, StrokeWidth: 1, StrokeDashArray: []float64{4, 4}},
		})
	}
	after := ""
	if m.C != c {
		after = fmt.Sprintf(", then %g", m.C)
	}
	// Ticks at the powers of ten up to the highest offer; the range ends a
	// little above it so a controller held at the ceiling stays visible.
	top := 1.0
	for _, r := range runs {
		top = max(top, slices.Max(r.Offers()))
	}
	var ticks []chart.Tick
	for v := 1.0; v <= top; v *= 10 {
		ticks = append(ticks, chart.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
	}
	ticks = append(ticks, chart.Tick{Value: 2 * top}) // unlabelled: sets the range's top
	var xticks []chart.Tick
	step := niceStep(float64(longest) / 10)
	for v := 0.0; v <= float64(longest-1); v += step {
		xticks = append(xticks, chart.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
	}
	graph := chart.Chart{
		Width:      1100,
		Height:     550,
		Background: chart.Style{Padding: chart.Box{Top: 40, Left: 20, Right: 20, Bottom: 20}},
		XAxis: chart.XAxis{
			Name:      fmt.Sprintf("windows (decisions) — model %q, capacity %g%s", m.Name, c, after),
			Style:     chart.Shown(),
			NameStyle: chart.Shown(),
			Ticks:     xticks,
		},
		YAxis: chart.YAxis{
			Name:      "offer (attempts/s, log scale)",
			Style:     chart.Shown(),
			NameStyle: chart.Shown(),
			Range:     &chart.LogarithmicRange{},
			Ticks:     ticks,
		},
		Series: series,
	}
	graph.Elements = []chart.Renderable{chart.LegendThin(&graph)}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	render := chart.SVG
	if strings.HasSuffix(strings.ToLower(path), ".png") {
		render = chart.PNG
	}
	if err := graph.Render(render, f); err != nil {
		f.Close()
		return fmt.Errorf("chart: rendering %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(max(x, 1))))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}
