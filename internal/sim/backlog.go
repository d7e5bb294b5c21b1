package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// BacklogSpec describes a target that queues instead of failing (issue 12):
// a thread-pool server with a deep FIFO queue in front of its workers, and
// the client that loads it. Its zero value is not valid: Servers and Service
// are required.
type BacklogSpec struct {
	// Servers is how many workers serve at once, each one attempt for
	// Service. The capacity is Servers / Service attempts per second.
	Servers int
	Service time.Duration
	// Depth is how many attempts may wait on the server (zombies
	// included); an arrival that finds it full is refused: failed at once.
	// 0 is an unbounded queue.
	Depth int
	// Timeout is the client's: an attempt not answered within it fails
	// then, with latency Timeout. 0 waits for ever. It must exceed
	// Service.
	Timeout time.Duration
	// DropAbandoned makes the server forget an attempt whose client gave
	// up before its service started. By default it stays queued and still
	// takes a worker for Service when it reaches the front (a zombie): the
	// backlog outlives the overload that built it.
	DropAbandoned bool
	// MaxInFlight bounds the client's attempts in flight, as the engine's
	// --max-vus bounds its workers: an arrival when that many are in
	// flight is dropped, never started (Load.Dropped). 0 is no bound.
	MaxInFlight int
}

// Capacity is Servers / Service, attempts per second.
func (s BacklogSpec) Capacity() float64 { return float64(s.Servers) / s.Service.Seconds() }

// Validate reports the first field that is wrong.
func (s BacklogSpec) Validate() error {
	switch {
	case s.Servers <= 0:
		return fmt.Errorf("sim: backlog servers must be > 0, got %d", s.Servers)
	case s.Service <= 0:
		return fmt.Errorf("sim: backlog service time must be > 0, got %v", s.Service)
	case s.Depth < 0:
		return fmt.Errorf("sim: backlog depth must be >= 0, got %d", s.Depth)
	case s.Timeout < 0:
		return fmt.Errorf("sim: backlog timeout must be >= 0, got %v", s.Timeout)
	case s.Timeout > 0 && s.Timeout <= s.Service:
		return fmt.Errorf("sim: backlog timeout (%v) must exceed the service time (%v)", s.Timeout, s.Service)
	case s.DropAbandoned && s.Timeout == 0:
		return errors.New("sim: a backlog drops abandoned attempts only when the client has a timeout")
	case s.MaxInFlight < 0:
		return fmt.Errorf("sim: backlog max in flight must be >= 0, got %d", s.MaxInFlight)
	}
	return nil
}

// LoadTarget is a Target that also knows what a real host counts beyond
// resolved attempts (governor.Load): attempts started, arrivals dropped for
// want of a worker, and the summed latency of resolved attempts, all
// cumulative since the run began. Run hands a governor counters that
// implement governor.LoadCounters when its target is a LoadTarget, so
// rules on in-flight growth, unserved load and latency can be driven by the
// simulator. Load is read after the step's Serve; Started is never below
// the attempts Serve has resolved.
type LoadTarget interface {
	Target
	Load() governor.Load
}

// Backlog returns a fresh backlog target for spec, and panics if spec is
// invalid (the specs are the program's own, like a regexp.MustCompile).
//
// The model is a fluid one, stepped in slices of at most backlogSlice: the
// server pool works FIFO at Capacity attempts per second and an attempt's
// latency is its wait in the queue plus Service, exactly for a uniform
// stream of arrivals within each slice (below capacity the pool keeps up and
// every attempt takes Service; above it the queue, and the wait, grow by
// x − c per second). Nothing fails until the client's Timeout (or the
// queue's Depth) is reached; with MaxInFlight the client drops what it
// cannot start instead. An attempt resolves when its client sees the answer
// or gives up; one whose service started in time always completes in time.
func Backlog(spec BacklogSpec) *BacklogTarget {
	if err := spec.Validate(); err != nil {
		panic(err)
	}
	return &BacklogTarget{
		spec:    spec,
		c:       spec.Capacity(),
		svc:     spec.Service.Seconds(),
		timeout: spec.Timeout.Seconds(),
	}
}

// backlogSlice is the longest slice a Backlog step is cut into: fine against
// a governor's window and tick, coarse enough that a long run costs little.
// Waits are exact within a slice; only when an answer is counted (the middle
// of the span its attempts complete over) and the client's and the queue's
// bounds are granular to it.
const backlogSlice = 50 * time.Millisecond

