// Package bundle loads a k6 script and the local ES modules it imports as
// sobek module records: one record per file, parsed and compiled once per
// run and shared by every VU, which instantiates and evaluates them in its
// own runtime (so each module runs once per VU, in the order and with the
// cycles and top-level await the ECMAScript spec gives).
//
// An import is resolved relative to the importing file. A k6 module
// ("k6/http") is the caller's: Options.K6 returns its record or refuses it.
// A remote import (http:// or https://) is fetched once, at load (remote.go),
// and its own relative imports are resolved against its URL; one on
// jslib.k6.io is never fetched: package jslib serves it from the binary,
// and refuses a library it does not ship (gathered with the k6 refusals,
// all named at once). A bare name
// with no node_modules to come from, and other URL schemes, are refused.
// Every refusal is one error naming the file and line of the import,
// before any traffic.
//
// esbuild is used only where it earns its place: TypeScript files are
// transformed to JavaScript one file at a time (their imports and exports
// kept), and so is a JavaScript file in a syntax sobek does not parse
// (async generators, for await). An inline source map makes errors and
// stack traces name the file's own lines.
package bundle

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/file"

	"github.com/throttlekit/throttle/internal/script/bundle/jslib"
)

// Options are what the loader needs from the runtime.
type Options struct {
	// K6 returns the record of a k6 module (a specifier matching k6 or
	// k6/...), or an error refusing it: the loader prefixes the importing
	// file and line.
	K6 func(specifier string) (sobek.ModuleRecord, error)
	// HTTPClient fetches remote modules (default: http.DefaultClient,
	// each fetch within RemoteTimeout).
	HTTPClient *http.Client
	// ModuleCache, if set, is a folder keeping every remote module
	// fetched, so that a later run can load it with the network closed;
	// Offline loads remote modules from it only, never fetching.
	ModuleCache string
	Offline     bool
	// Read, if set, is told of every module source read: kind is "module"
	// (a local file), "remote module" (fetched), "cached remote module"
	// (from ModuleCache) or "jslib module" (built in); name the path or
	// URL; n its size in bytes.
	Read func(kind, name string, n int)
	// Archive, if set, is where every module comes from (an agent running
	// a controller's script): the path given to Load is Archive.Entry's,
	// and a module not in it is an error.
	Archive *Archive
	// Imported, if set, is called in the runtime that made a dynamic
	// import once the modules it needs are loaded and before any of them
	// runs: GlobalWrites may have grown.
	Imported func(rt *sobek.Runtime)
}

// Bundle is a loaded script: its entry module and every module it
// imports, linked.
type Bundle struct {
	// Path is the entry script's absolute path; Dir its folder, against
	// which open() resolves and by which module names are shown.
	Path, Dir string
	// Main is the entry module's record.
	Main sobek.CyclicModuleRecord
	// Modules are the k6 modules the script imports, sorted.
	Modules []string
	// Plain is the script as one plain function, when its module graph
	// is simple enough (plain.go); nil: every VU evaluates Main.
	Plain *Plain
	// PlainWhy says why Plain is nil.
	PlainWhy string

	opts Options
	// mu guards the maps below: VUs resolve imports from their own
	// goroutines while they evaluate, and a dynamic import may load a
	// module after Load.
	mu      sync.Mutex
	byPath  map[string]*module
	byRec   map[sobek.ModuleRecord]*module
	k6      map[string]sobek.ModuleRecord
	loading map[string]bool
	// refused are the k6 modules and names the script imports that the
	// runtime does not provide, each as file:line: reason; Load names
	// them all at once.
	refused []string
	// sources are the local and remote modules' sources as read: the
	// script's Archive.
	sources map[string][]byte
	// writes are GlobalWrites (globalwrites.go).
	writes atomic.Pointer[writeSet]
}

// module is one local file.
type module struct {
	path, dir string
	// name is how errors and stack traces show the file: its path
	// relative to the script's folder.
	name   string
	prog   *ast.Program
	record *sobek.SourceTextModuleRecord
	// imports are its static imports, resolved at load.
	imports map[string]sobek.ModuleRecord
}

// Error is a script the loader refused; its message is one line that names
// the file, the line and the problem.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// k6Module matches what the k6 resolver claims: the k6 module namespace.
var k6Module = regexp.MustCompile(`^k6(/.*)?$`)

// remote matches an import throttle refuses: a URL other than file:.
var remote = regexp.MustCompile(`^(?i)(https?|ftp|data):|^//`)

