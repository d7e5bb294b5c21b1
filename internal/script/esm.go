package script

import (
	"fmt"
	"slices"
	"strings"

	"github.com/grafana/sobek"
)

// supportedModules are the k6 modules the runtime provides (vu.module
// builds them), as scripts import them.
var supportedModules = []string{"k6", "k6/crypto", "k6/data", "k6/encoding", "k6/execution", "k6/html", "k6/http", "k6/metrics", "k6/timers", "k6/x/throttle",
	"k6/experimental/fs", "k6/experimental/csv", // fscsv.go
	"k6/ws", "k6/websockets", "k6/experimental/websockets", "k6/net/grpc"} // protocols: protocols.go

// k6Record is a k6 module as an ES module record, one per run, shared by
// every VU like the script's own records. Its exports are the keys of the
// module object a VU builds (vu.module), its default export that object;
// each VU evaluates it to its own object.
type k6Record struct {
	r     *Runner
	name  string
	names []string // exported names, "default" among them
}

// k6Records makes the record of every k6 module the runtime provides,
// once per run in Load: the setup VU's module objects give their exported
// names, which linking the script needs. Made up front, a dynamic import
// after Load never touches the setup VU's runtime from another goroutine.
func (r *Runner) k6Records() map[string]*k6Record {
	recs := make(map[string]*k6Record, len(supportedModules))
	for _, name := range supportedModules {
		obj, _ := r.setupVU.require(name).(*sobek.Object)
		recs[name] = &k6Record{r: r, name: name, names: append(obj.Keys(), "default")}
	}
	return recs
}

// k6Module is the bundle's hook for a k6 module the script imports: its
// record, or the error refusing a module throttle does not provide.
func (r *Runner) k6Module(name string) (sobek.ModuleRecord, error) {
	rec, ok := r.k6[name]
	if !ok {
		return nil, fmt.Errorf("module %q is not supported by throttle (it provides %s)", name, strings.Join(supportedModules, ", "))
	}
	return rec, nil
}

func (m *k6Record) GetExportedNames(callback func([]string), _ ...sobek.ModuleRecord) bool {
	callback(m.names)
	return true
}

func (m *k6Record) ResolveExport(name string, _ ...sobek.ResolveSetElement) (*sobek.ResolvedBinding, bool) {
	if !slices.Contains(m.names, name) {
		return nil, false
	}
	return &sobek.ResolvedBinding{Module: m, BindingName: name}, false
}

func (m *k6Record) Link() error { return nil }

// Evaluate gives the VU that owns rt its instance of the module.
func (m *k6Record) Evaluate(rt *sobek.Runtime) *sobek.Promise {
	p, resolve, reject := rt.NewPromise()
	vu := m.r.vuOf(rt)
	if vu == nil {
		_ = reject(rt.NewGoError(fmt.Errorf("module %q: no VU for this runtime", m.name)))
		return p
	}
	obj, _ := vu.require(m.name).(*sobek.Object)
	// Resolved with a dynamic object, not the instance itself: sobek
	// would wrap a Go struct through reflect and keep the type's
	// reflection in the runtime for the VU's life (0.9 KiB a VU).
	_ = resolve(rt.NewDynamicObject(&k6Instance{obj: obj}))
	return p
}

// k6Instance is a k6 module in one VU: its object's properties are the
// named exports. As a DynamicObject it is only the value the evaluation
// promise carries to sobek (which exports it back), with no members.
type k6Instance struct{ obj *sobek.Object }

func (*k6Instance) Get(string) sobek.Value       { return nil }
func (*k6Instance) Set(string, sobek.Value) bool { return false }
func (*k6Instance) Has(string) bool              { return false }
func (*k6Instance) Delete(string) bool           { return false }
func (*k6Instance) Keys() []string               { return nil }

func (i *k6Instance) GetBindingValue(name string) sobek.Value {
	if name == "default" {
		return i.obj
	}
	return i.obj.Get(name)
}

// vuOf is the VU whose runtime rt is, while it lives.
func (r *Runner) vuOf(rt *sobek.Runtime) *VU {
	if v, ok := r.vus.Load(rt); ok {
		return v.(*VU)
	}
	return nil
}
