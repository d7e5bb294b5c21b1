package bundle

import (
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/file"
	"github.com/grafana/sobek/token"
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
	// module's code assigns anywhere.
	locals   []unistring.String
	assigned map[unistring.String]bool
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
		if pm.assigned[pm.locals[i]] {
			return nil, pm.Name + " assigns its export " + u.name
		}
	}
	for _, pm := range g.p.Modules {
		pm.locals, pm.assigned = nil, nil
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

// plainModule makes one module's function; deps are the indexes of the
// local modules it imports, by specifier.
func plainModule(g *plainGraph, m *module, deps map[string]int, entry bool) (*PlainModule, string) {
	prog := m.prog
	if prog.HasTLA {
		return nil, "top-level await"
	}
	syn := plainSyntax(prog.Body)
	if syn.why != "" {
		return nil, syn.why
	}
	g.require = g.require || syn.require
	if syn.jobs && !entry {
		return nil, "might queue a promise job (async, await, Promise, then, catch, finally or queueMicrotask) and is not the entry module"
	}
	p := &PlainModule{Name: m.name, assigned: syn.assigned}
	var (
		body     []ast.Statement
		consts   []*ast.Binding
		exports  []ast.Expression
		imported = map[unistring.String]bool{}
	)
	base := file.Idx(prog.File.Base())
	ident := func(name unistring.String) *ast.Identifier { return &ast.Identifier{Name: name, Idx: base} }
	bind := func(local unistring.String, arg PlainArg) {
		param := unistring.String(plainPrefix + strconv.Itoa(len(p.Args)))
		p.Args = append(p.Args, arg)
		consts = append(consts, &ast.Binding{Target: ident(local), Initializer: ident(param)})
		imported[local] = true
	}
	export := func(name string, local unistring.String) {
		p.Exports = append(p.Exports, name)
		p.locals = append(p.locals, local)
		exports = append(exports, ident(local))
	}
	for _, st := range prog.Body {
		switch d := st.(type) {
		case *ast.ImportDeclaration:
			spec := d.ModuleSpecifier
			if d.FromClause != nil {
				spec = d.FromClause.ModuleSpecifier
			}
			name := spec.String()
			k6 := ""
			if _, local := deps[name]; !local {
				k6 = name
			}
			c := d.ImportClause
			if c == nil {
				continue
			}
			if c.NameSpaceImport != nil {
				return nil, "imports a namespace"
			}
			importName := func(member string, local unistring.String) {
				if k6 == "" {
					g.uses = append(g.uses, plainUse{deps[name], member})
					bind(local, PlainArg{Module: deps[name], Name: member})
					return
				}
				if member == "default" {
					g.whole[k6] = true
					member = ""
				} else {
					g.named[k6] = true
				}
				bind(local, PlainArg{K6: k6, Name: member})
			}
			// sobek binds the named imports first, then the default one.
			if c.NamedImports != nil {
				for _, sp := range c.NamedImports.ImportsList {
					local := sp.Alias
					if local == "" {
						local = sp.IdentifierName
					}
					importName(sp.IdentifierName.String(), local)
				}
			}
			if c.ImportedDefaultBinding != nil {
				importName("default", c.ImportedDefaultBinding.Name)
			}
		case *ast.ExportDeclaration:
			switch {
			case d.FromClause != nil || d.ExportFromClause != nil:
				return nil, "re-exports"
			case d.Variable != nil:
				body = append(body, d.Variable)
				for _, bn := range d.Variable.List {
					for _, n := range boundNames(bn.Target) {
						export(n.String(), n)
					}
				}
			case d.LexicalDeclaration != nil:
				body = append(body, d.LexicalDeclaration)
				for _, bn := range d.LexicalDeclaration.List {
					for _, n := range boundNames(bn.Target) {
						export(n.String(), n)
					}
				}
			case d.HoistableDeclaration != nil && d.HoistableDeclaration.FunctionDeclaration != nil:
				fd := d.HoistableDeclaration.FunctionDeclaration
				body = append(body, fd)
				// The parser names an anonymous default function
				// "default", as its binding.
				if d.IsDefault {
					export("default", fd.Function.Name.Name)
				} else {
					export(fd.Function.Name.Name.String(), fd.Function.Name.Name)
				}
			case d.ClassDeclaration != nil:
				cls := d.ClassDeclaration.Class
				at := cls.Class
				switch {
				case !d.IsDefault:
					body = append(body, d.ClassDeclaration)
					export(cls.Name.Name.String(), cls.Name.Name)
				case cls.Name == nil:
					// As sobek: a binding "default" (no code can name
					// it), the class named after it.
					body = append(body, lexical(at, token.LET, "default", cls))
					export("default", "default")
				default:
					body = append(body, d.ClassDeclaration, lexical(at, token.LET, "default", &ast.Identifier{Name: cls.Name.Name, Idx: cls.Name.Idx}))
					export("default", "default")
				}
			case d.AssignExpression != nil:
				// As sobek: export default expr is const default = expr.
				body = append(body, lexical(d.AssignExpression.Idx0(), token.CONST, "default", d.AssignExpression))
				export("default", "default")
			case d.NamedExports != nil:
				for _, sp := range d.NamedExports.ExportsList {
					name := sp.Alias
					if name == "" {
						name = sp.IdentifierName
					}
					export(name.String(), sp.IdentifierName)
				}
			default:
				return nil, "an export form not known here"
			}
		default:
			body = append(body, st)
		}
	}
	for _, local := range p.locals {
		if imported[local] {
			return nil, "re-exports an import"
		}
	}
	params := &ast.ParameterList{Opening: base, Closing: base}
	for i := range p.Args {
		params.List = append(params.List, &ast.Binding{Target: ident(unistring.String(plainPrefix + strconv.Itoa(i)))})
	}
	var list []ast.Statement
	if len(consts) > 0 {
		list = append(list, &ast.LexicalDeclaration{Idx: base, Token: token.CONST, List: consts})
	}
	list = append(list, body...)
	end := file.Idx(prog.File.Base() + len(prog.File.Source()))
	// return (*exports*) => *exports*(e1, e2, …): the exports' values go
	// to a function of the caller's as arguments; an array would make
	// the Array prototype in every VU (0.2 KiB) whose script has none.
	const sink = unistring.String("*exports*")
	list = append(list, &ast.ReturnStatement{Return: end, Argument: &ast.ArrowFunctionLiteral{
		Start: end, ParameterList: &ast.ParameterList{Opening: end, List: []*ast.Binding{{Target: &ast.Identifier{Name: sink, Idx: end}}}, Closing: end},
		Body: &ast.ExpressionBody{Expression: &ast.CallExpression{Callee: &ast.Identifier{Name: sink, Idx: end}, LeftParenthesis: end, ArgumentList: exports, RightParenthesis: end}},
	}})
	fn := &ast.FunctionLiteral{
		// Anonymous: a module body's frames in stack traces have no name.
		Function:        base,
		ParameterList:   params,
		Body:            &ast.BlockStatement{LeftBrace: base, List: list, RightBrace: end},
		DeclarationList: prog.DeclarationList,
	}
	wrapped := &ast.Program{Body: []ast.Statement{&ast.ExpressionStatement{Expression: fn}}, File: prog.File}
	compiled, err := compilePlain(wrapped)
	if err != nil {
		return nil, "does not compile as a function: " + err.Error()
	}
	p.Program = compiled
	return p, ""
}

// compilePlain compiles the wrapped module; a compiler panic is a reason
// to fall back, not a crash.
func compilePlain(prog *ast.Program) (p *sobek.Program, err error) {
	defer func() {
		if x := recover(); x != nil {
			p, err = nil, &Error{Msg: "compiler panic"}
		}
	}()
	return sobek.CompileAST(prog, true)
}

// lexical is `kind name = init`.
func lexical(at file.Idx, kind token.Token, name unistring.String, init ast.Expression) *ast.LexicalDeclaration {
	return &ast.LexicalDeclaration{Idx: at, Token: kind, List: []*ast.Binding{{Target: &ast.Identifier{Name: name, Idx: at}, Initializer: init}}}
}

// boundNames are the names a binding target declares.
func boundNames(t ast.Expression) []unistring.String {
	var out []unistring.String
	switch t := t.(type) {
	case *ast.Identifier:
		out = append(out, t.Name)
	case *ast.ArrayPattern:
		for _, e := range t.Elements {
			out = append(out, boundNames(e)...)
		}
		if t.Rest != nil {
			out = append(out, boundNames(t.Rest)...)
		}
	case *ast.ObjectPattern:
		for _, p := range t.Properties {
			switch p := p.(type) {
			case *ast.PropertyShort:
				out = append(out, p.Name.Name)
			case *ast.PropertyKeyed:
				out = append(out, boundNames(p.Value)...)
			}
		}
		if t.Rest != nil {
			out = append(out, boundNames(t.Rest)...)
		}
	case *ast.AssignExpression:
		out = append(out, boundNames(t.Left)...)
	}
	return out
}

// plainSyntax is what a module's code holds that the plain path must
// know of.
type plainSyntaxInfo struct {
	// why names the first syntax the plain function would not run as
	// the module does ("" if none): import.meta and import() need a
	// module; `arguments` and eval outside a function would see the
	// plain function; `this` outside a function (not a method) is undefined in a module's own
	// statements but the global object in its top-level arrows and
	// blocks (sobek's module compiler), which the function cannot copy.
	why string
	// require is whether the code names require, as an identifier, a
	// property or a string.
	require bool
	// jobs is whether the code might queue a promise job: it has an
	// async function or await, or names Promise, then, catch, finally or
	// queueMicrotask. The ES module path runs the jobs a module's code
	// queues after every module has run; the plain path runs them as
	// each module's function returns, so a module the entry module
	// imports must queue none.
	jobs bool
	// assigned are the names assigned anywhere in the code (any scope):
	// an assignment's target, ++ and --, a for-in or for-of head.
	assigned map[unistring.String]bool
}

// jobNames are the names through which code queues promise jobs.
var jobNames = map[unistring.String]bool{"Promise": true, "then": true, "catch": true, "finally": true, "queueMicrotask": true}

func plainSyntax(body []ast.Statement) plainSyntaxInfo {
	info := plainSyntaxInfo{assigned: map[unistring.String]bool{}}
	nodeType := reflect.TypeOf((*ast.Node)(nil)).Elem()
	astPkg := reflect.TypeOf(ast.Identifier{}).PkgPath()
	// targets are an assignment target's names, conservatively: every
	// identifier in it.
	var targets func(v reflect.Value)
	targets = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				return
			}
			switch n := v.Interface().(type) {
			case *ast.Identifier:
				info.assigned[n.Name] = true
			case *ast.DotExpression, *ast.BracketExpression, *ast.PrivateDotExpression:
				return // a member, not a binding (what it holds is walked)
			}
			targets(v.Elem())
		case reflect.Struct:
			if v.Type().PkgPath() != astPkg {
				return
			}
			if id, ok := v.Interface().(ast.Identifier); ok {
				info.assigned[id.Name] = true
			}
			for i := range v.NumField() {
				targets(v.Field(i))
			}
		case reflect.Slice:
			for i := range v.Len() {
				targets(v.Index(i))
			}
		}
	}
	var walk func(v reflect.Value, inFunc bool)
	walk = func(v reflect.Value, inFunc bool) {
		if info.why != "" || !v.IsValid() {
			return
		}
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				return
			}
			if v.Kind() == reflect.Pointer && v.Type().Implements(nodeType) {
				switch n := v.Interface().(type) {
				case *ast.DynamicImportExpression:
					info.why = "import()"
				case *ast.MetaProperty:
					if n.Meta != nil && n.Meta.Name == "import" {
						info.why = "import.meta"
					}
				case *ast.Identifier:
					info.require = info.require || n.Name == "require"
					info.jobs = info.jobs || jobNames[n.Name]
					if (n.Name == "arguments" || n.Name == "eval") && !inFunc {
						info.why = "names " + n.Name.String() + " outside a function"
					}
				case *ast.StringLiteral:
					info.require = info.require || n.Value == "require"
					info.jobs = info.jobs || jobNames[n.Value]
				case *ast.AwaitExpression:
					info.jobs = true
				case *ast.ArrowFunctionLiteral:
					info.jobs = info.jobs || n.Async
				case *ast.ThisExpression:
					if !inFunc {
						info.why = "this outside a function"
					}
				case *ast.FunctionLiteral:
					inFunc = true
					info.jobs = info.jobs || n.Async
				case *ast.AssignExpression:
					targets(reflect.ValueOf(n.Left))
				case *ast.UnaryExpression:
					if n.Operator == token.INCREMENT || n.Operator == token.DECREMENT {
						targets(reflect.ValueOf(n.Operand))
					}
				case *ast.ForIntoExpression:
					targets(reflect.ValueOf(n.Expression))
				}
			}
			walk(v.Elem(), inFunc)
		case reflect.Struct:
			if v.Type().PkgPath() != astPkg {
				return
			}
			if id, ok := v.Interface().(ast.Identifier); ok {
				// A property name: x.require, p.then.
				info.require = info.require || id.Name == "require"
				info.jobs = info.jobs || jobNames[id.Name]
			}
			for i := range v.NumField() {
				walk(v.Field(i), inFunc)
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), inFunc)
			}
		}
	}
	for _, st := range body {
		walk(reflect.ValueOf(st), false)
	}
	return info
}
