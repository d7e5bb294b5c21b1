package target

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Model is how the target behaves above its capacity. The zero value is Shed.
type Model uint8

const (
	// Shed admits up to capacity and answers the excess 503 at once: the
	// failure fraction at offer x > c is (x − c)/x.
	Shed Model = iota
	// Queue admits up to capacity and lets the excess wait in a bounded queue
	// for up to QueueTimeout: latency grows before failures start. A request
	// that finds the queue full is answered 503 at once; one that waits
	// QueueTimeout without being served is answered 503 then.
	Queue
	// Collapse is a fragile service: above capacity c its goodput falls. With
	// a measured arrival rate x > c only c·(1 − (x − c)/(2c)) requests per
	// second succeed (none from x = 3c on); the others are answered 500 after
	// the service time, as a service that tried and failed.
	Collapse
	// Backlog is a thread-pool server with a deep listen backlog: Capacity
	// servers (Concurrent is required), each serving one request at a time
	// for Latency, and a FIFO queue of up to QueueDepth requests in front of
	// them. Overload never fails: every queued request is answered 200, only
	// later (its queueing delay plus Latency); only one that finds the queue
	// full is answered 503 at once, as a full backlog refuses a connection.
	// Its capacity is Capacity / Latency requests per second
	// (Config.PerSecond). A request whose client gives up while it waits
	// stays in the queue and still takes a server for Latency when it
	// reaches the front (a zombie: the work outlives its client), unless
	// DropAbandoned is set. QueueTimeout does not apply.
	Backlog
)

var modelNames = [...]string{Shed: "shed", Queue: "queue", Collapse: "collapse", Backlog: "backlog"}

