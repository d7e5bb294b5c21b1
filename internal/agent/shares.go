package agent

import (
	"math"
	"sort"
)

// Share weights: an agent starts at 1; each tick it reports itself
// saturated its weight shrinks by satShrink (never below minWeight), and
// each tick it does not it grows back by satRegrow (never above 1). A
// saturated generator's arrivals are its own limit, not the target's: the
// load moves to the agents that can still make it.
const (
	satShrink = 0.8
	satRegrow = 1.05
	minWeight = 0.1
)

// reweight is an agent's weight after a tick.
func reweight(w float64, saturated bool) float64 {
	if saturated {
		return max(minWeight, w*satShrink)
	}
	return min(1, w*satRegrow)
}

// split divides offer between agents by weight. In concurrency mode
// (whole) the shares are whole numbers that add up to the offer (largest
// remainder), each at least 1 since a gate in concurrency mode runs at
// least one iteration: below one per agent the shares add up to more.
func split(offer float64, weights map[string]float64, whole bool) map[string]float64 {
	shares := make(map[string]float64, len(weights))
	var sum float64
	ids := make([]string, 0, len(weights))
	for id, w := range weights {
		sum += w
		ids = append(ids, id)
	}
	if len(ids) == 0 || sum <= 0 {
		return shares
	}
	sort.Strings(ids) // the same split on every call
	if !whole {
		for _, id := range ids {
			shares[id] = offer * weights[id] / sum
		}
		return shares
	}
	total := math.Round(offer)
	type rem struct {
		id string
		r  float64
	}
	var rems []rem
	var given float64
	for _, id := range ids {
		exact := total * weights[id] / sum
		f := math.Floor(exact)
		shares[id] = f
		given += f
		rems = append(rems, rem{id, exact - f})
	}
	sort.SliceStable(rems, func(i, j int) bool { return rems[i].r > rems[j].r })
	for i := 0; given < total && i < len(rems); i++ {
		shares[rems[i].id]++
		given++
	}
	for id, s := range shares {
		shares[id] = max(s, 1)
	}
	return shares
}
