package script

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/phase"
	"github.com/throttlekit/throttle/internal/script/bundle"
	"github.com/throttlekit/throttle/internal/script/options"
)

// DefaultTimeout is k6's default request timeout.
const DefaultTimeout = 60 * time.Second

// Governance are governor settings for a scenario; a nil field is not set.
// The CLI's flags and the script's throttle.configure each give one; flags
// win over the script, the script over the defaults.
type Governance struct {
	Floor, Start, High, Low *float64
	Window                  *time.Duration
	MinAttempts             *uint64
}

// over returns g with the fields set in o replacing its own.
func (g Governance) over(o Governance) Governance {
	if o.Floor != nil {
		g.Floor = o.Floor
	}
	if o.Start != nil {
		g.Start = o.Start
	}
	if o.High != nil {
		g.High = o.High
	}
	if o.Low != nil {
		g.Low = o.Low
	}
	if o.Window != nil {
		g.Window = o.Window
	}
	if o.MinAttempts != nil {
		g.MinAttempts = o.MinAttempts
	}
	return g
}

// Config is how a script runs. Zero fields take the documented defaults.
type Config struct {
	// Env fills __ENV (-e); SystemEnv, the process environment, under it
	// unless includeSystemEnvVars is false.
	Env, SystemEnv map[string]string
	// Governance overrides every scenario's governor settings (CLI flags).
	Governance Governance
	// Fixed runs every scenario exactly as authored (--no-governor).
	Fixed bool
	// Govern governs every scenario of the script (--govern), as importing
	// k6/x/throttle does; otherwise the scenarios run as authored.
	Govern bool
	// Watch tunes the generator's watch of itself in every scenario.
	Watch phase.WatchConfig
	// Tick and Settle are the governors' (default governor.DefaultTick, 0).
	Tick, Settle time.Duration
	// Governor are options every scenario's governor gets after the
	// runner's own (early breach, evidence: the CLI's --early-breach and
	// --evidence).
	Governor []governor.Option
	// Timeout is the default request timeout (default DefaultTimeout).
	Timeout time.Duration
	// Insecure skips TLS verification.
	Insecure bool
	// Interrupt, when closed while Load runs the init context, stops it
	// (sobek's Runtime.Interrupt): a script that loops forever at top
	// level ends on the first Ctrl-C with ErrInterrupted.
	Interrupt <-chan struct{}
	// InitMemory is the most heap the process may hold while Load runs the
	// init context (default DefaultInitMemory; < 0: no limit): a script
	// that allocates without end at top level is stopped there with
	// ErrInitMemory, naming its line, before the machine runs out.
	InitMemory int64
	// MemoryBound is the most memory the process may take (the CLI's
	// THROTTLE_MEMORY bound): while VUs are made in bulk the GC is held
	// off up to it (initgc.go). <= 0: 90 % of MachineMemory.
	MemoryBound int64
	// MemoryShare is how many processes share this machine's memory
	// (--local-agents N; <= 1: this one alone): the GC hold's default
	// bound and its share of the memory available are divided by it, so
	// N agents holding their GC at once cannot together take more than
	// the machine has.
	MemoryShare int
	// InitTimeout is how long an init context may run (default
	// DefaultInitTimeout; < 0: no limit): past it, it stops with
	// ErrInitTimeout naming its line.
	InitTimeout time.Duration
	// BodyLimit is the most bytes one response body a script keeps may
	// hold (default engine.DefaultBodyLimit); a longer body fails its
	// request with error_code 1601. A discarded body (responseType "none",
	// options.discardResponseBodies) has no limit and costs no memory.
	BodyLimit int64
	// Logger receives the governors' movement lines and the runner's
	// warnings (default: discard).
	Logger *slog.Logger
	// Console receives console.log and friends (default: Logger).
	Console func(level slog.Level, msg string)
	// HTTPDebug receives each request and response dump of httpDebug
	// (--http-debug), several lines each (default: Logger at info).
	HTTPDebug func(dump string)
	// Exception, if set, receives an iteration's uncaught exception (the
	// first ten, then one in a thousand) with its scenario and executor,
	// instead of a Logger warning.
	Exception func(scenario, executor, msg string)
	// Custom, if set, is called once per custom metric the script declares
	// (k6/metrics) and returns the function every value added to it is
	// also passed to, with its scenario's name: the hook of a metrics
	// exporter. An error refuses the declaration (the script does not
	// load); an error of the function throws in the script.
	Custom func(name string, t MetricType) (func(phase string, v float64) error, error)
	// Samples, if set, receives every resolved request of a scenario (the
	// metrics hook); it is called from every VU at once.
	Samples func(*Sample)
	// Slow, when > 0, is a latency budget: an otherwise ok request slower
	// than it fails, class slow (engine.DriverConfig.Slow).
	Slow time.Duration
	// EnvOptions and CLIOptions are the k6 options the K6_* variables and
	// the command line give (options.FromEnv, options.Flags.Set): Load
	// resolves them over the script's own, by k6's precedence.
	EnvOptions, CLIOptions options.Flags
	// Points, if set, receives every value of every metric (built-in and
	// the script's own, not sub-metrics) with its tags: k6's JSON output.
	// It is called from every VU at once. The tags map is only read, and
	// only during the call: it is reused once the call returns (a hook that
	// keeps tags copies them).
	Points func(m *Metric, v float64, tags map[string]string)
	// StdoutTTY and StderrTTY are handleSummary's data.state.
	StdoutTTY, StderrTTY bool
	// HTTP2 sends through net/http (HTTP/2 where offered over TLS) instead
	// of the engine's default fasthttp HTTP/1.1 client.
	HTTP2 bool
	// ModuleCache, if set, keeps the remote modules a script imports
	// (bundle.Options.ModuleCache); Offline loads them from it only.
	ModuleCache string
	Offline     bool
	// Read, if set, is told of every file and URL the script reads, once
	// each: its modules (bundle.Options.Read's kinds) and open()'s files
	// (kind "open"), with their size in bytes.
	Read func(kind, name string, n int)
	// Deltas makes the run keep what every metric and check gains for
	// TakeDeltas (an agent sends them to its controller every tick); such
	// a run does not call handleSummary, its controller does.
	Deltas bool
	// Follow, if set, gives the governed scenario's phase its offer (an
	// agent following its controller's share): phase.Config.Follow.
	Follow phase.Follower
	// Archive, if set, is the script to run (Runner.Archive of a
	// controller's load): its modules and open()'s files come from it
	// alone, and the path given to Load is not read.
	Archive *bundle.Archive
}

