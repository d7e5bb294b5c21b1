// Package jslib ships the jslib.k6.io libraries real k6 suites import by
// URL, so that they run with no network: an import of
// https://jslib.k6.io/<library>/<any version>/<file> is answered by the
// library's implementation built into the binary, whatever the version. A
// jslib library not built in is refused by name before any traffic.
//
// The k6-specific libraries are written here from k6's public
// documentation. Where a jslib library wraps a third-party JavaScript
// library, that library's own MIT-licensed build from npm is embedded as
// it is (vendor/: chai 4.3.10 for k6chaijs, papaparse 5.4.1), each with
// its licence.
package jslib

import (
	"embed"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Host is where jslib libraries are published.
const Host = "jslib.k6.io"

//go:embed *.js vendor/*.js
var files embed.FS

// libraries maps a jslib library's name to its source: its own file;
// for a wrapper, the vendored build it evaluates first (as CommonJS, the
// module object the wrapper reads); shared, declarations put before both.
var libraries = map[string]struct{ file, vendored, shared string }{
	"k6-summary":                     {file: "k6-summary.js"},
	"k6-utils":                       {file: "k6-utils.js"},
	"k6chaijs":                       {file: "k6chaijs.js", vendored: "vendor/chai-4.3.10.js"},
	"url":                            {file: "url.js"},
	"httpx":                          {file: "httpx.js"},
	"papaparse":                      {file: "papaparse.js", vendored: "vendor/papaparse-5.4.1.min.js"},
	"http-instrumentation-tempo":     {file: "http-instrumentation-tempo.js", shared: "instrument.js"},
	"http-instrumentation-pyroscope": {file: "http-instrumentation-pyroscope.js", shared: "instrument.js"},
}

// Names are the jslib libraries built in, sorted.
func Names() []string {
	names := make([]string, 0, len(libraries))
	for n := range libraries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NotBuiltIn refuses a jslib library throttle does not ship.
type NotBuiltIn struct{ Library, URL string }

func (e *NotBuiltIn) Error() string {
	return fmt.Sprintf("jslib library %q (%s) is not built into throttle, which serves jslib offline: it provides %s", e.Library, e.URL, strings.Join(Names(), ", "))
}

// Is reports whether u is a jslib URL (built in or refused).
func Is(u string) bool {
	p, err := url.Parse(u)
	return err == nil && strings.EqualFold(p.Hostname(), Host)
}

// Source answers a remote module URL: ok is false when u is not on
// jslib.k6.io (it is fetched as any remote module); otherwise src is the
// built-in library's module source, or err refuses a library not built
// in, naming it.
func Source(u string) (src []byte, ok bool, err error) {
	if !Is(u) {
		return nil, false, nil
	}
	p, _ := url.Parse(u)
	lib, _, _ := strings.Cut(strings.TrimPrefix(p.Path, "/"), "/")
	l, known := libraries[lib]
	if !known {
		return nil, true, &NotBuiltIn{Library: lib, URL: u}
	}
	var b strings.Builder
	if l.vendored != "" {
		vendored, err := files.ReadFile(l.vendored)
		if err != nil {
			return nil, true, err
		}
		// The vendored build is a UMD bundle: given a CommonJS module
		// object it puts its exports there, touching no global (global, which
		// chai reads, is a module-local name for globalThis).
		b.WriteString("const module = { exports: {} }; const exports = module.exports; const global = globalThis;\n")
		b.Write(vendored)
		b.WriteString("\n;const __vendored = module.exports;\n")
	}
	for _, f := range []string{l.shared, l.file} {
		if f == "" {
			continue
		}
		src, err := files.ReadFile(f)
		if err != nil {
			return nil, true, err
		}
		b.Write(src)
		b.WriteString("\n")
	}
	return []byte(b.String()), true, nil
}
