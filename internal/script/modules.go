package script

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script/options"
)

// module builds a k6 module's object in the VU's runtime; nil for a module
// throttle does not provide (the loader refuses those first).
func (vu *VU) module(name string) sobek.Value {
	switch name {
	case "k6":
		return vu.k6Module()
	case "k6/http":
		vu.http = newHTTPModule(vu)
		return vu.http.obj
	case "k6/execution":
		return vu.executionModule()
	case "k6/timers":
		return vu.object(vu.timerFuncs())
	}
	// The others are built whole when the script first reads one of their
	// members: imported and never used, they cost a VU one small object.
	var build func() sobek.Value
	switch name {
	case "k6/encoding":
		build = func() sobek.Value { return vu.encodingModule() }
	case "k6/x/throttle":
		build = func() sobek.Value { return vu.throttleModule() }
	case "k6/metrics":
		build = func() sobek.Value { return vu.metricsModule() }
	case "k6/data":
		build = func() sobek.Value { return vu.dataModule() }
	case "k6/html":
		build = func() sobek.Value { return vu.html().Object() }
	case "k6/crypto":
		build = func() sobek.Value { return vu.cryptoModule() }
	case "k6/experimental/fs": // fscsv.go
		build = func() sobek.Value { return vu.fsModule() }
	case "k6/experimental/csv":
		build = func() sobek.Value { return vu.csvModule() }
	case "k6/ws", "k6/websockets", "k6/experimental/websockets", "k6/net/grpc": // protocols.go
		build = func() sobek.Value { return vu.protocolModule(name) }
	default:
		return nil
	}
	return vu.rt.NewDynamicObject(&lazyModule{build: build})
}

// object makes an object with the given methods, each made a function on
// first read (lazy.go).
func (vu *VU) object(methods map[string]any) *sobek.Object { return vu.lazy(methods) }

// refuseNames gives a module object the names k6 documents that throttle
// does not provide: reading one throws, naming it. They are not
// enumerable, so an import of one by name is refused at load with the
// rest (bundle gathers them).
func (vu *VU) refuseNames(obj *sobek.Object, module string, names ...string) {
	for _, n := range names {
		_ = obj.DefineAccessorProperty(n, vu.rt.ToValue(func() sobek.Value {
			vu.throw("%s's %s is not supported by throttle", module, n)
			return nil
		}), nil, sobek.FLAG_FALSE, sobek.FLAG_FALSE)
	}
}

// throw raises a JavaScript Error with msg.
func (vu *VU) throw(format string, args ...any) {
	panic(vu.rt.NewGoError(fmt.Errorf(format, args...)))
}

// k6Module is "k6": check, sleep, group, randomSeed, fail, from one
// table for every VU (k6Members).
func (vu *VU) k6Module() *sobek.Object {
	return vu.rt.NewDynamicObject(&lazyObject{rt: vu.rt, shared: k6Members, self: vu})
}

// k6Members are "k6"'s members, each made in the VU (the lazy object's
// self) on first read: a map of closures per VU cost 0.5 KiB.
var k6Members = map[string]func(self any) any{
	"check": func(s any) any { return s.(*VU).checkCall }, // checkcall.go
	// A FunctionCall, not func(float64): sobek calls the latter through
	// reflect, whose frames (2 KiB) every VU asleep in it kept on its
	// goroutine's stack, and whose call costs CPU on every iteration.
	"sleep":      func(s any) any { return s.(*VU).sleepFunc() },
	"group":      func(s any) any { return s.(*VU).groupCall },
	"randomSeed": func(s any) any { return s.(*VU).randomSeed },
	"fail":       func(s any) any { return s.(*VU).fail },
}

// sleepFunc is k6's sleep(seconds); the conversion is the one reflect
// made: none given is 0. A closure, not a method value: sobek calls it
// under every VU's sleep, and a method value's wrapper (sleepCall-fm, 64
// bytes, above the method's 32) stayed on the stack of every VU asleep.
func (vu *VU) sleepFunc() func(sobek.FunctionCall) sobek.Value {
	return func(call sobek.FunctionCall) sobek.Value {
		secs := 0.0
		if len(call.Arguments) > 0 {
			secs = call.Arguments[0].ToFloat()
		}
		vu.sleep(time.Duration(secs * float64(time.Second)))
		return sobek.Undefined()
	}
}

