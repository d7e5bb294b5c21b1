package script

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"
	"unicode/utf16"
	"weak"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/phase"
	"github.com/throttlekit/throttle/internal/script/k6html"
)

// VU is one virtual user: its own goja runtime, in which the script's init
// context ran once, and the per-VU objects the modules reuse on every
// iteration. A VU runs on one goroutine at a time; nothing in it is shared.
type VU struct {
	r  *Runner
	ph *Phase // nil for the VU that runs options, setup and teardown
	// lifeStop is closed when setup or teardown runs out of its timeout
	// (the setup VU only): a sleep in it ends there.
	lifeStop <-chan struct{}
	// vuTags is exec.vu.tags (nil until the script reads it).
	vuTags *sobek.Object
	rt     *sobek.Runtime
	// id is __VU and vu.idInTest (0 for the setup VU, as in k6).
	id int64
	// exports is the setup VU's namespace object of the script's exports
	// (nil in a scenario's VU, which reads its exec function alone:
	// vu.export); fn the scenario's exec function; data the setup data,
	// parsed in this runtime.
	exports *sobek.Object
	// plain is the evaluated script when it runs as a plain function
	// (plainmod.go; nil: as ES modules, and in a scenario's VU once it
	// has its exec function).
	plain *plainModule
	fn    sobek.Callable
	data  sobek.Value
	// inInit is true while the init context runs (open() works only then).
	inInit bool
	// iter is __ITER: this VU's iterations so far in its scenario;
	// scenarioIter the current iteration's number in the scenario.
	iter, scenarioIter int64
	// args holds the default function's one argument (the setup data),
	// reused by every iteration so that the call makes no slice.
	args [1]sobek.Value
	// stack is the VM's value stack kept between iterations (vmstack.go):
	// cleared, not the VM's, and held weakly between them; held is it
	// while an iteration runs.
	stack weak.Pointer[keptStack]
	held  *keptStack

	// failed is set when a request of the current try fails.
	failed bool
	// group is the current group path ("" at the top, "::a::b" nested).
	group string

	// modules are the k6 module objects required so far, in the order
	// required: a script has a few, and a map of them cost 0.3 KiB.
	modules []namedModule
	http    *httpModule
	pause   phase.Pause

	// events is the VU's event loop, made on first use (eventloop.go);
	// rejected the promises rejected with no handler yet.
	events   *eventLoop
	rejected []*sobek.Promise
	// async are the lanes of http.asyncRequest (http_async.go).
	async asyncLanes
	// stop cuts off this VU's iteration alone (vustop.go).
	stop vuStop
	// jar is the VU's cookie jar, made on first use (cookies.go).
	jar *cookieJar
	// htmlMod is k6/html, made on first use (html.go).
	htmlMod *k6html.Module

	// slots send the VU's requests through the engine's attempt runner:
	// slot 0 its requests one at a time, the others a batch's extra ones.
	// Each slot has its own driver so that its FailedFunc reads the
	// response callback of the request it is sending.
	slots []*slot
}

// slot is one request lane of a VU: an engine runner (its own keep-alive
// connection) and the response callback its current request is judged by.
type slot struct {
	driver *engine.Driver
	runner *engine.Runner
	cb     *statusSet // nil: no status fails
}

// slot returns the VU's i-th lane, making it on first use.
func (vu *VU) slot(i int) (*slot, error) {
	for len(vu.slots) <= i {
		s, err := vu.newSlot()
		if err != nil {
			return nil, err
		}
		vu.slots = append(vu.slots, s)
	}
	return vu.slots[i], nil
}

// laneBuffers are the connection buffers of every VU's request lanes in
// the process: a VU sleeping between requests holds none (see
// engine.SharedBuffers); with its own pools, each of 10 000 sleeping VUs
// kept 22 KiB.
var laneBuffers engine.SharedBuffers

