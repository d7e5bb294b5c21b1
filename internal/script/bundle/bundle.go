// Package bundle turns a k6 script (an ES module or TypeScript file, with
// relative imports of local files) into one CommonJS program that goja
// runs, using esbuild.
//
// The k6 modules are not bundled: they are left as require("k6/...") calls
// that the script runtime serves itself. A module throttle does not provide
// (k6/ws, k6/net/grpc, k6/browser, k6/experimental/*, an unknown k6/x/...)
// and any remote import (https://...) fail the bundle before any traffic,
// each as one error naming the module and the file and line importing it.
package bundle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// Supported are the k6 modules the script runtime provides, as scripts
// import them.
var Supported = []string{"k6", "k6/data", "k6/encoding", "k6/execution", "k6/http", "k6/metrics", "k6/x/throttle"}

// Bundle is a script ready to compile: one CommonJS program.
type Bundle struct {
	// Path is the entry script's absolute path; Dir its folder, against
	// which open() resolves.
	Path, Dir string
	// Code is the program: an expression, a function of (module, exports,
	// require) that fills module.exports with the script's exports; an
	// inline source map ends it.
	Code string
	// Modules are the k6 modules the script imports, sorted.
	Modules []string
}

// Error is a script the bundler refused; its message is one line that names
// the file, the line and the problem.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// k6Module matches what the k6 resolver claims: the k6 module namespace.
var k6Module = regexp.MustCompile(`^k6(/.*)?$`)

// Load bundles the script at path.
func Load(path string) (*Bundle, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	// esbuild's own word for a missing entry point is "Could not resolve",
	// which reads like an import problem; say what it is.
	if st, err := os.Stat(abs); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("script %s: %v", path, errors.Unwrap(err))}
	} else if st.IsDir() {
		return nil, &Error{Msg: fmt.Sprintf("script %s is a directory", path)}
	}
	used := map[string]bool{}
	supported := map[string]bool{}
	for _, m := range Supported {
		supported[m] = true
	}
	plugin := api.Plugin{
		Name: "k6",
		Setup: func(b api.PluginBuild) {
			b.OnResolve(api.OnResolveOptions{Filter: `^k6(/.*)?$`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
				if !k6Module.MatchString(a.Path) {
					return api.OnResolveResult{}, nil
				}
				if !supported[a.Path] {
					return api.OnResolveResult{}, fmt.Errorf("module %q is not supported by throttle (it provides %s)", a.Path, strings.Join(Supported, ", "))
				}
				used[a.Path] = true
				return api.OnResolveResult{Path: a.Path, External: true}, nil
			})
			b.OnResolve(api.OnResolveOptions{Filter: `^(?i)(https?|ftp|file|data):|^//`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
				return api.OnResolveResult{}, fmt.Errorf("remote import %q is not supported: throttle reaches no network but the target (vendor the file and import it by a relative path)", a.Path)
			})
		},
	}
	res := api.Build(api.BuildOptions{
		EntryPoints:   []string{abs},
		AbsWorkingDir: filepath.Dir(abs),
		Bundle:        true,
		Write:         false,
		Format:        api.FormatCommonJS,
		Platform:      api.PlatformNeutral,
		// sobek runs ES2017 natively (async functions included); esbuild
		// lowers newer syntax (object spread, optional chaining, ...).
		Target: api.ES2017,
		// The program is one function of (module, exports, require), so
		// that the runtime can give each VU its own; the inline source map
		// makes an exception name the script's own file and line.
		Banner:         map[string]string{"js": "(function (module, exports, require) {"},
		Footer:         map[string]string{"js": "})"},
		Sourcemap:      api.SourceMapInline,
		SourcesContent: api.SourcesContentExclude,
		LogLevel:       api.LogLevelSilent,
		Plugins:        []api.Plugin{plugin},
		// A bare import that is neither k6 nor local has no node_modules to
		// come from at run time; esbuild reports it as unresolved.
		MainFields: []string{"module", "main"},
	})
	if len(res.Errors) > 0 {
		return nil, &Error{Msg: message(res.Errors[0], filepath.Dir(abs))}
	}
	if len(res.OutputFiles) != 1 {
		return nil, errors.New("bundle: esbuild produced no program")
	}
	b := &Bundle{Path: abs, Dir: filepath.Dir(abs), Code: string(res.OutputFiles[0].Contents)}
	for m := range used {
		b.Modules = append(b.Modules, m)
	}
	sort.Strings(b.Modules)
	return b, nil
}

// message formats one esbuild error as "file:line: text", the file relative
// to the script's folder when it is inside it.
func message(m api.Message, dir string) string {
	text := m.Text
	if m.PluginName != "" {
		// esbuild wraps a plugin's error; the plugin's own text is the cause.
		text = strings.TrimPrefix(text, "[plugin "+m.PluginName+"] ")
	}
	if m.Location == nil {
		return text
	}
	file := m.Location.File
	if rel, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(rel, "..") {
		file = rel
	}
	return fmt.Sprintf("%s:%d: %s", file, m.Location.Line, text)
}
