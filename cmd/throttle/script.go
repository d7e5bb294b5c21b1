package main

import (
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/session"
)

// notForScripts are run's flags that have no meaning for a script: the
// script's options and code say what they say for a URL run.
var notForScripts = map[string]string{
	"rate":        "the scenarios' executors set the rate",
	"concurrency": "the scenarios' executors set the VUs",
	"url":         "the script makes its own requests",
	"targets":     "the script makes its own requests",
	"method":      "the script makes its own requests",
	"header":      "the script sets its own headers",
	"body":        "the script sets its own bodies",
	"max-vus":     "maxVUs is a scenario option",
	"tries":       "use throttle.tries(n, fn) from k6/x/throttle",
	"fail-on":     "a response callback (http.setResponseCallback) says what fails",
	"grace":       "gracefulStop is a scenario option",
}

// scriptRun is one k6 script run from the command line.
type scriptRun struct {
	path     string
	env      []string // -e KEY=VALUE
	insecure bool
	http2    bool
}

// scriptOverrides are what the command line sets over a script's own
// settings (its options and throttle.configure): gathered in one value and
// resolved in one place, overrides.config.
type scriptOverrides struct {
	// Governance overrides every scenario's governor settings.
	Governance script.Governance
	// Timeout overrides the default request timeout (nil: k6's).
	Timeout *time.Duration
	// Fixed runs every scenario as authored; Govern governs every one.
	Fixed, Govern bool
}

// overrides gathers the flags the user gave for a script.
func (p *phaseFlags) overrides(fs *pflag.FlagSet) scriptOverrides {
	o := scriptOverrides{Fixed: p.noGovernor, Govern: p.govern}
	g := &o.Governance
	for name, set := range map[string]func(){
		"floor": func() { g.Floor = &p.floor }, "start": func() { g.Start = &p.start }, "high": func() { g.High = &p.high },
		"low": func() { g.Low = &p.low }, "window": func() { g.Window = &p.window }, "min-attempts": func() { g.MinAttempts = &p.minAttempts },
	} {
		if fs.Changed(name) {
			set()
		}
	}
	if fs.Changed("timeout") {
		o.Timeout = &p.timeout
	}
	return o
}

// config is the one place where the command line's settings meet the
// script's: flags over the script's options and configure, the script's
// over the defaults (script.Load resolves what lies in the script).
func (o scriptOverrides) config() script.Config {
	cfg := script.Config{Governance: o.Governance, Fixed: o.Fixed, Govern: o.Govern}
	if o.Timeout != nil {
		cfg.Timeout = *o.Timeout
	}
	return cfg
}

// scriptRun checks the flags for a script run, before any traffic, and
// returns it. after, if set, gets the top scenario's report (demo's found
// vs true).
func (p *phaseFlags) scriptRun(fs *pflag.FlagSet, s scriptRun, after func(io.Writer, *report.Report)) (session.Script, error) {
	for name, why := range notForScripts {
		if fs.Changed(name) {
			return session.Script{}, usagef("--%s does not apply to a k6 script: %s", name, why)
		}
	}
	if p.noGovernor && p.govern {
		return session.Script{}, usagef("--govern conflicts with --no-governor")
	}
	if err := p.notWithNoGovernor(fs, "every scenario runs as authored"); err != nil {
		return session.Script{}, err
	}
	gopts, err := p.governorSettings(fs)
	if err != nil {
		return session.Script{}, err
	}
	cfg := p.overrides(fs).config()
	cfg.Tick, cfg.Settle, cfg.Governor, cfg.Insecure, cfg.HTTP2, cfg.Slow = p.tick, p.settle, gopts, s.insecure, s.http2, p.slow
	outs, export, err := session.K6Config(session.K6Source{Given: p.k6Given(fs), EnvPairs: s.env, Outs: p.outs, SummaryExport: p.summaryExport}, &cfg)
	if err != nil {
		return session.Script{}, err
	}
	return session.Script{Path: s.path, Config: cfg, SummaryExport: export, Outs: outs, After: after,
		Settings: p.reportSettings()}, nil
}

// runScript runs the script the flags describe.
func (p *phaseFlags) runScript(fs *pflag.FlagSet, e env, s scriptRun) error {
	sc, err := p.scriptRun(fs, s, nil)
	if err != nil {
		return err
	}
	return p.session(e).RunScript(sc)
}
