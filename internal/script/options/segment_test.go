package options

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

const segmentScript = `{"scenarios": {
  "cv": {"executor": "constant-vus", "vus": 10, "duration": "1s"},
  "si": {"executor": "shared-iterations", "vus": 4, "iterations": 11},
  "pv": {"executor": "per-vu-iterations", "vus": 5, "iterations": 3},
  "car": {"executor": "constant-arrival-rate", "rate": 10, "duration": "1s", "preAllocatedVUs": 7, "maxVUs": 20},
  "rar": {"executor": "ramping-arrival-rate", "startRate": 3, "preAllocatedVUs": 2, "stages": [{"duration": "1s", "target": 20}]},
  "rv": {"executor": "ramping-vus", "startVUs": 1, "stages": [{"duration": "1s", "target": 7}, {"duration": "1s", "target": 0}]}
}}`

// TestSegmentsSumToTheTest: the parts of every partition of the test sum
// to the authored VUs, iterations and rates, each part within one unit of
// its share.
func TestSegmentsSumToTheTest(t *testing.T) {
	whole, err := Parse([]byte(segmentScript))
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range [][]string{
		{"0:1/3", "1/3:2/3", "2/3:1"},
		{"0:25%", "25%:0.5", "50%:1"},
		{"0:1/7", "1/7:2/7", "2/7:1/2", "1/2:1"},
	} {
		type sums struct{ vus, iters, pre, max, start int }
		got := map[string]*sums{}
		rates := map[string]float64{}
		for _, seg := range seq {
			var cli Flags
			if err := cli.Set("execution-segment", seg); err != nil {
				t.Fatal(err)
			}
			o, err := Resolve([]byte(segmentScript), Flags{}, cli)
			if err != nil {
				t.Fatalf("%s: %v", seg, err)
			}
			for i, sc := range o.Scenarios {
				w := whole.Scenarios[i]
				s := got[sc.Name]
				if s == nil {
					s = &sums{}
					got[sc.Name] = s
				}
				s.vus += sc.VUs
				s.iters += sc.Iterations
				s.pre += sc.PreAllocatedVUs
				s.max += sc.MaxVUs
				s.start += sc.StartVUs
				rates[sc.Name] += sc.MaxCeiling()
				if sc.Executor == ConstantVUs && math.Abs(float64(sc.VUs)-float64(w.VUs)*o.Segment.Length()) >= 1 {
					t.Errorf("%s %s: %d VUs, want within one of %v", seg, sc.Name, sc.VUs, float64(w.VUs)*o.Segment.Length())
				}
			}
		}
		for _, w := range whole.Scenarios {
			s := got[w.Name]
			switch w.Executor {
			case ConstantVUs:
				if s.vus != w.VUs {
					t.Errorf("%v %s: VUs sum to %d, want %d", seq, w.Name, s.vus, w.VUs)
				}
			case PerVUIterations:
				if s.vus != w.VUs {
					t.Errorf("%v %s: VUs sum to %d, want %d (each runs the authored iterations)", seq, w.Name, s.vus, w.VUs)
				}
			case SharedIterations:
				if s.iters != w.Iterations {
					t.Errorf("%v %s: iterations sum to %d, want %d", seq, w.Name, s.iters, w.Iterations)
				}
			case RampingVUs:
				if s.start != w.StartVUs {
					t.Errorf("%v %s: start VUs sum to %d, want %d", seq, w.Name, s.start, w.StartVUs)
				}
			}
			if w.Executor != SharedIterations && math.Abs(rates[w.Name]-w.MaxCeiling()) > 1e-9 && w.RateMode() {
				t.Errorf("%v %s: rates sum to %v, want %v", seq, w.Name, rates[w.Name], w.MaxCeiling())
			}
		}
		if seq[0] == "0:1/3" && (got["car"].pre != 7 || got["car"].max != 20) {
			t.Errorf("thirds: car's VUs sum to %d pre-allocated, %d max, want 7 and 20", got["car"].pre, got["car"].max)
		}
	}
}

// TestSegmentRampingVUsTargets: each stage target of ramping-vus is split
// like the VUs, so the parts' targets sum to the authored one.
func TestSegmentRampingVUsTargets(t *testing.T) {
	total := make([]float64, 2)
	for _, seg := range Split(3) {
		sc := Scenario{Executor: RampingVUs, StartVUs: 1, Stages: []Stage{{Target: 7}, {Target: 2}}}.Segmented(seg)
		for i, st := range sc.Stages {
			total[i] += st.Target
		}
	}
	if total[0] != 7 || total[1] != 2 {
		t.Fatalf("targets sum to %v, want [7 2]", total)
	}
}

