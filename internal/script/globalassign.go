package script

import (
	"maps"
	"slices"

	"github.com/grafana/sobek"
)

// webGlobalNames are globalTable's names, sorted: the order in which a
// VU makes the ones its script writes own properties.
var webGlobalNames = slices.Sorted(maps.Keys(globalTable))

// ownWebGlobals makes each web global (globalTable) that the script's
// modules may assign by bare name or delete (bundle.GlobalWrites) an own
// property of the VU's global object, holding the value the lazy
// prototype makes, and takes it off the prototype.
//
// Why: sobek lets strict code (every module) assign a global by name only
// when it is an own property of the global object, so on the prototype
// `console = {...}` was a ReferenceError; and `delete globalThis.console`
// left the prototype's in view. The property is a plain data property
// (writable, enumerable, configurable), as the global object's own
// properties are when set from Go, and as these were before they moved
// to the prototype. A script that writes none of these names keeps them
// all lazy: no value made, no own property, nothing per VU.
//
// It is idempotent and may run again when a dynamic import loads more
// modules (Runner.imported): a name already own, or deleted from the
// prototype by the script, is left as it is, and a value the script put
// on the global object itself (globalThis.console = x) stays.
func (vu *VU) ownWebGlobals() {
	if vu.r.bundle == nil {
		return // the setup VU's runtime, made before the script loads: Load calls this once it has
	}
	names, all := vu.r.bundle.GlobalWrites()
	if len(names) == 0 && !all {
		return
	}
	g := vu.rt.GlobalObject()
	proto := g.Prototype()
	if proto == nil {
		return
	}
	web, ok := proto.Export().(*lazyObject)
	if !ok {
		return // the script set the global object's prototype: nothing lazy in view
	}
	for _, name := range webGlobalNames {
		if _, written := slices.BinarySearch(names, name); !written && !all || !web.Has(name) {
			continue
		}
		v := web.Get(name)
		web.Delete(name)
		if g.Get(name) == nil {
			_ = g.Set(name, v)
		}
	}
}

// imported is bundle.Options.Imported: a dynamic import in rt loaded
// modules, which may write more web globals by name.
func (r *Runner) imported(rt *sobek.Runtime) {
	if vu := r.vuOf(rt); vu != nil {
		vu.ownWebGlobals()
	}
}
