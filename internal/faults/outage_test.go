package faults

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/session"
	"github.com/throttlekit/throttle/internal/targets"
	"github.com/throttlekit/throttle/internal/testwait"
)

// runGoverned runs a governed URL phase (start 100/s, 300 ms windows)
// against u until it has closed 5 windows (an idle machine closes 6 in
// 2 s), interrupts it as Ctrl-C does and returns its windows: a fixed 2 s
// run closed a single window on a starved machine (-cpu 1 beside eight
// busy loops, 2 of 10 runs), since after each back-off the next window
// waits for the attempts in flight to drain. The boundary is in how the
// attempts resolve (503s are answers, closes before a byte find no
// server), so the phase judges resolved attempts only: the servers share
// the test's process with the generator, and on a starved machine a
// server goroutine that runs 200 ms late grows the attempts in flight,
// which the unserved evidence rightly takes for congestion (a back-off
// with nothing resolved, last_bad set before the first close was seen:
// shown by delaying the closes 400 ms). For the same reason the timeout
// is generous: at 300 ms such a server timed reads out, failures with an
// answer still due (congestion, not an outage), and could time dials out
// among the 503s (unreachable: an outage).
func runGoverned(t *testing.T, u string) []governor.Window {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	l := governor.NewLimits(governor.Rate, 400)
	l.Start, l.Floor, l.Window = 100, 10, 300*time.Millisecond
	var res *engine.Result
	var eng atomic.Pointer[engine.Engine]
	sig := make(chan os.Signal, 1)
	s := &session.Session{Stdout: io.Discard, Stderr: io.Discard, Quiet: true, Signals: sig,
		Started: func(e *engine.Engine) { eng.Store(e) }, Finished: func(r *engine.Result) { res = r }}
	cfg := engine.Config{Targets: []targets.Target{{Method: "GET", URL: pu, Header: http.Header{}}},
		Limits: l, Duration: 4 * testwait.Deadline, Timeout: 5 * time.Second, Tick: 50 * time.Millisecond, Grace: time.Second,
		Governor: []governor.Option{governor.WithEvidence(governor.EvidenceAll &^ governor.EvidenceUnserved)}}
	done := make(chan error, 1)
	go func() { done <- s.RunURL(session.URL{Engine: cfg, Settings: report.Settings{Target: u}}) }()
	testwait.Until(t, testwait.Deadline, "5 windows closed", func() bool {
		e := eng.Load()
		return e != nil && e.Snapshot().Governor.Windows >= 5
	})
	sig <- os.Interrupt
	if err := testwait.Receive(t, done, "the run to end after its interrupt"); err != nil {
		t.Fatal(err)
	}
	if len(res.Windows) < 5 {
		t.Fatalf("%d windows closed", len(res.Windows))
	}
	for _, w := range res.Windows {
		t.Logf("window %v..%v offer %v ok %d failed %d: %v → %v last_bad %v", w.Start.Sub(res.Start).Round(time.Millisecond), w.End.Sub(res.Start).Round(time.Millisecond), w.Offer, w.OK, w.Failed, w.Decision.Signal, w.Decision.Offer, w.Decision.LastBad)
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
