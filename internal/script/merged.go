package script

import (
	"fmt"
	"strconv"
	"time"
)

// A controller's runner loads the script its agents run (the same options,
// metrics, thresholds and handleSummary) but runs no scenario: its
// metrics are the agents' merged deltas (Merge). These are its run's
// lifecycle in place of Run.

// StartMerged marks the start of the run the agents make: the span of the
// rates and of abortOnFail's delay.
func (r *Runner) StartMerged(t time.Time) { r.started = t }

// AbortCrossed is the first abortOnFail threshold crossed now (past its
// delayAbortEval), as the line k6 prints; "" when none is.
func (r *Runner) AbortCrossed() string {
	span := time.Since(r.started)
	for _, th := range r.thresholds {
		if !th.AbortOnFail || span < th.DelayAbortEval {
			continue
		}
		if res := th.eval(r.metric(th.Metric), span); !res.OK {
			return fmt.Sprintf("threshold %s on %s crossed (%v)", th.Source, th.Metric, strconv.FormatFloat(res.Value, 'g', 6, 64))
		}
	}
	return ""
}

// FinishMerged ends the merged run as Run ends one: the summary's span,
// then handleSummary with the merged data if the script exports it.
func (r *Runner) FinishMerged(res *RunResult) (*RunResult, error) {
	defer r.setupVU.close()
	return r.finish(res, "")
}
