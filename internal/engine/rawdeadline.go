package engine

import (
	"errors"
	"net"
	"os"
	"time"
)

// The raw transport's deadlines (raw.go): an attempt runs under the
// deadline already on its connection when that comes no later than its
// own, and moves it on the early timeout it brings.

// keepDeadline reports whether an attempt from t0 with timeout can run
// under the deadline already on h's connection: one no later than its
// own. Then no deadline is set per request — a SetDeadline is a clock
// reading and an update of the runtime's timers (docs/performance.md,
// "Iteration cost, session 13"). A deadline kept so ends at most an
// attempt's timeout after it was set, when a read or a write on the
// connection fails with a timeout that is not the attempt's: moved finds
// that and puts the attempt's own deadline on, and the read or write is
// made again. So an attempt is still cut off at exactly t0 + timeout, and
// a steady stream of requests sets one deadline per timeout, not one per
// request.
//
// A deadline already past at t0 is not kept: the connection sat idle
// past it (a VU's sleep(20) between requests under the default 60 s
// timeout: one attempt in three), and its first write would fail at once
// only for moved to put the attempt's deadline on — the same deadline,
// set here without the failed write and the net.OpError it builds (some
// 100–200 bytes, docs/performance.md "Bytes per iteration").
func (h *rawHost) keepDeadline(t0 time.Time, timeout time.Duration) bool {
	return !h.dl.IsZero() && h.dl.After(t0) && h.dl.Sub(t0) <= timeout
}

// moved is called with err from a read or a write on h's connection in
// tr's attempt. When err is the expiry of an earlier deadline kept on the
// connection, it puts the attempt's deadline on instead
// and reports true: the read or write is to be made again (a deadline
// expired has read or written nothing more; a write cut short returned
// what it wrote).
func (h *rawHost) moved(err error, tr *rawTrace) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	deadline := tr.deadline()
	if !h.dl.Before(deadline) {
		return false
	}
	if h.conn.SetDeadline(deadline) != nil {
		return false
	}
	h.dl = deadline
	return true
}

// deadline is the attempt's deadline, t0 + timeout: worked out where it
// is needed, which a request on a connection with a deadline kept
// (rawHost.keepDeadline) is not.
func (tr *rawTrace) deadline() time.Time { return tr.t0.Add(tr.timeout) }

// write writes the built request on h's connection, counting its bytes
// in tr; a deadline kept from an earlier attempt that expires during it
// is moved to the attempt's (rawHost.moved) and the rest written.
func (c *rawConn) write(h *rawHost, tr *rawTrace) error {
	if c.body == nil {
		wire := c.wire
		for {
			k, err := h.conn.Write(wire)
			tr.sent += int64(k)
			if err == nil || !h.moved(err, tr) {
				return err
			}
			wire = wire[k:]
		}
	}
	bufs := net.Buffers{c.wire, c.body}
	for {
		n, err := bufs.WriteTo(h.conn) // consumes what it wrote
		tr.sent += n
		if err == nil || !h.moved(err, tr) {
			return err
		}
	}
}
