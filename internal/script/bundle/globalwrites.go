package bundle

import (
	"reflect"
	"slices"
	"strings"

	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/token"
	"github.com/grafana/sobek/unistring"
)

// GlobalWrites are the names the script's modules (those loaded so far:
// a dynamic import may load more) might assign by bare name or delete as
// a property, sorted; all is whether some module's code may write names
// no scan can see (it names eval, or the Function constructor with a
// "use strict" string), so that every global must be taken as written.
//
// The runtime keeps some globals on the global object's prototype, which
// sobek lets strict code (every module) assign by bare name only when the
// name is an own property of the global object; it makes the names
// written here own ones in each VU. The scan errs only one way: a name it
// gives may be a local binding (let console; console = 1), a property of
// any object (delete o.console), but a bare assignment of a global in a
// loaded module is never missed. The slice is replaced, never changed, as
// modules load: a caller may keep it.
func (b *Bundle) GlobalWrites() (names []string, all bool) {
	if w := b.writes.Load(); w != nil {
		return w.names, w.all
	}
	return nil, false
}

// writeSet is GlobalWrites' answer, replaced whole as modules load: read
// without b.mu by every VU made, while a dynamic import may hold it.
type writeSet struct {
	names []string
	all   bool
}

// addWrites adds a module's writes (globalWrites) to the bundle's; b.mu
// is held.
func (b *Bundle) addWrites(names []string, all bool) {
	w := writeSet{}
	if old := b.writes.Load(); old != nil {
		w = *old
	}
	n := len(w.names)
	for _, name := range names {
		if _, found := slices.BinarySearch(w.names[:n], name); !found {
			w.names = append(slices.Clip(w.names), name)
		}
	}
	if len(w.names) == n && (w.all || !all) {
		return
	}
	slices.Sort(w.names)
	w.all = w.all || all
	b.writes.Store(&w)
}

// globalWrites scans a module's code for what GlobalWrites reports: the
// names of every assignment target (=, the compound and logical
// assignments, destructuring, ++ and --, a for-in or for-of head) in any
// scope, the property names deleted (delete x.console, delete
// x["console"]), and whether the code names eval or, along with a string
// holding "use strict" (not a directive), Function: a direct eval in a module is strict
// code, and so is a function made from a string that says so, and what
// either assigns is known only when it runs.
func globalWrites(prog *ast.Program) (names []string, all bool) {
	set := map[unistring.String]bool{}
	var evals, function, useStrict bool
	// directives are "use strict" statements, which say nothing of a
	// string given to Function.
	directives := map[*ast.StringLiteral]bool{}
	visit := func(n ast.Node) {
		switch n := n.(type) {
		case *ast.ExpressionStatement:
			if s, ok := n.Expression.(*ast.StringLiteral); ok {
				directives[s] = true
			}
		case *ast.AssignExpression:
			assignTargets(reflect.ValueOf(n.Left), set)
		case *ast.UnaryExpression:
			switch n.Operator {
			case token.INCREMENT, token.DECREMENT:
				assignTargets(reflect.ValueOf(n.Operand), set)
			case token.DELETE:
				switch m := n.Operand.(type) {
				case *ast.DotExpression:
					set[m.Identifier.Name] = true
				case *ast.BracketExpression:
					if s, ok := m.Member.(*ast.StringLiteral); ok {
						set[s.Value] = true
					}
				}
			}
		case *ast.ForIntoExpression:
			assignTargets(reflect.ValueOf(n.Expression), set)
		case *ast.Identifier:
			evals = evals || n.Name == "eval"
			function = function || n.Name == "Function"
		case *ast.StringLiteral:
			evals = evals || n.Value == "eval"
			function = function || n.Value == "Function"
			useStrict = useStrict || !directives[n] && strings.Contains(n.Value.String(), "use strict")
		case *ast.TemplateElement:
			useStrict = useStrict || strings.Contains(n.Literal, "use strict")
		}
	}
	for _, st := range prog.Body {
		walkNodes(reflect.ValueOf(st), visit)
	}
	for n := range set {
		names = append(names, n.String())
	}
	slices.Sort(names)
	return names, evals || function && useStrict
}

// walkNodes calls visit with every node under v, a property name (x.eval's
// eval, an ast.Identifier held by value) as an *ast.Identifier too.
func walkNodes(v reflect.Value, visit func(ast.Node)) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		if v.Kind() == reflect.Pointer && v.Type().Implements(nodeType) {
			visit(v.Interface().(ast.Node))
		}
		walkNodes(v.Elem(), visit)
	case reflect.Struct:
		if v.Type().PkgPath() != astPkg {
			return
		}
		if id, ok := v.Interface().(ast.Identifier); ok {
			visit(&id)
		}
		for i := range v.NumField() {
			walkNodes(v.Field(i), visit)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkNodes(v.Index(i), visit)
		}
	}
}
