// Command throttle finds an HTTP target's capacity at a declared failure
// bound by governing the load instead of just generating it.
//
//	throttle run --rate 5000 http://127.0.0.1:8080/   # govern a rate phase
//	throttle demo                                      # against a built-in target
//	throttle target --capacity 800                     # the built-in target alone
//	throttle version
//
// Exit codes: 0 success, 1 a runtime failure, 2 bad input (an invalid flag
// value, conflicting flags, an unreadable targets file, ...), and k6's
// codes for a k6 script: 99 thresholds crossed, 105 interrupted by a
// signal (a URL run: a second signal that cut attempts off), 107 an
// exception in the init context, 108 exec.test.abort(), 110
// exec.test.fail(). Bad input is
// one line on stderr, "throttle: <problem>", never a stack trace.
package main

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/session"
)

func main() {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	os.Exit(run(os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, signals: sig, reexec: reexecWithTimerSlack}))
}

// env is what a command reaches outside itself: tests pass buffers and their
// own signal channel.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// signals delivers SIGINT/SIGTERM: the first stops the phase gracefully,
	// the second aborts what is in flight. nil: no signals.
	signals <-chan os.Signal
	// started, if set, is handed each phase's engine before it runs, so a
	// test can compare what the run exports with the engine's own state.
	started func(*engine.Engine)
	// reexec, if set, runs this program again in this process with the
	// given timer slack on every thread (reexecWithTimerSlack), for a k6
	// script run on this machine; it returns only when it did not. main
	// sets it; tests, which run commands in the test binary, do not.
	reexec func(slack time.Duration) error
}

// terminal reports whether w is a terminal, for the live status line.
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// helpTexts are the commands' long help, kept as text beside the code.
//
//go:embed help/*.txt
var helpTexts embed.FS

// helpText is the long help of the command name.
func helpText(name string) string {
	b, err := helpTexts.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // embedded at build time: a missing file is a build mistake
	}
	return strings.TrimSpace(string(b))
}

// usageError is bad input: exit code 2.
type usageError = session.BadInput

// usagef returns a usage error.
func usagef(format string, args ...any) error {
	return usageError{Err: fmt.Errorf(format, args...)}
}

// session is where a command's run writes, for the flags' view settings.
func (e env) session(quiet, verbose bool, out session.Outputs, m *session.Metrics) *session.Session {
	return &session.Session{Stdout: e.stdout, Stderr: e.stderr, StdoutTTY: terminal(e.stdout), StderrTTY: terminal(e.stderr),
		Signals: e.signals, Quiet: quiet, Verbose: verbose, Outputs: out, Metrics: m, Started: e.started}
}

// run runs the command line args and returns the exit code.
func run(args []string, e env) int {
	stopProfiles, err := startProfiles(e.stderr)
	if err != nil {
		fmt.Fprintf(e.stderr, "throttle: %s\n", err)
		return 2
	}
	defer stopProfiles()
	root := newRoot(e)
	root.SetArgs(args)
	err = root.Execute()
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintf(e.stderr, "throttle: %s\n", msg)
	if session.IsBadInput(err) || isCobraUsage(err) {
		return 2
	}
	var th session.ThresholdsCrossed
	if errors.As(err, &th) {
		return 99
	}
	var ec session.ExitCode
	if errors.As(err, &ec) {
		return ec.Code
	}
	return 1
}

// flagError words a flag's parse error in the user's terms: a number that
// does not parse says why (invalid syntax, out of range), without the Go
// parser's name.
func flagError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return err
	}
	cause := iv.Unwrap()
	var num *strconv.NumError
	if errors.As(cause, &num) {
		cause = num.Err
	}
	name := "--" + iv.GetFlag().Name
	if sh := iv.GetFlag().Shorthand; sh != "" {
		name = "-" + sh + ", " + name
	}
	return fmt.Errorf("invalid argument %q for %q flag: %v", iv.GetValue(), name, cause)
}

// isCobraUsage recognises the one error cobra itself returns for a bad
// command line without typing it: an unknown command (an extra argument to a
// command that takes none reads so too). Flag errors arrive typed through the
// flag error func.
func isCobraUsage(err error) bool {
	m := err.Error()
	return strings.HasPrefix(m, "unknown command ")
}

func newRoot(e env) *cobra.Command {
	root := &cobra.Command{
		Use:   "throttle",
		Short: "Find an HTTP target's capacity at a declared failure bound",
		Long:  helpText("root"),
		Example: `  throttle demo                                   # see it find a built-in target's capacity
  throttle run --rate 5000 http://127.0.0.1:8080/  # govern an open-loop phase up to 5000 req/s
  throttle run --concurrency 64 --targets targets.txt --out report.json
  throttle target --capacity 800 --model collapse  # a target to experiment with`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{Err: flagError(err)} })
	root.AddCommand(newRunCmd(e), newAgentCmd(e), newDemoCmd(e), newTargetCmd(e), newVersionCmd(e))
	return root
}
