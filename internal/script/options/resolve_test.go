package options

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// sample is one honoured option's value as a script, a flag or a variable
// writes it, and what Options must then hold.
type sample struct {
	json, text string
	want       any
}

var samples = map[string]sample{
	"Batch":                    {`7`, "7", 7},
	"BatchPerHost":             {`3`, "3", 3},
	"CompatibilityMode":        {`"extended"`, "extended", "extended"},
	"DiscardResponseBodies":    {`true`, "true", true},
	"HTTPDebug":                {`"full"`, "full", "full"},
	"IncludeSystemEnvVars":     {`false`, "false", false},
	"InsecureSkipTLSVerify":    {`true`, "1", true},
	"MaxRedirects":             {`0`, "0", 0},
	"MinIterationDuration":     {`"1.5s"`, "1.5s", 1500 * time.Millisecond},
	"NoColor":                  {`true`, "true", true},
	"NoConnectionReuse":        {`true`, "true", true},
	"NoCookiesReset":           {`true`, "true", true},
	"NoSummary":                {`true`, "true", true},
	"NoSetup":                  {`true`, "true", true},
	"NoTeardown":               {`true`, "true", true},
	"NoThresholds":             {`true`, "true", true},
	"NoUsageReport":            {`true`, "true", true},
	"NoVUConnectionReuse":      {`true`, "true", true},
	"Out":                      {`["json=f.json"]`, "json=f.json", []string{"json=f.json"}},
	"SetupTimeout":             {`"2m"`, "2m", 2 * time.Minute},
	"SummaryExport":            {`"s.json"`, "s.json", "s.json"},
	"SummaryMode":              {`"full"`, "full", "full"},
	"SummaryTimeUnit":          {`"ms"`, "ms", "ms"},
	"SummaryTrendStats":        {`["avg","p(99.9)","count"]`, "avg,p(99.9),count", []string{"avg", "p(99.9)", "count"}},
	"SystemTags":               {`["status","vu"]`, "status,vu", []string{"status", "vu"}},
	"Tags":                     {`{"team":"shop"}`, "team=shop", map[string]string{"team": "shop"}},
	"TeardownTimeout":          {`"90s"`, "90s", 90 * time.Second},
	"Throw":                    {`true`, "true", true},
	"UserAgent":                {`"MyAgent/1"`, "MyAgent/1", "MyAgent/1"},
	"ExecutionSegment":         {`"1/3:2/3"`, "1/3:2/3", "1/3:2/3"},
	"ExecutionSegmentSequence": {`"0,1/3,2/3,1"`, "0,1/3,2/3,1", "0,1/3,2/3,1"},
}