// groupCall is k6's group(name, fn).
func (vu *VU) groupCall(name string, fn sobek.Callable) sobek.Value {
	outer := vu.group
	vu.group = outer + "::" + name
	began := time.Now()
	defer func() { vu.group = outer }()
	v, err := fn(sobek.Undefined())
	if err != nil {
		panic(err)
	}
	// k6's group_duration: a group that threw is not timed.
	var ts tagSet // metrics.go
	_ = vu.r.builtin.groupDuration.addTagged(vu.phaseName(), float64(time.Since(began))/float64(time.Millisecond),
		func() map[string]string { return vu.fillTags(ts.get(), nil) })
	ts.release()
	return v
}

// randomSeed seeds Math.random, for the VU, as k6 does.
func (vu *VU) randomSeed(seed int64) {
	src := rand.New(rand.NewPCG(uint64(seed), uint64(seed)))
	vu.rt.SetRandSource(src.Float64)
}

// fail is k6's fail(msg): it throws msg.
func (vu *VU) fail(msg sobek.Value) {
	s := ""
	if msg != nil && !sobek.IsUndefined(msg) {
		s = msg.String()
	}
	panic(vu.rt.NewGoError(errors.New(s)))
}

// check counts one check's result in its phase, by group and name.
func (vu *VU) check(name string, pass bool, tags sobek.Value) {
	cs := &vu.r.setupChecks // setup's and teardown's count, as in k6
	if vu.ph != nil {
		cs = &vu.ph.checks
	}
	n := cs.add(vu.group, name, pass)
	f := 0.0
	if pass {
		f = 1
	}
	var ts tagSet // metrics.go
	_ = vu.r.builtin.checks.addTagged(vu.phaseName(), f, func() map[string]string {
		if _, own := tags.(*sobek.Object); !own && vu.vuTags == nil && vu.ph != nil {
			// the same tags on every call: kept with the check's count
			return n.tagSet(func() map[string]string { return vu.checkTags(make(map[string]string, 4), name, tags) })
		}
		return vu.checkTags(ts.get(), name, tags)
	})
	ts.release()
}

// checkTags writes a check's tags into t, which is empty, and returns it.
func (vu *VU) checkTags(t map[string]string, name string, tags sobek.Value) map[string]string {
	t = vu.fillTags(t, tags)
	t["check"] = name
	return vu.r.dropSystemTags(t, vu.namedTags(tags))
}

// checks count check() results by group path and name, what a k6 summary's
// tree of groups and checks is built from (Phase.Checks).
type checks struct {
	mu sync.RWMutex
	m  map[checkKey]*checkCount
	// recent are counts of m used lately, one per slot of their name's
	// length: a check made on every iteration is found with one load and
	// a compare, not the lock (a cache line every VU's check wrote) and
	// the map's hash. Any entry of m may be in a slot; a slot is replaced
	// when another check of its length is counted.
	recent [8]atomic.Pointer[checkCount]
}

type checkKey struct{ group, name string }

type checkCount struct {
	pass, fail atomic.Uint64
	seq        uint64   // when the check was first seen, by the phases' clock
	key        checkKey // its key in checks.m
	// tags are the check's tags when a VU of the phase gives none of its
	// own (no tags argument, no exec.vu.tags): all else they hold (the
	// group, the scenario's name and tags, options.tags, the system tags
	// kept) is the same for every such value. Made on first need, only
	// read after (Config.Points).
	tags atomic.Pointer[map[string]string]
}

// tagSet is the check's tags, made by mk on first use.
func (n *checkCount) tagSet(mk func() map[string]string) map[string]string {
	if t := n.tags.Load(); t != nil {
		return *t
	}
	t := mk()
	if n.tags.CompareAndSwap(nil, &t) {
		return t
	}
	return *n.tags.Load()
}

// CheckResult is one check's counts.
type CheckResult struct {
	Group, Name  string
	Pass, Failed uint64
	seq          uint64
}

// checkSeq orders checks by first sight across every phase.
var checkSeq atomic.Uint64

func (c *checks) add(group, name string, pass bool) *checkCount {
	slot := &c.recent[len(name)%len(c.recent)]
	n := slot.Load()
	if n == nil || n.key.name != name || n.key.group != group {
		n = c.count(checkKey{group, name})
		slot.Store(n)
	}
	if pass {
		n.pass.Add(1)
	} else {
		n.fail.Add(1)
	}
	return n
}

