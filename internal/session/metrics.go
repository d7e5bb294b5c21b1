package session

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/metrics"
	"github.com/throttlekit/throttle/internal/script"
)

// MainPhase is the phase label of a URL run's one phase (the governor's
// default phase name, as its log lines show it).
const MainPhase = "main"

// Metrics is --metrics ADDR and the server it starts: run, demo and target
// serve Prometheus metrics on ADDR while they last. Its zero value (no
// --metrics) does nothing; every method is a no-op then.
type Metrics struct {
	Addr string
	reg  *metrics.Registry
	srv  *metrics.Server
}

// Start binds --metrics before any traffic is sent and prints the URL it
// serves on w, so that port 0 can be used. A bad ADDR is bad input; an
// address the machine refuses (in use) is a runtime failure. It is a no-op
// without --metrics or once started.
func (m *Metrics) Start(w io.Writer) error {
	if m == nil || m.Addr == "" || m.srv != nil {
		return nil
	}
	reg := metrics.New()
	srv, err := metrics.Listen(m.Addr, reg)
	if err != nil {
		return ListenFailure("--metrics", m.Addr, err)
	}
	m.reg, m.srv = reg, srv
	fmt.Fprintf(w, "metrics: serving %s\n", srv.URL())
	return nil
}

// Stop shuts the server down (scrapes in progress finish); safe to call
// more than once.
func (m *Metrics) Stop() {
	if m != nil && m.srv != nil {
		_ = m.srv.Close() // a failure to serve is no reason to fail the run after the fact
		m.srv = nil
	}
}

// ListenFailure words a failure to listen on flag addr: an address the
// machine refused (in use, no permission) is a runtime failure, anything
// else (not an address, an unknown host) bad input.
func ListenFailure(flag, addr string, err error) error {
	var sys *os.SyscallError
	if errors.As(err, &sys) {
		return fmt.Errorf("%s %s: %s", flag, addr, err)
	}
	return Fieldf(flag, "%s: %s", addr, err)
}

// AddTarget exports the built-in target's own counters under phase.
func (m *Metrics) AddTarget(phase string, t metrics.TargetSource) error {
	if m == nil || m.reg == nil {
		return nil
	}
	return m.reg.AddTarget(phase, t)
}

// urlPhase returns the exporter of a URL run's phase, with lat backing its
// latency histogram, or nil without --metrics.
func (m *Metrics) urlPhase(lat metrics.LatencySource) *metrics.Phase {
	if m.reg == nil {
		return nil
	}
	return metrics.NewPhase(MainPhase, lat)
}

// attach starts exporting p's engine; a no-op for a nil p.
func (m *Metrics) attach(p *metrics.Phase, eng *engine.Engine) error {
	if p == nil {
		return nil
	}
	return m.reg.Register(p, metrics.Source{Limits: eng.Config().Limits, Snapshot: eng.Snapshot})
}

// scriptPhase starts exporting a k6 script's scenario phase.
func (m *Metrics) scriptPhase(name string, lat metrics.LatencySource, src metrics.Source) error {
	if m.reg == nil {
		return nil
	}
	return m.reg.Register(metrics.NewPhase(name, lat), src)
}

// custom is the script runner's hook for its custom metrics (k6/metrics):
// each is exported beside the phases; nil without --metrics.
func (m *Metrics) custom() func(string, script.MetricType) (func(string, float64) error, error) {
	if m.reg == nil {
		return nil
	}
	kinds := map[script.MetricType]metrics.Kind{script.Counter: metrics.Counter, script.Gauge: metrics.Gauge, script.Rate: metrics.Rate, script.Trend: metrics.Trend}
	return func(name string, t script.MetricType) (func(string, float64) error, error) {
		c, err := m.reg.Custom(name, kinds[t])
		if err != nil {
			return nil, err
		}
		return c.Add, nil
	}
}
