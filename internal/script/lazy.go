package script

import (
	"slices"

	"github.com/grafana/sobek"
)

// lazyObject is a module object (k6/http, k6, k6/execution's parts, the
// console, crypto) whose members become JavaScript values on first read.
// A native function costs a VU about a kilobyte of runtime objects, and a
// module offers dozens that a script mostly never touches: made eagerly,
// they were most of a VU's memory and init time. Here a member costs its
// Go value until the script reads it; once read, it is the same value on
// every later read (http.get === http.get), and a script may replace or
// delete members as on any object.
type lazyObject struct {
	rt *sobek.Runtime
	// props holds each member: a sobek.Value once made, a lazyGetter
	// (an accessor: read anew each time, assignment refused), or the Go
	// value rt.ToValue will make it from.
	props map[string]any
}

// lazyMake is a member made by a function on first read (a nested
// object); a nested map[string]any member becomes a lazy object itself.
type lazyMake func() sobek.Value

// lazyGetter is a read-only accessor member: its value is computed on
// every read.
type lazyGetter func() any

// lazy makes a lazy object with the given members (Go functions, values,
// lazyGetters).
func (vu *VU) lazy(members map[string]any) *sobek.Object {
	return vu.rt.NewDynamicObject(&lazyObject{rt: vu.rt, props: members})
}

func (o *lazyObject) Get(key string) sobek.Value {
	v, ok := o.props[key]
	if !ok {
		return nil
	}
	switch m := v.(type) {
	case sobek.Value:
		return m
	case lazyGetter:
		return o.rt.ToValue(m())
	}
	var made sobek.Value
	switch m := v.(type) {
	case lazyMake:
		made = m()
	case map[string]any:
		made = o.rt.NewDynamicObject(&lazyObject{rt: o.rt, props: m})
	default:
		made = o.rt.ToValue(v)
	}
	o.props[key] = made
	return made
}

// Set replaces a member; an accessor has no setter, so assigning it fails
// (a TypeError in a module, which is strict code), as before.
func (o *lazyObject) Set(key string, val sobek.Value) bool {
	if _, ok := o.props[key].(lazyGetter); ok {
		return false
	}
	o.props[key] = val
	return true
}

func (o *lazyObject) Has(key string) bool {
	_, ok := o.props[key]
	return ok
}

func (o *lazyObject) Delete(key string) bool {
	if _, ok := o.props[key].(lazyGetter); ok {
		return false
	}
	delete(o.props, key)
	return true
}

// Keys are the members in name order (a plain object's would be in
// insertion order; the eager objects were filled from Go maps, in no
// order at all).
func (o *lazyObject) Keys() []string {
	keys := make([]string, 0, len(o.props))
	for k := range o.props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
