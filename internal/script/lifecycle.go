package script

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
)

// ErrStopped is a lifecycle function (setup, teardown, handleSummary) cut
// short by a signal: Runner.Interrupt, or for setup the run's context.
var ErrStopped = errors.New("interrupted by a signal")

// lifeState is the lifecycle function running on the setup VU, if any:
// what Interrupt stops.
type lifeState struct {
	mu   sync.Mutex
	stop func() // nil: none runs
}

// Interrupt stops the lifecycle function running now (setup, teardown or
// handleSummary: sobek's Runtime.Interrupt, the sleeps and requests it
// waits on ended), which then returns ErrStopped; the run goes on to what
// follows it (teardown's end goes on to handleSummary, handleSummary's to
// the caller). With none running it does nothing: a run's scenarios are
// stopped through Run's context and Abort. It is safe to call at any time,
// from any goroutine (a signal handler).
func (r *Runner) Interrupt() {
	r.life.mu.Lock()
	stop := r.life.stop
	r.life.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// lifecycle calls setup, teardown or handleSummary on the setup VU,
// stopped after timeout (setupTimeout, teardownTimeout,
// handleSummaryTimeout) as k6 stops it, or by Interrupt or signal closing:
// then it returns ErrStopped.
func (r *Runner) lifecycle(signal <-chan struct{}, name string, timeout time.Duration, fn sobek.Callable, args ...sobek.Value) (sobek.Value, error) {
	vu := r.setupVU
	stop := make(chan struct{})
	timedOutMsg := fmt.Sprintf("%s() execution timed out after %v (%sTimeout)", name, timeout, name)
	var once sync.Once
	var why string // written once, before stop closes
	end := func(msg string) {
		once.Do(func() {
			why = msg
			close(stop)
			vu.rt.Interrupt(msg)
		})
	}
	t := time.AfterFunc(timeout, func() { end(timedOutMsg) })
	r.life.mu.Lock()
	r.life.stop = func() { end("") }
	r.life.mu.Unlock()
	watched := make(chan struct{})
	if signal != nil {
		go func() {
			select {
			case <-signal:
				// The run's own end (exec.test.abort(), a VU that failed
				// to start) is not a signal: the call ends by its own error.
				if !r.aborted.Load() && r.runError() == nil {
					end("")
				}
			case <-watched:
			}
		}()
	}
	vu.lifeStop = stop
	v, err := vu.call(fn, stop, args...)
	vu.lifeStop = nil
	close(watched)
	r.life.mu.Lock()
	r.life.stop = nil
	r.life.mu.Unlock()
	t.Stop()
	// Whatever ended it, end once more: a timer or signal that fired after
	// the call returned has run end already, or runs nothing now.
	end("-")
	vu.rt.ClearInterrupt()
	switch why {
	case "-":
		return v, err
	case "":
		return nil, fmt.Errorf("%s() %w", name, ErrStopped)
	}
	return nil, errors.New(why)
}

// finish ends a run: the summary's span, then handleSummary if the script
// exports it. stopped names the lifecycle function a signal cut short.
func (r *Runner) finish(res *RunResult, stopped string) (*RunResult, error) {
	res.End = time.Now()
	res.Stopped = stopped
	// An agent (Deltas) leaves handleSummary to its controller, which
	// runs it once with the whole test's data.
	if fn, ok := sobek.AssertFunction(r.setupVU.exports.Get("handleSummary")); ok && !r.cfg.Deltas {
		res.HandleSummary = true
		out, err := r.handleSummary(fn, res.End.Sub(res.Start))
		if err != nil {
			res.SummaryErr = fmt.Errorf("handleSummary: %w", err)
			if errors.Is(err, ErrStopped) {
				res.Stopped = "handleSummary"
			}
		}
		res.Outputs = out
	}
	if res.Stopped != "" {
		res.Interrupted = true
	}
	return res, nil
}

// handleSummary calls the script's handleSummary(data) with k6's data
// object and returns what it asks to be written, sorted by name. A value
// is a string or an ArrayBuffer; anything else is refused.
func (r *Runner) handleSummary(fn sobek.Callable, span time.Duration) ([]SummaryOutput, error) {
	js, err := r.Summary(span).DataJSON(r.cfg.StdoutTTY, r.cfg.StderrTTY)
	if err != nil {
		return nil, err
	}
	vu := r.setupVU
	data, err := vu.parseJSON(string(js))
	if err != nil {
		return nil, err
	}
	v, err := r.lifecycle(nil, "handleSummary", r.opts.HandleSummaryTimeout, fn, data)
	if errors.Is(err, ErrStopped) {
		return nil, err
	}
	if err != nil {
		return nil, r.scriptError(err)
	}
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil, nil
	}
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil, fmt.Errorf("want an object of file names to contents, got %v", v)
	}
	var out []SummaryOutput
	for _, k := range o.Keys() {
		switch c := o.Get(k).Export().(type) {
		case string:
			out = append(out, SummaryOutput{k, []byte(c)})
		case sobek.ArrayBuffer:
			out = append(out, SummaryOutput{k, c.Bytes()})
		default:
			return nil, fmt.Errorf("%q: want a string or an ArrayBuffer, got %T", k, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// setup runs setup() on the setup VU and keeps its return value as JSON;
// ctx ending stops it (ErrStopped).
func (r *Runner) setup(ctx context.Context) error {
	fn, ok := sobek.AssertFunction(r.setupVU.exports.Get("setup"))
	if !ok || r.opts.NoSetup {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("setup() %w", ErrStopped) // interrupted before it began
	}
	v, err := r.lifecycle(ctx.Done(), "setup", r.opts.SetupTimeout, fn)
	if errors.Is(err, ErrStopped) {
		return err
	}
	if err != nil {
		return fmt.Errorf("setup: %w", r.scriptError(err))
	}
	r.setupData, err = r.setupVU.stringify(v)
	return err
}

// teardown runs teardown(data) with a fresh copy of the setup data.
func (r *Runner) teardown() error {
	vu := r.setupVU
	fn, ok := sobek.AssertFunction(vu.exports.Get("teardown"))
	if !ok || r.opts.NoTeardown {
		return nil
	}
	data := sobek.Undefined()
	if r.setupData != "" {
		v, err := vu.parseJSON(r.setupData)
		if err != nil {
			return err
		}
		data = v
	}
	_, err := r.lifecycle(nil, "teardown", r.opts.TeardownTimeout, fn, data)
	if errors.Is(err, ErrStopped) {
		return err
	}
	if err != nil {
		return fmt.Errorf("teardown: %w", r.scriptError(err))
	}
	return nil
}

// runtimeHook, set by tests only, is given every VU's runtime as it is
// made (a test injects a Go function that panics there).
var runtimeHook func(vu *VU)

// HostPanic is a Go panic recovered in the host code a VU's JavaScript
// called (a k6 module's function) or in a goroutine a module started (a
// WebSocket reader, an async HTTP lane, a gRPC stream): a bug of
// throttle's, not the script's. The call, iteration or stream fails with
// it, it is logged once per run and counted (Runner.Panics), and the run
// goes on. The recovery is engine.Panics.Recover, shared by every site.
type HostPanic = engine.HostPanic

// Panics counts the Go panics recovered in the VUs' host code so far.
func (r *Runner) Panics() int64 { return r.panics.Count() }

// stuckAt says where an iteration cut off at the graceful stop was: the
// script position the interruption found it at ("" if unknown, as for an
// iteration waiting in Go code, a request or a sleep).
func stuckAt(err error) string {
	var ie *sobek.InterruptedError
	if !errors.As(err, &ie) {
		return ""
	}
	// The first line of the stack is the innermost position.
	s := strings.TrimSpace(ie.String())
	if _, rest, ok := strings.Cut(s, "\n"); ok {
		s = rest
	}
	s = strings.TrimSpace(s)
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimPrefix(strings.TrimSpace(s), "at ")
}

// cutOff says that vu's iteration was cut off by its phase's stop (the
// graceful stop ran out, or the run was aborted: a second Ctrl-C, the
// session's memory bound): one warning naming the
// scenario, the VU and where its script was, for the first ten such
// iterations of the run.
func (r *Runner) cutOff(vu *VU, err error) {
	if n := r.cutOffs.Add(1); n > 10 {
		return
	}
	p := vu.ph
	where := stuckAt(err)
	if where == "" {
		where = "waiting in a call (a request, a sleep or a timer)"
	} else {
		where = "running at " + where
	}
	why := fmt.Sprintf("did not end within gracefulStop (%v)", p.sc.GracefulStop)
	if r.userAbort.Load() {
		why = "was in flight when the run was aborted"
	}
	// The VU's own iteration is its __ITER (vu.iter counts the one begun).
	r.cfg.Logger.Warn(fmt.Sprintf("scenario %s: VU %d's iteration %d (scenario iteration %d) %s and was cut off, %s",
		p.sc.Name, vu.id, max(vu.iter-1, 0), vu.scenarioIter, why, where))
}
