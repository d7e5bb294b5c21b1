package session

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/throttlekit/throttle/internal/script"
)

// Redacted stands in for a secret in throttle's outputs and logs.
const Redacted = "[redacted]"

// secretName is an -e variable whose value is a secret, by its name, as
// credentials are usually named: TOKEN, API_KEY, PASSWORD, SECRET, AUTH,
// COOKIE, SESSION, CREDENTIALS, PRIVATE_KEY …
var secretName = regexp.MustCompile(`(?i)token|secret|passw|pwd|api_?key|auth|cookie|session|credential|private|signature|(^|_)key($|_)`)

// minSecret is the shortest value redacted: shorter ones (a "1", a "yes")
// would blank out unrelated text and protect nothing.
const minSecret = 4

// redactor blanks the values of secret -e variables out of what throttle
// itself writes: the k6 JSON and CSV outputs' tags (a URL holding an API
// key), its log lines and the scripts' exception lines. What the script
// prints itself (console.log, handleSummary's files) is the script's
// business and is left as it is.
type redactor struct {
	secrets []string
	r       *strings.Replacer
}

// newRedactor is the redactor for env (-e KEY=VALUE); nil when no
// variable names a secret.
func newRedactor(env map[string]string) *redactor {
	var secrets []string
	for k, v := range env {
		if secretName.MatchString(k) && len(v) >= minSecret {
			secrets = append(secrets, v)
		}
	}
	if len(secrets) == 0 {
		return nil
	}
	// Longest first: a secret holding another is blanked whole.
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, Redacted)
	}
	return &redactor{secrets: secrets, r: strings.NewReplacer(pairs...)}
}

// holds reports whether s holds a secret.
func (r *redactor) holds(s string) bool {
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			return true
		}
	}
	return false
}

// String is s with every secret blanked (s itself when it holds none).
func (r *redactor) String(s string) string {
	if r == nil || !r.holds(s) {
		return s
	}
	return r.r.Replace(s)
}

// Points wraps a k6 output's Points so that no tag value carries a secret
// (a copy of the tags is made only for a point whose tags hold one).
func (r *redactor) Points(points func(m *script.Metric, v float64, tags map[string]string)) func(m *script.Metric, v float64, tags map[string]string) {
	if r == nil || points == nil {
		return points
	}
	return func(m *script.Metric, v float64, tags map[string]string) {
		for _, val := range tags {
			if r.holds(val) {
				clean := make(map[string]string, len(tags))
				for k, val := range tags {
					clean[k] = r.String(val)
				}
				tags = clean
				break
			}
		}
		points(m, v, tags)
	}
}

// Handler wraps a log handler so that no message or string attribute it
// writes carries a secret.
func (r *redactor) Handler(h slog.Handler) slog.Handler {
	if r == nil {
		return h
	}
	return redactHandler{h, r}
}

type redactHandler struct {
	inner slog.Handler
	r     *redactor
}

func (h redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = h.attr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.r.String(err.Error()))
		}
	}
	return a
}

func (h redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = h.attr(a)
	}
	return redactHandler{h.inner.WithAttrs(clean), h.r}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{h.inner.WithGroup(name), h.r}
}

// reads lists what a script read (its modules, open()'s files, remote
// modules), each once, in order: said on a verbose line as it is read and
// listed in one line at the end of the run.
type reads struct {
	mu    sync.Mutex
	items []string
	// outside: the script read something besides its own modules — a
	// file with open() or a module from the network — which every run
	// says, not only a governed or verbose one.
	outside bool
}

// hook is script.Config.Read: with verbose, a line per read.
func (rd *reads) hook(verbose bool, line func(string), red *redactor) func(kind, name string, n int) {
	return func(kind, name string, n int) {
		if u, err := url.Parse(name); err == nil && u.User != nil {
			name = u.Redacted() // a password in a module's URL
		}
		item := red.String(fmt.Sprintf("%s (%s, %s)", name, kind, byteSize(n)))
		rd.mu.Lock()
		rd.items = append(rd.items, item)
		rd.outside = rd.outside || kind == "open" || strings.Contains(kind, "remote")
		rd.mu.Unlock()
		if verbose {
			line("read         " + item)
		}
	}
}

// line is the end-of-run list, "" when nothing was read; all says
// whether it is wanted when the script read only its own modules.
func (rd *reads) line(all bool) string {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if len(rd.items) == 0 || !all && !rd.outside {
		return ""
	}
	return "read         " + strings.Join(rd.items, "; ")
}

// byteSize is n bytes for a person: 812 B, 4.2 kB, 31.0 MB.
func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// credentialHeaders are the headers whose values an --http-debug dump
// blanks: what they carry is a credential whatever the script is.
var credentialHeaders = []string{"authorization:", "proxy-authorization:", "cookie:", "set-cookie:"}

// dump is an --http-debug dump with the values of credentialHeaders and
// every secret -e value blanked: the dump is throttle's log, not the
// script's print.
func (r *redactor) dump(d string) string {
	lines := strings.Split(d, "\n")
	for i, l := range lines {
		low := strings.ToLower(strings.TrimLeft(l, " \t"))
		for _, h := range credentialHeaders {
			if strings.HasPrefix(low, h) {
				cut := len(l) - len(low) + len(h)
				lines[i] = l[:cut] + " " + Redacted
				break
			}
		}
	}
	return r.String(strings.Join(lines, "\n"))
}