// newSlot makes a request lane: its own driver and runner.
func (vu *VU) newSlot() (*slot, error) {
	s := &slot{}
	meter, stop, abort := vu.r.setupMeter, (<-chan struct{})(nil), context.Context(nil)
	if p := vu.ph; p != nil {
		meter, stop, abort = p.meter, p.stop, vu.hardCtx()
	}
	var latency engine.LatencyRecorder
	if vu.ph != nil {
		latency = vu.ph.rec
	}
	d, err := engine.NewDriver(engine.DriverConfig{
		Meter: meter, Latency: latency, Timeout: vu.r.cfg.Timeout, Insecure: vu.r.cfg.Insecure || vu.r.opts.InsecureSkipTLSVerify,
		HTTP2: vu.r.cfg.HTTP2, Slow: vu.r.cfg.Slow, Stop: stop, Abort: abort, Conns: 4, BodyLimit: vu.r.cfg.BodyLimit,
		Panics: &vu.r.panics, Buffers: &laneBuffers,
		// Plain http:// over the engine's raw transport (no fasthttp
		// client and its goroutine per VU); THROTTLE_TRANSPORT=fasthttp
		// keeps every request on fasthttp.
		RawHTTP: true,
		// k6's http_req_failed: a transport error, or a status the
		// callback does not expect.
		Failed: func(r *engine.Response) bool { return r.Err != nil || s.cb != nil && !s.cb.expected(r.Status) },
	})
	if err != nil {
		return nil, err
	}
	s.driver, s.runner = d, d.Runner()
	return s, nil
}

// close releases the VU's connections.
func (vu *VU) close() {
	vu.async.wait()
	for _, s := range append(vu.slots, vu.async.all...) {
		s.runner.Close()
		s.driver.Close()
	}
	vu.slots = nil
	vu.forget()
	if vu.events != nil {
		vu.events.reset()
	}
	vu.pause.Stop()
	vu.releaseStop()
}

// errAborted interrupts a VU's JavaScript when its phase aborts it.
var errAborted = errors.New("aborted: the scenario's graceful stop ran out")

// newVU makes a VU for phase p (nil: the setup VU) and runs the init
// context in it: the script's modules, evaluated in its own runtime.
func (r *Runner) newVU(p *Phase) (*VU, error) { return r.makeVU(p, 0, nil) }

// makeVU makes a VU for phase p with id (0: the next free one) and runs
// its init context, stopped by abort closing (ErrInterrupted; nil: the
// phase's abort, errAborted).
func (r *Runner) makeVU(p *Phase, id int64, abort <-chan struct{}) (*VU, error) {
	vu := r.newRuntime(p, id)
	var err error
	if abort != nil {
		err = vu.initInterruptible(abort, 0, r.cfg.InitTimeout)
	} else {
		err = vu.initVU(p)
	}
	if err != nil {
		vu.forget()
		if errors.As(err, new(*HostPanic)) || errors.Is(err, ErrInterrupted) {
			return nil, err // throttle's bug, or a signal: no 107
		}
		return nil, &InitError{err} // a VU's init context throwing is k6's 107 too
	}
	if p != nil {
		fn, ok := sobek.AssertFunction(vu.export(p.sc.Exec))
		if !ok {
			vu.forget()
			return nil, fmt.Errorf("script: scenario %q: exec function %q is not exported", p.sc.Name, p.sc.Exec)
		}
		vu.fn = fn
		// A scenario's VU reads its exports this once: the plain
		// script's export getters (a function per module, 0.5 KiB, and
		// their slice) are not kept for its life. The module scope they
		// close over stays as long as the exec function reaches it.
		vu.plain = nil
		if err := vu.takeSetupData(); err != nil {
			vu.forget()
			return nil, err
		}
	}
	return vu, nil
}

// takeSetupData parses setup()'s data into the VU's runtime, once setup
// has run: a VU made before setup (premade.go) takes it when its phase
// first hands it out.
func (vu *VU) takeSetupData() error {
	if vu.data != nil || vu.r.setupData == "" {
		return nil
	}
	var err error
	vu.data, err = vu.parseJSON(vu.r.setupData)
	return err
}

