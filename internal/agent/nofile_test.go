package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/script/options"
)

// PeakVUs sums the VUs of the scenarios that run at once: a scenario that
// starts after another's end (and graceful stop) does not add to it.
func TestPeakVUs(t *testing.T) {
	o := &options.Options{Scenarios: []options.Scenario{
		{Name: "a", Executor: options.ConstantVUs, VUs: 100, Duration: 10 * time.Second, GracefulStop: 5 * time.Second},
		{Name: "b", Executor: options.ConstantArrivalRate, PreAllocatedVUs: 10, MaxVUs: 40, Duration: 12 * time.Second, StartTime: 5 * time.Second},
		{Name: "c", Executor: options.RampingVUs, StartVUs: 3, Stages: []options.Stage{{Duration: time.Second, Target: 250}, {Duration: time.Second}}, StartTime: 15 * time.Second},
	}}
	// a and b overlap (140); c starts as a's graceful stop ends, b still running
	// (40 + 250).
	if got := PeakVUs(o); got != 290 {
		t.Fatalf("PeakVUs = %d, want 290", got)
	}
}

func TestFilesWarning(t *testing.T) {
	http := []string{"k6", "k6/http"}
	cases := []struct {
		name string
		plan FilePlan
		want []string // "" : no warning
	}{
		{"fits", FilePlan{VUs: 1000, Processes: 1, Modules: http, Reuse: true, Limit: 20000}, nil},
		{"one process", FilePlan{VUs: 100000, Processes: 1, Modules: http, Reuse: true, Limit: 20000},
			[]string{"the script runs up to 100000 VUs", "about 100512 open files", "open-file limit of 20000", "ulimit -n 100512", "--local-agents 6 (about 16667 VUs each)"}},
		{"local agents", FilePlan{VUs: 33334, Processes: 3, Modules: http, Reuse: true, Limit: 20000},
			[]string{"each of the 3 local agents runs up to 33334 VUs", "--local-agents 6"}},
		{"remote agent", FilePlan{VUs: 30000, Processes: 1, Modules: http, Reuse: true, Limit: 20000, Agent: "gen-1, segment 0:1/2"},
			[]string{"this agent (gen-1, segment 0:1/2) runs up to 30000 VUs", "more agents"}},
		{"limit below the margin", FilePlan{VUs: 1000, Processes: 1, Modules: http, Reuse: true, Limit: 256},
			[]string{"open-file limit of 256", "ulimit -n 1512;"}},
		{"noConnectionReuse", FilePlan{VUs: 100000, Processes: 1, Modules: http, Limit: 20000}, nil},
		{"no connecting module", FilePlan{VUs: 100000, Processes: 1, Modules: []string{"k6", "k6/crypto"}, Reuse: true, Limit: 20000}, nil},
		{"grpc holds connections", FilePlan{VUs: 100000, Processes: 1, Modules: []string{"k6/net/grpc"}, Reuse: true, Limit: 20000}, []string{"100000 VUs"}},
		{"unknown limit", FilePlan{VUs: 100000, Processes: 1, Modules: http, Reuse: true}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FilesWarning(c.plan)
			if c.want == nil {
				if got != "" {
					t.Fatalf("want no warning, got %q", got)
				}
				return
			}
			if strings.Contains(got, "\n") || !strings.HasPrefix(got, "warning: ") {
				t.Errorf("want one line starting warning:, got %q", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			if c.plan.Limit <= FileMargin && strings.Contains(got, "--local-agents") {
				t.Errorf("no spread helps under a limit of %d: %q", c.plan.Limit, got)
			}
		})
	}
}

// Go (1.19 on) raises the soft open-file limit at start to one below the
// hard limit (Go 1.26's syscall/rlimit.go: Max - 1, so that a later
// prlimit to Max is told apart), the premise of FilesWarning's judging the
// soft limit as the one in force. Run it under `ulimit -Sn 1024`.
func TestFileLimitRaisedToHard(t *testing.T) {
	soft, hard, ok := FileLimit()
	if !ok {
		t.Fatal("no open-file limit on a unix test host")
	}
	if soft+1 < hard {
		t.Fatalf("soft open-file limit %d, hard %d: Go did not raise the soft limit", soft, hard)
	}
}
