package agent

import (
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
)

// Every counter an agent keeps reaches the controller: two agents' ticks,
// shipped as deltas and merged, give the sum of their counters, missed
// arrivals and the read delay included (a count left out of the delta would read 0 here).
func TestMergedCountsEveryDelta(t *testing.T) {
	agentCounts := func(k uint64) []engine.Counts {
		var a, b engine.Counts
		a.Classes[engine.ClassOK], a.Classes[engine.Class5xx] = 10*k, k
		a.IterOK, a.IterFailed, a.Dropped, a.Missed, a.Aborted, a.Started = 9*k, k, 2*k, 3*k, k, 12*k
		a.ReadDelay = engine.ReadDelay{Sum: time.Duration(k) * time.Millisecond, N: 4 * k, Max: time.Duration(k) * 500 * time.Microsecond}
		b = a
		b.ReadDelay.Sum, b.ReadDelay.N = b.ReadDelay.Sum+time.Millisecond, b.ReadDelay.N+2
		b.Classes[engine.ClassOK] += 5
		b.Dropped, b.Missed, b.Started = b.Dropped+1, b.Missed+4, b.Started+5
		return []engine.Counts{a, b}
	}
	var m merged
	var want engine.Counts
	for _, k := range []uint64{1, 3} {
		var prev engine.Counts
		for _, now := range agentCounts(k) {
			d := deltaOf(now, prev, governor.Load{}, governor.Load{})
			m.add(&d)
			prev = now
		}
		last := agentCounts(k)[1]
		for i := range want.Classes {
			want.Classes[i] += last.Classes[i]
		}
		want.IterOK += last.IterOK
		want.IterFailed += last.IterFailed
		want.Dropped += last.Dropped
		want.Missed += last.Missed
		want.Aborted += last.Aborted
		want.Started += last.Started
		want.ReadDelay.Sum += last.ReadDelay.Sum
		want.ReadDelay.N += last.ReadDelay.N
		want.ReadDelay.Max = max(want.ReadDelay.Max, last.ReadDelay.Max)
	}
	got := m.Counts()
	want.OK = want.Classes[engine.ClassOK]
	want.Failed = want.Classes[engine.Class5xx]
	if got != want {
		t.Errorf("merged %+v, want %+v", got, want)
	}
	// The read delay sums over agents, its longest the largest of any.
	if rd := got.ReadDelay; rd.N != 4+2+12+2 || rd.Sum != 6*time.Millisecond || rd.Max != 1500*time.Microsecond {
		t.Errorf("read delay %+v, want 20 answers, 6ms, longest 1.5ms", rd)
	}
	if got.Missed != 3+4+9+4 {
		t.Errorf("missed %d, want 20", got.Missed)
	}
}
