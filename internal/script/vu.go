package script

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/phase"
)

// VU is one virtual user: its own goja runtime, in which the script's init
// context ran once, and the per-VU objects the modules reuse on every
// iteration. A VU runs on one goroutine at a time; nothing in it is shared.
type VU struct {
	r  *Runner
	ph *Phase // nil for the VU that runs options, setup and teardown
	rt *goja.Runtime
	// id is __VU and vu.idInTest (0 for the setup VU, as in k6).
	id int64
	// exports are the script's exports; fn the scenario's exec function;
	// data the setup data, parsed in this runtime.
	exports *goja.Object
	fn      goja.Callable
	data    goja.Value
	// inInit is true while the init context runs (open() works only then).
	inInit bool
	// iter is __ITER: this VU's iterations so far in its scenario;
	// scenarioIter the current iteration's number in the scenario.
	iter, scenarioIter int64
	iterVal            goja.Value // the global __ITER, refreshed per iteration

	// failed is set when a request of the current try fails.
	failed bool
	// group is the current group path ("" at the top, "::a::b" nested).
	group string

	modules map[string]goja.Value
	http    *httpModule
	pause   phase.Pause

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
		s := &slot{}
		meter, stop, abort := vu.r.setupMeter, (<-chan struct{})(nil), context.Context(nil)
		if p := vu.ph; p != nil {
			meter, stop, abort = p.meter, p.stop, p.hard
		}
		var latency engine.LatencyRecorder
		if vu.ph != nil {
			latency = vu.ph.rec
		}
		d, err := engine.NewDriver(engine.DriverConfig{
			Meter: meter, Latency: latency, Timeout: vu.r.cfg.Timeout, Insecure: vu.r.cfg.Insecure,
			HTTP2: vu.r.cfg.HTTP2, Slow: vu.r.cfg.Slow, Stop: stop, Abort: abort, Conns: 4,
			// k6's http_req_failed: a transport error, or a status the
			// callback does not expect.
			Failed: func(r *engine.Response) bool { return r.Err != nil || s.cb != nil && !s.cb.expected(r.Status) },
		})
		if err != nil {
			return nil, err
		}
		s.driver, s.runner = d, d.Runner()
		vu.slots = append(vu.slots, s)
	}
	return vu.slots[i], nil
}

// close releases the VU's connections.
func (vu *VU) close() {
	for _, s := range vu.slots {
		s.runner.Close()
		s.driver.Close()
	}
	vu.slots = nil
	vu.pause.Stop()
}

// errAborted interrupts a VU's JavaScript when its phase aborts it.
var errAborted = errors.New("aborted: the scenario's graceful stop ran out")

// newVU makes a VU for phase p (nil: the setup VU) and runs the init
// context in it.
func (r *Runner) newVU(p *Phase) (*VU, error) {
	vu := &VU{r: r, ph: p, rt: goja.New(), modules: map[string]goja.Value{}}
	if p != nil {
		vu.id = r.vuIDs.Add(1)
	}
	rt := vu.rt
	rt.SetFieldNameMapper(goja.UncapFieldNameMapper())
	env := rt.NewObject()
	for k, v := range r.cfg.Env {
		_ = env.Set(k, v)
	}
	if p != nil {
		for k, v := range p.sc.Env {
			_ = env.Set(k, v)
		}
	}
	g := rt.GlobalObject()
	_ = g.Set("__ENV", env)
	_ = g.Set("__VU", vu.id)
	_ = g.Set("__ITER", 0)
	_ = g.Set("open", vu.open)
	_ = g.Set("console", vu.console())
	_ = g.Set("require", vu.require)

	module := rt.NewObject()
	exports := rt.NewObject()
	_ = module.Set("exports", exports)
	wrapper, err := rt.RunProgram(r.prog)
	if err != nil {
		return nil, r.scriptError(err)
	}
	call, ok := goja.AssertFunction(wrapper)
	if !ok {
		return nil, errors.New("script: the bundle is not a function")
	}
	vu.inInit = true
	_, err = call(goja.Undefined(), module, exports, rt.Get("require"))
	vu.inInit = false
	if err != nil {
		return nil, r.scriptError(err)
	}
	vu.exports = module.Get("exports").ToObject(rt)
	if p != nil {
		fn, ok := goja.AssertFunction(vu.exports.Get(p.sc.Exec))
		if !ok {
			return nil, fmt.Errorf("script: scenario %q: exec function %q is not exported", p.sc.Name, p.sc.Exec)
		}
		vu.fn = fn
		if r.setupData != "" {
			if vu.data, err = vu.parseJSON(r.setupData); err != nil {
				return nil, err
			}
		}
	}
	return vu, nil
}

