package governor

import (
	"sync"
)

// Origin says who wrote a value on the control path.
type Origin uint8

const (
	// OriginGovernor marks the governor's own writes.
	OriginGovernor Origin = iota
	// OriginUser marks a person's or host's write, such as a ceiling or
	// offer changed mid-run. The governor adopts it.
	OriginUser
)

func (o Origin) String() string {
	if o == OriginUser {
		return "user"
	}
	return "governor"
}

// Applier enforces an offer and reports the value it actually applied, which
// may differ from the one asked (clamped to its own limits, say). gate.Gate
// implements it.
type Applier interface {
	Apply(offer float64) (applied float64)
}

// ApplierFunc adapts a function to Applier.
type ApplierFunc func(offer float64) float64

// Apply calls f.
func (f ApplierFunc) Apply(offer float64) float64 { return f(offer) }

// Confirmation reports a write that reached the Applier: who asked, what they
// asked for and what was actually applied.
type Confirmation struct {
	Origin  Origin
	Asked   float64
	Applied float64
}

// Control is the push-on-set control path between writers and an Applier.
//
// Set never blocks its caller: the write is handed to the Control's own
// goroutine, which applies it and publishes a Confirmation. When writes come
// faster than the Applier takes them, the latest write wins (the value that
// matters is the newest one) and so does the latest confirmation, so a slow
// Applier or a slow reader never stalls the governor's loop.
//
// Close stops the goroutine; a Control must be closed when done.
type Control struct {
	applier Applier

	mu      sync.Mutex
	next    *Confirmation // the pending write; Applied unset
	last    Confirmation
	applied bool

	wake     chan struct{}
	confirms chan Confirmation
	done     chan struct{}
	stopped  chan struct{}
	once     sync.Once
}

// NewControl starts a control path to a.
func NewControl(a Applier) *Control {
	c := &Control{
		applier:  a,
		wake:     make(chan struct{}, 1),
		confirms: make(chan Confirmation, 1),
		done:     make(chan struct{}),
		stopped:  make(chan struct{}),
	}
	go c.loop()
	return c
}

// Set asks for value on behalf of origin. It returns at once.
func (c *Control) Set(origin Origin, value float64) {
	c.mu.Lock()
	c.next = &Confirmation{Origin: origin, Asked: value}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default: // a wake-up is already pending; it will see the newest write
	}
}

// Confirmations delivers the newest confirmation. It holds at most one: an
// unread confirmation is replaced by a newer one, since the committed offer
// is the last value confirmed.
func (c *Control) Confirmations() <-chan Confirmation { return c.confirms }

// Last returns the newest confirmation and whether any write has been applied.
func (c *Control) Last() (Confirmation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.applied
}

// Close stops the control path and waits for an apply under way to finish.
// Writes after Close are dropped.
func (c *Control) Close() {
	c.once.Do(func() { close(c.done) })
	<-c.stopped
}

func (c *Control) loop() {
	defer close(c.stopped)
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		c.mu.Lock()
		w := c.next
		c.next = nil
		c.mu.Unlock()
		if w == nil {
			continue
		}
		w.Applied = c.applier.Apply(w.Asked)
		c.mu.Lock()
		c.last, c.applied = *w, true
		c.mu.Unlock()
		// Publish, replacing an unread older confirmation. This goroutine is the
		// only sender, so after the drain the send cannot block.
		select {
		case c.confirms <- *w:
		default:
			select {
			case <-c.confirms:
			default:
			}
			c.confirms <- *w
		}
	}
}
