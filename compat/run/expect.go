package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// spec is what one script's header comment says k6 would do with it, and
// how to run it.
type spec struct {
	args   []string // extra command-line arguments, before the script
	env    []string // extra KEY=VALUE process environment
	source string   // "" for --summary-export, else a handleSummary JSON file (k6's data object)
	checks []expectation
	// rewrites are FROM -> TO substitutions made in a copy of the script
	// before it runs (a vendored script's hard-coded target URL pointed at
	// the loopback server); files are the script's companions (data it
	// open()s) copied beside that copy.
	rewrites [][2]string
	files    [][2]string // SRC (under the script's folder) -> DEST (under the run's folder)
	at       string      // where the copy goes under the run's folder ("" for its base name)
}

// headerEnd ends the directives of a third party's script (-real): what
// follows is the third party's file as published, whose own comments are
// never read as directives.
const headerEnd = "// ---- end of throttle header ----"

// expectation is one "// expect ..." line.
type expectation struct {
	line  int
	kind  string   // exit, metric, nometric, check, group, threshold, stdout, stderr, file, server, distinct
	words []string // the directive's operands, quotes removed
	want  bound    // for counted kinds
}

// bound is an exact number or an inclusive range A..B.
type bound struct{ lo, hi float64 }

func (b bound) holds(v float64) bool {
	const eps = 1e-9
	return v >= b.lo-eps && v <= b.hi+eps
}

func (b bound) String() string {
	if b.lo == b.hi {
		return formatNumber(b.lo)
	}
	return formatNumber(b.lo) + ".." + formatNumber(b.hi)
}

func formatNumber(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func parseBound(s string) (bound, error) {
	if lo, hi, ok := strings.Cut(s, ".."); ok {
		l, err1 := strconv.ParseFloat(lo, 64)
		h, err2 := strconv.ParseFloat(hi, 64)
		if err1 != nil || err2 != nil || l > h {
			return bound{}, fmt.Errorf("bad range %q (want A..B with A <= B)", s)
		}
		return bound{l, h}, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return bound{}, fmt.Errorf("bad number %q", s)
	}
	return bound{v, v}, nil
}

// operands says, per directive, how many operands it takes and which one (if
// any, counted from 0) is a bound.
var operands = map[string]struct{ n, boundAt int }{
	"exit":      {1, 0},  // exit CODE
	"metric":    {3, 2},  // metric NAME STAT N|A..B
	"nometric":  {1, -1}, // nometric NAME
	"check":     {3, -1}, // check "NAME" PASSES FAILS (each N or A..B)
	"group":     {1, -1}, // group "NAME"
	"threshold": {3, -1}, // threshold METRIC "EXPR" ok|crossed
	"stdout":    {2, -1}, // stdout contains|lacks "TEXT", stdout lines N
	"stderr":    {2, -1}, // stderr contains|lacks "TEXT", stderr lines N
	"file":      {3, -1}, // file NAME contains|lacks "TEXT"
	"server":    {2, 1},  // server PATH N|A..B: requests the server got on PATH
	"distinct":  {2, 1},  // distinct PATH N|A..B: distinct query strings on PATH
}

// parseSpec reads a script's directive comments (other comments are prose):
//
//	// expect: DIRECTIVE OPERANDS...     (see operands)
//	// args: ARG...                      (extra flags for throttle run)
//	// env: KEY=VALUE...                 (extra process environment)
//	// summary: handleSummary FILE       (counts from handleSummary's JSON file)
//	// rewrite: FROM TO                  (replace FROM by TO in a copy of the script)
//	// files: SRC[=DEST]...              (companions, SRC under the script's folder,
//	                                        copied to DEST under the run's folder; rewritten too)
//	// at: PATH                          (the copy's path under the run's folder, for
//	                                        a script whose relative imports need its tree)
//
// A line equal to headerEnd stops the reading.
// Operands are separated by spaces; "double quotes" hold spaces (Go escapes).
// {{BASE_URL}} in a script or an operand is the loopback server's URL.
func parseSpec(path string) (spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return spec{}, err
	}
	defer f.Close()
	var s spec
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == headerEnd {
			break
		}
		directive, rest, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		directive, isComment := strings.CutPrefix(directive, "// ")
		if !ok || !isComment {
			continue
		}
		switch directive {
		case "expect", "args", "env", "summary", "rewrite", "files", "at":
		default:
			continue
		}
		words, err := splitWords(rest)
		if err != nil {
			return spec{}, fmt.Errorf("line %d: %v", n, err)
		}
		switch directive {
		case "args":
			s.args = append(s.args, words...)
		case "env":
			for _, kv := range words {
				if !strings.Contains(kv, "=") {
					return spec{}, fmt.Errorf("line %d: env %q is not KEY=VALUE", n, kv)
				}
			}
			s.env = append(s.env, words...)
		case "rewrite":
			if len(words) != 2 || words[0] == "" {
				return spec{}, fmt.Errorf("line %d: want \"rewrite: FROM TO\"", n)
			}
			s.rewrites = append(s.rewrites, [2]string{words[0], words[1]})
		case "files":
			for _, f := range words {
				src, dst, ok := strings.Cut(f, "=")
				if !ok {
					dst = src
				}
				if !local(src) || !local(dst) {
					return spec{}, fmt.Errorf("line %d: files: %q is not a path under the folder", n, f)
				}
				s.files = append(s.files, [2]string{src, dst})
			}
		case "at":
			if len(words) != 1 || !local(words[0]) {
				return spec{}, fmt.Errorf("line %d: want \"at: PATH\" (a relative path)", n)
			}
			s.at = words[0]
		case "summary":
			if len(words) != 2 || words[0] != "handleSummary" {
				return spec{}, fmt.Errorf("line %d: want \"summary: handleSummary FILE\"", n)
			}
			s.source = words[1]
		case "expect":
			e, err := parseExpectation(words)
			if err != nil {
				return spec{}, fmt.Errorf("line %d: %v", n, err)
			}
			e.line = n
			s.checks = append(s.checks, e)
		}
	}
	if err := sc.Err(); err != nil {
		return spec{}, err
	}
	hasExit := false
	for _, e := range s.checks {
		hasExit = hasExit || e.kind == "exit"
	}
	if !hasExit {
		return spec{}, fmt.Errorf("no \"// expect: exit CODE\" line")
	}
	return s, nil
}

