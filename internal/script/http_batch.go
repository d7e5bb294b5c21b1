package script

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script/protohost"
)

// batch sends several requests at once and returns their Responses, as an
// array or an object keyed like its argument.
func (m *httpModule) batch(call sobek.FunctionCall) sobek.Value {
	vu := m.vu
	if vu.inInit {
		vu.throw("http requests cannot be made in the init context (use setup())")
	}
	arg, ok := call.Argument(0).(*sobek.Object)
	if !ok {
		vu.throw("http.batch: want an array or an object of requests")
	}
	type item struct {
		key  string
		req  engine.Request
		res  engine.Response
		out  engine.Outcome
		info reqInfo
	}
	keys := arg.Keys()
	items := make([]item, len(keys))
	for i, k := range keys {
		it := &items[i]
		it.key = k
		method, u, body, params := m.batchRequest(arg.Get(k))
		it.info = m.prepare(&it.req, method, u, body, params)
		if it.info.digest {
			vu.throw("http.batch: auth \"digest\" is supported by http.request and its verbs only")
		}
	}
	// Up to options.batch requests go out at once, each on a lane of its
	// own (runner and callback), at most batchPerHost to one host; lanes
	// are kept for the next batch.
	n := min(len(items), max(vu.r.opts.Batch, 1))
	lanes := make(chan *slot, n)
	for i := range n {
		lanes <- m.lane(i)
	}
	perHost := map[string]chan struct{}{}
	if limit := vu.r.opts.BatchPerHost; limit > 0 {
		for i := range items {
			if h := hostOf(&items[i].req); perHost[h] == nil {
				perHost[h] = make(chan struct{}, limit)
			}
		}
	}
	// A Go panic on a batch goroutine (throttle's bug) is recovered there
	// (engine.Panics): that request fails and so does the iteration, as a
	// host call's panic fails it, once the others have come back.
	var wg sync.WaitGroup
	panicked := make([]error, len(items))
	for i := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			panicked[i] = m.batchSend(&items[i].req, &items[i].res, &items[i].out, items[i].info.cb, perHost, lanes)
		}()
	}
	wg.Wait()
	var hostPanic error
	for _, err := range panicked {
		if err != nil && hostPanic == nil {
			hostPanic = err
		}
	}
	if hostPanic != nil {
		// The lanes a panic left in an unknown state are not reused: the
		// VU's next requests make fresh ones.
		for _, l := range vu.slots {
			l.runner.Close()
			l.driver.Close()
		}
		vu.slots = nil
	}
	var out *sobek.Object
	if arg.ClassName() == "Array" {
		out = vu.rt.NewArray()
	} else {
		out = vu.rt.NewObject()
	}
	var thrown error
	for i := range items {
		it := &items[i]
		if panicked[i] != nil {
			continue
		}
		_ = out.Set(it.key, m.resolve(&it.req, &it.res, it.out, &it.info))
		if err := m.thrown(&it.req, &it.res, it.out); err != nil && thrown == nil {
			thrown = err
		}
	}
	if hostPanic != nil {
		panic(vu.rt.NewGoError(hostPanic))
	}
	if thrown != nil {
		vu.throw("%v", thrown)
	}
	return out
}

// batchSend sends one batch request on a free lane (at most the host's
// share at once); a Go panic here is recovered as its error, the lane
// handed back first so that the batch's other requests go on.
func (m *httpModule) batchSend(req *engine.Request, res *engine.Response, out *engine.Outcome, cb *statusSet,
	perHost map[string]chan struct{}, lanes chan *slot) (err error) {
	defer m.vu.r.panics.Recover("an http.batch request", &err)
	if sem := perHost[hostOf(req)]; sem != nil {
		sem <- struct{}{}
		defer func() { <-sem }()
	}
	lane := <-lanes
	defer func() { lanes <- lane }()
	protohost.Checkpoint("http.batch")
	lane.cb = cb
	*out = lane.runner.Iterate(req, time.Time{}, res)
	return nil
}

// hostOf is the host a request goes to (batchPerHost's key).
func hostOf(req *engine.Request) string {
	if u, err := url.Parse(req.URL); err == nil {
		return u.Host
	}
	return req.URL
}

// batchRequest reads one batch entry: a URL, [method, url, body, params] or
// {method, url, body, params}.
func (m *httpModule) batchRequest(v sobek.Value) (method string, u, body, params sobek.Value) {
	o, ok := v.(*sobek.Object)
	if !ok {
		return http.MethodGet, v, nil, nil
	}
	if o.ClassName() == "Array" {
		get := func(i int) sobek.Value { return o.Get(strconv.Itoa(i)) }
		return strings.ToUpper(get(0).String()), get(1), get(2), get(3)
	}
	method = http.MethodGet
	if mv := o.Get("method"); mv != nil && !sobek.IsUndefined(mv) {
		method = strings.ToUpper(mv.String())
	}
	if o.Get("url") == nil {
		return method, v, nil, nil // an http.url object
	}
	return method, o.Get("url"), o.Get("body"), o.Get("params")
}
