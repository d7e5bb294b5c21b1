// Package session runs one command's load: a URL phase (RunURL) or a k6
// script (RunScript), with what every run shares — the console and its
// movement lines, Ctrl-C handling, the --metrics server, and the report
// written once to stdout and the output files. The command line builds a
// Session and a run's typed configuration from its flags and calls one Run;
// it holds no run logic of its own.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/live"
	"github.com/throttlekit/throttle/internal/phase"
	"github.com/throttlekit/throttle/internal/protoecho"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/target"
)

// BadInput is an error in what the user gave (exit code 2), as opposed to a
// failure of the run (exit code 1).
type BadInput struct{ Err error }

func (b BadInput) Error() string { return b.Err.Error() }
func (b BadInput) Unwrap() error { return b.Err }

// FieldError is bad input in one setting, named as the user wrote it (a
// flag such as "--chart"): it prints as one line, "Field Problem".
type FieldError struct {
	Field, Problem string
}

func (f *FieldError) Error() string { return f.Field + " " + f.Problem }

// Fieldf is a FieldError with a formatted problem.
func Fieldf(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// IsBadInput reports whether err is the user's doing.
func IsBadInput(err error) bool {
	var b BadInput
	var f *FieldError
	return errors.As(err, &b) || errors.As(err, &f)
}

// ThresholdsCrossed is a script run whose thresholds did not all hold: exit
// code 99, as in k6, after every report is written.
type ThresholdsCrossed int

func (n ThresholdsCrossed) Error() string { return fmt.Sprintf("%d threshold(s) crossed", int(n)) }

// Outputs are the report files a run writes (empty: not written).
type Outputs struct {
	// JSON is the report (--out FILE); Timeline its CSV of windows;
	// Chart a .svg, .png or .html chart.
	JSON, Timeline, Chart string
}

// Check refuses, before the run, output paths that cannot be written: a
// typo in a path fails in a second instead of after the run.
func (o Outputs) Check() error {
	if o.Chart != "" {
		if _, err := report.ChartFormatFor(o.Chart); err != nil {
			return Fieldf("--chart", "%s: want a .svg, .png or .html file", o.Chart)
		}
	}
	return CheckPaths(map[string]string{"--out": o.JSON, "--timeline": o.Timeline, "--chart": o.Chart})
}

// CheckPaths refuses output files (by the flag that names them) whose
// directory does not exist or that are directories.
func CheckPaths(files map[string]string) error {
	flags := make([]string, 0, len(files))
	for flag := range files {
		flags = append(flags, flag)
	}
	sort.Strings(flags) // the first problem is the same on every run
	for _, flag := range flags {
		path := files[flag]
		if path == "" {
			continue
		}
		name := strings.TrimSuffix(flag, "=") // "--out json=" names --out json
		dir := filepath.Dir(path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return Fieldf(name, "%s: directory %s does not exist", path, dir)
		}
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return Fieldf(name, "%s is a directory", path)
		}
		if err := writable(path); err != nil {
			return Fieldf(name, "%s: cannot write in %s (%v)", path, dir, errors.Unwrap(err))
		}
	}
	return nil
}

// writable tries what writing the file at path does — a temporary file in
// its folder, renamed over it at the end; for a path that exists and is not
// a regular file (a device, a pipe), opening it for writing — so that a
// read-only place is refused before the run, not after it with the report
// lost.
func writable(path string) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".throttle-check-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// Session is one command's run: where it writes, how much it says, its
// signals, its metrics server and its report files.
type Session struct {
	Stdout, Stderr io.Writer
	// StdoutTTY and StderrTTY say whether they are terminals (the live
	// status line; a script's handleSummary data).
	StdoutTTY, StderrTTY bool
	// Signals delivers SIGINT/SIGTERM: the first stops the run gracefully,
	// the second aborts what is in flight. nil: no signals.
	Signals <-chan os.Signal
	// Quiet: no live view or movement lines; Verbose: the governor's holds
	// too.
	Quiet, Verbose bool
	Outputs        Outputs
	// Metrics serves --metrics (nil or zero: none).
	Metrics *Metrics
	// InitNotice is how long a script's init context runs before one line
	// says it still runs and how to stop it (default DefaultInitNotice).
	InitNotice time.Duration
	// Started, if set, is handed a URL run's engine before it runs (tests
	// compare what the run exports with the engine's own state).
	Started func(*engine.Engine)
	// Finished, if set, is handed a URL run's result before its report
	// is written (the fault suite checks the report against it).
	Finished func(*engine.Result)

	con *live.Console
	// spooled, set by tests only, is handed a run's timeline spool once
	// the run ends (before the report is written from it).
	spooled func(*report.Spool)
}

// console is the session's console on stderr, made once.
func (s *Session) console() *live.Console {
	if s.con == nil {
		s.con = live.NewConsole(s.Stderr, s.StderrTTY)
	}
	return s.con
}

// logger prints the governor's movement lines (and, at or above quietLevel
// when quiet, nothing below it) on the console.
func (s *Session) logger(quietLevel slog.Level) *slog.Logger {
	level := slog.LevelInfo
	switch {
	case s.Quiet:
		level = quietLevel
	case s.Verbose:
		level = slog.LevelDebug
	}
	return slog.New(live.NewHandler(s.console(), level))
}

