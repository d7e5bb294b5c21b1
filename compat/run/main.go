// Command run is throttle's k6 compatibility suite: it runs every k6 script
// in compat/scripts with `throttle run` against one loopback server and
// checks what the script's header says k6's documentation implies (exit
// code, iteration, request and check counts, stdout). It prints one PASS or
// FAIL line per script and, last, "N passed, N failed"; it exits 1 if any
// failed. `make compat` runs it from the repository's root; it is not part
// of `make test`, because it measures how far throttle is from k6.
//
// The expectation syntax is in parseSpec (expect.go).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

func main() {
	dir := flag.String("scripts", "compat/scripts", "folder of k6 scripts with their expectations")
	bin := flag.String("throttle", "", "a throttle binary to run (default: build ./cmd/throttle once)")
	only := flag.String("run", "", "run only the scripts whose file name matches this regular expression")
	timeout := flag.Duration("timeout", 30*time.Second, "longest one script may run")
	keep := flag.Bool("keep", false, "keep each script's working folder (stdout, stderr, summary) and print where")
	real := flag.Bool("real", false, "the scripts are third parties' (make compat-real REAL=DIR): also require no refusal line and no crash")
	flag.Parse()
	failed, err := run(*dir, *bin, *only, *timeout, *keep, *real)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		os.Exit(2)
	}
	if failed > 0 {
		os.Exit(1)
	}
}

// run runs the suite and returns how many scripts failed; its deferred
// clean-up (the working folder, the server) runs before main exits.
func run(dir, bin, only string, timeout time.Duration, keep, real bool) (failed int, err error) {
	filter, err := regexp.Compile(only)
	if err != nil {
		return 0, fmt.Errorf("-run: %v", err)
	}
	scripts, err := listScripts(dir, filter)
	if err != nil {
		return 0, err
	}
	if len(scripts) == 0 {
		return 0, fmt.Errorf("no scripts in %s match %q", dir, only)
	}
	work, err := os.MkdirTemp("", "throttle-compat-")
	if err != nil {
		return 0, err
	}
	if !keep {
		defer os.RemoveAll(work)
	}
	if bin == "" {
		bin = filepath.Join(work, "throttle")
		build := exec.Command("go", "build", "-o", bin, "./cmd/throttle")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return 0, fmt.Errorf("building ./cmd/throttle: %v", err)
		}
	} else if bin, err = filepath.Abs(bin); err != nil {
		return 0, err
	}
	srv, err := startTarget()
	if err != nil {
		return 0, fmt.Errorf("starting the loopback server: %v", err)
	}
	defer srv.close()

	passed := 0
	for _, script := range scripts {
		name := filepath.Base(script)
		folder := filepath.Join(work, strings.TrimSuffix(name, filepath.Ext(name)))
		reason := runOne(bin, script, folder, srv, timeout, real)
		if reason == "" {
			passed++
			fmt.Printf("PASS  %s\n", name)
		} else {
			failed++
			fmt.Printf("FAIL  %s: %s\n", name, reason)
		}
	}
	if keep {
		fmt.Fprintf(os.Stderr, "compat: outputs kept in %s\n", work)
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	return failed, nil
}

func listScripts(dir string, filter *regexp.Regexp) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".js" && ext != ".ts") || !filter.MatchString(e.Name()) {
			continue
		}
		abs, err := filepath.Abs(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, abs)
	}
	sort.Strings(out)
	return out, nil
}

// deadProxy is where a request to any non-loopback host would go: nowhere
// (the discard port on loopback, closed). Go's HTTP clients never proxy
// loopback, so the suite's own server is reached directly, while a script or
// a throttle that tried to reach the internet (a remote jslib import, say)
// fails instead of sending traffic off this machine.
const deadProxy = "http://127.0.0.1:9"

