package sim

import "time"

// Model is a named target of the controller report: how to make a fresh one
// per run, the capacity it ends the run with and when it last changed.
type Model struct {
	Name string
	// New makes a fresh target (targets may keep state within a run).
	New func() Target
	// C is the capacity the run is judged against: the target's capacity
	// after its last change.
	C float64
	// Event is when the target last changed, from the start of the run (0
	// for a target that never changes). Settling and reaching 90 % of C are
	// counted from the window in progress at Event.
	Event time.Duration
	// Sampled says the model's point is randomness: runs of it should use
	// WithNoise.
	Sampled bool
}

// QueueTimeout is the client timeout of the queueing model in Models.
const QueueTimeout = 2 * time.Second

// Background is the background failure fraction of the noisy model in
// Models: half of the §5 setting's low bound, so a healthy window is clean
// on average but not always under sampling noise.
const Background = 0.005

// Models returns the report's targets around capacity c for a run of length
// run: shed, queue (timeouts after QueueTimeout), collapse, capacity that
// doubles and that halves at half the run, noisy (shed with Background
// failures, sampled) and a target that is dead from half the run for a tenth
// of it, then recovers.
func Models(c float64, run time.Duration) []Model {
	mid := run / 2
	return []Model{
		{Name: "shed", C: c, New: func() Target { return Shed(c) }},
		{Name: "queue", C: c, New: func() Target { return Queue(c, QueueTimeout) }},
		{Name: "collapse", C: c, New: func() Target { return Collapse(c) }},
		{Name: "doubles", C: 2 * c, Event: mid, New: func() Target { return Switch(Shed(c), Shed(2*c), mid) }},
		{Name: "halves", C: c / 2, Event: mid, New: func() Target { return Switch(Shed(c), Shed(c/2), mid) }},
		{Name: "noisy", C: c, Sampled: true, New: func() Target { return Noisy(Shed(c), Background) }},
		{Name: "dead, recovers", C: c, Event: mid + run/10, New: func() Target { return Dead(Shed(c), mid, mid+run/10) }},
	}
}
