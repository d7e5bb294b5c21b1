package options

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Segment is k6's execution segment: the part (From, To] of the whole test
// this instance runs, with 0 <= From < To <= 1. The zero Segment is the
// whole test. Every scenario's VUs, iterations and arrival rates are
// scaled to it (Scenario.Segmented) so that the instances running the
// parts of one sequence together run the authored test.
//
// Whole numbers (VUs, iterations, stage targets of ramping-vus) are split
// by one rule: the part is units ceil(n·From) to ceil(n·To) − 1 of n, so
// the parts of any partition of 0..1 sum to n exactly (the terms
// telescope), each is within one of n·length, and the odd units go to the
// earliest parts. k6 splits
// them by striping over the sequence, which also sums exactly but may put
// a unit on a different instance. Arrival rates are multiplied by the
// length, so the parts' rates sum to the authored one.
type Segment struct {
	from, to *big.Rat // nil: the whole test
	// index is s's place (from 0) among the parts of its sequence, parts
	// how many there are: the stride of the test-wide ids (Stripe). Both
	// are 0 for the whole test.
	index, parts int
}

// Stripe is the test-wide number of this instance's local-th id (a VU
// id from 1, or an iteration number from 0, as base gives): the ids of
// the sequence's parts interleave, part i of n taking base+i, base+i+n,
// ..., so that they stay unique across the instances however many VUs or
// iterations each makes — k6 documents its test-wide VU ids and iteration
// numbers as unique across instances, with gaps where instances make
// different numbers of them. The whole test's ids are its own.
func (s Segment) Stripe(local, base int64) int64 {
	if s.parts <= 1 || local < base {
		return local
	}
	return (local-base)*int64(s.parts) + int64(s.index) + base
}

// Whole reports whether s is the whole test (no segment, or 0:1).
func (s Segment) Whole() bool {
	return s.from == nil || s.from.Sign() == 0 && s.to.Cmp(big.NewRat(1, 1)) == 0
}

// String is s as k6 writes it ("1/3:2/3"); "0:1" for the whole test.
func (s Segment) String() string {
	if s.from == nil {
		return "0:1"
	}
	return s.from.RatString() + ":" + s.to.RatString()
}

// Length is To − From: the share of every rate s runs.
func (s Segment) Length() float64 {
	if s.from == nil {
		return 1
	}
	f, _ := new(big.Rat).Sub(s.to, s.from).Float64()
	return f
}

// Scale is s's part of n whole units: ceil(n·To) − ceil(n·From).
func (s Segment) Scale(n int) int {
	if s.from == nil || n <= 0 {
		return max(n, 0)
	}
	return ceilMul(n, s.to) - ceilMul(n, s.from)
}

func ceilMul(n int, r *big.Rat) int {
	p := new(big.Int).Mul(big.NewInt(int64(n)), r.Num())
	q, m := new(big.Int).DivMod(p, r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return int(q.Int64())
}

// Split is n equal segments of the whole test, in order: the default
// sequence of a run over n instances.
func Split(n int) []Segment {
	out := make([]Segment, n)
	for i := range n {
		out[i] = Segment{from: big.NewRat(int64(i), int64(n)), to: big.NewRat(int64(i+1), int64(n)), index: i, parts: n}
	}
	return out
}

// Sequence is the sequence of Split(n), as k6 writes it: "0,1/3,2/3,1".
func Sequence(n int) string {
	parts := []string{"0"}
	for _, s := range Split(n) {
		parts = append(parts, s.to.RatString())
	}
	return strings.Join(parts, ",")
}

// ParseSegment reads k6's --execution-segment: "from:to" or one value
// "to" (meaning "0:to"), each value a fraction ("1/3"), a decimal ("0.5")
// or a percentage ("50%").
func ParseSegment(v string) (Segment, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(v), ":")
	if !ok {
		a, b = "0", a
	}
	from, err := parseRatio(a)
	if err != nil {
		return Segment{}, err
	}
	to, err := parseRatio(b)
	if err != nil {
		return Segment{}, err
	}
	if from.Cmp(to) >= 0 {
		return Segment{}, fmt.Errorf("%q: want from:to with from < to, each between 0 and 1", v)
	}
	// Without a sequence, k6 fills it: 0, from, to, 1.
	seg := Segment{from: from, to: to, parts: 1}
	if from.Sign() > 0 {
		seg.index, seg.parts = 1, 2
	}
	if to.Cmp(big.NewRat(1, 1)) < 0 {
		seg.parts++
	}
	return seg, nil
}

