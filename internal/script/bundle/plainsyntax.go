package bundle

import (
	"reflect"
	"strings"

	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/token"
	"github.com/grafana/sobek/unistring"
)

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
	// require is whether the code might name require: as an identifier,
	// a property, in a string or template, or through eval.
	require bool
	// evals is whether the code calls eval (in a function): its code
	// could assign any of the module's bindings.
	evals bool
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
	targets := func(v reflect.Value) { assignTargets(v, info.assigned) }
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
					if n.Name == "eval" {
						info.evals, info.require, info.jobs = true, true, true
					}
				case *ast.StringLiteral:
					info.require = info.require || strings.Contains(n.Value.String(), "require")
					info.jobs = info.jobs || jobNames[n.Value]
				case *ast.TemplateElement:
					info.require = info.require || strings.Contains(n.Literal, "require")
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

// nodeType and astPkg tell a reflect walk of a parsed file its nodes.
var (
	nodeType = reflect.TypeOf((*ast.Node)(nil)).Elem()
	astPkg   = reflect.TypeOf(ast.Identifier{}).PkgPath()
)

// assignTargets adds an assignment target's names to into,
// conservatively: every identifier in it (a destructuring pattern's
// defaults and computed keys too), but not a member's (x.y = 1 assigns
// no binding; what x holds is walked).
func assignTargets(v reflect.Value, into map[unistring.String]bool) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		switch n := v.Interface().(type) {
		case *ast.Identifier:
			into[n.Name] = true
		case *ast.DotExpression, *ast.BracketExpression, *ast.PrivateDotExpression:
			return
		}
		assignTargets(v.Elem(), into)
	case reflect.Struct:
		if v.Type().PkgPath() != astPkg {
			return
		}
		if id, ok := v.Interface().(ast.Identifier); ok {
			into[id.Name] = true
		}
		for i := range v.NumField() {
			assignTargets(v.Field(i), into)
		}
	case reflect.Slice:
		for i := range v.Len() {
			assignTargets(v.Index(i), into)
		}
	}
}