// Runner runs one k6 script: Load prepares it (loads its modules, runs the
// init context once to read its options), Run runs setup, the scenarios
// and teardown.
type Runner struct {
	cfg    Config
	bundle *bundle.Bundle
	// vus index the live VUs by runtime: a k6 module's record, shared by
	// every VU, finds the VU it is evaluated for there.
	vus sync.Map // *sobek.Runtime → *VU
	// k6 are the k6 modules' records, by name.
	k6      map[string]*k6Record
	opts    options.Options
	phases  []*Phase
	setupVU *VU
	// setupMeter counts setup's and teardown's requests, which belong to
	// no phase.
	setupMeter *engine.Meter
	// setupData is setup()'s return value as JSON, copied into each VU.
	setupData string
	// configured holds throttle.configure's settings by scenario name,
	// written by the setup VU's init context only.
	configured map[string]Governance
	vuIDs      atomic.Int64
	custom     metrics       // k6/metrics and the built-ins, shared by every VU
	builtin    builtins      // k6's built-in metrics, in custom
	thresholds []Threshold   // options.thresholds, checked against their metrics
	started    time.Time     // when Run started
	shared     sharedArrays  // k6/data, shared by every VU
	vuSample   time.Duration // how often vus and vus_max are sampled (default 1s)
	trendStats []string      // summaryTrendStats in force
	timeUnit   string        // summaryTimeUnit

	filesMu sync.Mutex
	files   map[string][]byte

	errMu    sync.Mutex
	runErr   error
	errCount atomic.Int64
	cancel   context.CancelFunc // ends the run (test.abort, a VU that fails to start)
	aborted  atomic.Bool
	// abortedByScript: exec.test.abort() (k6's exit 108), not a threshold's
	// abortOnFail; failed: exec.test.fail() (110, the run goes on).
	abortedByScript, failed atomic.Bool
	// setupChecks count setup's and teardown's checks, which belong to no
	// phase but are in the summary, as in k6.
	setupChecks checks
	// deltaMu guards sentChecks, the check counts TakeDeltas sent so
	// far, and gauges, a controller's last vus and vus_max by agent.
	deltaMu    sync.Mutex
	sentChecks map[checkKey]CheckDelta
	gauges     map[string]map[string]float64
	// systemTags are the system tags in force (options.systemTags);
	// droppedTags the others, which dropSystemTags deletes;
	// keepsBuiltinTags: every one of builtinTags is in force.
	systemTags       map[string]bool
	droppedTags      []string
	keepsBuiltinTags bool
	// resolved: r.opts holds the resolved options (after the init context).
	resolved bool
	// defaultHdr is the header of a request that sets none (httpoptions.go).
	defaultHdrOnce sync.Once
	defaultHdr     http.Header

	// life is the lifecycle function running now (setup, teardown,
	// handleSummary), which Interrupt stops (lifecycle.go).
	life lifeState
	// panics recovers and counts the Go panics of the VUs' host code
	// and of the goroutines their modules start.
	panics engine.Panics
	// cutOffs counts the iterations cut off at a phase's stop.
	cutOffs atomic.Int64
	// userAbort: Abort was called (a second Ctrl-C).
	userAbort atomic.Bool
	// premadeOnce runs MakeVUs once; premadeErr is its result.
	premadeOnce sync.Once
	premadeErr  error
}

