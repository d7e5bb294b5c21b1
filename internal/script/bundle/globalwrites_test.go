package bundle

import (
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/script/bundle/jslib"
)

// TestGlobalWritesFindsEveryBareAssignment: every form that assigns a
// name (in any scope, in any module the script imports) or deletes a
// property is found; a member's assignment or a read is not; eval, and
// the Function constructor with a "use strict" string, write what no scan
// sees.
func TestGlobalWritesFindsEveryBareAssignment(t *testing.T) {
	for _, c := range []struct {
		src, want string
		all       bool
	}{
		{"console = { log() {} };\n", "console", false},
		{"export default function () { setTimeout = (f) => f(); }\n", "setTimeout", false},
		{"crypto ||= 1; TextEncoder &&= 2; TextDecoder ??= 3; a += 1; b **= 2;\n", "TextDecoder,TextEncoder,a,b,crypto", false},
		{"[clearTimeout, { x: clearInterval = 1 }] = [];\n", "clearInterval,clearTimeout", false},
		{"({ setInterval } = {});\n", "setInterval", false},
		{"for (console of []) {} for (crypto in {}) {}\n", "console,crypto", false},
		{"let n = 0; n++; --m;\n", "m,n", false},
		{"delete globalThis.console; delete globalThis['setTimeout']; delete globalThis[k];\n", "console,setTimeout", false},
		{"console.log('x'); console.x = 1; globalThis.setTimeout(() => {}); typeof crypto;\n", "", false},
		{"class C { m() { return TextEncoder; } }\n", "", false},
		{"export function f(s) { return eval(s); }\n", "", true},
		{"new Function('\"use strict\"; console = 1')();\n", "", true},
		{"globalThis['Function']('\"use strict\"; console = 1')();\n", "", true},
		{"'use strict';\nconst g = Function('return this')();\n", "", false},
	} {
		dir := t.TempDir()
		write(t, dir, "lib.js", c.src)
		p := write(t, dir, "main.js", "import './lib.js';\nexport default function () {}\n")
		b, err := Load(p, Options{K6: k6Stub})
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		names, all := b.GlobalWrites()
		if strings.Join(names, ",") != c.want || all != c.all {
			t.Errorf("%q: writes %v all %v, want %s all %v", c.src, names, all, c.want, c.all)
		}
	}
}

// TestGlobalWritesGrowWithADynamicImport: a module a dynamic import loads
// adds its writes, and the runtime is told before it runs; the slice
// given before is not changed.
func TestGlobalWritesGrowWithADynamicImport(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "late.js", "setTimeout = null;\n")
	p := write(t, dir, "main.js", "console = null;\nexport default async function () { await import('./late.js'); }\n")
	b, err := Load(p, Options{K6: k6Stub})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := b.GlobalWrites()
	if strings.Join(before, ",") != "console" {
		t.Fatalf("writes %v before the import", before)
	}
	b.mu.Lock()
	_, err = b.resolveFrom(dir, "./late.js")
	b.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	after, _ := b.GlobalWrites()
	if strings.Join(after, ",") != "console,setTimeout" || strings.Join(before, ",") != "console" {
		t.Fatalf("writes %v after the import, %v before", after, before)
	}
}

// TestJslibWritesNoWebGlobal: the jslib libraries throttle ships assign
// none of the web globals by name and do not make every global written:
// a script importing one keeps them lazy in each VU.
func TestJslibWritesNoWebGlobal(t *testing.T) {
	web := map[string]bool{"console": true, "crypto": true, "setTimeout": true, "setInterval": true,
		"clearTimeout": true, "clearInterval": true, "TextEncoder": true, "TextDecoder": true}
	for _, lib := range jslib.Names() {
		u := "https://" + jslib.Host + "/" + lib + "/1.0.0/index.js"
		src, _, err := jslib.Source(u)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := parse(u, u, string(src))
		if err != nil {
			t.Fatalf("%s: %v", lib, err)
		}
		names, all := globalWrites(prog)
		for _, n := range names {
			if web[n] {
				t.Errorf("%s writes %s", lib, n)
			}
		}
		if all {
			t.Errorf("%s writes every global (eval or a strict Function)", lib)
		}
	}
}
