package script

import (
	"reflect"
	"slices"
	"sync"
	"unsafe"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/unistring"
)

// appendOwnKeys appends o's own enumerable string keys, in order, to keys:
// what o.Keys() lists, read when the call is made (a later change to o
// does not change the list).
//
// sobek's Keys allocates about nine times for one key (its iterators,
// their method values, a copy of the names, the boxed names, the list).
// For a plain object (sobek's baseObject: an object literal, a class
// instance, Object.create(null)), and only for one, its names are read
// here without those: in the order sobek keeps them, skipping what its
// enumeration skips — a name with no value, a property not enumerable.
// sobek puts integer names first when it enumerates an object (its
// fixPropOrder, run on demand); an object holding a name not yet so
// ordered that could be an integer (a digit first) goes through Keys. So
// does every other object — arrays, functions, proxies, Go values — and
// every object if sobek's layout is not the one this was written against
// (plainLayout). keys should have room on the caller's stack for the usual
// few keys: nothing is then allocated for a plain object with ASCII names.
func appendOwnKeys(keys []string, o *sobek.Object) []string {
	if l := plain(); l != nil {
		return l.appendKeys(keys, o)
	}
	return append(keys, o.Keys()...)
}

// appendKeys is appendOwnKeys through the layout l.
func (l *objectLayout) appendKeys(keys []string, o *sobek.Object) []string {
	b, ok := l.base(o)
	if !ok {
		return append(keys, o.Keys()...)
	}
	names := *(*[]unistring.String)(unsafe.Add(b, l.names))
	sorted := *(*int)(unsafe.Add(b, l.sorted))
	for _, n := range names[min(sorted, len(names)):] {
		if n != "" && '0' <= n[0] && n[0] <= '9' {
			return append(keys, o.Keys()...)
		}
	}
	values := *(*map[unistring.String]sobek.Value)(unsafe.Add(b, l.values))
	for _, n := range names {
		v := values[n]
		if v == nil || !l.enumerable(v) {
			continue
		}
		keys = append(keys, n.String())
	}
	return keys
}

// objectLayout is where sobek keeps a plain object's own properties,
// found by reflection on the version built in and checked against Keys
// (probePlain) before any object is read through it.
type objectLayout struct {
	self    uintptr        // offset of Object's self field (objectImpl, an interface)
	baseTab unsafe.Pointer // self's method table for a plain object (*sobek.baseObject)
	// offsets in baseObject of values (map[unistring.String]Value),
	// propNames ([]unistring.String) and lastSortedPropLen (int)
	values, names, sorted uintptr
	propType              reflect.Type // *sobek.valueProperty: a value with flags
	propEnumerable        uintptr      // offset of its enumerable field (bool)
}

// base is o's baseObject, if o is a plain object: self's interface
// words are read, and its method table compared with a plain object's
// (one per interface and type in a program), so that the test costs no
// reflection.
func (l *objectLayout) base(o *sobek.Object) (unsafe.Pointer, bool) {
	self := (*[2]unsafe.Pointer)(unsafe.Add(unsafe.Pointer(o), l.self))
	if self[0] != l.baseTab || self[1] == nil {
		return nil, false
	}
	return self[1], true
}

// enumerable is whether an own property's stored value is enumerable: a
// plain value always is, a valueProperty when its flag says so.
func (l *objectLayout) enumerable(v sobek.Value) bool {
	if reflect.TypeOf(v) != l.propType {
		return true
	}
	return *(*bool)(unsafe.Add(reflect.ValueOf(v).UnsafePointer(), l.propEnumerable))
}

// plain is the layout, or nil when sobek's objects are not laid out as
// expected: every walk then goes through Keys. The probe, a runtime and
// the compiling of its objects, runs on a goroutine of its own: its deep
// frames would grow the stack of the VU whose check came first.
var plain = sync.OnceValue(func() *objectLayout {
	ch := make(chan *objectLayout)
	go func() { ch <- probePlain() }()
	return <-ch
})

