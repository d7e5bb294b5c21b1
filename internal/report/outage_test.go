package report

import (
	"strings"
	"testing"
)

// Adjacent outage windows merge into one interval; the text report lists
// each interval on one line.
func TestOutagesListed(t *testing.T) {
	r := &Report{Windows: []WindowJSON{
		{StartS: 0, EndS: 5, Signal: "probe"},
		{StartS: 5, EndS: 10, Signal: "outage"},
		{StartS: 10, EndS: 15, Signal: "outage"},
		{StartS: 15, EndS: 20, Signal: "probe"},
		{StartS: 20, EndS: 25.5, Signal: "outage"},
	}}
	if got := strings.Join(r.outages(), ", "); got != "5.0–15.0s, 20.0–25.5s" {
		t.Fatalf("outages %q", got)
	}
}