// newRuntime makes a VU's runtime and its globals; its init context has
// not run. A scenario's VU gets id, or the next free id when id is 0.
func (r *Runner) newRuntime(p *Phase, id int64) *VU {
	vu := &VU{r: r, ph: p, rt: sobek.New()}
	if p != nil {
		if id == 0 {
			id = r.vuIDs.Add(1)
		}
		vu.id = id
	}
	rt := vu.rt
	rt.SetFieldNameMapper(sobek.UncapFieldNameMapper())
	// k6's globals are the global object's own properties, as in k6: a
	// module (strict code) may assign them by name, which sobek allows
	// only for an own property of the global object. open and require are
	// FunctionCalls: through reflect they cost 0.3 KiB a VU more.
	g := rt.GlobalObject()
	_ = g.Set("__ENV", vu.newEnv())
	_ = g.Set("__VU", vu.id)
	_ = g.Set("__ITER", 0)
	holdIter(g)
	_ = g.Set("open", func(call sobek.FunctionCall) sobek.Value { return vu.open(call.Argument(0).String(), call.Argument(1)) })
	_ = g.Set("require", func(call sobek.FunctionCall) sobek.Value { return vu.require(call.Argument(0).String()) })
	// The web APIs (console, crypto, timers, text codecs) live on a lazy
	// object between the global object and Object.prototype, so a global
	// name finds them through the prototype chain, and each is made when
	// the script first reads it (globalTable).
	_ = g.SetPrototype(rt.NewDynamicObject(&lazyObject{rt: rt, shared: globalTable, self: vu}))
	// Those the script assigns by name must be own properties (strict
	// code assigns no other): made now, in its VUs alone.
	vu.ownWebGlobals()
	rt.SetPromiseRejectionTracker(vu.trackRejections)
	if runtimeHook != nil {
		runtimeHook(vu)
	}
	r.vus.Store(rt, vu)
	return vu
}

// holdIter makes g's __ITER, a plain data property (writable, enumerable,
// configurable, as k6 has it), a property that holds its value in a cell
// of its own, as sobek keeps a property with any of those false: the same
// property to JavaScript (its descriptor, assignment from strict code,
// deletion), but each iteration's Set writes the cell, not the global
// object's map. A Go map's assignment grows a full small map (8 entries)
// to a table even when the key is in it, and a VU whose script read three
// built-in globals (bench/vus.sh's String, Number, Math) had exactly 8:
// its second iteration's Set made the global object's map a table (576
// bytes allocated, some 330 kept, a VU). Redefined with one attribute left unset, sobek copies the
// plain property's attributes into the cell (_defineOwnProperty).
func holdIter(g *sobek.Object) {
	_ = g.DefineDataProperty("__ITER", g.Get("__ITER"), sobek.FLAG_TRUE, sobek.FLAG_TRUE, sobek.FLAG_NOT_SET)
}

// globalTable is the web APIs every VU's runtime has on its global
// object's prototype, each made in the VU (the lazy object's self) on
// first read; a VU's own assignments and deletions stay its own
// (lazy.go). One table for every VU: a map of closures per VU cost
// 0.4 KiB.
var globalTable = func() map[string]func(self any) any {
	t := map[string]func(any) any{
		"console": func(s any) any { vu := s.(*VU); return lazyMake(func() sobek.Value { return vu.console() }) },
		"crypto":  func(s any) any { vu := s.(*VU); return lazyMake(func() sobek.Value { return vu.webCrypto() }) },
	}
	var probe VU
	for k := range probe.timerFuncs() {
		t[k] = func(s any) any { return s.(*VU).timerFuncs()[k] }
	}
	for k := range probe.textCodecs() {
		t[k] = func(s any) any { return s.(*VU).textCodecs()[k] }
	}
	return t
}()

// newEnv is a VU's __ENV: a lazy object over a table shared by its
// phase's VUs. Each VU has its own object (assignments and deletions stay
// its own), and a variable becomes a JavaScript string when the VU first
// reads it. Filled eagerly, the process environment (k6 includes it by
// default) cost every VU a property per variable: 4.7 KiB and 37 µs with
// 35 variables.
func (vu *VU) newEnv() sobek.Value {
	return vu.rt.NewDynamicObject(&lazyObject{rt: vu.rt, shared: vu.r.envTable(vu.ph)})
}

// envString is an __ENV variable's JavaScript string, made once for every
// VU of a phase: a string value (sobek's ASCII or UTF-16 string) is
// immutable and belongs to no runtime, so each VU's __ENV hands out the
// same one and keeps nothing (made per VU and kept, it cost the VU 32
// bytes and a slot in its __ENV's members a variable read). Not
// rt.ToValue's: its strings longer than 16 bytes scan themselves on first
// use, which VUs on their goroutines would race on.
func envString(s string) sobek.Value {
	return sobek.StringFromUTF16(utf16.Encode([]rune(s)))
}