// parseSequence reads k6's --execution-segment-sequence: increasing
// values between 0 and 1 ("0,1/3,2/3,1"), filled with 0 and 1 when
// they are missing, as k6 fills it.
func parseSequence(v string) ([]*big.Rat, error) {
	var out []*big.Rat
	for _, p := range strings.Split(v, ",") {
		r, err := parseRatio(p)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && r.Cmp(out[len(out)-1]) <= 0 {
			return nil, fmt.Errorf("%q: want increasing values between 0 and 1", v)
		}
		out = append(out, r)
	}
	if out[0].Sign() != 0 {
		out = append([]*big.Rat{new(big.Rat)}, out...)
	}
	if one := big.NewRat(1, 1); out[len(out)-1].Cmp(one) != 0 {
		out = append(out, one)
	}
	return out, nil
}

// parseRatio reads one value between 0 and 1: "1/3", "0.25" or "25%".
func parseRatio(s string) (*big.Rat, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSuffix(t, "%")
	r, ok := new(big.Rat).SetString(t)
	if !ok || t == "" {
		return nil, fmt.Errorf("%q: want a fraction such as 1/3, a decimal such as 0.5 or a percentage such as 50%%", s)
	}
	if pct {
		r.Quo(r, big.NewRat(100, 1))
	}
	if r.Sign() < 0 || r.Cmp(big.NewRat(1, 1)) > 0 {
		return nil, fmt.Errorf("%q: want a value between 0 and 1 (or 0%% and 100%%)", s)
	}
	return r, nil
}

// resolveSegment is the run's segment from the resolved option values: a
// sequence alone changes nothing (this instance runs the whole test); a
// segment with a sequence must be one of the sequence's parts.
func resolveSegment(seg, seq string) (Segment, *Error) {
	if strings.TrimSpace(seg) == "" {
		if strings.TrimSpace(seq) != "" {
			if _, err := parseSequence(seq); err != nil {
				return Segment{}, &Error{Option: "executionSegmentSequence", Msg: err.Error()}
			}
		}
		return Segment{}, nil
	}
	s, err := ParseSegment(seg)
	if err != nil {
		return Segment{}, &Error{Option: "executionSegment", Msg: err.Error()}
	}
	if strings.TrimSpace(seq) == "" {
		return s, nil
	}
	bounds, err := parseSequence(seq)
	if err != nil {
		return Segment{}, &Error{Option: "executionSegmentSequence", Msg: err.Error()}
	}
	for i := 1; i < len(bounds); i++ {
		if bounds[i-1].Cmp(s.from) == 0 && bounds[i].Cmp(s.to) == 0 {
			s.index, s.parts = i-1, len(bounds)-1
			return s, nil
		}
	}
	return Segment{}, &Error{Option: "executionSegment", Msg: fmt.Sprintf("%s is not a segment of the sequence %s", s, seq)}
}

// Segmented is sc's part in seg: VUs, iterations, pre-allocated and
// maximum VUs and ramping-vus targets split by Segment.Scale, rates by
// Segment.Length. An arrival-rate part keeps at least one VU to run its
// rate, a shared-iterations part with iterations one to run them: the
// authored iteration and rate totals hold, the VU total can then exceed
// the authored one. A part with nothing to run is Idle.
func (sc Scenario) Segmented(seg Segment) Scenario {
	if seg.Whole() {
		return sc
	}
	l := seg.Length()
	sc.Stages = append([]Stage(nil), sc.Stages...)
	switch sc.Executor {
	case ConstantArrivalRate, RampingArrivalRate:
		sc.Rate, sc.StartRate = sc.Rate*l, sc.StartRate*l
		for i := range sc.Stages {
			sc.Stages[i].Target *= l
		}
		sc.PreAllocatedVUs = max(seg.Scale(sc.PreAllocatedVUs), 1)
		sc.MaxVUs = max(seg.Scale(sc.MaxVUs), sc.PreAllocatedVUs)
	case RampingVUs:
		sc.StartVUs = seg.Scale(sc.StartVUs)
		for i := range sc.Stages {
			sc.Stages[i].Target = float64(seg.Scale(int(math.Round(sc.Stages[i].Target))))
		}
	case SharedIterations:
		// A part with iterations needs a VU to run them, even where
		// its share of the VUs rounds to none.
		sc.IterationBase = ceilMul(sc.Iterations, seg.from)
		sc.Iterations = seg.Scale(sc.Iterations)
		sc.VUs = min(max(seg.Scale(sc.VUs), 1), sc.Iterations)
	default: // constant-vus, per-vu-iterations
		sc.VUs = seg.Scale(sc.VUs)
	}
	return sc
}

// Idle reports whether the scenario has nothing to run: a segment's part
// of it with no VU or no iteration.
func (sc *Scenario) Idle() bool {
	switch sc.Executor {
	case ConstantArrivalRate, RampingArrivalRate:
		return sc.MaxCeiling() <= 0
	case RampingVUs:
		return sc.MaxCeiling() < 1
	case SharedIterations:
		return sc.Iterations < 1 || sc.VUs < 1
	}
	return sc.VUs < 1
}
