package throttlevegeta

import (
	"fmt"

	"github.com/throttlekit/throttle/governor"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Option configures Govern.
type Option func(*config)

type config struct {
	classify Classifier
	pacer    []PacerOption
	gov      []governor.Option
}

// WithClassifier replaces DefaultClassifier.
func WithClassifier(c Classifier) Option { return func(cf *config) { cf.classify = c } }

// WithPacerOptions passes options to the Pacer (WithBurst).
func WithPacerOptions(o ...PacerOption) Option {
	return func(cf *config) { cf.pacer = append(cf.pacer, o...) }
}

// WithGovernorOptions passes options to the governor: its clock, tick,
// logger, phase name or window observer.
func WithGovernorOptions(o ...governor.Option) Option {
	return func(cf *config) { cf.gov = append(cf.gov, o...) }
}

// Governed is a governed vegeta attack's control loop: a Pacer, the Counter
// that feeds it and a governor running between them. Give Pacer() to
// Attacker.Attack, Observe every result (or pass the results channel through
// Results), and Close when the attack is over.
type Governed struct {
	pacer   *Pacer
	counter *Counter
	gov     *governor.Governor
	ctl     *governor.Control
	stop    func() // ends the governor's loop and closes ctl
}

// Govern starts governing an attack within l, which must be in rate mode:
// l.Ceiling is the authored rate, the pacer opens at l.Start and the governor
// moves it from window to window on the results it is shown. The governor
// runs on its own goroutine until Close.
func Govern(l governor.Limits, opts ...Option) (*Governed, error) {
	if l.Mode != governor.Rate {
		return nil, fmt.Errorf("throttlevegeta: limits must be in rate mode, got %v (vegeta paces a rate)", l.Mode)
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	var cf config
	for _, o := range opts {
		o(&cf)
	}
	p, err := NewPacer(l.Floor, l.Start, l.Ceiling, cf.pacer...)
	if err != nil {
		return nil, err
	}
	c := NewCounter(cf.classify)
	g, err := governor.New(l, c, cf.gov...)
	if err != nil {
		return nil, err
	}
	gv := &Governed{pacer: p, counter: c, gov: g}
	gv.ctl, gv.stop = g.Start(p)
	return gv, nil
}

// Pacer returns the pacer to give to Attacker.Attack.
func (g *Governed) Pacer() *Pacer { return g.pacer }

// Governor returns the governor, for its State and Limits.
func (g *Governed) Governor() *governor.Governor { return g.gov }

// Observe counts one attack result as an attempt.
func (g *Governed) Observe(r *vegeta.Result) { g.counter.Observe(r) }

// Attempts returns the attempts observed so far.
func (g *Governed) Attempts() (ok, failed uint64) { return g.counter.Attempts() }

// SetRate writes a rate on the user's behalf: the pacer applies it within
// [floor, ceiling] and the governor adopts what was applied as its committed
// offer, re-baselining its window, and goes on from there.
func (g *Governed) SetRate(rate float64) { g.ctl.Set(governor.OriginUser, rate) }

// Results observes every result of in and passes it on, unchanged, on the
// channel it returns, which closes after in does. Range over it instead of
// in when the attack's results are wanted as well.
func (g *Governed) Results(in <-chan *vegeta.Result) <-chan *vegeta.Result {
	out := make(chan *vegeta.Result)
	go func() {
		defer close(out)
		for r := range in {
			g.counter.Observe(r)
			out <- r
		}
	}()
	return out
}

// Close stops the governor and its control path and waits for them. The
// pacer keeps the last rate applied. Close is idempotent.
func (g *Governed) Close() { g.stop() }