// count is k's count, made on first use.
func (c *checks) count(k checkKey) *checkCount {
	c.mu.RLock()
	n := c.m[k]
	c.mu.RUnlock()
	if n != nil {
		return n
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[checkKey]*checkCount{}
	}
	if n = c.m[k]; n == nil {
		n = &checkCount{seq: checkSeq.Add(1), key: k}
		c.m[k] = n
	}
	return n
}

// Checks are the phase's check() results so far.
func (p *Phase) Checks() []CheckResult { return p.checks.results() }

// results are the checks' counts so far.
func (c *checks) results() []CheckResult {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]CheckResult, 0, len(c.m))
	for k, n := range c.m {
		out = append(out, CheckResult{Group: k.group, Name: k.name, Pass: n.pass.Load(), Failed: n.fail.Load(), seq: n.seq})
	}
	return out
}

// executionModule is "k6/execution": vu, scenario, instance and test, read
// live on each access, each part made when the script first reads it,
// from one table for every VU (executionParts; lazy.go).
func (vu *VU) executionModule() *sobek.Object {
	return vu.rt.NewDynamicObject(&lazyObject{rt: vu.rt, shared: executionParts, self: vu})
}

// executionParts are k6/execution's parts: a map of closures per VU cost
// 0.9 KiB.
var executionParts = map[string]func(self any) any{
	"vu":       func(s any) any { return lazyMake(s.(*VU).execVU) },
	"scenario": func(s any) any { return lazyMake(s.(*VU).execScenario) },
	"instance": func(s any) any { return lazyMake(s.(*VU).execInstance) },
	"test":     func(s any) any { return s.(*VU).execTest() },
}

// getters is an object of read-only accessors, each computed on every
// read.
func (vu *VU) getters(fields map[string]func() any) *sobek.Object {
	m := make(map[string]any, len(fields)+2)
	for k, f := range fields {
		m[k] = lazyGetter(f)
	}
	return vu.lazy(m)
}

// execScenarioOf is the VU's scenario (none for the setup VU).
func (vu *VU) execScenarioOf() options.Scenario {
	if vu.ph == nil {
		return options.Scenario{}
	}
	return vu.ph.sc
}

// execVU is exec.vu.
func (vu *VU) execVU() sobek.Value {
	vuObj := vu.getters(map[string]func() any{
		"idInTest":            func() any { return vu.r.opts.Segment.Stripe(vu.id, 1) },
		"idInInstance":        func() any { return vu.id },
		"iterationInInstance": func() any { return max(vu.iter-1, 0) },
		"iterationInScenario": func() any { return max(vu.iter-1, 0) },
	})
	// exec.vu.tags (and k6's newer exec.vu.metrics.tags): the VU's own
	// tags, added to every later metric value of the VU.
	_ = vuObj.Set("tags", vu.ownTags())
	metricsObj := vu.rt.NewObject()
	_ = metricsObj.Set("tags", vu.ownTags())
	_ = vuObj.Set("metrics", metricsObj)
	return vuObj
}

// execScenario is exec.scenario.
func (vu *VU) execScenario() sobek.Value {
	sc := vu.execScenarioOf
	return vu.getters(map[string]func() any{
		"name":                func() any { return sc().Name },
		"executor":            func() any { return string(sc().Executor) },
		"startTime":           func() any { return vu.phaseStartMs() },
		"progress":            func() any { return vu.progress() },
		"iterationInTest":     func() any { return vu.iterationInTest(sc()) },
		"iterationInInstance": func() any { return vu.scenarioIter },
	})
}

// execInstance is exec.instance.
func (vu *VU) execInstance() sobek.Value {
	return vu.getters(map[string]func() any{
		"vusActive":              func() any { return vu.r.activeVUs() },
		"vusInitialized":         func() any { return vu.r.vuIDs.Load() },
		"iterationsCompleted":    func() any { return vu.r.iterationsDone() },
		"iterationsInterrupted":  func() any { return 0 },
		"currentTestRunDuration": func() any { return vu.r.elapsedMs() },
	})
}

// execTest is exec.test's members (a lazy object of them).
func (vu *VU) execTest() map[string]any {
	return map[string]any{
		"abort": func(reason sobek.Value) {
			s := "test.abort() called"
			if reason != nil && !sobek.IsUndefined(reason) {
				s = reason.String()
			}
			vu.r.abortedByScript.Store(true)
			vu.r.abortTest(s)
			panic(vu.rt.NewGoError(errors.New("test aborted: " + s)))
		},
		"fail": func(reason sobek.Value) {
			s := "test.fail() called"
			if reason != nil && !sobek.IsUndefined(reason) {
				s = reason.String()
			}
			vu.r.markFailed(s)
		},
	}
}

