package bundle

import (
	"slices"
	"strconv"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/file"
	"github.com/grafana/sobek/token"
	"github.com/grafana/sobek/unistring"
)

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
	p := &PlainModule{Name: m.name, assigned: syn.assigned, evals: syn.evals}
	var (
		body     []ast.Statement
		consts   []*ast.Binding
		exports  []ast.Expression
		imported = map[unistring.String]bool{}
	)
	base := file.Idx(prog.File.Base())
	p.base = base
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
	p.compile = func(exports []ast.Expression) (*sobek.Program, error) {
		ret := &ast.ReturnStatement{Return: end, Argument: &ast.ArrowFunctionLiteral{
			Start: end, ParameterList: &ast.ParameterList{Opening: end, List: []*ast.Binding{{Target: &ast.Identifier{Name: sink, Idx: end}}}, Closing: end},
			Body: &ast.ExpressionBody{Expression: &ast.CallExpression{Callee: &ast.Identifier{Name: sink, Idx: end}, LeftParenthesis: end, ArgumentList: exports, RightParenthesis: end}},
		}}
		fn := &ast.FunctionLiteral{
			// Anonymous: a module body's frames in stack traces have no name.
			Function:        base,
			ParameterList:   params,
			Body:            &ast.BlockStatement{LeftBrace: base, List: append(list[:len(list):len(list)], ret), RightBrace: end},
			DeclarationList: prog.DeclarationList,
		}
		return compilePlain(&ast.Program{Body: []ast.Statement{&ast.ExpressionStatement{Expression: fn}}, File: prog.File})
	}
	compiled, err := p.compile(exports)
	if err != nil {
		return nil, "does not compile as a function: " + err.Error()
	}
	p.Program = compiled
	return p, ""
}

// ProgramFor is Program with the function it gives passing the value of
// the export name alone (nil: name is not an export; then Program is the
// one to run), compiled on first use for each name and kept. The module's
// code is the same; what differs is what sobek keeps: a top-level binding
// that no function of the module reaches lives in the function's frame,
// not its scope, and is gone once the module's code has run. Program's
// function reaches every export, so a VU that reads one export alone (a
// scenario's VU, its exec function) kept the others for its life: the
// script's options object, its setup's helpers.
func (p *PlainModule) ProgramFor(name string) *sobek.Program {
	k := slices.Index(p.Exports, name)
	if k < 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if prg, ok := p.only[name]; ok {
		return prg
	}
	prg, err := p.compile([]ast.Expression{&ast.Identifier{Name: p.locals[k], Idx: p.base}})
	if err != nil {
		prg = nil // compiled whole already; run that
	}
	if p.only == nil {
		p.only = map[string]*sobek.Program{}
	}
	p.only[name] = prg
	return prg
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
