package bundle

import (
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/file"
	"github.com/grafana/sobek/unistring"
)

// PlainEnv is the environment variable that, set to "esm", runs every
// script on sobek's ES module records (the path every script took before
// Plain), as a way back should the plain path ever differ.
const PlainEnv = "THROTTLE_MODULES"

// Plain is a script whose module graph is simple enough to run without
// sobek's module records: each of its modules (the entry module, the local,
// remote and jslib modules it imports) compiled once per run as one plain
// function, which each VU calls once, in the order the ES modules would be
// evaluated, as its init context. A VU then holds only what the modules'
// own code makes: no module instances, no evaluation promise (sobek's
// module evaluation always makes one, and with it the Promise constructor
// and prototype, 9 KiB a VU), no promise capabilities, no async module
// functions.
//
// A module's function is its own syntax tree, every node at its place in
// its file (errors and stack traces name the file's own lines and
// columns, and the function is anonymous as sobek's module body is), with
// the imports and exports taken off as sobek's compiler takes them off a
// module: strict code; the imports are constant bindings made before any
// of the module's code runs; an anonymous default export is named
// "default". It takes the imports as arguments (PlainModule.Args) and
// returns a function that passes the exports' current values
// (PlainModule.Exports, in order) to the function it is given: live, as a
// namespace object reads them.
//
// What it does not copy is an import's liveness: an import is read once,
// when the importing module's code starts, not on every use. A script can
// see the difference only if the binding changes after that, so a graph
// is plain only where it cannot: a module's export imported by another
// module is never assigned in the exporting module (which has run to its
// end before the importer starts: a graph with a cycle is not plain), and
// a k6 module imported by name is not reachable as an object anywhere in
// the graph (its default import, or require named anywhere), through
// which a member could be replaced.
type Plain struct {
	// Steps are the init context in the ES modules' evaluation order.
	Steps []PlainStep
	// Modules are the graph's modules, each before the modules that
	// import it; the entry module is the last.
	Modules []*PlainModule
}

// PlainStep is one step of the init context: require the k6 module K6,
// or (K6 "") run Modules[Module].
type PlainStep struct {
	K6     string
	Module int
}

// PlainModule is one module as a plain function.
type PlainModule struct {
	// Name is how errors show the module (its path from the script's
	// folder, or its URL).
	Name string
	// Program is the compiled function expression; running it gives the
	// function a VU calls.
	Program *sobek.Program
	// Args are the function's arguments, in order.
	Args []PlainArg
	// Exports are the module's export names, in the order the function
	// it returns passes their values.
	Exports []string

	// locals are the exports' local bindings; assigned the names the
	// module's code assigns anywhere; evals whether it calls eval, whose
	// code could assign any of them.
	locals   []unistring.String
	assigned map[unistring.String]bool
	evals    bool

	// compile makes the module's function with a getter passing exports
	// (identifiers at base, as Program's); only holds ProgramFor's
	// programs, by export name (nil: run Program), under mu.
	compile func(exports []ast.Expression) (*sobek.Program, error)
	base    file.Idx
	mu      sync.Mutex
	only    map[string]*sobek.Program
}

// Main is the entry module.
func (p *Plain) Main() *PlainModule { return p.Modules[len(p.Modules)-1] }

// PlainArg is one import binding: the k6 module K6's object (Name "") or
// its member Name; or (K6 "") the export Name of Modules[Module].
type PlainArg struct {
	K6, Name string
	Module   int
}

// plainPrefix makes the hidden names of the function's parameters: not an
// identifier, so no code of the script can name one.
const plainPrefix = "*import*"

// plainGraph is what plainOf gathers across the graph.
type plainGraph struct {
	p       *Plain
	entry   *module
	index   map[*module]int
	onStack map[*module]bool
	k6Done  map[string]bool
	// named and whole are the k6 modules imported by name and as an
	// object; require whether any module names require.
	named, whole map[string]bool
	require      bool
	// uses are the exports of local modules imported by name.
	uses []plainUse
}

