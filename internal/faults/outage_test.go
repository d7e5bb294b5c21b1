package faults

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/session"
	"github.com/throttlekit/throttle/internal/targets"
)

// runGoverned runs a governed URL phase (start 100/s, 300 ms windows)
// against u for 2 s and returns its windows.
func runGoverned(t *testing.T, u string) []governor.Window {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	l := governor.NewLimits(governor.Rate, 400)
	l.Start, l.Floor, l.Window = 100, 10, 300*time.Millisecond
	var res *engine.Result
	s := &session.Session{Stdout: io.Discard, Stderr: io.Discard, Quiet: true, Finished: func(r *engine.Result) { res = r }}
	cfg := engine.Config{Targets: []targets.Target{{Method: "GET", URL: pu, Header: http.Header{}}},
		Limits: l, Duration: 2 * time.Second, Timeout: 300 * time.Millisecond, Tick: 50 * time.Millisecond, Grace: time.Second}
	if err := s.RunURL(session.URL{Engine: cfg, Settings: report.Settings{Target: u}}); err != nil {
		t.Fatal(err)
	}
	if len(res.Windows) < 2 {
		t.Fatalf("%d windows closed", len(res.Windows))
	}
	return res.Windows
}

// The outage boundary in a real run: a target that answers 503 to
// everything is shedding — congestion: back-offs, last_bad set, never an
// outage; one that closes every connection before answering is out: the
// offer holds at the start and last_bad is never set from it.
func TestOutageBoundaryRealRun(t *testing.T) {
	shed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer shed.Close()
	var backoffs int
	for _, w := range runGoverned(t, shed.URL+"/") {
		if w.Decision.Signal == governor.SignalOutage {
			t.Fatalf("503s judged an outage: %+v", w.Decision)
		}
		if w.Decision.Signal == governor.SignalBackoff {
			backoffs++
		}
	}
	if backoffs == 0 {
		t.Error("503s to everything: no back-off")
	}

	down := rawServer(t, func(c net.Conn) { c.Close() })
	var outages int
	for _, w := range runGoverned(t, "http://"+down+"/") {
		if w.Decision.Signal == governor.SignalOutage {
			outages++
			if w.Decision.LastBad != 0 || w.Decision.Offer != 100 {
				t.Errorf("an outage window moved the governor: offer %v → %v, last_bad %v", w.Offer, w.Decision.Offer, w.Decision.LastBad)
			}
		}
	}
	if outages == 0 {
		t.Error("every connection closed before an answer: no outage window")
	}
}
