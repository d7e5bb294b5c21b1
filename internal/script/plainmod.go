package script

import (
	"errors"
	"slices"
	"strconv"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/script/bundle"
)

// plainModule is a VU's evaluated plain script (bundle.Plain): the
// function its module code returned, which gives the exports' current
// values. It stands in for the module instance and namespace object of
// the ES module path.
type plainModule struct {
	p   *bundle.Plain
	get sobek.Callable
}

// evalPlain runs a plain script's module code in the VU: the k6 modules
// it imports are required in the ES module's evaluation order, then its
// function is called with the import bindings and what it started is
// settled. Its errors come in the shapes the ES module path's do: an
// exception the code throws is read as that path reads its evaluation
// promise's rejection (vu.rejection), so that messages and stack traces
// come out alike.
func (vu *VU) evalPlain(p *bundle.Plain) error {
	for _, name := range p.Requires {
		vu.require(name)
	}
	args := make([]sobek.Value, len(p.Args))
	for i, a := range p.Args {
		obj := vu.require(a.Module)
		if a.Name == "" {
			args[i] = obj
			continue
		}
		if v := obj.ToObject(vu.rt).Get(a.Name); v != nil {
			args[i] = v
		} else {
			args[i] = sobek.Undefined()
		}
	}
	made, err := vu.rt.RunProgram(p.Program)
	if err != nil {
		return err
	}
	fn, _ := sobek.AssertFunction(made)
	ret, err := fn(sobek.Undefined(), args...)
	thrown, _ := err.(*sobek.Exception)
	if _, err = vu.settle(ret, err, vu.abortCh()); err != nil {
		if thrown != nil {
			return vu.thrownInInit(thrown)
		}
		return err
	}
	get, _ := sobek.AssertFunction(ret)
	vu.plain = &plainModule{p: p, get: get}
	return nil
}

// thrownInInit is an exception the module code threw, as the ES module
// path reports it: sobek rejects the evaluation with the thrown value and
// makes it an exception again (vm.exceptionFromValue), which keeps an
// Error object's stack (the one a throw keeps too) and gives any other
// value none.
func (vu *VU) thrownInInit(ex *sobek.Exception) error {
	if o, ok := ex.Value().(*sobek.Object); ok && o.ClassName() == "Error" {
		return vu.rejection(vu.rt.ToValue(ex))
	}
	return errors.New(ex.Value().String())
}

// value is the current value of the export name (nil if there is none).
func (m *plainModule) value(name string) sobek.Value {
	i := slices.Index(m.p.Exports, name)
	if i < 0 {
		return nil
	}
	arr, err := m.get(sobek.Undefined())
	if err != nil {
		return nil
	}
	o, ok := arr.(*sobek.Object)
	if !ok {
		return nil
	}
	return o.Get(strconv.Itoa(i))
}

// plainExports is the setup VU's view of a plain script's exports, read
// live like a namespace object's; it is read only by throttle.
type plainExports struct{ m *plainModule }

func (e plainExports) Get(key string) sobek.Value { return e.m.value(key) }
func (plainExports) Set(string, sobek.Value) bool { return false }
func (e plainExports) Has(key string) bool        { return slices.Contains(e.m.p.Exports, key) }
func (plainExports) Delete(string) bool           { return false }
func (e plainExports) Keys() []string {
	return slices.Clone(e.m.p.Exports) // in declaration order, as sobek's namespace
}