// export is the script's export name in this VU (nil if it exports no
// such name), read as the namespace object reads it but without making
// one: a scenario's VU needs its exec function alone, and sobek keeps a
// namespace object made for the VU's life (1.1 KiB).
//
// A scenario's VU of a plain script answers only until it has its exec
// function (makeVU lets go of its view of the exports); then nil.
func (vu *VU) export(name string) sobek.Value {
	if vu.exports != nil {
		return vu.exports.Get(name)
	}
	if vu.plain != nil {
		return vu.plain.export(name)
	}
	if vu.r.bundle.Plain != nil {
		return nil
	}
	b, ambiguous := vu.r.bundle.Main.ResolveExport(name)
	if b == nil || ambiguous {
		return nil
	}
	if b.BindingName == "*namespace*" {
		return vu.rt.NamespaceObjectFor(b.Module)
	}
	m := vu.rt.GetModuleInstance(b.Module)
	if m == nil {
		return nil
	}
	if v := m.GetBindingValue(b.BindingName); v != nil {
		return v
	}
	return sobek.Null()
}

// envTable is __ENV's variables for a VU of phase p (nil: the setup VU),
// made once per phase: the process environment if the options include it
// (the setup VU is made before they are resolved: it has them until Load
// knows whether to drop them), then -e's, then the scenario's env.
func (r *Runner) envTable(p *Phase) map[string]func(any) any {
	build := func() map[string]func(any) any {
		vars := map[string]string{}
		if r.opts.IncludeSystemEnvVars || p == nil && !r.resolved {
			maps.Copy(vars, r.cfg.SystemEnv)
		}
		maps.Copy(vars, r.cfg.Env)
		if p != nil {
			maps.Copy(vars, p.sc.Env)
		}
		t := make(map[string]func(any) any, len(vars))
		for k, v := range vars {
			s := &sharedValue{envString(v)}
			t[k] = func(any) any { return s }
		}
		return t
	}
	if p == nil {
		return build()
	}
	p.envOnce.Do(func() { p.env = build() })
	return p.env
}

// init runs the init context: the script's entry module and what it
// imports, each evaluated once in this runtime, top-level await included.
// The job queue is drained when evaluation returns, so an await of
// promises settled by the script itself completes; one waiting on
// anything else (there are no timers yet) is an error.
//
// A Go panic in the host code it reaches (throttle's bug) is recovered as
// its error, a *HostPanic (engine.Panics): that VU is not made, and a
// scenario's other VUs run on (Phase.newWorker).
func (vu *VU) init() (err error) {
	defer vu.r.panics.Recover("a VU's init context", &err)
	b := vu.r.bundle
	vu.rt.SetImportModuleDynamically(b.ImportDynamically(vu.rt))
	vu.inInit = true
	if b.Plain != nil {
		err = vu.evalPlain(b.Plain)
	} else {
		done := b.Main.Evaluate(vu.rt)
		// Top-level await: the event loop runs until the evaluation settles.
		_, err = vu.settle(vu.rt.ToValue(done), nil, vu.abortCh())
	}
	vu.inInit = false
	if err != nil {
		if errors.Is(err, errUnsettled) {
			return errors.New("script: the init context's top-level await did not settle: nothing it waits on is pending (no timer, no request)")
		}
		var ge *sobek.Exception
		if errors.As(err, &ge) {
			return vu.r.scriptError(err)
		}
		return err
	}
	if vu.ph == nil {
		// The setup VU reads the options, setup, teardown and
		// handleSummary; a scenario's VU only its exec function (export).
		if vu.plain != nil {
			vu.exports = vu.rt.NewDynamicObject(plainExports{vu.plain})
		} else {
			vu.exports = vu.rt.NamespaceObjectFor(b.Main)
		}
	}
	return nil
}

// rejection is a rejected promise's reason as an error naming the
// script's file and line.
func (vu *VU) rejection(v sobek.Value) error {
	if err, ok := v.Export().(error); ok {
		var ex *sobek.Exception
		if errors.As(err, &ex) {
			if line, ok := syntaxLine(ex); ok {
				return errors.New(line)
			}
		}
		return vu.r.scriptError(err)
	}
	if o, ok := v.(*sobek.Object); ok {
		if st := o.Get("stack"); st != nil && !sobek.IsUndefined(st) {
			return errors.New(st.String())
		}
	}
	return errors.New(v.String())
}

// syntaxLine reads a SyntaxError raised as the script's modules are
// evaluated (a name imported that the module does not export) as one
// line, file:line: message, like the loader's own errors.
func syntaxLine(ex *sobek.Exception) (string, bool) {
	o, ok := ex.Value().(*sobek.Object)
	if !ok || len(ex.Stack()) == 0 || o.Get("name") == nil || o.Get("name").String() != "SyntaxError" {
		return "", false
	}
	p := ex.Stack()[0].Position()
	return fmt.Sprintf("%s:%d: %s", p.Filename, p.Line, o.Get("message")), true
}

