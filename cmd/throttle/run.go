package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/phase"
	"github.com/throttlekit/throttle/internal/session"
	"github.com/throttlekit/throttle/internal/targets"
)

// runFlags are run's own flags.
type runFlags struct {
	phaseFlags
	urls        []string
	targetsFile string
	method      string
	headers     []string
	body        string
	rate        float64
	concurrency float64
	insecure    bool
	env         []string
	http2       bool
	agents      agentFlags
}

func newRunCmd(e env) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] [URL... | script.js]",
		Short: "Govern a load phase against HTTP targets and report their capacity",
		Long:  helpText("run"),
		Example: `  # Open loop up to 5000 req/s, default bound (5 % attempt failures):
  throttle run --rate 5000 http://127.0.0.1:8080/

  # Closed loop up to 64 in flight, 3 tries per iteration, reports to files:
  throttle run --concurrency 64 --tries 3 --targets targets.txt \
      --out report.json --timeline windows.csv --chart chart.html

  # A robust target: start at 500/s, judge 2-second windows, 1 % bound:
  throttle run --rate 20000 --start 500 --window 2s --high 0.01 https://api.internal/health

  # Baseline for comparison: fixed load at the ceiling, no governor:
  throttle run --rate 800 --no-governor --duration 30s http://127.0.0.1:8080/

  # A k6 script (governed if it imports k6/x/throttle, or with --govern):
  throttle run -e BASE=http://127.0.0.1:8080 --out report.json script.js`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, args, e)
		},
	}
	var g flagGroups
	fs := g.group("Target")
	fs.StringArrayVar(&f.urls, "url", nil, "a target URL (repeatable; URLs may also be given as arguments)")
	fs.StringVar(&f.targetsFile, "targets", "", "targets file in vegeta's HTTP format (\"-\" reads stdin)")
	fs.StringVar(&f.method, "method", "GET", "HTTP method for URL targets")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "request header \"Key: Value\" (repeatable; added to every target)")
	fs.StringVar(&f.body, "body", "", "request body for URL targets; @path reads it from a file")
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification (it is on by default)")
	fs.BoolVar(&f.http2, "http2", false, "send with net/http, which speaks HTTP/2 to servers that offer it over TLS (default: HTTP/1.1 on throttle's event loop or fasthttp, the faster clients)")
	fs = g.group("Load")
	fs.Float64Var(&f.rate, "rate", 0, "open loop: the ceiling in iterations per second")
	fs.Float64Var(&f.concurrency, "concurrency", 0, "closed loop: the ceiling in iterations in flight (a whole number)")
	f.register(&g, phaseDefaults{duration: 2 * time.Minute, window: governor.DefaultWindow, floor: governor.DefaultFloor, start: governor.DefaultFloor})
	g.group("k6 script").StringArrayVarP(&f.env, "env", "e", nil, "k6 script: KEY=VALUE for __ENV (repeatable)")
	f.agents.register(&g)
	g.install(cmd)
	return cmd
}

func (f *runFlags) run(cmd *cobra.Command, args []string, e env) error {
	fs := cmd.Flags()
	agents, err := f.agents.on(fs)
	if err != nil {
		return err
	}
	if err := phase.TraceWatchFromEnv(); err != nil {
		return usageError{Err: err}
	}
	for _, a := range args {
		if session.IsScript(a) {
			if len(args) > 1 {
				return usagef("a k6 script runs alone: give %s without URLs", a)
			}
			slack, err := timerSlack()
			if err != nil {
				return usageError{Err: err}
			}
			if agents {
				return f.runScriptAgents(fs, e, scriptRun{path: a, env: f.env, insecure: f.insecure, http2: f.http2}, slack)
			}
			if e.reexec != nil {
				if err := e.reexec(slack); err != nil {
					fmt.Fprintf(e.stderr, "throttle: %s: %v\n", timerSlackEnv, err)
				}
			}
			return f.runScript(fs, e, scriptRun{path: a, env: f.env, insecure: f.insecure, http2: f.http2})
		}
	}
	if err := f.notWithoutScript(fs, "a script"); err != nil {
		return err
	}
	u, err := f.urlRun(fs, args, e)
	if err != nil {
		return err
	}
	if agents {
		return f.session(e).RunAgents(u, f.agents.config(e, 0)) // open-loop pacing keeps the kernel's slack
	}
	return f.session(e).RunURL(u)
}