// runOne runs one script in its own working folder (handleSummary's files
// land there) and returns "" or why it failed, on one line.
func runOne(bin, script, folder string, srv *target, timeout time.Duration, real bool) string {
	s, err := parseSpec(script)
	if err != nil {
		return "bad expectations: " + err.Error()
	}
	fill := func(words []string) {
		for j, w := range words {
			words[j] = srv.fill(w)
		}
	}
	for i := range s.checks {
		fill(s.checks[i].words)
	}
	fill(s.args)
	fill(s.env)
	for i := range s.rewrites {
		s.rewrites[i][1] = srv.fill(s.rewrites[i][1])
	}
	if real {
		s.checks = append(s.checks, realChecks...)
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return err.Error()
	}
	script, err = instantiate(script, folder, srv, s)
	if err != nil {
		return err.Error()
	}
	export := filepath.Join(folder, "summary-export.json")
	args := append([]string{"run", "-e", "BASE_URL=" + srv.url, "--summary-export", export}, s.args...)
	args = append(args, script)

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = folder
	cmd.Env = append(os.Environ(), "HTTP_PROXY="+deadProxy, "HTTPS_PROXY="+deadProxy, "NO_PROXY=")
	cmd.Env = append(cmd.Env, s.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	srv.reset()
	err = cmd.Run()
	os.WriteFile(filepath.Join(folder, "stdout.txt"), stdout.Bytes(), 0o644)
	os.WriteFile(filepath.Join(folder, "stderr.txt"), stderr.Bytes(), 0o644)
	if ctx.Err() != nil {
		return fmt.Sprintf("timed out after %s%s", timeout, telling(stderr.String()))
	}
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		return "could not run throttle: " + err.Error()
	}
	r := result{folder: folder, code: code, stdout: stdout.String(), stderr: stderr.String(), srv: srv}
	source := export
	if s.source != "" {
		source = filepath.Join(folder, s.source)
	}
	r.sum, r.sumErr = loadSummary(source, s.source != "")
	var problems []string
	for _, e := range s.checks {
		if p := r.judge(e); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) == 0 {
		return ""
	}
	return strings.Join(problems, "; ") + telling(stderr.String())
}

// instantiate returns the script to run: itself, or, when it holds the
// placeholder {{BASE_URL}} (a static import cannot read __ENV) or its spec
// rewrites it, a copy in folder with the server's URL written in and the
// spec's companion files beside it.
func instantiate(script, folder string, srv *target, s spec) (string, error) {
	src, err := os.ReadFile(script)
	if err != nil {
		return "", err
	}
	if !bytes.Contains(src, []byte("{{BASE_URL}}")) && len(s.rewrites) == 0 && len(s.files) == 0 {
		return script, nil
	}
	at := s.at
	if at == "" {
		at = filepath.Base(script)
	}
	copies := map[string][]byte{at: src}
	for _, f := range s.files {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(script), f[0]))
		if err != nil {
			return "", fmt.Errorf("files: %v", err)
		}
		copies[f[1]] = b
	}
	for _, r := range s.rewrites {
		found := false
		for name, b := range copies {
			if bytes.Contains(b, []byte(r[0])) {
				found = true
				copies[name] = bytes.ReplaceAll(b, []byte(r[0]), []byte(r[1]))
			}
		}
		if !found {
			return "", fmt.Errorf("rewrite: %q is in neither the script nor its files", r[0])
		}
	}
	for name, b := range copies {
		out := filepath.Join(folder, name)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return "", err
		}
		if name == at || utf8.Valid(b) {
			b = []byte(srv.fill(string(b)))
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			return "", err
		}
	}
	return filepath.Join(folder, at), nil
}

// realChecks are what every script of the real set (-real) must also meet
// under k6: no line refusing a feature, no crash of the runtime.
var realChecks = []expectation{
	{kind: "stderr", words: []string{"lacks", "not supported"}},
	{kind: "stdout", words: []string{"lacks", "not supported"}},
	{kind: "stderr", words: []string{"lacks", "panic:"}},
	{kind: "stderr", words: []string{"lacks", "goroutine "}},
}

func loadSummary(path string, handle bool) (summary, error) {
	if handle {
		return readHandleSummary(path)
	}
	return readSummaryExport(path)
}

// telling picks the stderr line most likely to say why a run went wrong
// (an error, a failed iteration, a refusal), else the first, quoted and
// shortened, for a failure's one-line reason.
func telling(stderr string) string {
	var first string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if first == "" {
			first = l
		}
		if tellingLine.MatchString(l) {
			first = l
			break
		}
	}
	if first == "" {
		return ""
	}
	if len(first) > 200 {
		first = first[:200] + "…"
	}
	return fmt.Sprintf(" [stderr: %q]", first)
}

var tellingLine = regexp.MustCompile(`(?i)error|fail|not supported|refused|unknown|ignored`)
