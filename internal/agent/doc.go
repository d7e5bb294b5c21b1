// Package agent spreads one governed run over many generator processes:
// the controller↔agent protocol over NATS (issue 27).
//
// The controller embeds a NATS server (github.com/nats-io/nats-server/v2;
// nothing for the user to install) and judges ONE window made of every
// agent's attempts with ONE governor, exactly as a single process does (the
// seed's rules unchanged); agents (github.com/nats-io/nats.go) run the
// normal phase runtime (internal/phase through internal/engine) whose
// governor is replaced by the controller's offer (phase.Config.Follow): the
// gate, schedule, workers, drain and the generator's watch of itself are
// the agent's own.
//
// The conversation, all JSON on subjects under "throttle.":
//
//	agent → hello (request)     name, cores, version; the reply assigns an
//	                            id and carries the run's Spec (or a refusal)
//	agent → making (every 2 s)  a script's agent still making its VUs (k6
//	                            makes every VU before the test); the
//	                            controller's --wait starts again
//	agent → ready               the agent built its phase and waits
//	ctl   → start, start.<id>   every ready agent starts at once; a late
//	                            joiner gets its own start
//	agent → tick (every tick)   counter deltas (attempts by class, iterations,
//	                            dropped arrivals, latency sum, saturation) and
//	                            an HDR histogram delta of latencies
//	ctl   → offer (every tick   the committed offer and each agent's share;
//	        and on every move)  it is also the controller's heartbeat
//	ctl   → stop                the run is over (its end, Ctrl-C)
//	ctl   → abort               cut off what is in flight (a second Ctrl-C)
//
// Only counts cross machines, never timestamps: a delta that arrives late
// is merged into the window open when it arrives, so nothing is lost and a
// clock skew between machines changes nothing. The controller notices an
// agent whose connection closed (killed) at its next tick, or that stays
// silent for LostTicks ticks, at least MinSilence (MinScriptSilence for a
// k6 script's agents, which stall while they make their VUs; on its own clock),
// declares it lost in one line, and gives its share to the
// others; a lost agent that speaks again (it was stalled, not dead) gets a
// share back, in one line too. An agent that hears no offer for as long,
// or loses its connection, stops; its last delta says its run was cut
// short, so the controller, if it was only stalled, fails the run rather
// than report the part as the whole.
//
// Shares are equal by default; an agent that reports itself saturated (its
// phase's watch: CPU, schedule lag) gets a smaller weight each tick it
// does, and recovers it slowly once it is not.
//
// Security: an agent must present the run's token; the embedded server
// refuses any other, and both sides say so in one line.
package agent
