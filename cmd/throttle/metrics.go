package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/metrics"
	"github.com/throttlekit/throttle/internal/script"
)

// mainPhase is the phase label of run's and demo's one phase (the
// governor's default phase name, as its log lines show it).
const mainPhase = "main"

// metricsServer is --metrics ADDR and the server it starts: run, demo and
// target serve Prometheus metrics on ADDR while they last. Its zero value
// (no --metrics) does nothing; every method is a no-op then.
type metricsServer struct {
	addr string
	reg  *metrics.Registry
	srv  *metrics.Server
}

func (m *metricsServer) register(fs *pflag.FlagSet) {
	fs.StringVar(&m.addr, "metrics", "", "serve Prometheus metrics on http://ADDR/metrics while the run lasts (the bound address is printed on stderr); loopback unless ADDR names a host: :9100, 127.0.0.1:0, 0.0.0.0:9100")
}

// start binds --metrics before any traffic is sent and prints the URL it
// serves on stderr, so that port 0 can be used. A bad ADDR is bad input; an
// address the machine refuses (in use) is a runtime failure. It is a no-op
// without --metrics or once started.
func (m *metricsServer) start(e env) error {
	if m.addr == "" || m.srv != nil {
		return nil
	}
	reg := metrics.New()
	srv, err := metrics.Listen(m.addr, reg)
	if err != nil {
		return listenFailure("metrics", m.addr, err)
	}
	m.reg, m.srv = reg, srv
	fmt.Fprintf(e.stderr, "metrics: serving %s\n", srv.URL())
	return nil
}

// stop shuts the server down (scrapes in progress finish); safe to call
// more than once.
func (m *metricsServer) stop() {
	if m.srv != nil {
		_ = m.srv.Close() // a failure to serve is no reason to fail the run after the fact
		m.srv = nil
	}
}

// phase returns the exporter of the phase about to run, with lat backing
// its latency histogram, or nil without --metrics. Chain its Observe into
// the engine's observer, then attach the engine.
func (m *metricsServer) phase(lat metrics.LatencySource) *metrics.Phase {
	if m.reg == nil {
		return nil
	}
	return metrics.NewPhase(mainPhase, lat)
}

// attach starts exporting p's engine; a no-op for a nil p.
func (m *metricsServer) attach(p *metrics.Phase, eng *engine.Engine) error {
	if p == nil {
		return nil
	}
	return m.reg.Register(p, metrics.Source{Limits: eng.Config().Limits, Snapshot: eng.Snapshot})
}

// addTarget exports the built-in target's own counters; a no-op without
// --metrics.
func (m *metricsServer) addTarget(phase string, t metrics.TargetSource) error {
	if m.reg == nil {
		return nil
	}
	return m.reg.AddTarget(phase, t)
}

// listenFailure words a failure to listen on --flag addr: an address the
// machine refused (in use, no permission) is a runtime failure, anything
// else (not an address, an unknown host) bad input.
func listenFailure(flag, addr string, err error) error {
	msg := fmt.Sprintf("--%s %s: %s", flag, addr, err)
	var sys *os.SyscallError
	if errors.As(err, &sys) {
		return errors.New(msg)
	}
	return usagef("%s", msg)
}

// scriptPhase starts exporting a k6 script's scenario phase; a no-op
// without --metrics.
func (m *metricsServer) scriptPhase(name string, lat metrics.LatencySource, src metrics.Source) error {
	if m.reg == nil {
		return nil
	}
	return m.reg.Register(metrics.NewPhase(name, lat), src)
}

// custom is the script runner's hook for its custom metrics (k6/metrics):
// each is exported beside the phases; nil without --metrics.
func (m *metricsServer) custom() func(string, script.MetricType) (func(string, float64) error, error) {
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