// modelList is the names ParseModel accepts, for error messages:
// "shed, queue, collapse or backlog".
func modelList() string {
	n := modelNames[:]
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// String returns the model's name as ParseModel accepts it.
func (m Model) String() string {
	if int(m) < len(modelNames) {
		return modelNames[m]
	}
	return fmt.Sprintf("model(%d)", m)
}

// ParseModel parses a model name: shed, queue, collapse or backlog
// (case-insensitive).
func ParseModel(s string) (Model, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for m, n := range modelNames {
		if n == name {
			return Model(m), nil
		}
	}
	return 0, fmt.Errorf("unknown model %q (want %s)", s, modelList())
}

// Set parses s into m, so a *Model serves as a command-line flag value
// (flag.Value and pflag.Value).
func (m *Model) Set(s string) error {
	v, err := ParseModel(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Type names the flag value's type for help text (pflag.Value).
func (*Model) Type() string { return "model" }

// Defaults NewConfig fills in.
const (
	// DefaultLatency is the base service time of an admitted request.
	DefaultLatency = 5 * time.Millisecond
	// DefaultBurst is how much of one second's capacity the rate-mode token
	// bucket holds: a small burst, so the target's capacity over any window
	// of a second or more is its configured rate within a few percent.
	DefaultBurst = 20 * time.Millisecond
	// DefaultQueueTimeout is how long a queued request waits before it is
	// answered 503.
	DefaultQueueTimeout = 100 * time.Millisecond
	// DefaultBacklogDepth is the Backlog model's queue depth as the CLI
	// sets it: gunicorn's default listen backlog, deep enough that a
	// governed run meets latency long before it meets a refusal.
	DefaultBacklogDepth = 2048
)

// Config describes a built-in target: its capacity and what it does with
// load beyond it. Build one with NewConfig, change what you need, and let New
// validate it.
//
// The zero value is not valid (Capacity must be > 0); every other zero field
// is meaningful: no service time, a one-token burst, shedding, no queue.
type Config struct {
	// Capacity is requests per second, or requests in service at once when
	// Concurrent is set (then a whole number; for Backlog, the number of
	// servers). It must be > 0.
	Capacity float64
	// Concurrent makes Capacity a bound on requests in service instead of a
	// rate.
	Concurrent bool
	// Model is what happens above capacity.
	Model Model
	// Latency is the base service time of every request the target serves
	// (and of every request the Collapse model fails). 0 answers at once;
	// Backlog requires it > 0.
	Latency time.Duration
	// Burst sizes the rate-mode token bucket: it holds Capacity × Burst
	// tokens, at least one. Unused in concurrent mode.
	Burst time.Duration
	// QueueDepth is how many requests may wait at once (Queue and Backlog
	// models only; required > 0 there).
	QueueDepth int
	// QueueTimeout is how long a queued request waits to be served before
	// it is answered 503 (Queue model only; required > 0 there).
	QueueTimeout time.Duration
	// DropAbandoned makes the Backlog model take a request whose client
	// gave up out of the queue at once, and stop serving one whose client
	// leaves mid-service, as a server that notices closed connections
	// would. The zero value keeps abandoned work: it still takes a server
	// for Latency when it reaches the front (Stats.Zombies). Backlog only.
	DropAbandoned bool
	// DownClose makes a target that is down (SetDown) reset the connection
	// instead of answering 503, so a client sees a transport error.
	DownClose bool
}

// NewConfig returns a shedding rate-mode target of the given capacity with
// the default latency and burst, and a queue ready to use if Model is
// switched to Queue: QueueTimeout 100 ms and a depth of 100 ms of capacity
// (at least 1).
func NewConfig(capacity float64) Config {
	depth := 1
	if d := math.Ceil(capacity * DefaultQueueTimeout.Seconds()); d > 1 && d < math.MaxInt32 {
		depth = int(d)
	}
	return Config{
		Capacity:     capacity,
		Model:        Shed,
		Latency:      DefaultLatency,
		Burst:        DefaultBurst,
		QueueDepth:   depth,
		QueueTimeout: DefaultQueueTimeout,
	}
}

// Validate reports the first field that is wrong, naming it and the rule.
func (c Config) Validate() error {
	if err := validCapacity(c.Capacity, c.Concurrent); err != nil {
		return err
	}
	switch {
	case c.Model > Backlog:
		return fmt.Errorf("unknown model %d (want %s)", c.Model, modelList())
	case c.Latency < 0:
		return fmt.Errorf("latency must be >= 0, got %v", c.Latency)
	case c.Burst < 0:
		return fmt.Errorf("burst must be >= 0, got %v", c.Burst)
	case c.QueueDepth < 0:
		return fmt.Errorf("queue depth must be >= 0, got %d", c.QueueDepth)
	case c.QueueTimeout < 0:
		return fmt.Errorf("queue timeout must be >= 0, got %v", c.QueueTimeout)
	case c.Model == Queue && c.QueueDepth == 0:
		return fmt.Errorf("the queue model needs a queue depth > 0")
	case c.Model == Queue && c.QueueTimeout == 0:
		return fmt.Errorf("the queue model needs a queue timeout > 0")
	case c.Model == Backlog && !c.Concurrent:
		return fmt.Errorf("the backlog model counts servers: set Concurrent (capacity = servers)")
	case c.Model == Backlog && c.Latency == 0:
		return fmt.Errorf("the backlog model needs a latency (service time) > 0")
	case c.Model == Backlog && c.QueueDepth == 0:
		return fmt.Errorf("the backlog model needs a queue depth > 0")
	case c.DropAbandoned && c.Model != Backlog:
		return fmt.Errorf("dropping abandoned requests applies to the backlog model only, not %s", c.Model)
	}
	return nil
}

func validCapacity(v float64, concurrent bool) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("capacity must be a finite number, got %v", v)
	case v <= 0:
		return fmt.Errorf("capacity must be > 0, got %v", v)
	case concurrent && v != math.Trunc(v):
		return fmt.Errorf("capacity must be a whole number of concurrent requests, got %v", v)
	case concurrent && v > math.MaxInt32:
		return fmt.Errorf("capacity of %v concurrent requests is too large", v)
	}
	return nil
}

// PerSecond is the capacity in requests per second: Capacity in rate mode,
// Capacity / Latency in concurrent mode (exact for Shed, Queue and Backlog,
// whose every admitted request holds its slot for Latency). It is 0 when
// that is unbounded: concurrent with no latency.
func (c Config) PerSecond() float64 {
	switch {
	case !c.Concurrent:
		return c.Capacity
	case c.Latency > 0:
		return c.Capacity / c.Latency.Seconds()
	}
	return 0
}

// String describes the target in one line, for reports and logs, e.g.
// "built-in shed target: capacity 800 req/s, latency 5ms" or "built-in
// backlog target: capacity 200 req/s (2 servers × 10ms), queue 2048,
// abandoned requests still served".
func (c Config) String() string {
	if c.Model == Backlog {
		kept := "still served"
		if c.DropAbandoned {
			kept = "dropped"
		}
		return fmt.Sprintf("built-in backlog target: capacity %s req/s (%s servers × %v), queue %d, abandoned requests %s",
			formatNum(c.PerSecond()), formatNum(c.Capacity), c.Latency, c.QueueDepth, kept)
	}
	unit := "req/s"
	if c.Concurrent {
		unit = "concurrent"
	}
	s := fmt.Sprintf("built-in %s target: capacity %s %s, latency %v", c.Model, formatNum(c.Capacity), unit, c.Latency)
	if c.Model == Queue {
		s += fmt.Sprintf(", queue %d for %v", c.QueueDepth, c.QueueTimeout)
	}
	return s
}

func formatNum(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
