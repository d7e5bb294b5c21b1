package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestK6JSONOutput reads --out json=FILE back: one Metric line per metric
// before its first Point, a Point per value with its time and tags, as
// many as the script made; --summary-trend-stats shapes the summary.
func TestK6JSONOutput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "points.jsonl")
	r := cli(t, "", nil, "demo", "--quiet", "--script", writeFile(t, "k.js", k6Script), "--out", "json="+out, "--summary-trend-stats", "min,p(99),count")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "wrote        "+out) || !strings.Contains(r.stdout, ": min=") || !strings.Contains(r.stdout, " count=12\n") || strings.Contains(r.stdout, "avg=") {
		t.Errorf("stdout %q: want only min, p(99), count, and the file named on stderr", r.stdout)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type line struct {
		Type, Metric string
		Data         struct {
			Name, Type, Contains string
			Thresholds           []string
			Time                 string
			Value                float64
			Tags                 map[string]string
		}
	}
	declared := map[string]line{}
	points := map[string]int{}
	sums := map[string]float64{}
	groups := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		switch l.Type {
		case "Metric":
			if _, ok := declared[l.Metric]; ok || l.Data.Name != l.Metric {
				t.Errorf("metric line %s: twice, or its name differs", sc.Text())
			}
			declared[l.Metric] = l
		case "Point":
			if _, ok := declared[l.Metric]; !ok {
				t.Errorf("point before its metric line: %s", sc.Text())
			}
			if _, err := time.Parse(time.RFC3339Nano, l.Data.Time); err != nil {
				t.Errorf("time %q: %v", l.Data.Time, err)
			}
			points[l.Metric]++
			sums[l.Metric] += l.Data.Value
			if l.Metric == "checks" {
				groups[l.Data.Tags["group"]+"/"+l.Data.Tags["check"]]++
			}
			if l.Metric == "http_req_duration" && (l.Data.Tags["method"] != "GET" || l.Data.Tags["status"] != "200" || l.Data.Tags["scenario"] != "s" || l.Data.Tags["expected_response"] != "true") {
				t.Errorf("http_req_duration tags %v", l.Data.Tags)
			}
		default:
			t.Errorf("line type %q", l.Type)
		}
	}
	if points["http_reqs"] != 12 || points["http_req_duration"] != 12 || points["iterations"] != 12 || points["checks"] != 24 || sums["checks"] != 18 {
		t.Errorf("points %v sums %v", points, sums)
	}
	if groups["/status is 200"] != 12 || groups["::g/even"] != 12 {
		t.Errorf("check points by group %v", groups)
	}
	if d := declared["http_req_duration"].Data; d.Type != "trend" || d.Contains != "time" {
		t.Errorf("http_req_duration declared %+v", d)
	}
	if d := declared["http_reqs"].Data; d.Type != "counter" || len(d.Thresholds) != 1 || d.Thresholds[0] != "count==12" {
		t.Errorf("http_reqs declared %+v", d)
	}
	if d := declared["data_received"].Data; d.Contains != "data" || sums["data_received"] <= 0 {
		t.Errorf("data_received %+v sum %v", d, sums["data_received"])
	}
}
