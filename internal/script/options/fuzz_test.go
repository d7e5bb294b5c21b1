package options

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseDuration: any string is a duration or one error line; what is
// accepted reads back the same from its Go spelling, and Go's own syntax
// means what it means to Go.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30s", "1m30s", "1.5h", "500ms", "2d", "1d12h", "10", "0.5", "-1s", "", "d", "1e300", "NaN", "Inf", "9999999999999d", " 5s ", "1d-1h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error %q spans lines", s, err)
			}
			return
		}
		if n, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			if want := n * float64(time.Second); math.Abs(float64(d)-want) > math.Max(1, math.Abs(want)*1e-9) {
				t.Fatalf("%q seconds read as %v", s, d)
			}
		}
		back, err := ParseDuration(d.String())
		if err != nil || back != d {
			t.Fatalf("%q → %v, whose spelling %q reads back as %v, %v", s, d, d.String(), back, err)
		}
		if g, gerr := time.ParseDuration(strings.TrimSpace(s)); gerr == nil && !strings.Contains(s, "d") && g != d {
			t.Fatalf("%q: %v, Go reads %v", s, d, g)
		}
	})
}

// FuzzDurationJSON: a duration in the options' JSON (a string or a number
// of milliseconds) is a duration or an error, never a wrapped-around value.
func FuzzDurationJSON(f *testing.F) {
	for _, s := range []string{`"30s"`, `1000`, `1e300`, `-5`, `"1d"`, `null`, `true`, `1.5`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var d duration
		if json.Unmarshal([]byte(s), &d) != nil {
			return
		}
		var n float64
		if json.Unmarshal([]byte(s), &n) == nil && !math.IsNaN(n) {
			want := n * float64(time.Millisecond)
			if math.Abs(float64(d)-want) > math.Max(1, math.Abs(want)*1e-9) {
				t.Fatalf("%s ms read as %v", s, time.Duration(d))
			}
		}
	})
}

// FuzzThreshold: a threshold expression (as a string or an object) and a
// metric key parse or fail with a message; what parses has a known
// statistic and operator, a percentile within 0-100 and reads back the
// same from its parts.
func FuzzThreshold(f *testing.F) {
	for _, s := range []string{"p(95)<500", "avg<200", "rate<0.01", "count>10", " p( 99.9 ) <= 1e3 ", "med===1", "max!=-.5", "p(101)<1", "p(95)", "value>", "avg<1e999"} {
		f.Add(s, "http_req_duration{status:200}")
	}
	f.Add("p(95)<1", `http_req_duration{group:"::a::b",name:'x'}`)
	f.Add("avg<1", "{a:b}")
	f.Add("avg<1", "a{b}{c}")
	stats := map[string]bool{"avg": true, "min": true, "max": true, "med": true, "count": true, "rate": true, "value": true, "p": true}
	ops := map[string]bool{"<": true, "<=": true, ">": true, ">=": true, "==": true, "===": true, "!=": true}
	f.Fuzz(func(t *testing.T, expr, key string) {
		raw, _ := json.Marshal(expr)
		th, err := parseThreshold(raw)
		obj, _ := json.Marshal(map[string]any{"threshold": expr, "abortOnFail": true})
		tho, erro := parseThreshold(obj)
		if (err == nil) != (erro == nil) || err == nil && (tho.Stat != th.Stat || tho.Value != th.Value || !tho.AbortOnFail) {
			t.Fatalf("%q: as a string %+v, %v; as an object %+v, %v", expr, th, err, tho, erro)
		}
		if err == nil {
			if !stats[th.Stat] || !ops[th.Op] || th.Percentile < 0 || th.Percentile > 100 || th.Stat != "p" && th.Percentile != 0 {
				t.Fatalf("%q: %+v", expr, th)
			}
			stat := th.Stat
			if stat == "p" {
				stat = "p(" + strings.TrimSpace(strings.SplitN(strings.SplitN(th.Source, "(", 2)[1], ")", 2)[0]) + ")"
			}
			back, _ := json.Marshal(stat + th.Op + strings.TrimSpace(thresholdSyntax.FindStringSubmatch(expr)[4]))
			again, err := parseThreshold(back)
			if err != nil || again.Stat != th.Stat || again.Op != th.Op || again.Percentile != th.Percentile || !(again.Value == th.Value || math.IsNaN(th.Value)) {
				t.Fatalf("%q: %+v reads back from %s as %+v, %v", expr, th, back, again, err)
			}
		}
		metric, filter, err := ParseSelector(key)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error %q spans lines", key, err)
			}
			return
		}
		if strings.TrimSpace(metric) == "" || strings.ContainsAny(metric, "{}") {
			t.Fatalf("%q: metric %q", key, metric)
		}
		for k := range filter {
			if k == "" || k != strings.TrimSpace(k) {
				t.Fatalf("%q: tag key %q", key, k)
			}
		}
	})
}

// FuzzFlags: any value given to any k6 flag (by index into the catalog,
// long or short name) and to its K6_* variable is recorded or refused with
// a message; what is recorded resolves, over an empty script, to options
// or to an error, never a panic.
func FuzzFlags(f *testing.F) {
	for i := range Catalog {
		f.Add(uint16(i), "1", false)
	}
	for _, v := range []string{"", "10s", "-1", "1e400", "true", "maybe", "a=b", "{}", "[", "10s:5,20s:0", "p(99.9),avg", "NaN", "\x00"} {
		f.Add(uint16(7), v, true)
	}
	f.Fuzz(func(t *testing.T, i uint16, value string, short bool) {
		e := &Catalog[int(i)%len(Catalog)]
		name := e.Flag
		if short && e.Short != "" {
			name = e.Short
		}
		var cli Flags
		var env Flags
		errSet := cli.Set(name, value)
		if name == "" {
			if errSet == nil {
				t.Fatal("an empty flag name was accepted")
			}
			return
		}
		if errSet != nil && (errSet.Error() == "" || strings.Contains(errSet.Error(), "\n")) {
			t.Fatalf("--%s %q: error %q", name, value, errSet)
		}
		if e.Env != "" {
			var err error
			env, err = FromEnv([]string{e.Env + "=" + value})
			if err != nil && (err.Error() == "" || !strings.Contains(err.Error(), e.Env)) {
				t.Fatalf("%s=%q: error %q does not name the variable", e.Env, value, err)
			}
		}
		o, err := Resolve([]byte(`{}`), env, cli)
		if err == nil && len(o.Scenarios) == 0 {
			t.Fatalf("--%s %q: no error and no scenario", name, value)
		}
		if err == nil {
			for _, sc := range o.Scenarios {
				if sc.Length() < 0 || sc.GracefulStop < 0 || sc.StartTime < 0 {
					t.Fatalf("--%s %q: scenario %+v has a negative time", name, value, sc)
				}
			}
		}
	})
}
