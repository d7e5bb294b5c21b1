package session

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSplitOuts(t *testing.T) {
	report, k6, err := SplitOuts([]string{"json=a.json", "r.json", "csv=b.csv"})
	if err != nil || report != "r.json" || strings.Join(k6, " ") != "json=a.json csv=b.csv" {
		t.Errorf("report %q, k6 %q, %v", report, k6, err)
	}
	for _, bad := range [][]string{{"influxdb=http://x"}, {"web-dashboard"}, {"csv="}, {"a.json", "b.json"}} {
		if _, _, err := SplitOuts(bad); err == nil || !strings.HasPrefix(err.Error(), "--out ") {
			t.Errorf("%q: %v, want a one-line --out error", bad, err)
		}
	}
}

// TestConsoleLine: console output in k6's (logrus text) shape.
func TestConsoleLine(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		level slog.Level
		msg   string
		want  string
	}{
		{slog.LevelInfo, "hello compat", `time="2026-01-02T03:04:05Z" level=info msg="hello compat" source=console`},
		{slog.LevelWarn, "plain", `time="2026-01-02T03:04:05Z" level=warning msg=plain source=console`},
		{slog.LevelError, `say "x"`, `time="2026-01-02T03:04:05Z" level=error msg="say \"x\"" source=console`},
		{slog.LevelDebug, "", `time="2026-01-02T03:04:05Z" level=debug msg= source=console`},
	} {
		if got := consoleLine(now, c.level, c.msg); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
	want := `time="2026-01-02T03:04:05Z" level=error msg="Error: boom at default (s.js:3:9(4))" executor=per-vu-iterations scenario=default source=stacktrace`
	if got := exceptionLine(now, "default", "per-vu-iterations", "Error: boom at default (s.js:3:9(4))"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestOpenOutsCSV: csv=FILE writes k6's CSV header, and a second output
// does not replace the first.
func TestOpenOutsCSV(t *testing.T) {
	dir := t.TempDir()
	c, j := filepath.Join(dir, "m.csv"), filepath.Join(dir, "m.json")
	ws, names, err := openOuts([]string{"csv=" + c, "json=" + j})
	if err != nil || len(ws) != 2 || names[0] != c || names[1] != j {
		t.Fatalf("%v %v %v", ws, names, err)
	}
	for _, w := range ws {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(c)
	want := "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n"
	if err != nil || string(b) != want {
		t.Errorf("csv %q, %v", b, err)
	}
	if _, err := os.Stat(j); err != nil {
		t.Errorf("the json output beside it: %v", err)
	}
	if _, _, err := openOuts([]string{"csv=" + filepath.Join(dir, "no", "x.csv")}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a folder that does not exist: %v", err)
	}
}