// TestEveryHonouredOption sets each honoured option from each place k6
// lets it be set and reads it back from Options.
func TestEveryHonouredOption(t *testing.T) {
	for i := range Catalog {
		e := &Catalog[i]
		if e.Status != Honoured || e.field == "" || isExecution(e.field) {
			continue
		}
		s, ok := samples[e.field]
		if !ok {
			t.Errorf("%s: no sample value: add one", e.Name)
			continue
		}
		check := func(where string, o Options, err error) {
			t.Helper()
			if err != nil {
				t.Errorf("%s from %s: %v", e.Name, where, err)
				return
			}
			if got := reflect.ValueOf(o).FieldByName(e.field).Interface(); !reflect.DeepEqual(got, s.want) {
				t.Errorf("%s from %s: %v, want %v", e.Name, where, got, s.want)
			}
		}
		if e.Key != "" {
			o, err := Parse([]byte(`{"` + e.Key + `": ` + s.json + `}`))
			check("script", o, err)
		}
		if e.Env != "" {
			env, err := FromEnv([]string{e.Env + "=" + s.text, "PATH=/bin"})
			if err != nil {
				t.Errorf("%s: %v", e.Env, err)
			}
			o, err := Resolve(nil, env, Flags{})
			check(e.Env, o, err)
		}
		if e.Flag != "" {
			var cli Flags
			if err := cli.Set(e.Flag, s.text); err != nil {
				t.Errorf("--%s: %v", e.Flag, err)
			}
			o, err := Resolve(nil, Flags{}, cli)
			check("--"+e.Flag, o, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	o, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Options{
		Scenarios: o.Scenarios, SummaryTrendStats: []string{"avg", "min", "med", "max", "p(90)", "p(95)"}, SummaryMode: "compact",
		SystemTags:   DefaultSystemTags,
		SetupTimeout: time.Minute, TeardownTimeout: time.Minute, HandleSummaryTimeout: 2 * time.Minute,
		UserAgent: DefaultUserAgent, MaxRedirects: 10, Batch: 20, BatchPerHost: 6, IncludeSystemEnvVars: true, CompatibilityMode: "extended",
	}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("defaults:\n%+v\nwant\n%+v", o, want)
	}
	s := o.Scenarios[0]
	if len(o.Scenarios) != 1 || s.Executor != PerVUIterations || s.VUs != 1 || s.Iterations != 1 || s.MaxDuration != 10*time.Minute || s.GracefulStop != 30*time.Second {
		t.Errorf("default scenario %+v", o.Scenarios)
	}
}

func TestPrecedence(t *testing.T) {
	script := []byte(`{"vus": 2, "duration": "10s", "userAgent": "script", "maxRedirects": 3, "tags": {"from": "script"}}`)
	env, err := FromEnv([]string{"K6_VUS=3", "K6_USER_AGENT=env"})
	if err != nil {
		t.Fatal(err)
	}
	var cli Flags
	for _, f := range [][2]string{{"u", "4"}, {"tag", "from=cli"}} {
		if err := cli.Set(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name      string
		env, cli  Flags
		vus       int
		ua        string
		tag       string
		redirects int
	}{
		{"script", Flags{}, Flags{}, 2, "script", "script", 3},
		{"env over script", env, Flags{}, 3, "env", "script", 3},
		{"cli over env", env, cli, 4, "env", "cli", 3},
	} {
		o, err := Resolve(script, c.env, c.cli)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s := o.Scenarios[0]
		if s.Executor != ConstantVUs || s.VUs != c.vus || s.Duration != 10*time.Second || o.UserAgent != c.ua || o.Tags["from"] != c.tag || o.MaxRedirects != c.redirects {
			t.Errorf("%s: vus %d ua %q tag %q redirects %d, want %d %q %q %d", c.name, s.VUs, o.UserAgent, o.Tags["from"], o.MaxRedirects, c.vus, c.ua, c.tag, c.redirects)
		}
	}
}

// TestScriptOnlyAndWholeMaps: hosts and handleSummaryTimeout come only
// from the script; a higher source's tags replace the script's as a
// whole, as in k6.
func TestScriptOnlyAndWholeMaps(t *testing.T) {
	script := []byte(`{"tags": {"a": "1", "b": "2"}, "hosts": {"shop.test": "127.0.0.1:8080"}, "handleSummaryTimeout": "30s"}`)
	o, err := Resolve(script, Flags{}, flags(t, "tag", "b=3"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Tags, map[string]string{"b": "3"}) || o.Hosts["shop.test"] != "127.0.0.1:8080" || o.HandleSummaryTimeout != 30*time.Second {
		t.Errorf("tags %v hosts %v handleSummaryTimeout %v", o.Tags, o.Hosts, o.HandleSummaryTimeout)
	}
}

func flags(t *testing.T, kv ...string) Flags {
	t.Helper()
	var f Flags
	for i := 0; i < len(kv); i += 2 {
		if err := f.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func env(t *testing.T, vars ...string) Flags {
	t.Helper()
	f, err := FromEnv(vars)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

const twoScenarios = `{"scenarios": {
  "a": {"executor": "constant-vus", "vus": 3, "duration": "5s", "exec": "a"},
  "b": {"executor": "per-vu-iterations", "vus": 2, "iterations": 4}}}`

// TestShortcutRules: k6's rules for vus, duration, iterations, stages and
// scenarios across the three sources.
func TestShortcutRules(t *testing.T) {
	for _, c := range []struct {
		name     string
		script   string
		env, cli Flags
		// want: executor, VUs (StartVUs for ramping-vus), iterations,
		// duration (maxDuration for the iteration executors), stages.
		exec   Executor
		vus    int
		iters  int
		dur    time.Duration
		stages int
		notice string
	}{
		{name: "vus and duration", script: `{"vus": 5, "duration": "30s"}`, exec: ConstantVUs, vus: 5, iters: 1, dur: 30 * time.Second},
		{name: "iterations", script: `{"vus": 2, "iterations": 8}`, exec: SharedIterations, vus: 2, iters: 8, dur: 10 * time.Minute},
		{name: "iterations with duration", script: `{"iterations": 8, "duration": "20s"}`, exec: SharedIterations, vus: 1, iters: 8, dur: 20 * time.Second},
		{name: "vus alone", script: `{"vus": 10}`, exec: PerVUIterations, vus: 10, iters: 1, dur: 10 * time.Minute},
		{name: "stages", script: `{"vus": 2, "stages": [{"duration": "10s", "target": 5}, {"duration": "5s", "target": 0}]}`, exec: RampingVUs, vus: 2, iters: 1, stages: 2},
		{name: "-d replaces scenarios", script: twoScenarios, cli: flags(t, "d", "10s"), exec: ConstantVUs, vus: 1, iters: 1, dur: 10 * time.Second, notice: "duration from the command line: the script's scenarios are replaced"},
		{name: "-u -i replace scenarios", script: twoScenarios, cli: flags(t, "u", "3", "i", "9"), exec: SharedIterations, vus: 3, iters: 9, dur: 10 * time.Minute, notice: "iterations from the command line: the script's scenarios are replaced"},
		{name: "K6_ITERATIONS replaces scenarios", script: twoScenarios, env: env(t, "K6_ITERATIONS=4"), exec: SharedIterations, vus: 1, iters: 4, dur: 10 * time.Minute, notice: "K6_* environment"},
		{name: "-s replaces stages", script: `{"stages": [{"duration": "1m", "target": 9}]}`, cli: flags(t, "s", "10s:5", "stage", "5s:0"), exec: RampingVUs, vus: 1, iters: 1, stages: 2},
		{name: "K6_STAGES", env: env(t, "K6_STAGES=10s:5,5s:0", "K6_VUS=2"), exec: RampingVUs, vus: 2, iters: 1, stages: 2},
		{name: "-d over script iterations", script: `{"vus": 4, "iterations": 100, "duration": "1m"}`, cli: flags(t, "d", "5s"), exec: ConstantVUs, vus: 4, iters: 1, dur: 5 * time.Second},
		{name: "-i over script stages keeps script vus", script: `{"vus": 3, "stages": [{"duration": "1m", "target": 9}]}`, cli: flags(t, "i", "6"), exec: SharedIterations, vus: 3, iters: 6, dur: 10 * time.Minute},
		{name: "cli -d over env -i", env: env(t, "K6_ITERATIONS=50"), cli: flags(t, "d", "7s"), exec: ConstantVUs, vus: 1, iters: 1, dur: 7 * time.Second},
	} {
		o, err := Resolve([]byte(c.script), c.env, c.cli)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(o.Scenarios) != 1 {
			t.Errorf("%s: %d scenarios, want the default one", c.name, len(o.Scenarios))
			continue
		}
		s := o.Scenarios[0]
		vus, dur := s.VUs, s.Duration
		if s.Executor == RampingVUs {
			vus = s.StartVUs
		}
		if s.Executor == SharedIterations || s.Executor == PerVUIterations {
			dur = s.MaxDuration
		}
		if s.Name != "default" || s.Exec != "default" || s.Executor != c.exec || vus != c.vus || s.Iterations != c.iters || dur != c.dur || len(s.Stages) != c.stages {
			t.Errorf("%s: %s vus %d iterations %d duration %v stages %d, want %s %d %d %v %d", c.name, s.Executor, vus, s.Iterations, dur, len(s.Stages), c.exec, c.vus, c.iters, c.dur, c.stages)
		}
		if got := strings.Join(o.Notices, "\n"); !strings.Contains(got, c.notice) {
			t.Errorf("%s: notices %q, want one saying %q", c.name, got, c.notice)
		}
	}
}

func TestScenariosKeptAndVUsUnused(t *testing.T) {
	o, err := Resolve([]byte(twoScenarios), env(t, "K6_VUS=9"), flags(t, "u", "7"))
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Scenarios) != 2 || o.Scenarios[0].Name != "a" || o.Scenarios[0].VUs != 3 || o.Scenarios[1].VUs != 2 {
		t.Errorf("-u must not touch scenarios: %+v", o.Scenarios)
	}
	if !strings.Contains(strings.Join(o.Notices, "\n"), "vus is not used") {
		t.Errorf("notices %q: want vus beside scenarios reported", o.Notices)
	}
}

func TestShortcutConflicts(t *testing.T) {
	for _, c := range []struct {
		script string
		cli    Flags
		want   []string
	}{
		{`{"duration": "1s", "iterations": 2, "scenarios": {"x": {"executor": "constant-vus", "duration": "1s"}}}`, Flags{},
			[]string{"options: duration: using an execution shortcut and scenarios", "options: iterations: using an execution shortcut and scenarios"}},
		{`{"stages": [{"duration": "1s", "target": 1}], "scenarios": {"x": {"executor": "constant-vus", "duration": "1s"}}}`, Flags{}, []string{"options: stages: using an execution shortcut"}},
		{`{"stages": [{"duration": "1s", "target": 1}], "duration": "5s"}`, Flags{}, []string{"options: stages: stages conflict with duration in the same place"}},
		{``, flags(t, "d", "5s", "s", "1s:3"), []string{"stages conflict with duration"}},
		{`{"vus": 0, "duration": "5s"}`, Flags{}, []string{"options: vus: must be >= 1 (the default scenario the shortcut options make)"}},
		{`{"vus": 5, "iterations": 2}`, Flags{}, []string{"vus: 5 must be <= iterations (2)"}},
		{`{"stages": []}`, Flags{}, []string{"stages: empty"}},
	} {
		_, err := Resolve([]byte(c.script), Flags{}, c.cli)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to say %q", c.script, err, w)
			}
		}
	}
}

// TestEveryRefusedOptionAtOnce: every refused option from every source is
// one line of the same error.
func TestEveryRefusedOptionAtOnce(t *testing.T) {
	var keys, vars []string
	var cli Flags
	var want []string
	for i := range Catalog {
		e := &Catalog[i]
		if e.Status != Refused {
			continue
		}
		if e.Key != "" {
			keys = append(keys, `"`+e.Key+`": 1`)
			want = append(want, e.Key)
		}
		if e.Env != "" {
			vars = append(vars, e.Env+"=1")
			want = append(want, e.Env)
		}
		if e.Flag != "" {
			if err := cli.Set(e.Flag, "1"); err != nil {
				t.Fatal(err)
			}
			want = append(want, "--"+e.Flag)
		}
	}
	keys = append(keys, `"ext": {"loadimpact": {"projectID": 1}, "influxdb": {}}`, `"compatibilityMode": "base"`,
		`"scenarios": {"b": {"executor": "shared-iterations", "options": {"browser": {"type": "chromium"}}}, "x": {"executor": "externally-controlled"}}`)
	want = append(want, "ext.influxdb", "compatibilityMode", "options.browser", `scenario "x"`)
	_, err := Resolve([]byte("{"+strings.Join(keys, ",")+"}"), env(t, vars...), cli)
	if err == nil {
		t.Fatal("no error")
	}
	got := Unsupported(err)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("unsupported:\n%v\nwant\n%v", got, want)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Errorf("%d lines for %d refused options:\n%s", len(lines), len(want), err)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "options: ") || !strings.Contains(l, "not supported by throttle") {
			t.Errorf("line %q: want one line naming the option and saying it is not supported", l)
		}
	}
	var one *Error
	if !errors.As(err, &one) || one.Option == "" {
		t.Errorf("errors.As finds no *Error with its option in %v", err)
	}
}

// TestRefusedOffValuesAccepted: a refused option set to k6's off value
// asks for nothing throttle does not do.
func TestRefusedOffValuesAccepted(t *testing.T) {
	_, err := Resolve([]byte(`{"linger": false, "rps": 0, "blockHostnames": [], "dns": null, "consoleOutput": "", "logOutput": "stderr", "tlsAuth": []}`),
		env(t, "K6_PAUSED=false", "K6_LOG_OUTPUT=stderr"), flags(t, "linger", "false", "rps", "0"))
	if err != nil {
		t.Errorf("off values refused: %v", err)
	}
	_, err = Resolve([]byte(`{"logOutput": "file=x.log"}`), env(t, "K6_PAUSED=true"), flags(t, "linger", ""))
	if got := Unsupported(err); !slices.Equal(got, []string{"logOutput", "K6_PAUSED", "--linger"}) {
		t.Errorf("unsupported %q from %v", got, err)
	}
}

func TestCloudAcceptedAndUnknownNoticed(t *testing.T) {
	o, err := Parse([]byte(`{"cloud": {"projectID": 3}, "ext": {"loadimpact": {"name": "x"}}, "myStuff": 1, "vus": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(o.Notices, "\n")
	for _, w := range []string{"cloud is a k6 cloud option", "ext.loadimpact is a k6 cloud option", "myStuff is not a k6 option"} {
		if !strings.Contains(got, w) {
			t.Errorf("notices %q: want %q", got, w)
		}
	}
	if _, err := FromEnv([]string{"K6_CLOUD_TOKEN=x", "K6_BROWSER_HEADLESS=false", "BASE_URL=http://x"}); err != nil {
		t.Errorf("variables that are not options: %v", err)
	}
	var f Flags
	if err := f.Set("show-logs", ""); err != nil {
		t.Errorf("--show-logs: %v", err)
	}
}

func TestBadValues(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{`{"vus": 1.5}`, "options: vus: want a whole number, got 1.5"},
		{`{"vus": "3"}`, `options: vus: want a whole number, got "3"`},
		{`{"noConnectionReuse": "yes"}`, "options: noConnectionReuse: want true or false"},
		{`{"throw": 1}`, "options: throw: want true or false"},
		{`{"tlsVersion": "tls1.2"}`, "options: tlsVersion: not supported by throttle"},
		{`{"setupTimeout": "soon"}`, `options: setupTimeout: want a duration such as "30s", got "soon"`},
		{`{"setupTimeout": "0s"}`, "options: setupTimeout: must be > 0"},
		{`{"summaryTimeUnit": "m"}`, `options: summaryTimeUnit: "m": want s, ms, us`},
		{`{"summaryTrendStats": ["avg", "p(101)", "mean"]}`, `options: summaryTrendStats: "p(101)": a percentile is at most 100`},
		{`{"summaryTrendStats": ["avg", "mean"]}`, `options: summaryTrendStats: "mean": want avg`},
		{`{"systemTags": ["status", "colour"]}`, `options: systemTags: "colour" is not a k6 system tag`},
		{`{"maxRedirects": -1}`, "options: maxRedirects: must be >= 0, got -1"},
		{`{"batch": 0}`, "options: batch: must be >= 1"},
		{`{"httpDebug": "bodies"}`, "options: httpDebug"},
		{`{"tags": ["a"]}`, "options: tags: want an object of strings"},
		{`{"hosts": {"a.test": {}}}`, `options: hosts: "a.test": want a string`},
		{`{"stages": [{"duration": "1s", "target": 1, "ramp": 2}]}`, `options: stages: stage 0: unknown key "ramp"`},
		{`{"handleSummaryTimeout": 0}`, "options: handleSummaryTimeout: want a duration > 0"},
		{`[1]`, "options: the exported options must be an object"},
	} {
		_, err := Parse([]byte(c.script))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", c.script, err, c.want)
		}
	}
	// Several problems: all of them, one line each.
	_, err := Parse([]byte(`{"vus": "x", "throw": 1, "rps": 5}`))
	if err == nil || len(strings.Split(err.Error(), "\n")) != 3 {
		t.Errorf("want 3 lines, got %v", err)
	}
}

func TestFlagsAndEnvText(t *testing.T) {
	var f Flags
	for _, c := range []struct{ flag, value, want string }{
		{"vus", "x", `options: --vus: want a whole number, got "x"`},
		{"stage", "10s", `options: --stage: want a stage as duration:target`},
		{"tag", "novalue", `options: --tag: want NAME=VALUE`},
		{"duration", "forever", `options: --duration: want a duration`},
		{"no-such-flag", "", `options: --no-such-flag: not a k6 option`},
		{"e", "A=1", "handled by the command line itself"},
	} {
		if err := f.Set(c.flag, c.value); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--%s %q: %v, want %q", c.flag, c.value, err, c.want)
		}
	}
	f = flags(t, "no-connection-reuse", "", "out", "csv=a.csv", "out", "json=b,c.json", "system-tags", "status,method")
	o, err := Resolve(nil, Flags{}, f)
	if err != nil {
		t.Fatal(err)
	}
	if !o.NoConnectionReuse || !slices.Equal(o.Out, []string{"csv=a.csv", "json=b,c.json"}) || !slices.Equal(o.SystemTags, []string{"status", "method"}) {
		t.Errorf("no-connection-reuse %v out %q system tags %q", o.NoConnectionReuse, o.Out, o.SystemTags)
	}
	_, err = FromEnv([]string{"K6_VUS=many", "K6_NO_SETUP=maybe"})
	if err == nil || len(strings.Split(err.Error(), "\n")) != 2 || !strings.Contains(err.Error(), "K6_VUS: want a whole number") {
		t.Errorf("bad variables: %v", err)
	}
	e, _ := FromEnv([]string{"K6_OUT=json=a.json,csv=b.csv", "K6_SUMMARY_MODE=disabled"})
	o, err = Resolve(nil, e, Flags{})
	if err != nil || !slices.Equal(o.Out, []string{"json=a.json", "csv=b.csv"}) || !o.NoSummary {
		t.Errorf("K6_OUT: %q, no summary %v, %v", o.Out, o.NoSummary, err)
	}
}

// TestDocTable keeps docs/k6-options.md's table equal to Catalog.
func TestDocTable(t *testing.T) {
	b, err := os.ReadFile("../../../docs/k6-options.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), MarkdownTable()) {
		t.Errorf("docs/k6-options.md's table is not Catalog's; paste MarkdownTable()'s output:\n%s", MarkdownTable())
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, twoScenarios, `{"vus": 5, "duration": "30s", "thresholds": {"http_req_duration{name:login}": ["p(95)<500", {"threshold": "avg<1", "abortOnFail": true, "delayAbortEval": "10s"}]}}`,
		`{"scenarios": {"x": {"executor": "ramping-arrival-rate", "stages": [{"duration": "1s", "target": 5}], "preAllocatedVUs": 1}}}`,
		`{"stages": [{"duration": 1000, "target": 3}], "tags": {"a": 1}, "hosts": {"x": "127.0.0.1"}, "ext": {"loadimpact": {}}}`} {
		f.Add(s, "10s:3")
	}
	f.Fuzz(func(t *testing.T, script, stage string) {
		var cli Flags
		_ = cli.Set("stage", stage)
		o, err := Resolve([]byte(script), Flags{}, cli)
		if err == nil && len(o.Scenarios) == 0 {
			t.Errorf("%q: no error and no scenario", script)
		}
		if err != nil && err.Error() == "" {
			t.Errorf("%q: empty error", script)
		}
	})
}