// InitError is an exception in the script's init context (k6's exit 107).
type InitError struct{ Err error }

func (e *InitError) Error() string { return e.Err.Error() }
func (e *InitError) Unwrap() error { return e.Err }

// Options are the run's resolved k6 options.
func (r *Runner) Options() *options.Options { return &r.opts }

// Load prepares the script at path. Every problem with the script (syntax,
// an unsupported module, bad options, a missing exec function) is an
// error here, before any traffic.
func Load(path string, cfg Config) (*Runner, error) {
	if cfg.Tick == 0 {
		cfg.Tick = governor.DefaultTick
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.InitMemory == 0 {
		cfg.InitMemory = DefaultInitMemory
	}
	if cfg.InitTimeout == 0 {
		cfg.InitTimeout = DefaultInitTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.HTTPDebug == nil {
		l := cfg.Logger
		cfg.HTTPDebug = func(dump string) { l.Info(dump, "source", "http-debug") }
	}
	if cfg.Console == nil {
		l := cfg.Logger
		cfg.Console = func(level slog.Level, msg string) { l.Log(context.Background(), level, msg) }
	}
	r := &Runner{cfg: cfg, files: map[string][]byte{}, configured: map[string]Governance{}, setupMeter: engine.NewMeter()}
	r.panics.Logger = cfg.Logger
	r.custom.points = cfg.Points
	r.custom.deltas = cfg.Deltas
	r.builtin = newBuiltins(&r.custom)
	r.custom.export = cfg.Custom
	// The setup VU's runtime is made first: the k6 modules' exported
	// names, which linking the script needs, are its module objects' keys.
	vu := r.newRuntime(nil, 0)
	r.setupVU = vu
	r.k6 = r.k6Records()
	b, err := bundle.Load(path, bundle.Options{K6: r.k6Module, ModuleCache: cfg.ModuleCache, Offline: cfg.Offline, Read: cfg.Read, Archive: cfg.Archive, Imported: r.imported})
	if err != nil {
		return nil, err
	}
	r.bundle = b
	vu.ownWebGlobals() // made before the script was loaded (globalassign.go)
	if err := vu.initInterruptible(cfg.Interrupt, cfg.InitMemory, cfg.InitTimeout); err != nil {
		if errors.Is(err, ErrInterrupted) {
			return nil, err
		}
		return nil, &InitError{err}
	}
	js, err := vu.stringify(vu.exports.Get("options"))
	if err != nil {
		return nil, err
	}
	if r.opts, err = options.Resolve([]byte(js), cfg.EnvOptions, cfg.CLIOptions); err != nil {
		return nil, err
	}
	r.resolved = true
	if !r.opts.IncludeSystemEnvVars {
		env := vu.rt.GlobalObject().Get("__ENV").ToObject(vu.rt)
		for k := range cfg.SystemEnv {
			if _, ok := cfg.Env[k]; !ok {
				_ = env.Delete(k)
			}
		}
	}
	for _, n := range r.opts.Notices {
		cfg.Logger.Warn(n)
	}
	r.trendStats, r.timeUnit = r.opts.SummaryTrendStats, r.opts.SummaryTimeUnit
	if r.opts.SummaryMode == "full" && !r.opts.NoSummary {
		r.custom.keepPerScenario() // full's SCENARIO sections
	}
	r.systemTags = map[string]bool{}
	for _, name := range r.opts.SystemTags {
		r.systemTags[name] = true
	}
	for _, name := range options.SystemTagNames {
		if !r.systemTags[name] {
			r.droppedTags = append(r.droppedTags, name)
		}
	}
	r.keepsBuiltinTags = true
	for _, name := range builtinTags {
		r.keepsBuiltinTags = r.keepsBuiltinTags && r.systemTags[name]
	}
	if !r.opts.NoThresholds {
		r.thresholds = thresholdsOf(r.opts.Thresholds)
	}
	for _, th := range r.thresholds {
		m, err := r.thresholdMetric(th)
		if err != nil {
			return nil, err
		}
		if err := th.check(m); err != nil {
			return nil, err
		}
	}
	for name := range r.configured {
		if !r.hasScenario(name) {
			return nil, fmt.Errorf("throttle.configure: no scenario %q in the script's options", name)
		}
	}
	for _, sc := range r.opts.Scenarios {
		if _, ok := sobek.AssertFunction(vu.exports.Get(sc.Exec)); !ok {
			return nil, fmt.Errorf("scenario %q: exec function %q is not exported by the script", sc.Name, sc.Exec)
		}
		if sc.Idle() {
			continue // this execution segment's part of it is nothing
		}
		p, err := r.newPhase(sc)
		if err != nil {
			return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
		}
		r.phases = append(r.phases, p)
	}
	return r, nil
}

func (r *Runner) hasScenario(name string) bool {
	for _, sc := range r.opts.Scenarios {
		if sc.Name == name {
			return true
		}
	}
	return false
}

// Modules are the k6 modules the script imports.
func (r *Runner) Modules() []string { return r.bundle.Modules }

// Phases are the script's scenarios as phases, in start order.
func (r *Runner) Phases() []*Phase { return r.phases }

// limits are a scenario's governor limits: defaults, then the script's
// configure, then the CLI's overrides. Not governed, the authored value is
// floor, start and ceiling alike.
func (r *Runner) limits(name string, mode governor.Mode, ceiling float64, governed bool) (governor.Limits, error) {
	l := governor.NewLimits(mode, ceiling)
	g := r.configured[name].over(r.cfg.Governance)
	if g.Floor != nil {
		l.Floor = *g.Floor
	} else {
		l.Floor = min(l.Floor, ceiling)
	}
	l.Start = l.Floor
	if g.Start != nil {
		l.Start = *g.Start
	}
	if g.High != nil {
		l.High = *g.High
	}
	l.Low = l.High / 5
	if g.Low != nil {
		l.Low = *g.Low
	}
	if g.Window != nil {
		l.Window = *g.Window
	}
	if g.MinAttempts != nil {
		l.MinAttempts = *g.MinAttempts
	}
	if !governed {
		l.Floor, l.Start = ceiling, ceiling
	}
	if err := l.Validate(); err != nil {
		return l, err
	}
	return l, nil
}

// RunResult is what a run did.
type RunResult struct {
	Start, End time.Time
	// Interrupted: ctx ended the run early; Aborted: the run was aborted
	// (exec.test.abort() or an abortOnFail threshold), AbortedByScript by
	// exec.test.abort(); MarkedFailed: the script called exec.test.fail().
	Interrupted, Aborted, AbortedByScript, MarkedFailed bool
	// HandleSummary: the script exports handleSummary, which was called
	// with the summary's data and returned Outputs (k6: it replaces the
	// default summary).
	HandleSummary bool
	Outputs       []SummaryOutput
	// SummaryErr is handleSummary's failure (it threw, or returned what
	// cannot be written): the run itself is complete.
	SummaryErr error
	// Stopped names the lifecycle function a signal (Interrupt, or ctx
	// during setup) cut short: "setup", "teardown" or "handleSummary";
	// "" none. Such a run is Interrupted too. Setup cut short runs no
	// scenario and no teardown; the summary has what setup gathered.
	Stopped string
}

// SummaryOutput is one entry of handleSummary's returned object: a file
// path, or "stdout" or "stderr", and its content.
type SummaryOutput struct {
	Name string
	Data []byte
}

// Run runs setup(), the scenarios (each from its startTime, concurrently
// when they overlap) and teardown(data). It returns when every scenario has
// ended; an interrupted run still ends each phase properly.
//
// Before setup() it makes the VUs the scenarios start with (MakeVUs, if
// not done already): the run's span (RunResult.Start) begins after them,
// as k6's test duration does.
func (r *Runner) Run(ctx context.Context) (*RunResult, error) {
	defer r.setupVU.close()
	defer r.closePremade() // those no phase took
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.cancel = cancel
	if err := r.MakeVUs(ctx); err != nil {
		return nil, err
	}
	res := &RunResult{Start: time.Now()}
	r.started = res.Start
	watchDone := make(chan struct{})
	defer close(watchDone)
	go r.watchThresholds(watchDone)
	if err := r.setup(ctx); err != nil {
		switch {
		case errors.Is(err, ErrStopped):
			return r.finish(res, "setup")
		case r.abortedByScript.Load():
			// exec.test.abort() in setup: no scenario, no teardown; the
			// summary and k6's 108.
			res.Aborted, res.AbortedByScript = true, true
			return r.finish(res, "")
		}
		return nil, err
	}
	sampleDone := make(chan struct{})
	sampled := make(chan struct{})
	go r.sampleVUs(sampleDone, sampled)
	var wg sync.WaitGroup
	for _, p := range r.phases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p.sc.StartTime > 0 {
				t := time.NewTimer(p.sc.StartTime)
				defer t.Stop()
				select {
				case <-t.C:
				case <-ctx.Done():
					return
				}
			}
			p.run(ctx)
		}()
	}
	wg.Wait()
	close(sampleDone)
	<-sampled
	res.Interrupted = ctx.Err() != nil && !r.aborted.Load()
	res.Aborted = r.aborted.Load()
	res.AbortedByScript, res.MarkedFailed = r.abortedByScript.Load(), r.failed.Load()
	if err := r.runError(); err != nil {
		return res, err
	}
	stopped := ""
	if err := r.teardown(); err != nil {
		if !errors.Is(err, ErrStopped) {
			return res, err
		}
		stopped = "teardown"
	}
	return r.finish(res, stopped)
}

