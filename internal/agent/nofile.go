package agent

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/script/options"
)

// A VU keeps its keep-alive connection open between its requests, as k6
// does by default, so a script's VUs can hold one descriptor each at once
// (a VU asleep for 20 s holds its idle connection through the sleep). A
// process whose open-file limit is below that sees "too many open files"
// once enough VUs have connected. k6's guide for large tests asks users to
// raise the limit; throttle says so before the run, once, and names the
// other remedy where the limit cannot be raised (a container without
// CAP_SYS_RESOURCE): the limit is per process, so more processes hold
// more VUs. A warning, not a refusal: not every VU holds a connection at
// once, and a script may make none.
//
// Go (1.19 on) raises its soft RLIMIT_NOFILE at start to one below the
// hard limit, in every throttle process (a --local-agents child too: Go
// restores the original soft limit for the children it starts, which
// raise theirs again at their start), so the soft limit judged is the one
// in force and only the hard limit is left to raise.

// FileMargin are the descriptors a process holds besides its VUs'
// connections: standard streams, the controller's link, listeners, files
// the run writes, DNS and the odd second connection.
const FileMargin = 512

// connectors are the modules whose VUs hold connections between
// iterations; a script that imports none of them holds none.
var connectors = []string{"k6/http", "k6/ws", "k6/websockets", "k6/experimental/websockets", "k6/net/grpc"}

// PeakVUs is the most VUs o's scenarios run at once: each scenario's VUs
// (its maxVUs, its highest ramping-vus target), summed over the scenarios
// that overlap in time (from startTime through the scenario and its
// gracefulStop).
func PeakVUs(o *options.Options) int {
	peak := 0
	for _, at := range o.Scenarios {
		n := 0
		for _, sc := range o.Scenarios {
			end := sc.StartTime + sc.Length() + sc.GracefulStop
			if sc.StartTime <= at.StartTime && at.StartTime < end || sc.StartTime == at.StartTime {
				n += scenarioVUs(sc)
			}
		}
		peak = max(peak, n)
	}
	return peak
}

// scenarioVUs is the most VUs sc runs.
func scenarioVUs(sc options.Scenario) int {
	switch sc.Executor {
	case options.ConstantArrivalRate, options.RampingArrivalRate:
		return sc.MaxVUs
	case options.RampingVUs:
		return int(math.Round(sc.MaxCeiling()))
	}
	return sc.VUs
}

// FilePlan is what a descriptor check knows of a run.
type FilePlan struct {
	// VUs are the most VUs one process runs at once (PeakVUs of its
	// options: its segment's on an agent).
	VUs int
	// Processes is how many processes share the test's VUs (the local
	// agents; 1 for a run in one process).
	Processes int
	// Modules are the script's k6 modules (Runner.Modules).
	Modules []string
	// Reuse: the VUs keep their connections (neither noConnectionReuse
	// nor noVUConnectionReuse).
	Reuse bool
	// Limit is the process's open-file limit (the soft RLIMIT_NOFILE, the
	// one in force); 0 unknown.
	Limit uint64
	// Agent, if set, names the agent whose segment this is (a remote
	// agent judging its own machine): the remedy is more agents.
	Agent string
}

// FilesWarning is the one line a run prints before it starts when its VUs
// may need more descriptors than a process's open-file limit allows, naming
// the limit and the remedies (raise it; or spread the VUs over N processes,
// the N that fits); "" when they fit or cannot hold connections.
func FilesWarning(p FilePlan) string {
	connects := slices.ContainsFunc(p.Modules, func(m string) bool { return slices.Contains(connectors, m) })
	need := uint64(p.VUs) + FileMargin
	if !p.Reuse || !connects || p.Limit == 0 || p.VUs <= 0 || need <= p.Limit {
		return ""
	}
	total := p.VUs * max(p.Processes, 1)
	fits := 1
	if p.Limit > FileMargin {
		per := int(p.Limit - FileMargin)
		fits = (total + per - 1) / per
	}
	var who, more string
	switch {
	case p.Agent != "":
		who = fmt.Sprintf("this agent (%s) runs up to %d VUs at once", p.Agent, p.VUs)
		more = "run the test over more agents, each with fewer VUs"
	case p.Processes > 1:
		who = fmt.Sprintf("each of the %d local agents runs up to %d VUs at once", p.Processes, p.VUs)
		more = fmt.Sprintf("use more local agents: --local-agents %d (about %d VUs each)", fits, (total+fits-1)/fits)
	default:
		who = fmt.Sprintf("the script runs up to %d VUs at once", p.VUs)
		more = fmt.Sprintf("spread the VUs over processes: --local-agents %d (about %d VUs each)", fits, (total+fits-1)/fits)
	}
	if fits < 2 {
		more = "" // the limit is too low for any spread to help
	}
	line := fmt.Sprintf("warning: %s, each keeping its keep-alive connection open between requests (k6's default): about %d open files, above the process's open-file limit of %d; past it connects fail with \"too many open files\". Raise the limit (ulimit -n %d; the hard limit needs root or the container's nofile setting)",
		who, need, p.Limit, need)
	if more != "" {
		line += " or " + more
	}
	return strings.TrimSpace(line)
}

// ScriptFilePlan is the descriptor check's view of a loaded script run in
// processes equal parts (its largest part's VUs), against this process's
// limit.
func ScriptFilePlan(r *script.Runner, processes int) FilePlan {
	o := r.Options()
	processes = max(processes, 1)
	soft, _, _ := FileLimit()
	return FilePlan{VUs: (PeakVUs(o) + processes - 1) / processes, Processes: processes, Modules: r.Modules(),
		Reuse: !o.NoConnectionReuse && !o.NoVUConnectionReuse, Limit: soft}
}
