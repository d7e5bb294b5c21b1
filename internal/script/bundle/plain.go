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
// sobek's module records: its entry module, compiled once per run as one
// plain function that each VU calls once as its init context. A VU then
// holds only what the module's own code makes: no module instance, no
// evaluation promise (sobek's module evaluation always makes one, and with
// it the Promise constructor and prototype, 9 KiB a VU), no promise
// capabilities, no async module function.
//
// The function is the module's own syntax tree, every node at its place
// in the file (errors and stack traces name the file's own lines and
// columns, and the function is named as sobek names a module's body), with
// the imports and exports taken off as sobek's compiler takes them off a
// module: strict code; the imports are constant bindings made before any
// of the module's code runs; an anonymous default export is named
// "default"; `this` is undefined. It takes the imports as arguments (Args)
// and returns a function giving the exports' current values (Exports, in
// order): live, as a namespace object reads them.
//
// What it does not copy is a named import's liveness: it is read from the
// k6 module's object once, when the module's code starts, not on every
// use. A script sees the difference only if it replaces a member of the
// module object after importing it by name, which needs the object: so a
// script that imports a k6 module by name and also reaches that module's
// object (its default import, or require anywhere in the file) is not
// plain.
type Plain struct {
	// Program is the compiled function expression; running it gives the
	// function a VU calls.
	Program *sobek.Program
	// Requires are the k6 modules imported, in the order the ES module
	// would evaluate them: each VU requires them before the call.
	Requires []string
	// Args are the function's arguments, in order.
	Args []PlainArg
	// Exports are the module's export names, in the order the function it
	// returns gives their values.
	Exports []string
}

// PlainArg is one import binding: the k6 module's object (Name "") or the
// named member of it.
type PlainArg struct{ Module, Name string }

// plainPrefix makes the hidden names of the function's parameters: not an
// identifier, so no code of the script can name one.
const plainPrefix = "*import*"

// plainOf is m as a Plain, or nil (with why) when its graph is not simple:
// a module that imports anything but k6 modules, re-exports, imports a
// namespace, uses top-level await, import.meta, import(), `arguments` or
// eval, or reaches the object of a k6 module it imports by name.
func (b *Bundle) plainOf(m *module) (*Plain, string) {
	if v := os.Getenv(PlainEnv); strings.EqualFold(v, "esm") {
		return nil, PlainEnv + "=esm"
	}
	prog := m.prog
	if prog == nil || prog.HasTLA {
		return nil, "top-level await"
	}
	why, namesRequire := plainSyntax(prog.Body)
	if why != "" {
		return nil, why
	}
	p := &Plain{}
	var (
		body     []ast.Statement
		consts   []*ast.Binding
		named    = map[string]bool{} // k6 modules imported by name
		whole    = map[string]bool{} // k6 modules whose object is imported
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
			if _, ok := b.k6[name]; !ok || !k6Module.MatchString(name) {
				return nil, "imports " + name
			}
			if !slices.Contains(p.Requires, name) {
				p.Requires = append(p.Requires, name)
			}
			c := d.ImportClause
			if c == nil {
				continue
			}
			if c.NameSpaceImport != nil {
				return nil, "imports a namespace"
			}
			// sobek binds the named imports first, then the default one.
			if c.NamedImports != nil {
				for _, sp := range c.NamedImports.ImportsList {
					local := sp.Alias
					if local == "" {
						local = sp.IdentifierName
					}
					member := sp.IdentifierName.String()
					if member == "default" {
						whole[name] = true
						member = ""
					} else {
						named[name] = true
					}
					bind(local, PlainArg{Module: name, Name: member})
				}
			}
			if c.ImportedDefaultBinding != nil {
				whole[name] = true
				bind(c.ImportedDefaultBinding.Name, PlainArg{Module: name})
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
	for _, e := range exports {
		if imported[e.(*ast.Identifier).Name] {
			return nil, "re-exports an import"
		}
	}
	for mod := range named {
		if whole[mod] {
			return nil, "imports " + mod + " by name and whole"
		}
		if namesRequire {
			return nil, "imports by name and names require"
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
	list = append(list, &ast.ReturnStatement{Return: end, Argument: &ast.ArrowFunctionLiteral{
		Start: end, ParameterList: &ast.ParameterList{Opening: end, Closing: end},
		Body: &ast.ExpressionBody{Expression: &ast.ArrayLiteral{LeftBracket: end, RightBracket: end, Value: exports}},
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

// plainSyntax names the first syntax in the statements that the plain
// function would not run as the module does ("" if none): import.meta and
// import() need a module; `arguments` and eval would see the function;
// `this` outside a function (not a method) is undefined in a module's
// own statements but the global object in its top-level arrows and
// blocks (sobek's module compiler), which the function cannot copy.
// namesRequire is whether the code names require, as an identifier, a
// property or a string.
func plainSyntax(body []ast.Statement) (why string, namesRequire bool) {
	nodeType := reflect.TypeOf((*ast.Node)(nil)).Elem()
	astPkg := reflect.TypeOf(ast.Identifier{}).PkgPath()
	var walk func(v reflect.Value, inFunc bool)
	walk = func(v reflect.Value, inFunc bool) {
		if why != "" || !v.IsValid() {
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
					why = "import()"
				case *ast.MetaProperty:
					if n.Meta != nil && n.Meta.Name == "import" {
						why = "import.meta"
					}
				case *ast.Identifier:
					namesRequire = namesRequire || n.Name == "require"
					if n.Name == "arguments" || n.Name == "eval" {
						why = "names " + n.Name.String()
					}
				case *ast.StringLiteral:
					namesRequire = namesRequire || n.Value == "require"
				case *ast.ThisExpression:
					if !inFunc {
						why = "this outside a function"
					}
				case *ast.FunctionLiteral:
					inFunc = true
				}
			}
			walk(v.Elem(), inFunc)
		case reflect.Struct:
			if v.Type().PkgPath() != astPkg {
				return
			}
			if id, ok := v.Interface().(ast.Identifier); ok && id.Name == "require" {
				namesRequire = true // a property name: x.require
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
	return why, namesRequire
}
