package governor

// Kind is the direction of a decision.
type Kind uint8

// The three directions a window can decide.
const (
	KindHold Kind = iota
	KindRaise
	KindLower
)

func (k Kind) String() string {
	switch k {
	case KindRaise:
		return "raise"
	case KindLower:
		return "lower"
	default:
		return "hold"
	}
}

// Signal names the rule that decided a window. It is what a movement's log
// line shows, so a reader can always tell why the offer moved.
type Signal uint8

// The signals, one per rule of the seed. The zero value is SignalNone, the
// signal of a window that has not been decided.
const (
	SignalNone               Signal = iota
	SignalSlowStart                 // clean, no memory: double
	SignalSafeClimb                 // clean, below 75 % of last-bad: ×1.5
	SignalProbe                     // clean, at or above 75 % of last-bad: additive step
	SignalBackoff                   // breach: severity-proportional back-off
	SignalDeadBand                  // low < frac <= high: hold
	SignalNoEvidence                // too few attempts even at 4 × window: hold
	SignalAtCeiling                 // a raise was stopped by the ceiling: hold
	SignalAtFloor                   // a back-off was stopped by the floor: hold
	SignalMemoryCleared             // the streak cleared last-bad (the window's probe step still applies)
	SignalGeneratorSaturated        // the host, not the target, limited the load: hold
	SignalOutage                    // (nearly) every attempt found no server: hold (outage.go)
	SignalLatency                   // the latency knee: the target has started to queue: hold
)

var signalNames = [...]string{
	SignalNone:               "none",
	SignalSlowStart:          "slow-start",
	SignalSafeClimb:          "safe-climb",
	SignalProbe:              "probe",
	SignalBackoff:            "back-off",
	SignalDeadBand:           "dead-band",
	SignalNoEvidence:         "no-evidence",
	SignalAtCeiling:          "at-ceiling",
	SignalAtFloor:            "at-floor",
	SignalMemoryCleared:      "memory-cleared",
	SignalGeneratorSaturated: "generator-saturated",
	SignalOutage:             "outage",
	SignalLatency:            "latency",
}

func (s Signal) String() string {
	if int(s) < len(signalNames) {
		return signalNames[s]
	}
	return "unknown"
}

// Decision is what one window decided: a value, pure and comparable.
//
// From is the committed offer the window was judged at and Offer the offer it
// asks for next (equal to From for a hold). LastBad is the congestion memory
// after the window: 0 while unexplored, set by a back-off, cleared by the
// memory streak.
type Decision struct {
	Kind    Kind
	Signal  Signal
	From    float64
	Offer   float64
	LastBad float64
}
