package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/live"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/session"
	"github.com/throttlekit/throttle/internal/target"
	"github.com/throttlekit/throttle/internal/targets"
)

// The demo's settings. At 800 req/s a 1 s window holds ~800 attempts, so the
// window's failure fraction has a sampling error of about 0.8 % at the 5 %
// bound: small against the 1 %–5 % dead band, so each decision rests on real
// evidence, and the 30 s phase has room for the climb (about 7 windows from
// 25/s) and 15–20 settled windows. The tick is the default, window/5 =
// 200 ms, so a gross breach is decided a fifth of a window in. The floor of 10/s keeps every window above
// --min-attempts (20) within 2 s even at the floor.
const (
	demoCapacity = 800
	demoDuration = 30 * time.Second
	demoWindow   = time.Second
	demoFloor    = 10
	demoStart    = 25
	demoCeiling  = 10000
)

type demoFlags struct {
	phaseFlags
	builtinFlags
	ceiling float64
	script  string
	env     []string
	grpc    bool
}

// builtinFlags describe the built-in target, for demo and target.
type builtinFlags struct {
	capacity      float64
	model         target.Model
	latency       time.Duration
	servers       int
	queueDepth    int
	dropAbandoned bool
}

// demoServers is the backlog model's default worker count: with the default
// capacity and latency it is consistent (4 servers / 5 ms = 800 req/s).
const demoServers = 4

func (b *builtinFlags) register(fs *pflag.FlagSet, capacityHelp string) {
	b.model = target.Shed
	fs.Float64Var(&b.capacity, "capacity", demoCapacity, capacityHelp)
	fs.Var(&b.model, "model", "what the target does above capacity: shed (503 at once), queue (wait, then 503), collapse (goodput falls) or backlog (servers behind a deep queue: 200, only later)")
	fs.DurationVar(&b.latency, "latency", target.DefaultLatency, "the target's service time")
	fs.IntVar(&b.servers, "servers", demoServers, "backlog model: workers, each serving one request for --latency (capacity = servers / latency; give two of --capacity, --latency, --servers)")
	fs.IntVar(&b.queueDepth, "queue-depth", 0, fmt.Sprintf("queue and backlog models: requests that may wait (default: 100ms of capacity for queue, %d for backlog)", target.DefaultBacklogDepth))
	fs.BoolVar(&b.dropAbandoned, "drop-abandoned", false, "backlog model: a request whose client gave up leaves the queue (default: it still takes a server when it reaches the front, a zombie)")
}

// config is the target's configuration; concurrent makes capacity a bound
// on requests in service. The backlog model is always concurrent (its
// servers); there --capacity is req/s and, of --capacity, --latency and
// --servers, the one not given follows from the other two.
func (b *builtinFlags) config(fs *pflag.FlagSet, concurrent bool) (target.Config, error) {
	tc := target.NewConfig(b.capacity)
	tc.Model, tc.Latency, tc.Concurrent = b.model, b.latency, concurrent
	backlog := b.model == target.Backlog
	switch {
	case !backlog && fs.Changed("servers"):
		return tc, usagef("--servers applies to --model backlog only")
	case !backlog && b.dropAbandoned:
		return tc, usagef("--drop-abandoned applies to --model backlog only")
	case fs.Changed("queue-depth") && b.model != target.Queue && !backlog:
		return tc, usagef("--queue-depth applies to --model queue or backlog only")
	case fs.Changed("queue-depth") && b.queueDepth <= 0:
		return tc, usagef("--queue-depth must be > 0, got %d", b.queueDepth)
	case backlog && concurrent:
		return tc, usagef("--concurrent does not apply to --model backlog: its concurrency is --servers")
	case backlog && b.servers <= 0:
		return tc, usagef("--servers must be > 0, got %d", b.servers)
	}
	if fs.Changed("queue-depth") {
		tc.QueueDepth = b.queueDepth
	}
	if backlog {
		if err := b.backlog(fs, &tc); err != nil {
			return tc, err
		}
	}
	if err := tc.Validate(); err != nil {
		return tc, usageError{Err: err}
	}
	return tc, nil
}

// backlog fills in the backlog model: servers and service time, the one of
// --capacity and --latency not given derived from the other.
func (b *builtinFlags) backlog(fs *pflag.FlagSet, tc *target.Config) error {
	tc.Concurrent, tc.Capacity, tc.DropAbandoned = true, float64(b.servers), b.dropAbandoned
	if !fs.Changed("queue-depth") {
		tc.QueueDepth = target.DefaultBacklogDepth
	}
	switch {
	case fs.Changed("capacity") && !fs.Changed("latency"):
		if !(b.capacity > 0) || math.IsInf(b.capacity, 0) {
			return usagef("capacity must be > 0, got %v", b.capacity)
		}
		tc.Latency = time.Duration(math.Round(float64(b.servers) / b.capacity * float64(time.Second)))
	case fs.Changed("capacity"):
		if want := tc.PerSecond(); b.latency <= 0 || math.Abs(want-b.capacity) > 1e-6*b.capacity {
			return usagef("--capacity %s disagrees with --servers %d / --latency %v = %s req/s; give two of the three",
				live.Short(b.capacity), b.servers, b.latency, live.Short(want))
		}
	}
	return nil
}