// forget drops the VU from the runner's runtime index: its k6 modules
// are evaluated (and dynamic imports resolved) only while it lives.
func (vu *VU) forget() { vu.r.vus.Delete(vu.rt) }

// parseJSON is JSON.parse in the VU's runtime.
func (vu *VU) parseJSON(s string) (sobek.Value, error) {
	parse, _ := sobek.AssertFunction(vu.rt.Get("JSON").ToObject(vu.rt).Get("parse"))
	v, err := parse(sobek.Undefined(), vu.rt.ToValue(s))
	if err != nil {
		return nil, vu.r.scriptError(err)
	}
	return v, nil
}

// stringify is JSON.stringify in the VU's runtime; undefined gives "".
func (vu *VU) stringify(v sobek.Value) (string, error) {
	if v == nil || sobek.IsUndefined(v) {
		return "", nil
	}
	f, _ := sobek.AssertFunction(vu.rt.Get("JSON").ToObject(vu.rt).Get("stringify"))
	s, err := f(sobek.Undefined(), v)
	if err != nil {
		return "", vu.r.scriptError(err)
	}
	if sobek.IsUndefined(s) {
		return "", nil
	}
	return s.String(), nil
}

// require serves the k6 modules: the default export of an import, and
// CommonJS require("k6/...").
func (vu *VU) require(name string) sobek.Value {
	for _, m := range vu.modules {
		if m.name == name {
			return m.obj
		}
	}
	m := vu.module(name)
	if m == nil {
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "/") {
			vu.throw("require(%q): local files are ES modules here; import them (import { f } from %q)", name, name)
		}
		vu.throw("module %q is not supported by throttle (it provides %s)", name, strings.Join(supportedModules, ", "))
	}
	vu.modules = append(vu.modules, namedModule{name, m})
	return m
}

// namedModule is a k6 module object a VU made, by its name.
type namedModule struct {
	name string
	obj  sobek.Value
}

// open reads a file relative to the script's folder, in the init context
// only: as a string, or an ArrayBuffer with mode "b".
func (vu *VU) open(path string, mode sobek.Value) sobek.Value {
	if !vu.inInit {
		panic(vu.rt.NewGoError(errors.New("open() works only in the init context (outside functions), as in k6")))
	}
	b, err := vu.r.readFile(path)
	if err != nil {
		panic(vu.rt.NewGoError(err))
	}
	if mode != nil && !sobek.IsUndefined(mode) && mode.String() == "b" {
		return vu.rt.ToValue(vu.rt.NewArrayBuffer(append([]byte(nil), b...)))
	}
	return vu.rt.ToValue(string(b))
}

// console is the console object: each call one line at its level.
func (vu *VU) console() *sobek.Object {
	c := make(map[string]any, 5)
	for name, level := range consoleLevels {
		c[name] = func(call sobek.FunctionCall) sobek.Value {
			parts := make([]string, len(call.Arguments))
			for i, a := range call.Arguments {
				parts[i] = vu.show(a)
			}
			vu.r.console(level, strings.Join(parts, " "))
			return sobek.Undefined()
		}
	}
	return vu.lazy(c)
}

// consoleLevels are the console's methods and the levels they log at.
var consoleLevels = map[string]slog.Level{"log": slog.LevelInfo, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError, "debug": slog.LevelDebug}

// show formats a value as console.log does: strings as they are, objects as
// JSON.
func (vu *VU) show(v sobek.Value) string {
	if o, ok := v.(*sobek.Object); ok {
		if _, isFn := sobek.AssertFunction(o); !isFn && o.ClassName() != "Error" {
			if s, err := vu.stringify(o); err == nil && s != "" {
				return s
			}
		}
	}
	return v.String()
}

// iteration runs the exec function once and counts its outcome: ok when
// none of its requests failed (for throttle.tries, the last try's) and it
// did not throw.
//
// Its frame is under the VU's whole iteration, sleep() included, so it
// holds the call alone: what comes before and after it are functions of
// their own (docs/performance.md, "A sleeping VU's stack").
func (vu *VU) iteration() {
	vu.ph.inflight.Add(1)
	hard := vu.beginIteration()
	began := vu.prepareIteration()
	// vu.call, not vu.fn: an async default function, its timers and its
	// async requests are settled before the iteration ends (eventloop.go).
	// It recovers a Go panic of the code it reaches; a panic anywhere else
	// here is throttle's bug and ends the process (nothing above recovers
	// it), so no defer keeps the counts.
	vu.lendStack()
	_, err := vu.call(vu.fn, hard.Done(), vu.args[:]...)
	vu.settleStack()
	vu.finishIteration(hard, began, err)
	vu.endIteration()
	vu.ph.inflight.Add(-1)
}