func (vu *VU) phaseStartMs() int64 {
	if vu.ph == nil {
		return 0
	}
	return vu.ph.sc.StartTime.Milliseconds()
}

// progress is the scenario's progress in [0, 1] by time.
func (vu *VU) progress() float64 {
	if vu.ph == nil || vu.ph.sc.Length() <= 0 {
		return 0
	}
	return min(1, float64(vu.ph.Snapshot().Elapsed)/float64(vu.ph.sc.Length()))
}

func (r *Runner) activeVUs() int64 {
	var n int64
	for _, p := range r.phases {
		if p.Running() {
			n += p.vus.Load()
		}
	}
	return n
}

func (r *Runner) iterationsDone() uint64 {
	var n uint64
	for _, p := range r.phases {
		c := p.Counts()
		n += c.IterOK + c.IterFailed
	}
	return n
}

func (r *Runner) elapsedMs() int64 {
	var first int64
	for _, p := range r.phases {
		if start, _ := p.Span(); !start.IsZero() && (first == 0 || start.UnixNano() < first) {
			first = start.UnixNano()
		}
	}
	if first == 0 {
		return 0
	}
	return time.Since(time.Unix(0, first)).Milliseconds()
}

// encodingModule is "k6/encoding": b64encode and b64decode with k6's
// encodings std, rawstd, url, rawurl.
func (vu *VU) encodingModule() *sobek.Object {
	rt := vu.rt
	enc := func(name sobek.Value) *base64.Encoding {
		s := "std"
		if name != nil && !sobek.IsUndefined(name) {
			s = name.String()
		}
		switch s {
		case "std", "":
			return base64.StdEncoding
		case "rawstd":
			return base64.RawStdEncoding
		case "url":
			return base64.URLEncoding
		case "rawurl":
			return base64.RawURLEncoding
		}
		vu.throw("unknown base64 encoding %q (want std, rawstd, url or rawurl)", s)
		return nil
	}
	return vu.object(map[string]any{
		"b64encode": func(input sobek.Value, encoding sobek.Value) string {
			return enc(encoding).EncodeToString(vu.bytes(input))
		},
		"b64decode": func(input string, encoding sobek.Value, format sobek.Value) sobek.Value {
			b, err := enc(encoding).DecodeString(input)
			if err != nil {
				vu.throw("b64decode: %v", err)
			}
			if format != nil && !sobek.IsUndefined(format) && format.String() == "s" {
				return rt.ToValue(string(b))
			}
			return rt.ToValue(rt.NewArrayBuffer(b))
		},
	})
}

// bytes reads a string, ArrayBuffer or typed array argument as bytes.
func (vu *VU) bytes(v sobek.Value) []byte {
	switch x := v.Export().(type) {
	case sobek.ArrayBuffer:
		return x.Bytes()
	case []byte:
		return x
	case nil:
		return nil
	}
	if o, ok := v.(*sobek.Object); ok {
		if buf, ok := o.Get("buffer").Export().(sobek.ArrayBuffer); ok {
			// A typed array or DataView: its own window of the buffer.
			b := buf.Bytes()
			if off, n := o.Get("byteOffset"), o.Get("byteLength"); off != nil && n != nil {
				return b[off.ToInteger() : off.ToInteger()+n.ToInteger()]
			}
			return b
		}
	}
	return []byte(v.String())
}

