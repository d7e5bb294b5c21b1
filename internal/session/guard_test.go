package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/testwait"
)

// panicky is an output whose Point panics on every other point, and whose
// Close panics: the test hook for a buggy output.
type panicky struct{ points, written int }

func (p *panicky) Point(*script.Metric, float64, map[string]string) {
	p.points++
	if p.points%2 == 0 {
		panic("output bug")
	}
	p.written++
}

func (p *panicky) Close() error { panic("close bug") }

type plain struct{ written int }

func (p *plain) Point(*script.Metric, float64, map[string]string) { p.written++ }
func (p *plain) Close() error                                     { return nil }

// A panic in one k6 output is recovered, logged once, counted: the other
// output gets every point and the run goes on; Close says what was lost.
func TestOutputPanicRecovered(t *testing.T) {
	bad, good := &panicky{}, &plain{}
	ws := []pointWriter{bad, good}
	var warned []string
	points := fanOut(ws, func(s string) { warned = append(warned, s) })
	for range 6 {
		points(nil, 1, nil)
	}
	if bad.written != 3 || good.written != 6 {
		t.Fatalf("written %d and %d, want 3 and 6", bad.written, good.written)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "output bug") || !strings.Contains(warned[0], "*session.panicky") {
		t.Fatalf("warned %q: want one line naming the output and the panic", warned)
	}
	if err := ws[0].Close(); err == nil || !strings.Contains(err.Error(), "close bug") {
		t.Fatalf("close: %v", err)
	}
	if err := ws[1].Close(); err != nil {
		t.Fatal(err)
	}
	if unguarded(ws[1]) != good {
		t.Fatal("unguarded does not return the output")
	}
	if err := safely(func() error { return errors.New("plain") }); err == nil || err.Error() != "plain" {
		t.Fatalf("safely changed a plain error: %v", err)
	}
}

// A script whose init context never ends: after InitNotice one line says
// so and how to stop it; the signal then stops it, naming the line it was
// on, with k6's 105.
func TestInitLoopNoticeAndSignal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spin.js")
	if err := os.WriteFile(path, []byte("export const options = { iterations: 1 };\nlet n = 0; console.log('spinning');\nwhile (true) { n++; }\nexport default function () {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	errb := &testwait.Buffer{}
	sig := make(chan os.Signal, 1)
	s := &Session{Stdout: &testwait.Buffer{}, Stderr: errb, Signals: sig, Quiet: true, InitNotice: 20 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- s.RunScript(Script{Path: path}) }()
	// The notice, and the loop begun (on a loaded machine 20 ms can pass
	// before the script's first line runs: the signal would stop it at 1:1).
	testwait.Until(t, testwait.Deadline, "the notice that init still runs, in the loop", func() bool {
		return errb.Contains("init context is still running after 20ms (a top-level loop?): Ctrl-C stops it") && errb.Contains("spinning")
	})
	sig <- os.Interrupt
	err := testwait.Receive(t, done, "the run to end on the signal")
	var ec ExitCode
	if !errors.As(err, &ec) || ec.Code != ExitExternalAbort || !strings.Contains(err.Error(), "spin.js:3") {
		t.Fatalf("err %v: want exit 105 naming spin.js:3", err)
	}
}

// THROTTLE_INIT_TIMEOUT: an init context that never ends is stopped when
// it runs out, one line naming the script line and how to raise it, exit
// 107 (an init error); a bad value is refused before the script runs.
func TestInitTimeoutEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spin.js")
	if err := os.WriteFile(path, []byte("export const options = { iterations: 1 };\nlet n = 0; console.log('spinning');\nwhile (true) { n++; }\nexport default function () {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(InitTimeoutEnv, "300ms")
	s := &Session{Stdout: &testwait.Buffer{}, Stderr: &testwait.Buffer{}, Quiet: true}
	err := s.RunScript(Script{Path: path})
	var ec ExitCode
	if !errors.As(err, &ec) || ec.Code != ExitInitError || !strings.Contains(err.Error(), "spin.js:3") ||
		!strings.Contains(err.Error(), "300ms") || !strings.Contains(err.Error(), InitTimeoutEnv) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err %v: want exit 107 naming spin.js:3, the timeout and %s, one line", err, InitTimeoutEnv)
	}
	t.Setenv(InitTimeoutEnv, "soon")
	if err := s.RunScript(Script{Path: path}); !IsBadInput(err) || !strings.Contains(err.Error(), InitTimeoutEnv) {
		t.Fatalf("err %v: want bad input naming %s", err, InitTimeoutEnv)
	}
}

// A signal while the VUs' init contexts run before setup (the scenarios'
// VUs are made before it, as k6 makes them) ends the run as a signal
// during the script's first init context does: k6's 105, naming the line.
func TestSignalDuringVUInit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spin.js")
	src := "export const options = { vus: 2, duration: '1s' };\nif (__VU > 0) { console.log('spinning ' + __VU); while (true) {} }\nexport default function () {}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	errb := &testwait.Buffer{}
	sig := make(chan os.Signal, 1)
	s := &Session{Stdout: &testwait.Buffer{}, Stderr: errb, Signals: sig}
	done := make(chan error, 1)
	go func() { done <- s.RunScript(Script{Path: path}) }()
	// Both VUs' init contexts run at once (the init slots): the signal is
	// sent once both spin, or the run may name the one that had not yet
	// reached its loop (1:1, seen once under make stress).
	testwait.Until(t, testwait.Deadline, "both VUs' init contexts to spin", func() bool { return errb.Contains("spinning 1", "spinning 2") })
	sig <- os.Interrupt
	err := testwait.Receive(t, done, "the run to end on the signal")
	var ec ExitCode
	if !errors.As(err, &ec) || ec.Code != ExitExternalAbort || !strings.Contains(err.Error(), "spin.js:2") {
		t.Fatalf("err %v: want exit 105 naming spin.js:2", err)
	}
}