// BacklogTarget is a Backlog model in a run. It is not safe for concurrent
// use; each run needs a fresh one.
type BacklogTarget struct {
	spec             BacklogSpec
	c, svc, timeout  float64 // attempts per second; seconds; seconds (0: none)
	queue            []cohort
	zombies          int     // queue[:zombies] are abandoned work, always the oldest
	queued           float64 // the attempts of queue, zombies included
	completing       []completion
	server           float64 // time (s) up to which the pool's capacity is spent
	started, dropped float64
	ok, failed       float64 // resolved, for the client
	latency          float64 // seconds, summed over resolved attempts
}

// A cohort is n attempts whose arrival times are spread evenly over
// [lo, hi); lo == hi is a point. Serving takes attempts from the front.
type cohort struct{ n, lo, hi float64 }

// A completion is n attempts answered at about at (seconds), their latencies
// summing to latency.
type completion struct{ n, at, latency float64 }

// eps is the amount of an attempt below which a cohort counts as empty.
const eps = 1e-9

// Capacity is the model's capacity, attempts per second.
func (b *BacklogTarget) Capacity() float64 { return b.c }

// Queued returns the attempts waiting on the server: those whose client
// still waits, and zombies whose client gave up.
func (b *BacklogTarget) Queued() (waiting, zombies float64) {
	for i, q := range b.queue {
		if i < b.zombies {
			zombies += q.n
		} else {
			waiting += q.n
		}
	}
	return waiting, zombies
}

// Load returns the cumulative evidence so far; see LoadTarget.
func (b *BacklogTarget) Load() governor.Load {
	started := whole(b.started)
	if r := whole(b.ok) + whole(b.failed); r > started {
		started = r // float error must never make in-flight negative
	}
	return governor.Load{
		Started: started,
		Dropped: whole(b.dropped),
		Latency: time.Duration(b.latency * float64(time.Second)),
	}
}

// Serve runs the model over [at, at+step) at offer x; see Target.
func (b *BacklogTarget) Serve(at time.Duration, x float64, step time.Duration, _ *rand.Rand) (ok, failed float64) {
	ok0, failed0 := b.ok, b.failed
	n := max(1, int(math.Ceil(float64(step)/float64(backlogSlice))))
	h := step.Seconds() / float64(n)
	u := at.Seconds()
	for i := 0; i < n; i++ {
		b.slice(u+float64(i)*h, u+float64(i+1)*h, x)
	}
	return b.ok - ok0, b.failed - failed0
}

// slice advances the model over [u, e) at offer x.
func (b *BacklogTarget) slice(u, e, x float64) {
	arrivals := x * (e - u)
	accepted := arrivals
	if m := float64(b.spec.MaxInFlight); m > 0 {
		accepted = math.Max(0, math.Min(arrivals, m-(b.started-b.ok-b.failed)))
	}
	b.dropped += arrivals - accepted
	b.started += accepted
	if accepted > eps {
		b.queue = append(b.queue, cohort{n: accepted, lo: u, hi: e})
		b.queued += accepted
	}
	b.serve(u, e)
	b.abandon(e)
	b.refuse()
	b.answer(e)
}