// probePlain finds the layout by reflection on objects of a runtime of
// its own, and keeps it only if every field has the expected name and
// type and walking probe objects through it gives Keys' lists.
func probePlain() *objectLayout {
	var l objectLayout
	ot := reflect.TypeFor[sobek.Object]()
	f, ok := ot.FieldByName("self")
	if !ok || f.Type.Kind() != reflect.Interface || f.Type.NumMethod() == 0 || len(f.Index) != 1 {
		return nil
	}
	l.self = f.Offset

	rt := sobek.New()
	o := rt.NewObject()
	bt := reflect.ValueOf(o).Elem().Field(f.Index[0]).Elem().Type()
	if bt.Kind() != reflect.Pointer || bt.Elem().Kind() != reflect.Struct || bt.Elem().Name() != "baseObject" || bt.Elem().PkgPath() != ot.PkgPath() {
		return nil
	}
	l.baseTab = (*[2]unsafe.Pointer)(unsafe.Add(unsafe.Pointer(o), l.self))[0]
	bt = bt.Elem()
	for _, want := range []struct {
		name string
		typ  reflect.Type
		off  *uintptr
	}{
		{"values", reflect.TypeFor[map[unistring.String]sobek.Value](), &l.values},
		{"propNames", reflect.TypeFor[[]unistring.String](), &l.names},
		{"lastSortedPropLen", reflect.TypeFor[int](), &l.sorted},
	} {
		f, ok := bt.FieldByName(want.name)
		if !ok || f.Type != want.typ || len(f.Index) != 1 {
			return nil
		}
		*want.off = f.Offset
	}

	// a property with flags: its stored value's type and enumerable field
	if rt.Try(func() {
		_ = o.DefineDataProperty("hidden", sobek.Undefined(), sobek.FLAG_TRUE, sobek.FLAG_TRUE, sobek.FLAG_FALSE)
	}) != nil {
		return nil
	}
	b, _ := l.base(o)
	v := (*(*map[unistring.String]sobek.Value)(unsafe.Add(b, l.values)))["hidden"]
	l.propType = reflect.TypeOf(v)
	if l.propType == nil || l.propType.Kind() != reflect.Pointer || l.propType.Elem().Kind() != reflect.Struct || l.propType.Elem().Name() != "valueProperty" || l.propType.Elem().PkgPath() != ot.PkgPath() {
		return nil
	}
	f, ok = l.propType.Elem().FieldByName("enumerable")
	if !ok || f.Type.Kind() != reflect.Bool || len(f.Index) != 1 {
		return nil
	}
	l.propEnumerable = f.Offset

	if !l.agrees(rt) {
		return nil
	}
	return &l
}

// layoutProbes are objects whose keys the layout must list as Keys does:
// flags, deletions, integer names in and out of order, non-ASCII names.
var layoutProbes = []string{
	`({ a: 1, b: () => 2, 'c d': 3 })`,
	`(() => { const o = { x: 1, y: 2, z: 3 }; delete o.y; o.w = 4; return o; })()`,
	`(() => { const o = { a: 1 }; Object.defineProperty(o, 'h', { value: 1, enumerable: false }); Object.defineProperty(o, 'g', { get() { return 1; }, enumerable: true }); o.b = 2; return o; })()`,
	`(() => { const o = { b: 1, 2: 2, a: 3, 1: 4 }; Object.keys(o); o.c = 6; return o; })()`,
	`(() => { const o = { b: 1, 2: 2, a: 3, 1: 4 }; Object.keys(o); o[0] = 5; o.c = 6; return o; })()`,
	`({ 'é': 1, 'ok': 2, '✓ status': 3 })`,
	`Object.freeze({ f: 1, g: 2 })`,
	`Object.create(null)`,
}

// agrees says whether the layout lists each probe object's keys as Keys
// does.
func (l *objectLayout) agrees(rt *sobek.Runtime) bool {
	for _, src := range layoutProbes {
		v, err := rt.RunString(src)
		if err != nil {
			return false
		}
		o, ok := v.(*sobek.Object)
		if !ok {
			return false
		}
		if _, ok := l.base(o); !ok {
			return false
		}
		if !slices.Equal(l.appendKeys(nil, o), o.Keys()) {
			return false
		}
	}
	return true
}
