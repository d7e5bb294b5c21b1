package session

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/script/k6out"
	"github.com/throttlekit/throttle/internal/script/options"
)

// ExitCode is a script run's outcome that k6 gives an exit code of its own:
// 105 a run interrupted by a signal (Ctrl-C, SIGTERM; a URL run only when a
// second one aborted attempts in flight), 107 an exception in the init
// context, 108 exec.test.abort(), 110 exec.test.fail().
type ExitCode struct {
	Code int
	Err  error
}

func (e ExitCode) Error() string { return e.Err.Error() }
func (e ExitCode) Unwrap() error { return e.Err }

// k6's exit codes for a script run.
const (
	ExitExternalAbort  = 105
	ExitInitError      = 107
	ExitScriptAborted  = 108
	ExitMarkedAsFailed = 110
)

// k6Outputs are the k6 outputs --out names, made before the run.
var k6Outputs = map[string]bool{"json": true, "csv": true}

// SplitOuts sorts the --out values: json=FILE and csv=FILE are k6's outputs
// of a script, a bare FILE is throttle's JSON report (one at most); any
// other k6 output (influxdb=, web-dashboard, cloud, …) is refused by name.
func SplitOuts(outs []string) (report string, k6 []string, err error) {
	for _, o := range outs {
		name, file, hasFile := strings.Cut(o, "=")
		switch {
		case k6Outputs[name] && hasFile && file != "":
			k6 = append(k6, o)
		case k6Outputs[name]:
			return "", nil, Fieldf("--out", "%s: give a file, as %s=FILE", o, name)
		case hasFile || !strings.ContainsAny(o, "./\\") && knownK6Output(o):
			return "", nil, Fieldf("--out", "%s: not supported by throttle: its k6 outputs are json=FILE and csv=FILE (a bare FILE is throttle's JSON report)", o)
		case report != "":
			return "", nil, Fieldf("--out", "%s: one report file at most (already %s)", o, report)
		default:
			report = o
		}
	}
	return report, k6, nil
}

// knownK6Output reports whether a bare --out value names one of k6's
// outputs rather than a file.
func knownK6Output(name string) bool {
	switch name {
	case "cloud", "influxdb", "statsd", "datadog", "kafka", "web-dashboard", "experimental-prometheus-rw", "opentelemetry", "xk6-influxdb":
		return true
	}
	return false
}

// pointWriter is one open k6 output.
type pointWriter interface {
	Point(m *script.Metric, v float64, tags map[string]string)
	Close() error
}

// openOuts opens the k6 outputs before the run; the caller closes them.
func openOuts(outs []string) ([]pointWriter, []string, error) {
	var ws []pointWriter
	var names []string
	for _, o := range outs {
		name, file, _ := strings.Cut(o, "=")
		var w pointWriter
		err := CheckPaths(map[string]string{"--out " + name + "=": file})
		switch {
		case err != nil:
		case name == "json":
			w, err = k6out.OpenJSON(file)
		case name == "csv":
			w, err = k6out.OpenCSV(file)
		}
		if err != nil {
			for _, w := range ws {
				_ = w.Close()
			}
			var fe *FieldError
			if errors.As(err, &fe) {
				return nil, nil, err
			}
			return nil, nil, Fieldf("--out", "%s: %v", o, err)
		}
		ws, names = append(ws, w), append(names, file)
	}
	return ws, names, nil
}

// fanOut is Config.Points for every output. Each is guarded: a panic in
// one is recovered, logged once on warn and counted, and the run goes on.
func fanOut(ws []pointWriter, warn func(string)) func(m *script.Metric, v float64, tags map[string]string) {
	for i, w := range ws {
		ws[i] = &guarded{w: w, warn: warn}
	}
	if len(ws) == 0 {
		return nil
	}
	if len(ws) == 1 {
		return ws[0].Point
	}
	return func(m *script.Metric, v float64, tags map[string]string) {
		for _, w := range ws {
			w.Point(m, v, tags)
		}
	}
}

// consoleLine is a console.log line as k6 prints it on stderr, in logrus's
// text format: time="…" level=info msg="…" source=console.
func consoleLine(now time.Time, level slog.Level, msg string) string {
	name := "info"
	switch {
	case level >= slog.LevelError:
		name = "error"
	case level >= slog.LevelWarn:
		name = "warning"
	case level < slog.LevelInfo:
		name = "debug"
	}
	return fmt.Sprintf("time=%s level=%s msg=%s source=console", logValue(now.Format(time.RFC3339)), name, logValue(msg))
}

// exceptionLine is an iteration's uncaught exception as k6 logs it:
// time="…" level=error msg="…" executor=… scenario=… source=stacktrace.
func exceptionLine(now time.Time, scenario, executor, msg string) string {
	return fmt.Sprintf("time=%s level=error msg=%s executor=%s scenario=%s source=stacktrace",
		logValue(now.Format(time.RFC3339)), logValue(msg), logValue(executor), logValue(scenario))
}

// logValue quotes a value as logrus's text formatter does: only when it
// holds a character outside [A-Za-z0-9-._/@^+].
func logValue(s string) string {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-._/@^+", c)) {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}

// initError is an exception in the script's init context: k6's 107.
func initError(err error) error {
	var ie *script.InitError
	if errors.As(err, &ie) {
		if errors.Is(err, script.ErrInitTimeout) {
			err = fmt.Errorf("%w (%s=5m raises it, 0 lifts it)", err, InitTimeoutEnv)
		}
		return ExitCode{Code: ExitInitError, Err: err}
	}
	return nil
}

// K6Source is what the command line gives a script run besides its own
// flags: the k6 flags given, in order ({flag, value}), the -e KEY=VALUE
// pairs, --out and --summary-export.
type K6Source struct {
	Given         [][2]string
	EnvPairs      []string
	Outs          []string
	SummaryExport string
}

// K6Config fills cfg's k6 options (the flags, then the K6_* variables of
// the process), __ENV (-e over the process environment) and returns the
// k6 outputs and summary export in force: the command line's replace the
// variables', as k6's precedence has it. Every problem is bad input.
func K6Config(src K6Source, cfg *script.Config) (outs []string, export string, err error) {
	for _, g := range src.Given {
		if err := cfg.CLIOptions.Set(g[0], g[1]); err != nil {
			return nil, "", BadInput{err}
		}
	}
	environ := os.Environ()
	if cfg.EnvOptions, err = options.FromEnv(environ); err != nil {
		return nil, "", BadInput{err}
	}
	if cfg.Env == nil {
		cfg.Env = map[string]string{}
	}
	for _, kv := range src.EnvPairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, "", BadInput{fmt.Errorf("-e %q: want KEY=VALUE", kv)}
		}
		cfg.Env[k] = v
	}
	cfg.SystemEnv = map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			cfg.SystemEnv[k] = v
		}
	}
	if outs = src.Outs; len(outs) == 0 {
		outs = cfg.EnvOptions.Out
	}
	if _, outs, err = SplitOuts(outs); err != nil {
		return nil, "", err
	}
	if export = src.SummaryExport; export == "" && cfg.EnvOptions.SummaryExport != nil {
		export = *cfg.EnvOptions.SummaryExport
	}
	return outs, export, nil
}

// IsScript reports whether a run argument names a k6 script rather than a
// URL.
func IsScript(arg string) bool {
	if strings.Contains(arg, "://") {
		return false
	}
	switch strings.ToLower(filepath.Ext(arg)) {
	case ".js", ".mjs", ".ts":
		return true
	}
	return false
}