// Load loads the script at path and every module it imports, and links
// them.
func Load(path string, opts Options) (*Bundle, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if opts.Archive != nil {
		abs = opts.Archive.Entry
	} else if st, err := os.Stat(abs); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("script %s: %v", path, errors.Unwrap(err))}
	} else if st.IsDir() {
		return nil, &Error{Msg: fmt.Sprintf("script %s is a directory", path)}
	}
	b := &Bundle{Path: abs, Dir: filepath.Dir(abs), opts: opts, byPath: map[string]*module{},
		byRec: map[sobek.ModuleRecord]*module{}, k6: map[string]sobek.ModuleRecord{}, loading: map[string]bool{}, sources: map[string][]byte{}}
	b.mu.Lock()
	main, err := b.load(abs)
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if len(b.refused) > 0 {
		return nil, &Error{Msg: strings.Join(b.refused, "; ")}
	}
	if err := b.link(main); err != nil {
		return nil, err
	}
	b.Main = main.record
	for m := range b.k6 {
		b.Modules = append(b.Modules, m)
	}
	sort.Strings(b.Modules)
	b.Plain, b.PlainWhy = b.plainOf(main)
	return b, nil
}

// link links m and what it imports: compiles each module and checks that
// every name imported is exported.
func (b *Bundle) link(m *module) (err error) {
	defer func() {
		// sobek panics on a few export forms it does not support.
		if x := recover(); x != nil {
			err = &Error{Msg: fmt.Sprintf("%s: %v", m.name, x)}
		}
	}()
	if err := m.record.Link(); err != nil {
		return b.compileError(err)
	}
	return nil
}

// load reads, parses and records the module at path and, depth first, the
// modules it imports; b.mu is held. A module already loaded, or being
// loaded further up an import cycle, is not loaded again.
func (b *Bundle) load(path string) (*module, error) {
	if m, ok := b.byPath[path]; ok {
		return m, nil
	}
	src, dir, err := b.read(path)
	if err != nil {
		return nil, err
	}
	m := &module{path: path, dir: dir, name: b.name(path), imports: map[string]sobek.ModuleRecord{}}
	prog, err := parse(m.name, path, string(src))
	if err != nil {
		return nil, err
	}
	m.prog = prog
	b.addWrites(globalWrites(prog))
	m.record, err = fromAST(m.name, prog, b.resolve)
	if err != nil {
		return nil, err
	}
	b.byPath[path] = m
	b.byRec[m.record] = m
	for _, imp := range imports(prog) {
		if _, ok := m.imports[imp.specifier]; ok {
			continue
		}
		rec, err := b.resolveFrom(m.dir, imp.specifier)
		at := fmt.Sprintf("%s:%d", m.name, prog.File.Position(imp.offset).Line)
		if k6Module.MatchString(imp.specifier) || jslib.Is(imp.specifier) {
			// Every k6 module and name the runtime lacks, and every jslib
			// library and name throttle does not build in, is gathered, so
			// that Load names them all at once.
			var nb *jslib.NotBuiltIn
			if err != nil && (k6Module.MatchString(imp.specifier) || errors.As(err, &nb)) {
				b.refused = append(b.refused, fmt.Sprintf("%s: %v", at, err))
				continue
			}
			if err == nil {
				b.refuseMissing(at, imp, rec)
			}
		}
		if err != nil {
			var le *Error
			if errors.As(err, &le) {
				return nil, err // the imported file's own error
			}
			return nil, &Error{Msg: fmt.Sprintf("%s:%d: %v", m.name, prog.File.Position(imp.offset).Line, err)}
		}
		m.imports[imp.specifier] = rec
	}
	return m, nil
}

// fromAST makes the module record of a parsed file; sobek panics on a
// few export forms it does not support, which become the file's error.
func fromAST(name string, prog *ast.Program, resolve sobek.HostResolveImportedModuleFunc) (rec *sobek.SourceTextModuleRecord, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = &Error{Msg: fmt.Sprintf("%s: %v", name, x)}
		}
	}()
	rec, err = sobek.ModuleFromAST(prog, resolve)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("%s: %v", name, err)}
	}
	return rec, nil
}

// resolveFrom resolves a specifier imported by a module in dir, loading a
// local module not yet loaded; b.mu is held.
func (b *Bundle) resolveFrom(dir, spec string) (sobek.ModuleRecord, error) {
	switch {
	case k6Module.MatchString(spec):
		if rec, ok := b.k6[spec]; ok {
			return rec, nil
		}
		rec, err := b.opts.K6(spec)
		if err != nil {
			return nil, err
		}
		b.k6[spec] = rec
		return rec, nil
	case isHTTP(spec):
		return b.loadRemote(spec)
	case remote.MatchString(spec):
		return nil, fmt.Errorf("remote import %q is not supported: throttle fetches modules over http and https only", spec)
	case isHTTP(dir) && (strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || strings.HasPrefix(spec, "/")):
		u, err := url.Parse(dir)
		if err != nil {
			return nil, fmt.Errorf("import %q: %v", spec, err)
		}
		ref, err := u.Parse(spec)
		if err != nil {
			return nil, fmt.Errorf("import %q: %v", spec, err)
		}
		return b.loadRemote(ref.String())
	}
	var path string
	switch {
	case strings.HasPrefix(spec, "file://"):
		u, err := url.Parse(spec)
		if err != nil {
			return nil, fmt.Errorf("import %q: %v", spec, err)
		}
		path = filepath.FromSlash(u.Path)
	case strings.HasPrefix(spec, "./"), strings.HasPrefix(spec, "../"), strings.HasPrefix(spec, "/"):
		path = filepath.Join(dir, filepath.FromSlash(spec))
		if filepath.IsAbs(spec) {
			path = filepath.Clean(spec)
		}
	default:
		return nil, fmt.Errorf("cannot resolve %q: a script imports k6 modules and local files by a path such as \"./lib.js\" (there is no node_modules)", spec)
	}
	m, err := b.load(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("import %q: %s: %v", spec, b.name(path), pe.Err)
		}
		return nil, err
	}
	return m.record, nil
}

