package script

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/sobek"
)

// The layout is found in the sobek built in: if an upgrade moves its
// fields, check() still works (through Keys) but loses its fast walk, and
// this says so.
func TestOwnKeysLayoutFound(t *testing.T) {
	if plain() == nil {
		t.Fatal("sobek's plain-object layout was not found or disagreed with Keys: check() lists keys through Keys")
	}
}

// appendOwnKeys lists what Keys lists, in its order, for plain objects
// built every way the probes are and by random sequences of additions,
// deletions, property definitions and enumerations, and for objects it
// leaves to Keys (arrays, functions, proxies, Go values, class instances
// with accessors on their prototype).
func TestOwnKeysLikeKeys(t *testing.T) {
	rt := sobek.New()
	// a Go value (a map's keys would come in a new order on each walk)
	_ = rt.Set("goStruct", &struct{ B, A int }{1, 2})
	srcs := append([]string(nil), layoutProbes...)
	srcs = append(srcs,
		`({})`,
		`[1, 2, 3]`,
		`(() => { const a = [1, 2]; a.x = 1; return a; })()`,
		`(function f(a, b) {})`,
		`new Proxy({ a: 1, b: 2 }, {})`,
		`new Proxy({ a: 1 }, { ownKeys: () => ['z', 'a'], getOwnPropertyDescriptor: (t, k) => ({ value: 1, enumerable: k === 'a', configurable: true }) })`,
		`goStruct`,
		`new (class { constructor() { this.y = 1; this.x = 2; } get g() { return 1; } })()`,
		`new String('abc')`,
		`(() => { const o = { a: 1 }; Object.preventExtensions(o); return o; })()`,
		`({ 4294967295: 1, 4294967294: 2, '01': 3, 0: 4, a: 5 })`,
		`({ [Symbol('s')]: 1, a: 2 })`,
	)
	r := rand.New(rand.NewPCG(26, 13))
	pool := []string{"a", "b", "status is 200", "0", "1", "7", "10", "01", "2x", "é", "✓ ok", "", "4294967294"}
	for range 400 {
		var b strings.Builder
		b.WriteString("(() => { const o = {};")
		for range 1 + r.IntN(12) {
			k := fmt.Sprintf("%q", pool[r.IntN(len(pool))])
			switch r.IntN(6) {
			case 0, 1:
				fmt.Fprintf(&b, " o[%s] = 1;", k)
			case 2:
				fmt.Fprintf(&b, " delete o[%s];", k)
			case 3:
				fmt.Fprintf(&b, " Object.defineProperty(o, %s, { value: 1, enumerable: %t, configurable: true });", k, r.IntN(2) == 0)
			case 4:
				fmt.Fprintf(&b, " Object.defineProperty(o, %s, { get() { return 1; }, enumerable: %t, configurable: true });", k, r.IntN(2) == 0)
			case 5:
				b.WriteString(" Object.keys(o);")
			}
		}
		b.WriteString(" return o; })()")
		srcs = append(srcs, b.String())
	}
	l := plain()
	if l == nil {
		t.Fatal("no layout")
	}
	fast := 0
	for _, src := range srcs {
		v, err := rt.RunString(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		o := v.(*sobek.Object)
		want := o.Keys()
		got := appendOwnKeys(nil, o)
		if !slices.Equal(got, want) {
			t.Errorf("%s: keys %q, Keys %q", src, got, want)
		}
		if _, ok := l.base(o); ok {
			fast++
		}
		// and after Keys has put the object's names in order
		if got := appendOwnKeys([]string{"before"}, o); !slices.Equal(got, append([]string{"before"}, want...)) {
			t.Errorf("%s, second walk: keys %q, want %q after the slice's own", src, got, want)
		}
	}
	t.Logf("%d of %d objects read as plain objects", fast, len(srcs))
	if fast < 300 {
		t.Errorf("only %d of %d objects were read as plain objects", fast, len(srcs))
	}
}

// A plain object's keys are listed with no allocation when they are ASCII
// and fit the slice given.
func TestOwnKeysAllocateNothing(t *testing.T) {
	rt := sobek.New()
	v, err := rt.RunString(`({ 'status is 200': () => true, 'body size': 1, 2: 0 })`)
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*sobek.Object)
	o.Keys() // puts "2" first, as a first enumeration does
	var room [8]string
	var got []string
	if n := testing.AllocsPerRun(100, func() { got = appendOwnKeys(room[:0], o) }); n != 0 {
		t.Errorf("%v allocations per walk, want 0", n)
	}
	if want := []string{"2", "status is 200", "body size"}; !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
}
