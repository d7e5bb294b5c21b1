package session

import (
	"errors"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/script"
)

// panicky is an output whose Point panics on every other point, and whose
// Close panics: the test hook for a buggy output.
type panicky struct{ points, written int }

func (p *panicky) Point(*script.Metric, float64, map[string]string) {
	p.points++
	if p.points%2 == 0 {
		panic("output bug")
	}
	p.written++
}

func (p *panicky) Close() error { panic("close bug") }

type plain struct{ written int }

func (p *plain) Point(*script.Metric, float64, map[string]string) { p.written++ }
func (p *plain) Close() error                                     { return nil }

// A panic in one k6 output is recovered, logged once, counted: the other
// output gets every point and the run goes on; Close says what was lost.
func TestOutputPanicRecovered(t *testing.T) {
	bad, good := &panicky{}, &plain{}
	ws := []pointWriter{bad, good}
	var warned []string
	points := fanOut(ws, func(s string) { warned = append(warned, s) })
	for range 6 {
		points(nil, 1, nil)
	}
	if bad.written != 3 || good.written != 6 {
		t.Fatalf("written %d and %d, want 3 and 6", bad.written, good.written)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "output bug") || !strings.Contains(warned[0], "*session.panicky") {
		t.Fatalf("warned %q: want one line naming the output and the panic", warned)
	}
	if err := ws[0].Close(); err == nil || !strings.Contains(err.Error(), "close bug") {
		t.Fatalf("close: %v", err)
	}
	if err := ws[1].Close(); err != nil {
		t.Fatal(err)
	}
	if unguarded(ws[1]) != good {
		t.Fatal("unguarded does not return the output")
	}
	if err := safely(func() error { return errors.New("plain") }); err == nil || err.Error() != "plain" {
		t.Fatalf("safely changed a plain error: %v", err)
	}
}
