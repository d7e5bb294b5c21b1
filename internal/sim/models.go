package sim

import (
	"math"
	"time"
)

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

// The backlog models' settings: the real thread-pool server of issue 12
// (gunicorn, 2 sync workers, --backlog 2048) loaded by the engine's default
// worker bound (--max-vus 1000), and, for the zombie case, the issue's
// client timeout of 500 ms.
const (
	BacklogServers     = 2
	BacklogDepth       = 2048
	BacklogMaxInFlight = 1000
	BacklogTimeout     = 500 * time.Millisecond
)

// QueueingModels returns the targets that queue instead of failing, around
// capacity c: "backlog" (BacklogServers workers behind a queue of
// BacklogDepth, the client bounded to BacklogMaxInFlight attempts in flight,
// no client timeout: above c nothing fails, latency grows and the client
// drops what it cannot start) and "backlog, timeout" (the same with a client
// timeout of BacklogTimeout whose abandoned work stays queued as zombies).
//
// They are not in Models: the seed's rules see only failed attempts, so on
// them the governor climbs to the ceiling, and the failure-only bars that
// range over Models do not hold there. ReportModels has both lists.
func QueueingModels(c float64) []Model {
	spec := BacklogSpec{
		Servers:     BacklogServers,
		Service:     time.Duration(math.Round(BacklogServers / c * float64(time.Second))),
		Depth:       BacklogDepth,
		MaxInFlight: BacklogMaxInFlight,
	}
	zombie := spec
	zombie.Timeout = BacklogTimeout
	return []Model{
		{Name: "backlog", C: spec.Capacity(), New: func() Target { return Backlog(spec) }},
		{Name: "backlog, timeout", C: zombie.Capacity(), New: func() Target { return Backlog(zombie) }},
	}
}

// ReportModels returns the controller report's targets: Models, then
// QueueingModels.
func ReportModels(c float64, run time.Duration) []Model {
	return append(Models(c, run), QueueingModels(c)...)
}