func parseExpectation(words []string) (expectation, error) {
	if len(words) == 0 {
		return expectation{}, fmt.Errorf("empty expect line")
	}
	kind, ops := words[0], words[1:]
	shape, ok := operands[kind]
	if !ok {
		return expectation{}, fmt.Errorf("unknown directive %q", kind)
	}
	if len(ops) != shape.n {
		return expectation{}, fmt.Errorf("%s takes %d operands, got %d", kind, shape.n, len(ops))
	}
	e := expectation{kind: kind, words: ops}
	if shape.boundAt >= 0 {
		b, err := parseBound(ops[shape.boundAt])
		if err != nil {
			return expectation{}, fmt.Errorf("%s: %v", kind, err)
		}
		e.want = b
	}
	switch kind {
	case "check":
		for _, w := range ops[1:] {
			if _, err := parseBound(w); err != nil {
				return expectation{}, fmt.Errorf("check: %v", err)
			}
		}
	case "threshold":
		if ops[2] != "ok" && ops[2] != "crossed" {
			return expectation{}, fmt.Errorf("threshold: want ok or crossed, got %q", ops[2])
		}
	case "stdout", "stderr":
		switch ops[0] {
		case "contains", "lacks":
		case "lines":
			if _, err := parseBound(ops[1]); err != nil {
				return expectation{}, fmt.Errorf("%s lines: %v", kind, err)
			}
		default:
			return expectation{}, fmt.Errorf("%s: want contains, lacks or lines, got %q", kind, ops[0])
		}
	case "file":
		if ops[1] != "contains" && ops[1] != "lacks" {
			return expectation{}, fmt.Errorf("file: want contains or lacks, got %q", ops[1])
		}
	}
	return e, nil
}

// splitWords splits on spaces, keeping "quoted strings" (Go syntax) whole.
func splitWords(s string) ([]string, error) {
	var words []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return words, nil
		}
		if s[0] != '"' {
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			words = append(words, s[:end])
			s = s[end:]
			continue
		}
		end := 1
		for end < len(s) && s[end] != '"' {
			if s[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(s) {
			return nil, fmt.Errorf("unterminated quote in %q", s)
		}
		w, err := strconv.Unquote(s[:end+1])
		if err != nil {
			return nil, fmt.Errorf("bad quoted string %s: %v", s[:end+1], err)
		}
		words = append(words, w)
		s = s[end+1:]
	}
}

// local reports whether p is a relative path that stays under its folder.
func local(p string) bool { return p != "" && filepath.IsLocal(p) }