type plainUse struct {
	module int
	name   string
}

// plainOf is the graph from m as a Plain, or nil (with why) when it is not
// simple: a module that re-exports, imports a namespace, uses top-level
// await, import.meta, import(), `arguments`, eval or `this` outside a
// function, a cycle, a module's export imported elsewhere that its module
// assigns, a k6 module imported by name and reachable as an object.
func (b *Bundle) plainOf(m *module) (*Plain, string) {
	if v := os.Getenv(PlainEnv); strings.EqualFold(v, "esm") {
		return nil, PlainEnv + "=esm"
	}
	g := &plainGraph{p: &Plain{}, entry: m, index: map[*module]int{}, onStack: map[*module]bool{}, k6Done: map[string]bool{},
		named: map[string]bool{}, whole: map[string]bool{}}
	if _, why := b.plainVisit(g, m); why != "" {
		return nil, why
	}
	for mod := range g.named {
		if g.whole[mod] {
			return nil, "imports " + mod + " by name and whole"
		}
		if g.require {
			return nil, "imports by name and names require"
		}
	}
	for _, u := range g.uses {
		pm := g.p.Modules[u.module]
		i := slices.Index(pm.Exports, u.name)
		if i < 0 {
			return nil, pm.Name + " does not export " + u.name
		}
		if pm.evals || pm.assigned[pm.locals[i]] {
			return nil, pm.Name + " assigns its export " + u.name
		}
	}
	for _, pm := range g.p.Modules {
		pm.assigned = nil // locals stay: ProgramFor names one
	}
	return g.p, ""
}

// plainVisit adds m, after the modules it imports, depth first in import
// order as the ES modules are evaluated; it gives m's index.
func (b *Bundle) plainVisit(g *plainGraph, m *module) (int, string) {
	if i, ok := g.index[m]; ok {
		return i, ""
	}
	if g.onStack[m] {
		return 0, "an import cycle"
	}
	if m.prog == nil {
		return 0, m.name + " has no syntax tree"
	}
	g.onStack[m] = true
	deps := map[string]int{}
	for _, spec := range requested(m.prog) {
		if isK6(b, spec) {
			if !g.k6Done[spec] {
				g.k6Done[spec] = true
				g.p.Steps = append(g.p.Steps, PlainStep{K6: spec})
			}
			continue
		}
		dep := b.byRec[m.imports[spec]]
		if dep == nil {
			return 0, m.name + " imports " + spec + ", which is not a module of the script"
		}
		i, why := b.plainVisit(g, dep)
		if why != "" {
			return 0, why
		}
		deps[spec] = i
	}
	pm, why := plainModule(g, m, deps, m == g.entry)
	if why != "" {
		return 0, m.name + ": " + why
	}
	g.onStack[m] = false
	i := len(g.p.Modules)
	g.index[m] = i
	g.p.Modules = append(g.p.Modules, pm)
	g.p.Steps = append(g.p.Steps, PlainStep{Module: i})
	return i, ""
}

// isK6 is whether spec names a k6 module the runtime provides.
func isK6(b *Bundle, spec string) bool {
	_, ok := b.k6[spec]
	return ok && k6Module.MatchString(spec)
}

// requested are a module's module requests in source order (sobek's
// RequestedModules).
func requested(prog *ast.Program) []string {
	var out []string
	for _, st := range prog.Body {
		switch d := st.(type) {
		case *ast.ImportDeclaration:
			if d.FromClause != nil {
				out = append(out, d.FromClause.ModuleSpecifier.String())
			} else {
				out = append(out, d.ModuleSpecifier.String())
			}
		case *ast.ExportDeclaration:
			if d.FromClause != nil {
				out = append(out, d.FromClause.ModuleSpecifier.String())
			}
		}
	}
	return out
}
