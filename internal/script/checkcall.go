package script

import "github.com/grafana/sobek"

// checkCall is k6's check(val, sets[, tags]): each own enumerable
// property of sets, in order, is a check named by its key, passing when
// the value is truthy or, for a function, when its result on val is; a
// function that throws throws out of check. It returns whether every
// check passed (true when sets is not an object).
//
// It is on the path of most iterations, so a function is called the way
// sobek's own built-ins call a callback (Array.prototype.forEach): its Go
// call function, taken from the function object, called directly inside
// this native call, whose exception handling already covers it — not
// through sobek.AssertFunction, whose Callable costs two allocations and
// a try frame of its own per call. Its one argument is passed in the VU's
// argument array (vu.args), free once the exec function's call has copied
// its own argument onto sobek's stack.
func (vu *VU) checkCall(call sobek.FunctionCall) sobek.Value {
	val, tags := call.Argument(0), call.Argument(2)
	sets, ok := call.Argument(1).(*sobek.Object)
	if !ok {
		return vu.rt.ToValue(true)
	}
	all := true
	var room [8]string // the keys of most checks' objects, on the stack
	for _, name := range appendOwnKeys(room[:0], sets) {
		c := sets.Get(name)
		if c == nil { // deleted by an earlier check: undefined, a failure
			c = sobek.Undefined()
		}
		var pass bool
		if f := callFunc(c); f != nil {
			vu.args[0] = val
			pass = f(sobek.FunctionCall{This: sobek.Undefined(), Arguments: vu.args[:]}).ToBoolean()
			vu.args[0] = nil
		} else if fn, ok := sobek.AssertFunction(c); ok {
			// a callable whose Go form is not a call function (a proxy,
			// a class, a wrapped Go function): through its Callable
			v, err := fn(sobek.Undefined(), val)
			if err != nil {
				panic(err)
			}
			pass = v.ToBoolean()
		} else {
			pass = c.ToBoolean()
		}
		vu.check(name, pass, tags)
		all = all && pass
	}
	vu.noteStack() // a check's function is often the iteration's deepest call
	return vu.rt.ToValue(all)
}

// callFunc is the call function of a JavaScript or native function
// object (what its Export gives), or nil for any other value. Only a
// function's Export is taken: it has no side effect and builds nothing.
func callFunc(v sobek.Value) func(sobek.FunctionCall) sobek.Value {
	o, ok := v.(*sobek.Object)
	if !ok || o.ClassName() != "Function" {
		return nil
	}
	f, _ := o.Export().(func(sobek.FunctionCall) sobek.Value)
	return f
}
