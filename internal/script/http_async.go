package script

import (
	"strings"
	"sync"
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script/protohost"
)

// asyncLanes are a VU's request lanes for http.asyncRequest: each request
// in flight has one of its own (its own connection), kept for reuse.
type asyncLanes struct {
	mu       sync.Mutex
	free     []*slot
	all      []*slot
	inflight sync.WaitGroup
}

// wait waits for the requests in flight (the VU is closing).
func (a *asyncLanes) wait() { a.inflight.Wait() }

func (a *asyncLanes) take(vu *VU) (*slot, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.free); n > 0 {
		s := a.free[n-1]
		a.free = a.free[:n-1]
		return s, nil
	}
	s, err := vu.newSlot()
	if err != nil {
		return nil, err
	}
	a.all = append(a.all, s)
	return s, nil
}

func (a *asyncLanes) give(s *slot) {
	a.mu.Lock()
	a.free = append(a.free, s)
	a.mu.Unlock()
}

// asyncRequest is http.asyncRequest(method, url, body, params): the
// request goes out on its own lane while the script runs on; the promise
// settles on the VU's event loop with the Response, judged and counted
// as a request made with http.request is.
func (m *httpModule) asyncRequest(call sobek.FunctionCall) sobek.Value {
	vu := m.vu
	if vu.inInit {
		vu.throw("http requests cannot be made in the init context (use setup())")
	}
	rt := vu.rt
	promise, resolve, reject := rt.NewPromise()
	req := &engine.Request{}
	info := m.prepare(req, strings.ToUpper(call.Argument(0).String()), call.Argument(1), call.Argument(2), call.Argument(3))
	if info.digest {
		vu.throw("http.asyncRequest: auth \"digest\" is supported by http.request and its verbs only")
	}
	lane, err := vu.async.take(vu)
	if err != nil {
		_ = reject(rt.NewGoError(err))
		return rt.ToValue(promise)
	}
	lane.cb = info.cb
	finish := vu.eventLoop().register()
	vu.async.inflight.Add(1)
	go func() {
		defer vu.async.inflight.Done()
		res := &engine.Response{}
		out, err := vu.asyncSend(lane, req, res)
		if err != nil {
			// A Go panic on the lane (throttle's bug): the lane, in an
			// unknown state, is not reused (the VU closes it), and the
			// iteration fails with the panic, as a host call's does.
			finish(func() error { return err })
			return
		}
		vu.async.give(lane)
		finish(func() error {
			v := m.resolve(req, res, out, &info)
			if err := m.thrown(req, res, out); err != nil {
				_ = reject(rt.NewGoError(err))
				return nil
			}
			_ = resolve(v)
			return nil
		})
	}()
	return rt.ToValue(promise)
}

// asyncSend sends req on lane (on the lane's goroutine); a Go panic there
// is recovered as its error (engine.Panics).
func (vu *VU) asyncSend(lane *slot, req *engine.Request, res *engine.Response) (_ engine.Outcome, err error) {
	defer vu.r.panics.Recover("an async HTTP lane", &err)
	protohost.Checkpoint("http.async")
	return lane.runner.Iterate(req, time.Time{}, res), nil
}