// metrics is the session's metrics server, never nil.
func (s *Session) metrics() *Metrics {
	if s.Metrics == nil {
		s.Metrics = &Metrics{}
	}
	return s.Metrics
}

// writeFiles writes the report files the outputs name (the JSON with
// saveJSON, the timeline and chart of r) and says so on w; it tries each
// and returns the first failure, saying the later ones on w.
func (s *Session) writeFiles(w io.Writer, r *report.Report, saveJSON func(string) error) error {
	var first error
	for _, o := range []struct {
		path string
		save func(string) error
	}{{s.Outputs.JSON, saveJSON}, {s.Outputs.Timeline, r.SaveCSV}, {s.Outputs.Chart, r.SaveChart}} {
		if o.path == "" {
			continue
		}
		err := safely(func() error { return o.save(o.path) })
		if errors.Is(err, report.ErrNoWindows) {
			// A run that closed no window (cut short, or no attempt ever
			// resolved) has no chart to draw; the report says why, and
			// the run's exit is its own, not this file's.
			fmt.Fprintf(w, "not written  %s: no window closed, nothing to chart\n", o.path)
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), "writing "+o.path) {
				err = fmt.Errorf("writing %s: %w", o.path, err)
			}
			if first == nil {
				first = err
			} else {
				fmt.Fprintf(w, "not written  %v\n", err) // the first is the run's error
			}
			continue
		}
		fmt.Fprintf(w, "wrote        %s\n", o.path)
	}
	return first
}

// countsInto fills a report input's counts from a phase's counters.
func countsInto(in *report.Input, c engine.Counts) {
	in.Attempts = report.Attempts{
		OK:        c.Classes[engine.ClassOK],
		Refused:   c.Classes[engine.ClassRefused],
		Reset:     c.Classes[engine.ClassReset],
		Timeout:   c.Classes[engine.ClassTimeout],
		Status5xx: c.Classes[engine.Class5xx],
		Status429: c.Classes[engine.Class429],
		Other:     c.Classes[engine.ClassOther],
		Slow:      c.Classes[engine.ClassSlow],
		DNS:       c.Classes[engine.ClassDNS],
		TLS:       c.Classes[engine.ClassTLS],
	}
	in.Iterations = report.Iterations{OK: c.IterOK, Failed: c.IterFailed}
	in.Dropped, in.Missed, in.Aborted = c.Dropped, c.Missed, c.Aborted
	in.ReadDelay.Sum, in.ReadDelay.Max, in.ReadDelay.N = c.ReadDelay.Sum, c.ReadDelay.Max, c.ReadDelay.N
}

// earlierOf is the report's view of the windows a phase no longer holds.
func earlierOf(e phase.Earlier) report.Earlier {
	out := report.Earlier{Windows: e.Windows, Saturated: e.Saturated, First: e.First}
	for _, o := range e.Outages {
		out.Outages = append(out.Outages, [2]time.Time{o.Start, o.End})
	}
	return out
}

// generatorOf is the report's view of a phase's watch of itself.
func generatorOf(g engine.GeneratorSummary) report.Generator {
	return report.Generator{Ticks: g.Ticks, SaturatedTicks: g.SaturatedTicks, Rate: g.Rate, Signals: g.Signals, MaxWait: g.MaxWait, MaxReadDelay: g.MaxReadDelay}
}

// ServeBuiltin starts the built-in target on a loopback port (demo), its
// counters exported under phase with --metrics (started here, before any
// traffic); stop shuts the target down.
func (s *Session) ServeBuiltin(tc target.Config, phase string) (srv *target.Server, stop func(), err error) {
	tg, err := s.builtin(tc, phase)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err = target.Serve(ctx, "", tg, target.WithShutdownGrace(time.Second))
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("starting the built-in target: %w", err)
	}
	return srv, func() {
		cancel()
		_ = srv.Wait()
	}, nil
}

// ServeScriptTarget starts the built-in target for demo --script: over
// HTTP (addr is its URL) or, with grpc, as the Echo gRPC service (with
// reflection and health) whose calls pass through the target's model
// (protoecho.Gate: shed is RESOURCE_EXHAUSTED), addr its host:port.
func (s *Session) ServeScriptTarget(tc target.Config, phase string, grpc bool) (addr string, stop func(), err error) {
	if !grpc {
		srv, stop, err := s.ServeBuiltin(tc, phase)
		if err != nil {
			return "", nil, err
		}
		return srv.URL(), stop, nil
	}
	tg, err := s.builtin(tc, phase)
	if err != nil {
		return "", nil, err
	}
	return protoecho.ServeGated(tg)
}

// builtin makes the built-in target and exports its counters under phase.
func (s *Session) builtin(tc target.Config, phase string) (*target.Target, error) {
	tg, err := target.New(tc)
	if err != nil {
		return nil, BadInput{err}
	}
	if err := s.metrics().Start(s.Stderr); err != nil {
		return nil, err
	}
	if err := s.Metrics.AddTarget(phase, tg); err != nil {
		return nil, err
	}
	return tg, nil
}