// serve spends the pool's capacity over [u, e) on the queue, front first. An
// attempt starts when the pool is free and it has arrived; when the pool is
// faster than a cohort's arrivals it catches up and then serves each on
// arrival, without a wait.
func (b *BacklogTarget) serve(u, e float64) {
	sc := math.Max(b.server, u)
	perStart := 1 / b.c
	for len(b.queue) > 0 && sc < e {
		q := &b.queue[0]
		if q.lo >= e {
			break // the front has not arrived yet
		}
		sc = math.Max(sc, q.lo)
		perArrival := 0.0 // 1/r; 0: everything left arrived at lo
		if q.hi > q.lo {
			perArrival = (q.hi - q.lo) / q.n
		}
		// Busy phase: attempt j starts at sc + j/c, after its arrival at
		// lo + j/r, until the pool catches up with the arrivals (only
		// when r < c), the cohort ends or the slice does.
		catchUp := math.Inf(1)
		if perArrival > perStart {
			catchUp = (sc - q.lo) / (perArrival - perStart)
		}
		budget := (e - sc) * b.c
		busy := math.Min(q.n, math.Min(catchUp, budget))
		if busy > 0 {
			wait := (sc + busy*perStart/2) - (q.lo + busy*perArrival/2)
			b.begin(busy, sc+busy*perStart/2, wait)
			sc += busy * perStart
			q.lo += busy * perArrival
			q.n -= busy
			b.queued -= busy
		}
		switch {
		case q.n <= eps:
			b.pop()
			continue
		case busy == budget:
			b.server = e
			return
		}
		// Caught up: the rest is served as it arrives, up to the end of
		// the slice.
		end := math.Min(q.hi, e)
		follow := math.Min(q.n, (end-q.lo)/perArrival)
		b.begin(follow, (q.lo+end)/2, 0)
		q.n -= follow
		b.queued -= follow
		q.lo = end
		sc = end
		if q.n > eps {
			break
		}
		b.pop()
	}
	b.server = sc
}

// begin records n attempts of the queue's front starting service at about
// at after waiting wait on average. A zombie's answer goes to nobody: it
// only takes the pool's time.
func (b *BacklogTarget) begin(n, at, wait float64) {
	if b.zombies > 0 {
		return
	}
	b.completing = append(b.completing, completion{n: n, at: at + b.svc, latency: n * (wait + b.svc)})
}

// pop removes the queue's front cohort.
func (b *BacklogTarget) pop() {
	b.queue = b.queue[1:]
	if b.zombies > 0 {
		b.zombies--
	}
}

// abandon gives up, at the end of a slice e, on every waiting attempt that
// can no longer be answered within the client's timeout: one that arrived
// before e − (Timeout − Service) and has not started. Its client resolves
// it as failed with latency Timeout; the server keeps it as a zombie, or
// forgets it with DropAbandoned. Abandoned attempts are the oldest waiting
// ones, so zombies stay a prefix of the queue.
func (b *BacklogTarget) abandon(e float64) {
	if b.timeout == 0 {
		return
	}
	cut := e - (b.timeout - b.svc)
	for b.zombies < len(b.queue) {
		q := &b.queue[b.zombies]
		if q.lo >= cut {
			return
		}
		gone := q.n
		front := cohort{n: q.n, lo: q.lo, hi: q.hi}
		if q.hi > cut {
			gone = q.n * (cut - q.lo) / (q.hi - q.lo)
			front = cohort{n: gone, lo: q.lo, hi: cut}
			q.n -= gone
			q.lo = cut
		} else {
			q.n = 0
		}
		b.failed += gone
		b.latency += gone * b.timeout
		keep := !b.spec.DropAbandoned
		switch {
		case q.n <= eps && keep: // the whole cohort becomes a zombie
			*q = front
			b.zombies++
		case q.n <= eps: // forgotten
			b.queue = append(b.queue[:b.zombies], b.queue[b.zombies+1:]...)
			b.queued -= gone
		case keep: // its front becomes a zombie just before it
			b.queue = append(b.queue[:b.zombies+1], b.queue[b.zombies:]...)
			b.queue[b.zombies] = front
			b.zombies++
		default: // its front is forgotten
			b.queued -= gone
		}
	}
}

// refuse fails at once the newest waiting attempts beyond Depth: a full
// queue refuses them (latency 0).
func (b *BacklogTarget) refuse() {
	if b.spec.Depth == 0 {
		return
	}
	over := b.queued - float64(b.spec.Depth)
	for over > eps && len(b.queue) > b.zombies {
		q := &b.queue[len(b.queue)-1]
		cut := math.Min(over, q.n)
		if q.hi > q.lo {
			q.hi -= (q.hi - q.lo) * cut / q.n
		}
		q.n -= cut
		over -= cut
		b.queued -= cut
		b.failed += cut
		if q.n <= eps {
			b.queue = b.queue[:len(b.queue)-1]
		}
	}
}

// answer resolves, as ok, the attempts whose answers arrived by e.
func (b *BacklogTarget) answer(e float64) {
	i := 0
	for ; i < len(b.completing) && b.completing[i].at <= e; i++ {
		b.ok += b.completing[i].n
		b.latency += b.completing[i].latency
	}
	b.completing = b.completing[i:]
}