// parseJSON is JSON.parse in the VU's runtime.
func (vu *VU) parseJSON(s string) (goja.Value, error) {
	parse, _ := goja.AssertFunction(vu.rt.Get("JSON").ToObject(vu.rt).Get("parse"))
	v, err := parse(goja.Undefined(), vu.rt.ToValue(s))
	if err != nil {
		return nil, vu.r.scriptError(err)
	}
	return v, nil
}

// stringify is JSON.stringify in the VU's runtime; undefined gives "".
func (vu *VU) stringify(v goja.Value) (string, error) {
	if v == nil || goja.IsUndefined(v) {
		return "", nil
	}
	f, _ := goja.AssertFunction(vu.rt.Get("JSON").ToObject(vu.rt).Get("stringify"))
	s, err := f(goja.Undefined(), v)
	if err != nil {
		return "", vu.r.scriptError(err)
	}
	if goja.IsUndefined(s) {
		return "", nil
	}
	return s.String(), nil
}

// require serves the k6 modules; the bundler left nothing else to require.
func (vu *VU) require(name string) goja.Value {
	if m, ok := vu.modules[name]; ok {
		return m
	}
	m := vu.module(name)
	if m == nil {
		panic(vu.rt.NewGoError(fmt.Errorf("module %q is not supported", name)))
	}
	vu.modules[name] = m
	return m
}

// open reads a file relative to the script's folder, in the init context
// only: as a string, or an ArrayBuffer with mode "b".
func (vu *VU) open(path string, mode goja.Value) goja.Value {
	if !vu.inInit {
		panic(vu.rt.NewGoError(errors.New("open() works only in the init context (outside functions), as in k6")))
	}
	b, err := vu.r.readFile(path)
	if err != nil {
		panic(vu.rt.NewGoError(err))
	}
	if mode != nil && !goja.IsUndefined(mode) && mode.String() == "b" {
		return vu.rt.ToValue(vu.rt.NewArrayBuffer(append([]byte(nil), b...)))
	}
	return vu.rt.ToValue(string(b))
}

// console is the console object: each call one line at its level.
func (vu *VU) console() *goja.Object {
	c := vu.rt.NewObject()
	for name, level := range map[string]slog.Level{"log": slog.LevelInfo, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError, "debug": slog.LevelDebug} {
		_ = c.Set(name, func(call goja.FunctionCall) goja.Value {
			parts := make([]string, len(call.Arguments))
			for i, a := range call.Arguments {
				parts[i] = vu.show(a)
			}
			vu.r.console(level, strings.Join(parts, " "))
			return goja.Undefined()
		})
	}
	return c
}

// show formats a value as console.log does: strings as they are, objects as
// JSON.
func (vu *VU) show(v goja.Value) string {
	if o, ok := v.(*goja.Object); ok {
		if _, isFn := goja.AssertFunction(o); !isFn && o.ClassName() != "Error" {
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
func (vu *VU) iteration() {
	p := vu.ph
	p.inflight.Add(1)
	defer p.inflight.Add(-1)
	vu.scenarioIter = int64(p.iterations.Add(1) - 1)
	if vu.iter > 0 {
		_ = vu.rt.GlobalObject().Set("__ITER", vu.iter)
	}
	vu.iter++
	vu.failed, vu.group = false, ""
	data := vu.data
	if data == nil {
		data = goja.Undefined()
	}
	began := time.Now()
	_, err := vu.fn(goja.Undefined(), data)
	switch {
	case p.hard.Err() != nil:
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
	tags := func() map[string]string { return vu.tags(nil) }
	_ = b.iterations.addTagged(p.sc.Name, 1, tags)
	_ = b.iterationDuration.addTagged(p.sc.Name, float64(time.Since(began))/float64(time.Millisecond), tags)
}

// sleep pauses the VU for d, or until its phase aborts.
func (vu *VU) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	var hard <-chan struct{}
	if vu.ph != nil {
		hard = vu.ph.hard.Done()
	}
	vu.pause.Wait(d, nil, hard)
}