// resolve is sobek's HostResolveImportedModule: the record a module's
// specifier names, relative to the importing module (the script's folder
// for a referrer that is not one of its modules).
func (b *Bundle) resolve(referrer any, spec string) (sobek.ModuleRecord, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	dir := b.Dir
	if rec, ok := referrer.(sobek.ModuleRecord); ok {
		if m := b.byRec[rec]; m != nil {
			if r, ok := m.imports[spec]; ok {
				return r, nil
			}
			dir = m.dir
		}
	}
	return b.resolveFrom(dir, spec)
}

// ImportDynamically is import(specifier) for the runtime rt, resolved
// relative to the module that calls it (sobek's dynamic import hook).
func (b *Bundle) ImportDynamically(rt *sobek.Runtime) sobek.ImportModuleDynamicallyCallback {
	return func(referrer any, specifier sobek.Value, payload any) {
		spec := specifier.String()
		rec, err := b.resolve(referrer, spec)
		if err == nil {
			if m := b.module(rec); m != nil {
				err = b.link(m)
			}
		}
		if err != nil {
			rt.FinishLoadingImportModule(referrer, specifier, payload, nil, rt.NewGoError(err))
			return
		}
		if b.opts.Imported != nil {
			b.opts.Imported(rt)
		}
		rt.FinishLoadingImportModule(referrer, specifier, payload, rec, nil)
	}
}

func (b *Bundle) module(rec sobek.ModuleRecord) *module {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byRec[rec]
}

// name is how errors show path: relative to the script's folder; a
// remote module by its URL.
func (b *Bundle) name(path string) string {
	if isHTTP(path) {
		return path
	}
	if rel, err := filepath.Rel(b.Dir, path); err == nil {
		return filepath.ToSlash(rel)
	}
	return path
}

// refuseMissing records each name imp imports that rec does not export.
func (b *Bundle) refuseMissing(at string, imp importDecl, rec sobek.ModuleRecord) {
	if len(imp.names) == 0 {
		return
	}
	var have []string
	rec.GetExportedNames(func(names []string) { have = names })
	for _, n := range imp.names {
		if !slices.Contains(have, n) {
			b.refused = append(b.refused, fmt.Sprintf("%s: The requested module %q does not provide an export named %q", at, imp.specifier, n))
		}
	}
}

// importDecl is one static import or re-export: its specifier, where it
// is in the file and the names it imports by name ("default" for a
// default binding).
type importDecl struct {
	specifier string
	offset    int
	names     []string
}

// imports lists a module's static imports and re-exports in source order.
func imports(prog *ast.Program) []importDecl {
	var out []importDecl
	at := func(idx file.Idx) int { return int(idx) - prog.File.Base() }
	for _, st := range prog.Body {
		switch d := st.(type) {
		case *ast.ImportDeclaration:
			var names []string
			if c := d.ImportClause; c != nil {
				if c.ImportedDefaultBinding != nil {
					names = append(names, "default")
				}
				if c.NamedImports != nil {
					for _, sp := range c.NamedImports.ImportsList {
						names = append(names, sp.IdentifierName.String())
					}
				}
			}
			if d.FromClause != nil {
				out = append(out, importDecl{d.FromClause.ModuleSpecifier.String(), at(d.Idx0()), names})
			} else {
				out = append(out, importDecl{d.ModuleSpecifier.String(), at(d.Idx0()), names})
			}
		case *ast.ExportDeclaration:
			if d.FromClause != nil {
				var names []string
				if c := d.ExportFromClause; c != nil && c.NamedExports != nil {
					for _, sp := range c.NamedExports.ExportsList {
						names = append(names, sp.IdentifierName.String())
					}
				}
				out = append(out, importDecl{d.FromClause.ModuleSpecifier.String(), at(d.Idx0()), names})
			}
		}
	}
	return out
}
