package gate

import "time"

// Permit is one admission. Its zero value is a permit that releases nothing.
// Copies of a Permit are the same permit: releasing any of them releases it
// once.
//
// A Permit is a plain value, so admitting allocates nothing. Safety against
// double release comes from a generation scheme instead of a pointer to
// per-permit state: in concurrency mode a permit names a slot of its gate and
// the slot's generation at the grant. Release frees the slot only while the
// generation still matches and moves it on, so a second Release, a copy's
// Release, or the Release of a stale permit whose slot has since been granted
// to someone else, does nothing. Slots are reused, so in steady state the
// slot table does not grow.
type Permit struct {
	g    *Gate
	due  time.Time
	slot uint32
	gen  uint64 // 0 when there is nothing to release (rate mode, zero Permit)
}

// Due reports when the admission was scheduled for. In rate mode that is the
// due time of its token, which may be a little before Acquire returned (a
// late caller or timer) but never after; in concurrency mode it is the
// instant the permit was granted.
func (p Permit) Due() time.Time { return p.due }

// Release frees the permit's slot in concurrency mode, admitting the next
// waiter if the limit allows. Releasing a permit twice, or a copy of a
// released permit, does nothing; so does Release in rate mode and on the
// zero Permit.
func (p Permit) Release() {
	g := p.g
	if g == nil || p.gen == 0 {
		return
	}
	g.mu.Lock()
	if int(p.slot) < len(g.slots) && g.slots[p.slot] == p.gen {
		g.slots[p.slot]++ // even: free; every copy of p is now spent
		g.freed = append(g.freed, p.slot)
		g.inFlight--
		if g.head != nil && g.inFlight < g.limit {
			g.grantLocked(g.now(), false)
		}
	}
	g.mu.Unlock()
}