// throttleModule is "k6/x/throttle": tries, state, configure.
func (vu *VU) throttleModule() *sobek.Object {
	rt := vu.rt
	return vu.object(map[string]any{
		// tries(n, fn[, {backoff}]) runs fn until none of its requests
		// failed or n tries are spent; every request is an attempt; the
		// iteration's outcome is the last try's. It returns fn's value.
		"tries": func(n int, fn sobek.Callable, opts sobek.Value) sobek.Value {
			if n < 1 {
				vu.throw("throttle.tries: n must be >= 1, got %d", n)
			}
			base := engine.BackoffBase
			if o, ok := opts.(*sobek.Object); ok {
				if b := o.Get("backoff"); b != nil && !sobek.IsUndefined(b) {
					d, err := jsDuration(b)
					if err != nil || d < 0 {
						vu.throw("throttle.tries: backoff: want a duration such as \"50ms\" or milliseconds")
					}
					base = d
				}
			}
			before := vu.failed
			var v sobek.Value
			for try := 1; ; try++ {
				vu.failed = false
				var err error
				v, err = fn(sobek.Undefined())
				if err != nil {
					panic(err)
				}
				if !vu.failed || try >= n || vu.stopping() {
					break
				}
				vu.sleep(backoff(base, try))
			}
			vu.failed = before || vu.failed
			return v
		},
		// state() is the current phase's governor state.
		"state": func() *sobek.Object {
			o := rt.NewObject()
			if vu.ph == nil {
				_ = o.Set("phase", "")
				_ = o.Set("signal", "setup")
				return o
			}
			offer, ceiling, lastBad, signal := vu.ph.State()
			_ = o.Set("phase", vu.ph.sc.Name)
			_ = o.Set("mode", vu.ph.limits.Mode.String())
			_ = o.Set("offer", offer)
			_ = o.Set("ceiling", ceiling)
			_ = o.Set("lastBad", lastBad)
			_ = o.Set("signal", signal)
			return o
		},
		// configure(scenario, {floor, start, high, low, window,
		// minAttempts}) declares a scenario's governor settings, in the
		// init context.
		"configure": func(name string, settings *sobek.Object) {
			if !vu.inInit {
				vu.throw("throttle.configure works only in the init context")
			}
			if vu.ph != nil {
				return // every VU runs the init context; the setup VU's counts
			}
			g, err := governance(settings)
			if err != nil {
				vu.throw("throttle.configure(%q): %v", name, err)
			}
			vu.r.configured[name] = g
		},
	})
}

// stopping reports whether the VU's phase has stopped scheduling.
func (vu *VU) stopping() bool {
	if vu.ph == nil {
		return false
	}
	select {
	case <-vu.ph.stop:
		return true
	default:
		return false
	}
}

// backoff is the pause before try+1: jittered in [d/2, d], d = base ×
// 2^(try−1), at most 32 × base.
func backoff(base time.Duration, try int) time.Duration {
	d := base << min(try-1, 5)
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}

// governance reads configure's settings object.
func governance(o *sobek.Object) (Governance, error) {
	var g Governance
	if o == nil {
		return g, nil
	}
	for _, k := range o.Keys() {
		v := o.Get(k)
		num := v.ToFloat()
		switch k {
		case "floor":
			g.Floor = &num
		case "start":
			g.Start = &num
		case "high":
			g.High = &num
		case "low":
			g.Low = &num
		case "window":
			d, err := jsDuration(v)
			if err != nil {
				return g, fmt.Errorf("window: %v", err)
			}
			g.Window = &d
		case "minAttempts":
			if num < 1 || num != float64(uint64(num)) {
				return g, fmt.Errorf("minAttempts must be a whole number >= 1, got %v", v)
			}
			n := uint64(num)
			g.MinAttempts = &n
		default:
			return g, fmt.Errorf("unknown setting %q (want floor, start, high, low, window, minAttempts)", k)
		}
	}
	return g, nil
}

// jsDuration reads a duration: a k6 duration string or milliseconds.
func jsDuration(v sobek.Value) (time.Duration, error) {
	if s, ok := v.Export().(string); ok {
		return options.ParseDuration(s)
	}
	f := v.ToFloat()
	if f != f {
		return 0, fmt.Errorf("want a duration such as \"5s\" or milliseconds, got %v", v)
	}
	return time.Duration(f * float64(time.Millisecond)), nil
}

// phaseName is the VU's scenario's name, "setup" for the setup VU.
func (vu *VU) phaseName() string {
	if vu.ph == nil {
		return "setup"
	}
	return vu.ph.sc.Name
}

// iterationInTest is exec.scenario.iterationInTest: a shared-iterations
// scenario's parts number their iterations from the part's first
// (IterationBase, exact as the part's count is fixed); any other
// scenario's parts, whose counts depend on their pace, interleave theirs
// (Segment.Stripe) so that the numbers stay unique across instances.
func (vu *VU) iterationInTest(sc options.Scenario) int64 {
	if sc.Executor == options.SharedIterations {
		return vu.scenarioIter + int64(sc.IterationBase)
	}
	return vu.r.opts.Segment.Stripe(vu.scenarioIter, 0)
}
