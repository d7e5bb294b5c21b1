package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/session"
)

// isScript reports whether a run argument names a k6 script rather than a
// URL.
func isScript(arg string) bool {
	if strings.Contains(arg, "://") {
		return false
	}
	switch strings.ToLower(filepath.Ext(arg)) {
	case ".js", ".mjs", ".ts":
		return true
	}
	return false
}

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
func (o scriptOverrides) config(env map[string]string) script.Config {
	cfg := script.Config{Env: env, Governance: o.Governance, Fixed: o.Fixed, Govern: o.Govern}
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
	cli, k6env, err := p.k6Options(fs)
	if err != nil {
		return session.Script{}, err
	}
	vars, err := s.scriptEnv()
	if err != nil {
		return session.Script{}, err
	}
	cfg := p.overrides(fs).config(vars)
	cfg.SystemEnv = systemEnv()
	cfg.Tick, cfg.Settle, cfg.Governor, cfg.Insecure, cfg.HTTP2, cfg.Slow = p.tick, p.settle, gopts, s.insecure, s.http2, p.slow
	cfg.CLIOptions, cfg.EnvOptions = cli, k6env
	// The command line's outputs replace K6_OUT's, as k6's precedence has it.
	outs := p.outs
	if len(outs) == 0 {
		outs = k6env.Out
	}
	_, k6outs, err := session.SplitOuts(outs)
	if err != nil {
		return session.Script{}, err
	}
	export := p.summaryExport
	if export == "" && k6env.SummaryExport != nil {
		export = *k6env.SummaryExport
	}
	return session.Script{Path: s.path, Config: cfg, SummaryExport: export, Outs: k6outs, After: after,
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

// scriptEnv is __ENV's -e KEY=VALUE (the demo sets BASE after it); the
// process environment goes under it (systemEnv) unless
// includeSystemEnvVars is false.
func (s *scriptRun) scriptEnv() (map[string]string, error) {
	env := map[string]string{}
	for _, kv := range s.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("-e %q: want KEY=VALUE", kv)
		}
		env[k] = v
	}
	return env, nil
}

// systemEnv is the process environment as a map.
func systemEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}
