package script

import (
	"slices"

	"github.com/grafana/sobek"
)

// lazyObject is a module object (k6/http, k6, k6/execution's parts, the
// console, crypto, the web globals) whose members become JavaScript values
// on first read. A native function costs a VU about a kilobyte of runtime
// objects, and the modules offer dozens that a script mostly never
// touches: made eagerly, they were most of a VU's memory and init time.
// Here a member costs nothing (a shared table) or its Go value until the
// script reads it; once read, it is the same value on every later read
// (http.get === http.get), and a script may replace or delete members as
// on any object.
type lazyObject struct {
	rt *sobek.Runtime
	// props holds the VU's own members: a sobek.Value once made, a
	// lazyGetter (an accessor: read anew each time, assignment refused),
	// or the Go value it is made from (a lazyMake, a map[string]any for a
	// nested lazy object, anything else through rt.ToValue).
	props lazyProps
	// shared, if set, makes the members not in props from self: one table
	// for every VU (k6/http's); gone names the ones the script deleted. A
	// member the table gives as a sobek.Value (a string, shared by every
	// VU) is not kept in props: a primitive made once is the same value to
	// every runtime.
	shared map[string]func(self any) any
	self   any
	gone   map[string]bool
}

// lazyProps are a lazy object's own members, searched in order. An object
// has few: the members of a module its script read (k6/http's get, k6's
// check and sleep), what it assigned. A Go map of even one member cost a
// VU 336 bytes, a slice 32 a member.
type lazyProps []lazyProp

type lazyProp struct {
	name string
	v    any
}

// get is the member named name, if there is one.
func (p lazyProps) get(name string) (any, bool) {
	for i := range p {
		if p[i].name == name {
			return p[i].v, true
		}
	}
	return nil, false
}

// set sets or adds a member.
func (p *lazyProps) set(name string, v any) {
	for i := range *p {
		if (*p)[i].name == name {
			(*p)[i].v = v
			return
		}
	}
	*p = append(*p, lazyProp{name, v})
}

// del removes a member, if there is one.
func (p *lazyProps) del(name string) {
	for i := range *p {
		if (*p)[i].name == name {
			*p = append((*p)[:i], (*p)[i+1:]...)
			return
		}
	}
}

// propsOf makes lazyProps of members (no order: Keys sorts).
func propsOf(members map[string]any) lazyProps {
	p := make(lazyProps, 0, len(members))
	for k, v := range members {
		p = append(p, lazyProp{k, v})
	}
	return p
}

// sharedValue is a member a shared table gives as a value made once for
// every VU (a primitive is the same value to every runtime): returned as
// it is, not kept.
type sharedValue struct{ v sobek.Value }

// lazyMake is a member made by a function on first read (a nested
// object); a nested map[string]any member becomes a lazy object itself.
type lazyMake func() sobek.Value

// lazyGetter is a read-only accessor member: its value is computed on
// every read.
type lazyGetter func() any

// lazy makes a lazy object with the given members (Go functions, values,
// lazyGetters, lazyMakes).
func (vu *VU) lazy(members map[string]any) *sobek.Object {
	return vu.rt.NewDynamicObject(&lazyObject{rt: vu.rt, props: propsOf(members)})
}

func (o *lazyObject) Get(key string) sobek.Value {
	v, ok := o.props.get(key)
	if obj, made := v.(*sobek.Object); made {
		// a member made before (a function: http.get on every request),
		// by a type word compare, not the switch's interface case below
		return obj
	}
	if !ok {
		f, ok := o.shared[key]
		if !ok || o.gone[key] {
			return nil
		}
		v = f(o.self)
		if sv, shared := v.(*sharedValue); shared {
			return sv.v // by a type word compare (__ENV's values, read every iteration)
		}
	}
	var made sobek.Value
	switch m := v.(type) {
	case sobek.Value:
		return m // made, or shared by every VU (then nothing to keep)
	case lazyGetter:
		return o.rt.ToValue(m())
	case lazyMake:
		made = m()
	case map[string]any:
		made = o.rt.NewDynamicObject(&lazyObject{rt: o.rt, props: propsOf(m)})
	default:
		made = o.rt.ToValue(v)
	}
	o.props.set(key, made)
	return made
}

// Set replaces a member; an accessor has no setter, so assigning it fails
// (a TypeError in a module, which is strict code), as before.
func (o *lazyObject) Set(key string, val sobek.Value) bool {
	if v, _ := o.props.get(key); isGetter(v) {
		return false
	}
	o.props.set(key, val)
	delete(o.gone, key)
	return true
}

func isGetter(v any) bool { _, ok := v.(lazyGetter); return ok }

func (o *lazyObject) Has(key string) bool {
	if _, ok := o.props.get(key); ok {
		return true
	}
	_, ok := o.shared[key]
	return ok && !o.gone[key]
}

func (o *lazyObject) Delete(key string) bool {
	if v, _ := o.props.get(key); isGetter(v) {
		return false
	}
	o.props.del(key)
	if _, ok := o.shared[key]; ok {
		if o.gone == nil {
			o.gone = map[string]bool{}
		}
		o.gone[key] = true
	}
	return true
}

// Keys are the members in name order (a plain object's would be in
// insertion order; the eager objects were filled from Go maps, in no
// order at all).
func (o *lazyObject) Keys() []string {
	keys := make([]string, 0, len(o.props)+len(o.shared))
	for _, p := range o.props {
		keys = append(keys, p.name)
	}
	for k := range o.shared {
		if _, own := o.props.get(k); !own && !o.gone[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// lazyModule is a module object built whole on the first read of any of
// its members (or of its keys); until then it holds only its builder.
// Every operation goes to the built object.
type lazyModule struct {
	build func() sobek.Value
	obj   *sobek.Object
}

func (m *lazyModule) real() *sobek.Object {
	if m.obj == nil {
		m.obj, _ = m.build().(*sobek.Object)
		m.build = nil
	}
	return m.obj
}

func (m *lazyModule) Get(key string) sobek.Value { return m.real().Get(key) }

func (m *lazyModule) Set(key string, val sobek.Value) bool { return m.real().Set(key, val) == nil }

func (m *lazyModule) Has(key string) bool {
	for _, k := range m.real().Keys() {
		if k == key {
			return true
		}
	}
	return m.real().Get(key) != nil
}

func (m *lazyModule) Delete(key string) bool { return m.real().Delete(key) == nil }

func (m *lazyModule) Keys() []string { return m.real().Keys() }