// urlRun is the URL run the flags describe, validated.
func (f *runFlags) urlRun(fs *pflag.FlagSet, args []string, e env) (session.URL, error) {
	mode, ceiling, ceilingFlag := governor.Rate, f.rate, "--rate"
	switch rate, conc := fs.Changed("rate"), fs.Changed("concurrency"); {
	case rate && conc:
		return session.URL{}, usagef("--rate and --concurrency conflict: give one (open loop or closed loop)")
	case !rate && !conc:
		return session.URL{}, usagef("give --rate N (open loop, iterations/s) or --concurrency N (closed loop, in flight): it is the ceiling")
	case conc:
		mode, ceiling, ceilingFlag = governor.Concurrency, f.concurrency, "--concurrency"
		if fs.Changed("max-vus") {
			return session.URL{}, usagef("--max-vus bounds the open-loop (--rate) pool; with --concurrency the ceiling bounds the workers")
		}
	}
	u, err := f.phaseRun(fs, mode, ceiling, ceilingFlag)
	if err != nil {
		return u, err
	}
	u.Engine.Targets, err = f.targets(fs, args, e)
	if err != nil {
		return u, err
	}
	u.Engine.Insecure, u.Engine.HTTP2, u.Settings.Target = f.insecure, f.http2, describe(u.Engine.Targets)
	return u, nil
}

// phaseRun is a URL phase from the shared flags, validated once: run's and
// demo's (the caller adds the targets).
func (p *phaseFlags) phaseRun(fs *pflag.FlagSet, mode governor.Mode, ceiling float64, ceilingFlag string) (session.URL, error) {
	gopts, err := p.governorSettings(fs)
	if err != nil {
		return session.URL{}, err
	}
	l, err := p.limits(fs, mode, ceiling, ceilingFlag)
	if err != nil {
		return session.URL{}, err
	}
	fail, err := engine.ParseFailOn(p.failOn)
	if err != nil {
		return session.URL{}, usageError{Err: err}
	}
	grace := p.grace
	if grace == 0 {
		grace = -1 // the engine's zero means its default; --grace 0 means no wait
	}
	cfg := engine.Config{Limits: l, Fixed: p.noGovernor, Duration: p.duration, MaxVUs: p.maxVUs, Timeout: p.timeout,
		Tries: p.tries, FailOn: &fail, Slow: p.slow, Grace: grace, Tick: p.tick, Settle: p.settle, Governor: gopts}
	return session.URL{Engine: cfg, Settings: p.reportSettings()}, nil
}

// targets builds the target list from a targets file or the URLs.
func (f *runFlags) targets(fs *pflag.FlagSet, args []string, e env) ([]targets.Target, error) {
	header := http.Header{}
	for _, h := range f.headers {
		k, v, err := targets.ParseHeader(h)
		if err != nil {
			return nil, usagef("-H: %v", err)
		}
		header.Add(k, v)
	}
	urls := append(append([]string(nil), f.urls...), args...)
	if f.targetsFile != "" {
		if len(urls) > 0 {
			return nil, usagef("--targets conflicts with URLs: give a targets file or URLs, not both")
		}
		for _, name := range []string{"method", "body"} {
			if fs.Changed(name) {
				return nil, usagef("--%s applies to URL targets; with --targets put it in the file", name)
			}
		}
		tg, err := targets.Load(f.targetsFile, e.stdin)
		if err != nil {
			return nil, usageError{Err: err}
		}
		for i := range tg {
			for k, vs := range header {
				tg[i].Header[k] = append(tg[i].Header[k], vs...)
			}
		}
		return tg, nil
	}
	if len(urls) == 0 {
		return nil, usagef("no target: give a URL (throttle run --rate 100 http://127.0.0.1:8080/) or --targets FILE")
	}
	var body []byte
	if strings.HasPrefix(f.body, "@") {
		b, err := os.ReadFile(f.body[1:])
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, usagef("--body %s: %v", f.body, err)
		}
		body = b
	} else if f.body != "" {
		body = []byte(f.body)
	}
	tg, err := targets.FromURLs(urls, f.method, header, body)
	if err != nil {
		return nil, usageError{Err: err}
	}
	return tg, nil
}

// describe names what a phase loads, for the report: the first target and
// how many more.
func describe(tg []targets.Target) string {
	s := tg[0].Method + " " + tg[0].URL.Redacted() // a password in the URL stays out of the report
	if len(tg) > 1 {
		s += fmt.Sprintf(" (+%d more)", len(tg)-1)
	}
	return s
}