func TestSegmentScale(t *testing.T) {
	var parts []int
	for _, s := range Split(3) {
		parts = append(parts, s.Scale(10))
	}
	if parts[0]+parts[1]+parts[2] != 10 || parts[0] != 4 || parts[1] != 3 || parts[2] != 3 {
		t.Fatalf("10 in thirds: %v, want [4 3 3] (the odd unit to the first part)", parts)
	}
	for n := range 200 {
		sum := 0
		for _, s := range Split(7) {
			sum += s.Scale(n)
		}
		if sum != n {
			t.Fatalf("%d in sevenths sums to %d", n, sum)
		}
	}
}

func TestSegmentOptionErrors(t *testing.T) {
	for _, c := range []struct{ seg, seq, want string }{
		{"1/2:1/3", "", "from < to"},
		{"0:3/2", "", "between 0 and 1"},
		{"x", "", "a fraction"},
		{"1/4:1/2", "0,1/3,2/3,1", "not a segment of the sequence"},
		{"", "0,1/2,1/3", "increasing"},
	} {
		var cli Flags
		if c.seg != "" {
			_ = cli.Set("execution-segment", c.seg)
		}
		if c.seq != "" {
			_ = cli.Set("execution-segment-sequence", c.seq)
		}
		_, err := Resolve([]byte(segmentScript), Flags{}, cli)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q / %q: %v, want an error saying %q", c.seg, c.seq, err, c.want)
		}
	}
	for _, c := range []struct{ seg, seq string }{{"1/3:2/3", "0,1/3,2/3,1"}, {"50%", ""}, {"0.5:1", "0.5"}} {
		var cli Flags
		_ = cli.Set("execution-segment", c.seg)
		if c.seq != "" {
			_ = cli.Set("execution-segment-sequence", c.seq)
		}
		if _, err := Resolve([]byte(segmentScript), Flags{}, cli); err != nil {
			t.Errorf("%q / %q: %v", c.seg, c.seq, err)
		}
	}
}

// The parts of a sequence stripe the test-wide ids: however many VUs (or
// iterations) each part makes, no id is two parts', and a part alone (the
// whole test) keeps its own ids.
func TestSegmentStripeUnique(t *testing.T) {
	check := func(name string, parts []Segment, base int64) {
		t.Helper()
		seen := map[int64]int{}
		for i, p := range parts {
			for local := base; local < base+50+int64(i)*7; local++ { // unequal counts
				id := p.Stripe(local, base)
				if id < base {
					t.Errorf("%s: part %d's %d is %d, below %d", name, i, local, id, base)
				}
				if j, dup := seen[id]; dup {
					t.Fatalf("%s: id %d is parts %d's and %d's", name, id, j, i)
				}
				seen[id] = i
			}
		}
	}
	for _, n := range []int{2, 3, 5} {
		check(fmt.Sprintf("Split(%d) VU ids", n), Split(n), 1)
		check(fmt.Sprintf("Split(%d) iterations", n), Split(n), 0)
	}
	var seq []Segment
	for _, v := range []string{"0:1/4", "1/4:1/2", "1/2:1"} {
		s, err := resolveSegment(v, "0,1/4,1/2,1")
		if err != nil {
			t.Fatal(err)
		}
		seq = append(seq, s)
	}
	check("a sequence's parts", seq, 1)
	// Without a sequence k6 fills it with 0 and 1: 1/3:2/3 is the middle
	// of 0,1/3,2/3,1; 1/2:1 the second of 0,1/2,1. (Instances that are to
	// share ids give the one sequence they share.)
	for _, c := range []struct {
		seg  string
		want int64 // its third VU's test-wide id
	}{{"1/3:2/3", 2*3 + 1 + 1}, {"1/2:1", 2*2 + 1 + 1}, {"0:1/4", 2*2 + 0 + 1}} {
		s, err := ParseSegment(c.seg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Stripe(3, 1); got != c.want {
			t.Errorf("%s's VU 3 is %d, want %d", c.seg, got, c.want)
		}
	}
	for _, whole := range []Segment{{}, Split(1)[0]} {
		if got := whole.Stripe(7, 1); got != 7 {
			t.Errorf("the whole test's VU 7 is %d", got)
		}
	}
	if got := Split(3)[2].Stripe(0, 1); got != 0 {
		t.Errorf("the setup VU (0) is %d, want 0", got)
	}
}
