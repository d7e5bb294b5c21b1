package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/metrics"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/target"
	"github.com/throttlekit/throttle/internal/targets"
)

const dashboardPath = "../../examples/grafana/throttle.json"

// exported are the metric names the binary exports for a demo run (a phase
// and the built-in target), taken from a registry built as the CLI builds
// it, around a real engine, recorder and target, gathered through the
// handler and the Prometheus parser.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	tg, err := targets.FromURLs([]string{"http://127.0.0.1:1/"}, "GET", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Targets: tg, Limits: governor.NewLimits(governor.Rate, 100)})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := report.NewRecorder(eng.Config().Limits.High)
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := target.New(target.NewConfig(100))
	if err != nil {
		t.Fatal(err)
	}
	reg := metrics.New()
	if err := reg.Register(metrics.NewPhase("main", rec), metrics.Source{Limits: eng.Config().Limits, Snapshot: eng.Snapshot}); err != nil {
		t.Fatal(err)
	}
	if err := reg.AddTarget("main", builtin); err != nil {
		t.Fatal(err)
	}
	return gather(t, reg).Names()
}

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a row's
}

// The shipped dashboard parses, and every query of every panel names only
// metrics the binary exports.
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	if d.Title == "" || d.UID == "" {
		t.Errorf("dashboard needs a title and a uid, got %q %q", d.Title, d.UID)
	}
	names := exported(t)
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if v.Type == "query" {
			for _, m := range labelValuesMetric.FindAllStringSubmatch(v.Definition, -1) {
				if !names[m[1]] {
					t.Errorf("variable %s reads %s, which is not exported", v.Name, m[1])
				}
			}
		}
	}
	var all []panel
	for _, p := range d.Panels {
		all = append(all, p)
		all = append(all, p.Panels...)
	}
	ids := map[int]bool{}
	queried := map[string]bool{}
	for _, p := range all {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.Type != "prometheus" || !vars[strings.Trim(p.Datasource.UID, "${}")] {
			t.Errorf("panel %q: datasource %+v, want prometheus through a dashboard variable", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			used := promqlMetrics(q.Expr)
			if len(used) == 0 {
				t.Errorf("panel %q: query %q names no metric", p.Title, q.Expr)
			}
			for _, n := range used {
				queried[n] = true
				if !names[n] {
					t.Errorf("panel %q: query %q names %s, which the binary does not export", p.Title, q.Expr, n)
				}
			}
		}
	}
	// What the issue asks the dashboard to show.
	for _, want := range []string{"throttle_offer", "throttle_ceiling", "throttle_last_bad", "throttle_attempts_total",
		"throttle_window_failure_fraction", "throttle_high", "throttle_low", "throttle_attempt_duration_seconds_bucket", "throttle_decisions_total"} {
		if !queried[want] {
			t.Errorf("no panel queries %s", want)
		}
	}
}

var labelValuesMetric = regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)`)

var (
	promqlStrings   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promqlMatchers  = regexp.MustCompile(`\{[^}]*\}`)
	promqlRanges    = regexp.MustCompile(`\[[^\]]*\]`)
	promqlGroupings = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlNumbers   = regexp.MustCompile(`(^|[^a-zA-Z0-9_:$])[0-9][0-9a-zA-Z_.]*`) // 0.99, 2e3, 5m
	promqlIdent     = regexp.MustCompile(`\$?[a-zA-Z_:][a-zA-Z0-9_:]*\s*\(?`)
	promqlKeywords  = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "bool": true,
		"and": true, "or": true, "unless": true, "offset": true, "group_left": true, "group_right": true, "inf": true, "nan": true}
)

// promqlMetrics returns the metric names a PromQL expression selects: the
// identifiers left once strings, label matchers, ranges, groupings and
// numbers are cut out, that are not functions, keywords or Grafana variables.
func promqlMetrics(expr string) []string {
	s := promqlStrings.ReplaceAllString(expr, `""`)
	s = promqlMatchers.ReplaceAllString(s, " ")
	s = promqlRanges.ReplaceAllString(s, " ")
	s = promqlGroupings.ReplaceAllString(s, " ")
	s = promqlNumbers.ReplaceAllString(s, "$1 ")
	var out []string
	for _, tok := range promqlIdent.FindAllString(s, -1) {
		if strings.HasSuffix(tok, "(") || strings.HasPrefix(tok, "$") {
			continue // a function or aggregation, or a dashboard variable
		}
		tok = strings.TrimSpace(tok)
		if promqlKeywords[strings.ToLower(tok)] || slices.Contains(out, tok) {
			continue
		}
		out = append(out, tok)
	}
	return out
}

func TestPromqlMetrics(t *testing.T) {
	for expr, want := range map[string][]string{
		`throttle_offer{phase=~"$phase"}`: {"throttle_offer"},
		`histogram_quantile(0.99, sum by (le, phase) (rate(a_bucket{x="y}z"}[$__rate_interval])))`:   {"a_bucket"},
		`sum(rate(a_total{result="failed"}[1m])) / sum without (class) (rate(a_total[5m])) > bool 0`: {"a_total"},
		`up and on (job) b offset 5m`: {"up", "b"},
		`rate(c[1m]) * 2e3`:           {"c"},
	} {
		if got := promqlMetrics(expr); !slices.Equal(got, want) {
			t.Errorf("promqlMetrics(%q) = %q, want %q", expr, got, want)
		}
	}
}
