package script

import (
	"fmt"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/script/bundle"
)

// modulePaths are THROTTLE_MODULES' values: the plain path (where the
// script allows it) and the ES module path.
var modulePaths = []string{"", "esm"}

// TestConsoleAssignedByName: a module (strict code) replaces console by
// name, as k6 lets it, and the default function logs through the
// replacement; it was a ReferenceError ("console is not defined").
func TestConsoleAssignedByName(t *testing.T) {
	for _, mode := range modulePaths {
		t.Setenv(bundle.PlainEnv, mode)
		got := consoleOf(t, "c.js", `
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 2 } } };
const real = console;
console = { log: function (...a) { real.log('replaced:', ...a); } };
export default function () { console.log('x'); }
`)
		if want := "replaced: x,replaced: x"; got != want {
			t.Errorf("THROTTLE_MODULES=%q: console %q, want %q", mode, got, want)
		}
	}
}

// TestSetTimeoutAssignedByName: a replaced setTimeout is the one the
// script's calls reach (here it runs its callback at once, before the
// line after it; the real one would run it after).
func TestSetTimeoutAssignedByName(t *testing.T) {
	for _, mode := range modulePaths {
		t.Setenv(bundle.PlainEnv, mode)
		got := consoleOf(t, "t.js", `
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 1 } } };
export default function () {
  setTimeout = function (f) { f(); return 0; };
  setTimeout(() => console.log('callback'));
  console.log('after');
}
`)
		if want := "callback,after"; got != want {
			t.Errorf("THROTTLE_MODULES=%q: console %q, want %q", mode, got, want)
		}
	}
}

// TestWebGlobalsWritableByName: every web global, in every form of
// writing it by name that strict code has, in both module paths: each
// succeeds; once written it is an own data property (writable,
// enumerable, configurable) holding the value the prototype made; deleted
// from globalThis it is gone.
func TestWebGlobalsWritableByName(t *testing.T) {
	forms := []struct{ name, code, want string }{
		{"bare", "@ = globalThis.@; R('ok')", "ok"},
		{"in a function", "(function () { @ = globalThis.@; })(); R('ok')", "ok"},
		{"logical", "@ &&= globalThis.@; R('ok')", "ok"},
		{"destructuring", "[@] = [globalThis.@]; R('ok')", "ok"},
		{"for-of head", "for (@ of [globalThis.@]) {} R('ok')", "ok"},
		{"direct eval", "eval('@ = globalThis.@'); R('ok')", "ok"},
		{"strict Function", "new Function('\"use strict\"; @ = globalThis.@')(); R('ok')", "ok"},
		{"same value", "const was = @; @ = was; R(String(was === @ && typeof @ !== 'undefined'))", "true"},
		{"descriptor", "@ = 1; const d = Object.getOwnPropertyDescriptor(globalThis, '@'); R([d.value, d.writable, d.enumerable, d.configurable].join())", "1,true,true,true"},
		{"deleted", "@ = 1; R(delete globalThis.@ + ' ' + typeof @)", "true undefined"},
		{"delete alone", "R(delete globalThis.@ + ' ' + typeof @ + ' ' + ('@' in globalThis))", "true undefined false"},
	}
	for _, mode := range modulePaths {
		t.Setenv(bundle.PlainEnv, mode)
		for _, f := range forms {
			var src strings.Builder
			src.WriteString("globalThis.out = [];\n")
			for _, n := range webGlobalNames {
				code := strings.ReplaceAll(strings.ReplaceAll(f.code, "@", n), "R(", "globalThis.out.push(")
				fmt.Fprintf(&src, "try { %s } catch (e) { globalThis.out.push(String(e)) }\n", code)
			}
			src.WriteString("export default function () {}\n")
			vu := firstVU(t, writeScript(t, "m.js", src.String()), Config{})
			out, err := vu.rt.RunString("globalThis.out.join('|')")
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(out.String(), "|")
			for i, n := range webGlobalNames {
				if i >= len(got) || got[i] != f.want {
					t.Errorf("THROTTLE_MODULES=%q: %s of %s: %v, want %s", mode, f.name, n, got, f.want)
					break
				}
			}
		}
	}
}

// TestUnwrittenWebGlobalsStayLazy: a script that reads the web globals,
// sets their members and assigns them through globalThis, but writes none
// by name, keeps them on the lazy prototype: no own property, nothing
// made that it did not read (the per-VU memory BenchmarkMemoryPerVU
// measures). A script that writes one by name makes that one alone own.
func TestUnwrittenWebGlobalsStayLazy(t *testing.T) {
	lazyOf := func(vu *VU) *lazyObject {
		web, ok := vu.rt.GlobalObject().Prototype().Export().(*lazyObject)
		if !ok {
			t.Fatal("the global object's prototype is not the lazy object")
		}
		return web
	}
	own := func(vu *VU) []string {
		var names []string
		for _, n := range webGlobalNames {
			if v, _ := vu.rt.RunString("Object.hasOwn(globalThis, '" + n + "')"); v.ToBoolean() {
				names = append(names, n)
			}
		}
		return names
	}
	made := func(web *lazyObject) string {
		var names []string
		for _, p := range web.props {
			names = append(names, p.name)
		}
		return strings.Join(names, ",")
	}
	for _, mode := range modulePaths {
		t.Setenv(bundle.PlainEnv, mode)
		vu := firstVU(t, writeScript(t, "r.js", `
console.x = 1;
const t = typeof setTimeout;
export default function () { console.log(t, console.x); }
`), Config{})
		if got := own(vu); len(got) != 0 {
			t.Errorf("THROTTLE_MODULES=%q: a script writing no web global by name made %v own", mode, got)
		}
		if got := made(lazyOf(vu)); got != "console,setTimeout" {
			t.Errorf("THROTTLE_MODULES=%q: the lazy prototype made %q, want what the script read: console,setTimeout", mode, got)
		}

		vu = firstVU(t, writeScript(t, "w.js", "export default function () { clearTimeout = null; }\n"), Config{})
		if got := own(vu); strings.Join(got, ",") != "clearTimeout" {
			t.Errorf("THROTTLE_MODULES=%q: a script writing clearTimeout made %v own", mode, got)
		}
		if web := lazyOf(vu); made(web) != "" || web.Has("clearTimeout") || !web.Has("setTimeout") {
			t.Errorf("THROTTLE_MODULES=%q: the lazy prototype made %q; has clearTimeout %v, setTimeout %v", mode, made(web), web.Has("clearTimeout"), web.Has("setTimeout"))
		}
	}
}

// TestWebGlobalWrittenByADynamicImport: a module loaded by import() that
// assigns a web global by name runs in the VU that imported it (told
// before the module runs) and in every VU made after.
func TestWebGlobalWrittenByADynamicImport(t *testing.T) {
	got := consoleOf(t, "main.js", `
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 1 } } };
await import('./late.js');
export default function () { console.log('x'); }
`, "late.js", `
const real = console;
console = { log: (...a) => real.log('late:', ...a) };
`)
	if want := "late: x,late: x"; got != want {
		t.Fatalf("console %q, want %q", got, want)
	}
}
