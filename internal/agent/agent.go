package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script"
)

// Config describes one agent.
type Config struct {
	// Join is the controller's nats://HOST:PORT.
	Join string
	// Token is the run's token.
	Token string
	// TLS verifies the controller (CA) and presents a client certificate.
	TLS TLS
	// Name names the agent (default: host name and process id).
	Name string
	// Version is this build's; the controller refuses another.
	Version string
	// Wait bounds the attempts to reach the controller (default
	// DefaultWait).
	Wait time.Duration
	// Logger receives the agent's lines (joined, started, stopped).
	Logger *slog.Logger
	// Console, if set, receives a script's console.log and friends, as
	// k6 prints them on every instance whatever the agent's own log level
	// (default: Logger, where --quiet drops the info level).
	Console func(level slog.Level, msg string)
	// Memory bounds what this machine's script agents keep while their
	// segments run (bytes; session.MemoryLimit: the agent's own
	// THROTTLE_MEMORY, else 90 % of the memory the process may use): each
	// of a controller's N local agents takes an Nth (segmentMemory). An
	// agent's share is its Go runtime's soft memory limit and a hard stop:
	// past it the segment stops and its last delta carries the error, so
	// the controller's run ends naming the agent and the bound instead of
	// the kernel's OOM killer ending the agent. 0: no bound (nor a soft
	// limit), as THROTTLE_MEMORY=0.
	Memory int64
	// GCTurn is this agent's turn at the GC among a controller's local
	// agents on one machine (script.GCTurn: THROTTLE_GC_TURN, which the
	// controller sets): a script agent's GC cycles come in its turn, not
	// in another's. Off for a remote agent.
	GCTurn script.GCTurn
}

// ErrRefused is the controller refusing this agent (a wrong token,
// another version, a run that is over).
var ErrRefused = errors.New("refused by the controller")

// Summary is what an agent did.
type Summary struct {
	ID       string
	Attempts uint64
	// Stopped says why the agent's phase ended.
	Stopped string
}

