package script

import (
	"fmt"
	"sync"

	"github.com/grafana/sobek"
)

// sharedArrays are a run's k6/data SharedArrays by name: each built once,
// by the first VU whose init context makes it, and kept as one JSON text
// per element that every VU reads.
type sharedArrays struct {
	mu sync.Mutex
	m  map[string][]string
}

// dataModule is "k6/data": SharedArray(name, fn). fn runs once in the
// whole run; every VU's SharedArray is a read-only array over the shared
// elements, each parsed from its JSON when the script reads it, so a VU
// holds no copy of the data.
func (vu *VU) dataModule() *sobek.Object {
	rt := vu.rt
	o := rt.NewObject()
	_ = o.Set("SharedArray", func(call sobek.ConstructorCall) *sobek.Object {
		if !vu.inInit {
			vu.throw("new SharedArray(...): shared arrays must be made in the init context")
		}
		name := call.Argument(0).String()
		fn, ok := sobek.AssertFunction(call.Argument(1))
		if name == "" || !ok {
			vu.throw("new SharedArray(name, function): want a name and a function returning an array")
		}
		items, err := vu.r.shared.get(name, func() ([]string, error) { return vu.buildShared(fn) })
		if err != nil {
			vu.throw("SharedArray %q: %v", name, err)
		}
		return rt.NewDynamicArray(&sharedArray{vu: vu, items: items})
	})
	return o
}

// get returns the elements of the array name, building them on first use.
func (s *sharedArrays) get(name string, build func() ([]string, error)) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if items, ok := s.m[name]; ok {
		return items, nil
	}
	items, err := build()
	if err != nil {
		return nil, err
	}
	if s.m == nil {
		s.m = map[string][]string{}
	}
	s.m[name] = items
	return items, nil
}

// buildShared calls fn and keeps its array's elements as JSON.
func (vu *VU) buildShared(fn sobek.Callable) ([]string, error) {
	v, err := fn(sobek.Undefined())
	if err != nil {
		return nil, vu.r.scriptError(err)
	}
	arr, ok := v.(*sobek.Object)
	if !ok || arr.ClassName() != "Array" {
		return nil, fmt.Errorf("the function must return an array, got %v", v)
	}
	n := int(arr.Get("length").ToInteger())
	items := make([]string, n)
	for i := range n {
		s, err := vu.stringify(arr.Get(fmt.Sprint(i)))
		if err != nil {
			return nil, err
		}
		items[i] = s
	}
	return items, nil
}

// sharedArray is one VU's view of a SharedArray: read-only.
type sharedArray struct {
	vu    *VU
	items []string
}

func (a *sharedArray) Len() int { return len(a.items) }

func (a *sharedArray) Get(i int) sobek.Value {
	if i < 0 || i >= len(a.items) {
		return sobek.Undefined()
	}
	if a.items[i] == "" {
		return sobek.Undefined()
	}
	v, err := a.vu.parseJSON(a.items[i])
	if err != nil {
		panic(err)
	}
	return v
}

func (a *sharedArray) Set(int, sobek.Value) bool {
	a.vu.throw("a SharedArray is read-only")
	return false
}

func (a *sharedArray) SetLen(int) bool {
	a.vu.throw("a SharedArray is read-only")
	return false
}