func newDemoCmd(e env) *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Find the capacity of a built-in target whose true capacity is known",
		Long:  fmt.Sprintf(helpText("demo"), demoCapacity, demoDuration, demoWindow, governor.DefaultTickFor(demoWindow), demoFloor, demoStart, demoCeiling),
		Example: `  throttle demo
  throttle demo --capacity 2000 --model queue
  throttle demo --model backlog --servers 2 --latency 10ms   # a thread pool: 200 req/s, every answer 200
  throttle demo --duration 60s --window 2s --chart demo.html --out demo.json
  throttle demo --script examples/scripts/capacity.js
  throttle demo --grpc --script examples/scripts/grpc-capacity.js`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd, e) },
	}
	var g flagGroups
	f.builtinFlags.register(g.group("Built-in target"), "the built-in target's true capacity, req/s")
	g.group("Load").Float64Var(&f.ceiling, "rate", demoCeiling, "the phase's ceiling, iterations/s")
	f.phaseFlags.register(&g, phaseDefaults{duration: demoDuration, window: demoWindow, floor: demoFloor, start: demoStart})
	k6 := g.group("k6 script")
	k6.StringVar(&f.script, "script", "", "run this k6 script against the built-in target (__ENV.BASE is its URL)")
	k6.StringArrayVarP(&f.env, "env", "e", nil, "with --script: KEY=VALUE for __ENV (repeatable)")
	k6.BoolVar(&f.grpc, "grpc", false, "with --script: serve the target as a gRPC Echo service (echo.proto, reflection; RESOURCE_EXHAUSTED where it sheds); __ENV.BASE is its host:port")
	g.install(cmd)
	return cmd
}

func (f *demoFlags) run(cmd *cobra.Command, e env) error {
	fs := cmd.Flags()
	tc, err := f.config(fs, false)
	if err != nil {
		return err
	}
	if f.script != "" {
		return f.runScript(fs, tc, e)
	}
	if err := f.notWithoutScript(fs, "--script FILE"); err != nil {
		return err
	}
	u, err := f.phaseRun(fs, governor.Rate, f.ceiling, "--rate")
	if err != nil {
		return err
	}
	ss := f.session(e)
	srv, stop, err := ss.ServeBuiltin(tc, session.MainPhase)
	if err != nil {
		return err
	}
	defer stop()
	defer f.metrics.Stop()
	if u.Engine.Targets, err = targets.FromURLs([]string{srv.URL() + "/"}, "GET", nil, nil); err != nil {
		return err
	}
	u.Settings.Target, u.After = tc.String(), foundVsTrue(tc)
	if !f.quiet {
		fmt.Fprintf(e.stderr, "demo: %s on %s; governing %v from %s/s (ceiling %s/s)\n",
			tc, srv.URL(), f.duration, live.Short(u.Engine.Limits.Start), live.Short(u.Engine.Limits.Ceiling))
	}
	return ss.RunURL(u)
}

// foundVsTrue prints the capacity a report found beside the true one.
func foundVsTrue(tc target.Config) func(io.Writer, *report.Report) {
	return func(w io.Writer, r *report.Report) {
		c, truth := r.Capacity, tc.PerSecond()
		if !c.Found {
			fmt.Fprintf(w, "\nno capacity found (%s); the true capacity is %s req/s\n", r.Outcome, live.Short(truth))
			return
		}
		// Rounded before printing, so a deviation under 0.05 % prints +0.0,
		// not -0.0.
		dev := math.Round(1000*(c.GoodputPerS-truth)/truth) / 10
		if dev == 0 {
			dev = 0 // -0 → +0
		}
		fmt.Fprintf(w, "\nfound %s req/s vs true %s req/s (%+.1f %%)\n", live.Short(c.GoodputPerS), live.Short(truth), dev)
	}
}

// runScript is demo --script: the script against the built-in target.
func (f *demoFlags) runScript(fs *pflag.FlagSet, tc target.Config, e env) error {
	sc, err := f.scriptRun(fs, scriptRun{path: f.script, env: f.env}, foundVsTrue(tc))
	if err != nil {
		return err
	}
	ss := f.session(e)
	addr, stop, err := ss.ServeScriptTarget(tc, "target", f.grpc)
	if err != nil {
		return err
	}
	defer stop()
	defer f.metrics.Stop()
	if !f.quiet {
		fmt.Fprintf(e.stderr, "demo: %s on %s; running %s against it\n", tc, addr, f.script)
	}
	sc.Config.Env["BASE"] = addr
	return ss.RunScript(sc)
}
