package script

import (
	"errors"
	"slices"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/script/bundle"
)

// plainModule is a VU's evaluated plain script (bundle.Plain): the
// function each module's code returned, which gives its exports' current
// values. It stands in for the module instances and namespace object of
// the ES module path.
type plainModule struct {
	rt   *sobek.Runtime
	p    *bundle.Plain
	gets []sobek.Callable
	// only, if set, is the one export the entry module's function gives
	// (a scenario's VU: its exec function; bundle.PlainModule.ProgramFor).
	only string
}

// evalPlain runs a plain script's module code in the VU, step by step in
// the ES modules' evaluation order: a k6 module is required, a module's
// function is called with its import bindings; then what they started is
// settled. Its errors come in the shapes the ES module path's do: an
// exception the code throws is read as that path reads its evaluation
// promise's rejection (thrownInInit), so that messages and stack traces
// come out alike.
//
// A scenario's VU reads one export, its exec function, once: its entry
// module's function is the one that gives that export alone, so that the
// module's other top-level bindings that no function of it reaches (the
// options object, as a rule) are not kept for the VU's life.
func (vu *VU) evalPlain(p *bundle.Plain) error {
	m := &plainModule{rt: vu.rt, p: p, gets: make([]sobek.Callable, len(p.Modules))}
	var (
		ret sobek.Value
		err error
	)
	for _, st := range p.Steps {
		if st.K6 != "" {
			vu.require(st.K6)
			continue
		}
		pm := p.Modules[st.Module]
		prg := pm.Program
		if pm == p.Main() && vu.ph != nil {
			if one := pm.ProgramFor(vu.ph.sc.Exec); one != nil {
				prg, m.only = one, vu.ph.sc.Exec
			}
		}
		if ret, err = vu.runPlain(m, pm, prg); err != nil {
			break
		}
		m.gets[st.Module], _ = sobek.AssertFunction(ret)
	}
	thrown, _ := err.(*sobek.Exception)
	if _, err = vu.settle(ret, err, vu.abortCh()); err != nil {
		if thrown != nil {
			return vu.thrownInInit(thrown)
		}
		return err
	}
	vu.plain = m
	return nil
}

// runPlain calls one module's function (prg: pm's Program, or one of
// its ProgramFor) with its import bindings: a k6 module's object or
// member, or an export of a module run before it.
func (vu *VU) runPlain(m *plainModule, pm *bundle.PlainModule, prg *sobek.Program) (sobek.Value, error) {
	args := make([]sobek.Value, len(pm.Args))
	for i, a := range pm.Args {
		var v sobek.Value
		switch {
		case a.K6 == "":
			v = m.value(a.Module, a.Name)
		case a.Name == "":
			v = vu.require(a.K6)
		default:
			v = vu.require(a.K6).ToObject(vu.rt).Get(a.Name)
		}
		if v == nil {
			v = sobek.Undefined()
		}
		args[i] = v
	}
	made, err := vu.rt.RunProgram(prg)
	if err != nil {
		return nil, err
	}
	fn, _ := sobek.AssertFunction(made)
	return fn(sobek.Undefined(), args...)
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

// value is the current value of module i's export name (nil if there is
// none, or the module has not run): the module's function passes every
// export's value to a function made for the call.
func (m *plainModule) value(i int, name string) sobek.Value {
	get := m.gets[i]
	k := slices.Index(m.p.Modules[i].Exports, name)
	if m.only != "" && i == len(m.gets)-1 {
		k = -1
		if name == m.only {
			k = 0
		}
	}
	if k < 0 || get == nil {
		return nil
	}
	var v sobek.Value
	take := func(call sobek.FunctionCall) sobek.Value {
		v = call.Argument(k)
		return sobek.Undefined()
	}
	if _, err := get(sobek.Undefined(), m.rt.ToValue(take)); err != nil {
		return nil
	}
	return v
}

// export is the current value of the entry module's export name.
func (m *plainModule) export(name string) sobek.Value { return m.value(len(m.gets)-1, name) }

// plainExports is the setup VU's view of a plain script's exports, read
// live like a namespace object's; it is read only by throttle.
type plainExports struct{ m *plainModule }

func (e plainExports) Get(key string) sobek.Value { return e.m.export(key) }
func (plainExports) Set(string, sobek.Value) bool { return false }
func (e plainExports) Has(key string) bool        { return slices.Contains(e.m.p.Main().Exports, key) }
func (plainExports) Delete(string) bool           { return false }
func (e plainExports) Keys() []string {
	return slices.Clone(e.m.p.Main().Exports) // in declaration order, as sobek's namespace
}