// Join connects to the controller, announces the agent, runs its share of
// the run it is given and returns when the run is over for it: the
// controller stopped it, fell silent for LostTicks ticks, its connection
// closed, or ctx ended. It writes no file.
func Join(ctx context.Context, cfg Config) (*Summary, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Name == "" {
		host, _ := os.Hostname()
		cfg.Name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultWait
	}
	closed := make(chan struct{})
	nc, err := connect(ctx, cfg, closed)
	if err != nil {
		return nil, err
	}
	defer nc.Close()

	cid, _ := nc.GetClientID()
	msg, err := nc.RequestWithContext(ctx, subjHello, encode(Hello{CID: cid, Name: cfg.Name, Cores: runtime.GOMAXPROCS(0), Version: cfg.Version}))
	if err != nil {
		return nil, fmt.Errorf("announcing to the controller at %s: %w", cfg.Join, err)
	}
	var w Welcome
	if err := json.Unmarshal(msg.Data, &w); err != nil {
		return nil, fmt.Errorf("the controller's answer: %w", err)
	}
	if w.Refused != "" || w.Spec == nil {
		return nil, fmt.Errorf("%w: %s", ErrRefused, w.Refused)
	}
	if w.Spec.Script != nil {
		return joinScript(ctx, nc, w, closed, cfg.Memory, cfg.GCTurn, log, cfg.Console)
	}
	ec, err := w.Spec.engineConfig()
	if err != nil {
		return nil, err
	}
	a := &agent{id: w.ID, nc: nc, lat: NewLatencies(), shares: make(chan float64, 1), heard: make(chan struct{}, 1)}
	ec.Latency, ec.Follow = a.lat, a
	ec.Watch.Colocated = w.Spec.Colocated
	eng, err := engine.New(ec)
	if err != nil {
		return nil, fmt.Errorf("the run's phase: %w", err)
	}
	log.Info("throttle agent joined", "controller", cfg.Join, "as", w.ID)

	start, stop := make(chan struct{}), make(chan struct{})
	var startOnce, stopOnce sync.Once
	for subj, f := range map[string]func(){
		subjStart: func() { startOnce.Do(func() { close(start) }) }, subjStart + "." + w.ID: func() { startOnce.Do(func() { close(start) }) },
		subjStop: func() { stopOnce.Do(func() { close(stop) }) },
	} {
		if _, err := nc.Subscribe(subj, func(*nats.Msg) { f() }); err != nil {
			return nil, err
		}
	}
	if _, err := nc.Subscribe(subjOffer, a.onOffer); err != nil {
		return nil, err
	}
	var abortOnce sync.Once
	joined := make(chan struct{}) // closed when Join returns
	defer close(joined)
	abort := func(*nats.Msg) {
		// An abort is a stop too, and cuts off the in-flight iterations
		// once the phase has stopped starting new ones.
		stopOnce.Do(func() { close(stop) })
		abortOnce.Do(func() {
			go func() {
				select {
				case <-eng.Stopping():
					eng.Abort()
				case <-joined:
				}
			}()
		})
	}
	if _, err := nc.Subscribe(subjAbort, abort); err != nil {
		return nil, err
	}
	if err := nc.Publish(subjReady, []byte(w.ID)); err != nil {
		return nil, err
	}
	_ = nc.Flush()
	select {
	case <-start:
	case <-stop:
		return &Summary{ID: w.ID, Stopped: "stopped before the start"}, nil
	case <-closed:
		return nil, fmt.Errorf("the connection to the controller at %s closed before the start", cfg.Join)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	log.Info("throttle agent started", "as", w.ID)
	every := w.Spec.Every
	if every <= 0 {
		every = w.Spec.Tick
	}
	return a.run(ctx, eng, every, w.Spec.Tick, w.Spec.silence(), stop, closed, log)
}

// connect dials the controller until it answers or cfg.Wait passes; a
// refused token is final.
func connect(ctx context.Context, cfg Config, closed chan struct{}) (*nats.Conn, error) {
	deadline := time.Now().Add(cfg.Wait)
	var closeOnce sync.Once
	tlsOpts, err := cfg.TLS.clientOptions()
	if err != nil {
		return nil, err
	}
	for {
		nc, err := nats.Connect(cfg.Join, append([]nats.Option{nats.Token(cfg.Token), nats.Name(cfg.Name), nats.Timeout(5 * time.Second),
			nats.MaxReconnects(5), nats.ReconnectWait(200 * time.Millisecond),
			nats.ClosedHandler(func(*nats.Conn) { closeOnce.Do(func() { close(closed) }) })}, tlsOpts...)...)
		if err == nil {
			return nc, nil
		}
		low := strings.ToLower(err.Error())
		if errors.Is(err, nats.ErrAuthorization) || strings.Contains(low, "authorization") {
			return nil, fmt.Errorf("%w: the controller at %s refused this agent's token", ErrRefused, cfg.Join)
		}
		if strings.Contains(low, "tls") || strings.Contains(low, "x509") || strings.Contains(low, "certificate") || errors.Is(err, nats.ErrSecureConnRequired) {
			return nil, fmt.Errorf("TLS with the controller at %s: %w", cfg.Join, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no controller at %s after %v: %w", cfg.Join, cfg.Wait, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// agent is a joined agent's run: its phase follows the controller's
// shares (phase.Follower) and its counters go out as deltas each tick.
type agent struct {
	id     string
	nc     *nats.Conn
	lat    *Latencies
	shares chan float64  // the newest share, not yet applied
	heard  chan struct{} // an offer came: the controller is alive
}

// onOffer keeps the newest share for the phase.
func (a *agent) onOffer(msg *nats.Msg) {
	var o Offer
	if json.Unmarshal(msg.Data, &o) != nil {
		return
	}
	select {
	case a.heard <- struct{}{}:
	default:
	}
	s, ok := o.Shares[a.id]
	if !ok {
		// Not in the split: the controller took this agent for lost. It
		// runs at the least its gate runs until it has a share again.
		s = 0
	}
	select {
	case <-a.shares: // replace an unapplied older share
	default:
	}
	select {
	case a.shares <- s:
	default:
	}
}

// Follow implements phase.Follower: every new share goes to the gate.
func (a *agent) Follow(ctx context.Context, apply func(float64) float64) {
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-a.shares:
			apply(s)
		}
	}
}

// run runs the phase and ships its deltas every tick until it ends. Its
// watch of itself goes once a tick and with the last delta, as a script
// agent's does: the controller keeps the newest for the report's agents
// entry and sums them into the run's generator.
func (a *agent) run(ctx context.Context, eng *engine.Engine, every, tick, silent time.Duration, stop, closed <-chan struct{}, log *slog.Logger) (*Summary, error) {
	sh := &shipper{id: a.id, nc: a.nc}
	var lastWatch time.Time
	send := func(final bool, errText string) {
		d := sh.delta(eng.Meter().Counts(), eng.Meter().Load(), final, errText)
		d.Saturated, d.SatRate = eng.Meter().Saturated()
		snap := eng.Snapshot()
		d.InFlight, d.Workers = snap.InFlight, snap.Workers
		if h, err := a.lat.Take(); err == nil {
			d.Hist = h
		}
		if final || time.Since(lastWatch) >= tick {
			lastWatch = time.Now()
			d.Watch = watchOf(eng.Generator())
		}
		_ = a.nc.Publish(subjTick, encode(d))
	}
	run := func(ctx context.Context) error { _, err := eng.Run(ctx); return err }
	why, err := ship(ctx, run, send, every, silent, a.heard, stop, closed, func() { _ = a.nc.FlushTimeout(5 * time.Second) })
	c := eng.Meter().Counts()
	return stopped(log, a.id, why, "the run's duration passed", c.OK+c.Failed), err
}