// sampleVUs records the vus and vus_max gauges every r.vuSample until done
// closes, then closes sampled.
func (r *Runner) sampleVUs(done <-chan struct{}, sampled chan<- struct{}) {
	defer close(sampled)
	every := r.vuSample
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	none := func() map[string]string { return map[string]string{} }
	sampledOnce := false
	for {
		var ended bool
		select {
		case <-done:
			ended = true
		case <-t.C:
		}
		var active, made int64
		for _, p := range r.phases {
			active += p.inflight.Load()
			made += p.vus.Load()
		}
		if ended {
			// k6 has vus and vus_max in every summary, a run shorter than
			// one sample too: then every VU made was active in it.
			if !sampledOnce {
				_ = r.builtin.vus.addTagged("", float64(made), none)
			}
			_ = r.builtin.vusMax.addTagged("", float64(made), none)
			return
		}
		sampledOnce = true
		_ = r.builtin.vus.addTagged("", float64(active), none)
		_ = r.builtin.vusMax.addTagged("", float64(made), none)
	}
}

// Abort cuts off every running phase's in-flight iterations at once (a
// second Ctrl-C).
func (r *Runner) Abort() {
	r.userAbort.Store(true)
	for _, p := range r.phases {
		p.abortVUs()
	}
}

// fail ends the run with err (a VU that could not start).
func (r *Runner) fail(err error) {
	r.errMu.Lock()
	if r.runErr == nil {
		r.runErr = err
	}
	r.errMu.Unlock()
	if r.cancel != nil {
		r.cancel()
	}
}

