package script

import (
	"context"
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script/k6grpc"
	"github.com/throttlekit/throttle/internal/script/k6ws"
	"github.com/throttlekit/throttle/internal/script/protohost"
)

// protoHost is what the protocol modules (k6ws) see of a VU: its
// runtime, tags, metrics, the phase's meter and its event loop.
type protoHost struct{ vu *VU }

var _ protohost.Host = protoHost{}

func (h protoHost) Runtime() *sobek.Runtime                  { return h.vu.rt }
func (h protoHost) InInit() bool                             { return h.vu.inInit }
func (h protoHost) Bytes(v sobek.Value) []byte               { return h.vu.bytes(v) }
func (h protoHost) Tags(extra sobek.Value) map[string]string { return h.vu.tags(extra) }
func (h protoHost) ReadFile(p string) ([]byte, error)        { return h.vu.r.readFile(p) }
func (h protoHost) Panics() *engine.Panics                   { return &h.vu.r.panics }
func (h protoHost) Context() context.Context {
	if h.vu.ph == nil {
		return context.Background()
	}
	return h.vu.hardCtx()
}

// protoMetrics are the protocols' metrics by name.
var protoMetrics = func() map[string]protohost.Metric {
	m := map[string]protohost.Metric{}
	for _, x := range append(k6ws.Metrics, k6grpc.Metrics...) {
		m[x.Name] = x
	}
	return m
}()

// protoType is a protocol metric's k6 type: a Trend or a Counter.
func protoType(def protohost.Metric) MetricType {
	if def.Trend {
		return Trend
	}
	return Counter
}

// Sample adds v to a protocol metric, made on first use.
func (h protoHost) Sample(name string, v float64, tags map[string]string) {
	def, ok := protoMetrics[name]
	if !ok {
		h.vu.throw("internal: unknown protocol metric %q", name)
	}
	m, err := h.vu.r.custom.get(name, protoType(def), def.Time)
	if err != nil {
		h.vu.throw("%v", err)
	}
	_ = m.addTagged(h.vu.phaseName(), v, func() map[string]string { return tags })
}

// Attempt counts one attempt on the phase's meter (setup's outside a
// phase); a failed one fails the iteration.
func (h protoHost) Attempt(c engine.Class, elapsed time.Duration, latency bool) {
	vu := h.vu
	meter := vu.r.setupMeter
	if vu.ph != nil {
		meter = vu.ph.meter
		if latency && vu.ph.rec != nil {
			vu.ph.rec.Record(elapsed)
		}
	}
	meter.Record(c, elapsed)
	if c != engine.ClassOK {
		vu.failed = true
	}
}

// Hold keeps the VU's event loop running until Release; a reset of the
// loop in between drops the callbacks still to come and runs stale once.
func (h protoHost) Hold(stale func()) protohost.Hold {
	l := h.vu.eventLoop()
	l.pending++
	return &loopHold{l: l, gen: l.gen, stale: stale}
}

type loopHold struct {
	l      *eventLoop
	gen    uint64
	stale  func()
	staled bool // touched on the VU's goroutine only
}

func (h *loopHold) Post(fn func() error) {
	h.l.enqueue(func() error {
		if h.l.gen != h.gen {
			if !h.staled {
				h.staled = true
				h.stale()
			}
			return nil
		}
		return fn()
	})
}

func (h *loopHold) Release() {
	h.l.enqueue(func() error {
		if h.l.gen == h.gen {
			h.l.pending--
		}
		return nil
	})
}

// protocolModule builds a protocol module: k6/ws, k6/websockets,
// k6/net/grpc.
func (vu *VU) protocolModule(name string) sobek.Value {
	h := protoHost{vu}
	switch name {
	case "k6/ws":
		return k6ws.NewWS(h)
	case "k6/net/grpc":
		return k6grpc.New(h)
	}
	return k6ws.NewWebSockets(h)
}