// prepareIteration numbers the iteration, resets the VU's per-iteration
// state, sets the exec function's argument and returns the start.
//
//go:noinline
func (vu *VU) prepareIteration() time.Time {
	vu.scenarioIter = int64(vu.ph.iterations.Add(1) - 1)
	if vu.iter > 0 {
		_ = vu.rt.GlobalObject().Set("__ITER", vu.iter)
	} else {
		reserveVUStack() // the first: grow the stack while it is shallow
	}
	vu.iter++
	vu.failed, vu.group = false, ""
	vu.resetCookies()
	data := vu.data
	if data == nil {
		data = sobek.Undefined()
	}
	vu.args[0] = data
	return time.Now()
}

// finishIteration ends the iteration begun at began whose call returned
// err: minIterationDuration's wait, then its outcome and duration.
//
//go:noinline
func (vu *VU) finishIteration(hard context.Context, began time.Time, err error) {
	p := vu.ph
	took := time.Since(began) // iteration_duration, unless minIterationDuration adds a wait
	if rest := vu.r.opts.MinIterationDuration - took; rest > 0 && hard.Err() == nil {
		vu.sleep(rest) // minIterationDuration: the VU waits out the rest
		took = time.Since(began)
	}
	switch {
	case hard.Err() != nil:
		if p.hard.Err() != nil { // gracefulStop ran out (a ramp-down cut is the author's intent)
			vu.r.cutOff(vu, err)
		}
		return // aborted: neither ok nor failed
	case err != nil:
		vu.r.iterationError(p, err)
		p.meter.EndIteration(engine.IterationFailed)
	case vu.failed:
		p.meter.EndIteration(engine.IterationFailed)
	default:
		p.meter.EndIteration(engine.IterationOK)
	}
	b := &vu.r.builtin
	var ts tagSet // metrics.go
	b.iteration(p.sc.Name, float64(took)/float64(time.Millisecond), func() map[string]string { return vu.fillTags(ts.get(), nil) })
	ts.release()
}

// abortCh is closed when the VU's phase aborts it; nil for the setup VU.
func (vu *VU) abortCh() <-chan struct{} {
	if vu.ph == nil {
		return nil
	}
	return vu.hardCtx().Done()
}

// sleep pauses the VU for at least d (k6's sleep), or until its phase
// aborts. A long sleep ends on phase.Coalesce's grid, up to 0.1 % (at
// most 16 ms) late, so that the VUs' wake-ups come together.
//
// A scenario's VU parks on its pause's timer alone (SleepCoalesced: the
// shallowest wait, so that a GC can halve the stack of a VU asleep); what
// cancels its hardCtx then wakes the pause (interrupt, interruptVUs). The
// setup VU, one per run, waits on its lifeStop too.
func (vu *VU) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	if vu.ph == nil {
		vu.pause.WaitCoalesced(d, nil, vu.lifeStop)
		return
	}
	vu.noteStack()
	vu.dropStale()
	vu.pause.SleepCoalesced(d, vu.hardCtx().Done())
}

// emptyProgram is a script of no statements, compiled once for every VU
// (a sobek Program is shared by runtimes).
var emptyProgram = sobek.MustCompile("", "", false)

// dropStale lets the GC have what the VU's JavaScript no longer reaches
// but its value stack still holds: sobek leaves the values of finished
// calls and expressions above the stack's top until later calls overwrite
// them, so a VU asleep in sleep() kept, between its iterations, the
// objects its last statements made and dropped (bench/vus.sh's script:
// the check's object and its function, 1.2 KiB a VU). A program run from
// a Go function the script called clears the stack above the caller's
// top on its way out (sobek's RunProgram, nested); the caller's frames
// (the sleeping function's locals) are below it and stay.
//
// An interrupt that lands on the empty program (a ramp-down, the phase's
// abort) ends it with an error, ignored here: sobek keeps an interrupt
// pending until ClearInterrupt, so the script stops at its next
// instruction as it would have, and the sleep between ends at once, as
// the hard context it watches was cancelled first
// (TestDropStaleKeepsAnInterrupt).
func (vu *VU) dropStale() { _, _ = vu.rt.RunProgram(emptyProgram) }