func (r *Runner) runError() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.runErr
}

// abortTest is exec.test.abort(): the run ends, reported as aborted.
func (r *Runner) abortTest(reason string) {
	if r.aborted.CompareAndSwap(false, true) {
		r.cfg.Logger.Warn("test aborted", "reason", reason)
	}
	if r.cancel != nil {
		r.cancel()
	}
}

// markFailed is exec.test.fail(): the run goes on, and ends failed.
func (r *Runner) markFailed(reason string) {
	if r.failed.CompareAndSwap(false, true) {
		r.cfg.Logger.Warn("test marked as failed by the script", "reason", reason)
	}
}

// console passes a console line on.
func (r *Runner) console(level slog.Level, msg string) { r.cfg.Console(level, msg) }

// iterationError logs an iteration's exception: the first ten, then one in
// a thousand, so a script that throws on every iteration cannot flood the
// terminal.
func (r *Runner) iterationError(p *Phase, err error) {
	if r.abortedByScript.Load() {
		return // exec.test.abort()'s own exception, logged as the abort
	}
	var hp *HostPanic
	if errors.As(err, &hp) {
		return // logged once where it was recovered, and counted
	}
	n := r.errCount.Add(1)
	if n > 10 && n%1000 != 0 {
		return
	}
	if r.cfg.Exception != nil {
		r.cfg.Exception(p.sc.Name, string(p.sc.Executor), r.scriptError(err).Error())
		return
	}
	r.cfg.Logger.Warn("iteration failed", "phase", p.sc.Name, "error", r.scriptError(err).Error(), "errors", n)
}

// scriptError turns a goja exception into an error naming the script.
func (r *Runner) scriptError(err error) error {
	var ex *sobek.Exception
	if errors.As(err, &ex) {
		return errors.New(ex.Error())
	}
	var ie *sobek.InterruptedError
	if errors.As(err, &ie) {
		return &interruption{fmt.Sprintf("interrupted: %v", ie.Value()), ie}
	}
	return err
}

// interruption is an interrupted script's error: its message, and the
// interruption itself underneath (stuckAt reads where it stopped).
type interruption struct {
	msg string
	ie  *sobek.InterruptedError
}

func (e *interruption) Error() string { return e.msg }
func (e *interruption) Unwrap() error { return e.ie }

// readFile is open()'s file, read once per run and shared by every VU.
func (r *Runner) readFile(path string) ([]byte, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.bundle.Dir, path)
	}
	r.filesMu.Lock()
	defer r.filesMu.Unlock()
	if b, ok := r.files[path]; ok {
		return b, nil
	}
	b, err := r.read(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("open(%q): %v", path, pe.Err)
		}
		return nil, err
	}
	r.files[path] = b
	if r.cfg.Read != nil {
		r.cfg.Read("open", path, len(b))
	}
	return b, nil
}
