package script

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// TestTopLevelAwait: the entry module and a module it imports await at
// the top level; the importer waits for the imported module, options are
// read after the awaits, and every VU's iterations see the awaited values.
func TestTopLevelAwait(t *testing.T) {
	got := consoleOf(t, "main.js", `
import http from 'k6/http';
import { config } from './config.js';
const greeting = await Promise.resolve('hello');
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: config.iterations } } };
export default function () {
  const res = http.get(__ENV.BASE + '/');
  console.log(greeting, config.name, res.status);
}
`, "config.js", `
async function load() { return { iterations: 3, name: 'from-config' }; }
export const config = await load();
`)
	// Three iterations (config.js's awaited options), each seeing both
	// awaited values and making its request.
	if want := "hello from-config 200,hello from-config 200,hello from-config 200"; got != want {
		t.Fatalf("console %q, want %q", got, want)
	}
}

// TestTopLevelAwaitThatNeverSettles: an await that nothing can settle is
// refused at load with one line, not a hang.
func TestTopLevelAwaitThatNeverSettles(t *testing.T) {
	path := writeScript(t, "main.js", "await new Promise(() => {});\nexport default function () {}\n")
	_, err := Load(path, Config{})
	if err == nil || !strings.Contains(err.Error(), "top-level await did not settle") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line saying the await did not settle", err)
	}
}

// TestCircularImport: a.js and b.js import each other. As the spec orders
// a cycle, b.js (reached first from a.js) is evaluated before a.js, each
// once per VU; the functions each exports are hoisted, so calls across the
// cycle work at run time, and b.js reading a.js's let binding during its
// own evaluation is a ReferenceError caught there.
func TestCircularImport(t *testing.T) {
	_, base := startTarget(t, robust())
	var out consoleLines
	path := writeScript(t, "main.js", `
import { ping, aName } from './a.js';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 2 } } };
export default function () { console.log('iter', ping(3), aName); }
`, "a.js", `
import { pong } from './b.js';
console.log('eval a', __VU);
export let aName = 'a';
export function ping(n) { return n === 0 ? 'a' : pong(n - 1); }
`, "b.js", `
import { ping, aName } from './a.js';
let early;
try { early = aName; } catch (e) { early = e.name; }
console.log('eval b', __VU, early);
export function pong(n) { return n === 0 ? 'b' : ping(n - 1); }
`)
	runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	lines := out.all()
	// VU 0 (options, setup) and VUs 1 and 2 each evaluate b then a once.
	var evals, iters []string
	for _, l := range lines {
		if strings.HasPrefix(l, "eval") {
			evals = append(evals, l)
		} else {
			iters = append(iters, l)
		}
	}
	for vu := 0; vu <= 2; vu++ {
		b, a := -1, -1
		n := 0
		for i, l := range evals {
			switch l {
			case fmt.Sprintf("eval b %d ReferenceError", vu):
				b, n = i, n+1
			case fmt.Sprintf("eval a %d", vu):
				a, n = i, n+1
			}
		}
		if n != 2 || b < 0 || a < b {
			t.Fatalf("VU %d: evaluations %q, want b (seeing a's binding uninitialised) then a, once each", vu, evals)
		}
	}
	if len(evals) != 6 {
		t.Fatalf("evaluations %q, want 2 per VU for 3 VUs", evals)
	}
	sort.Strings(iters)
	if len(iters) != 4 || iters[0] != "iter b a" || iters[3] != "iter b a" {
		t.Fatalf("iterations %q, want 4 × \"iter b a\" (ping(3) crosses the cycle three times)", iters)
	}
}

// TestModuleEvaluatedOncePerVU: a module imported by two others runs once
// per VU, and they share its state.
func TestModuleEvaluatedOncePerVU(t *testing.T) {
	got := consoleOf(t, "main.js", `
import { left } from './left.js';
import { right } from './right.js';
export const options = { iterations: 1 };
export default function () { console.log('sum', left() + right()); }
`, "left.js", "import { bump } from './lib/counter.js';\nexport function left() { return bump(); }\n",
		"right.js", "import { bump } from './lib/counter.js';\nexport function right() { return bump(); }\n",
		"lib/counter.js", "console.log('counter', __VU);\nlet n = 0;\nexport function bump() { return ++n; }\n")
	if got != "counter 0,counter 1,sum 3" {
		t.Fatalf("console %q: want counter.js once per VU (setup's 0, then 1) and one shared count", got)
	}
}

// TestLoadErrorsNameFileAndLine: a syntax error, a name a module does not
// export and a missing file are refused at load, each as one line naming
// the user's file and line.
func TestLoadErrorsNameFileAndLine(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string
		want  string
	}{
		{"syntax", []string{"main.js", "import { x } from './lib/bad.js';\nexport default function () { x; }\n", "lib/bad.js", "// bad\nexport const x = ;\n"}, "lib/bad.js:2: "},
		{"syntax in the entry", []string{"main.js", "export default function () {\n  return 1 +;\n}\n"}, "main.js:2: "},
		{"no such export", []string{"main.js", "\nimport { nope } from './lib.js';\nexport default function () { nope(); }\n", "lib.js", "export const yes = 1;\n"}, `main.js:2: The requested module "./lib.js" does not provide an export named "nope"`},
		{"no such k6 export", []string{"main.js", "import { nope } from 'k6/http';\nexport default function () { nope(); }\n"}, `main.js:1: The requested module "k6/http" does not provide an export named "nope"`},
		{"missing file", []string{"main.js", "\n\nimport { f } from './missing.js';\nexport default function () { f(); }\n"}, `main.js:3: import "./missing.js": missing.js: no such file or directory`},
		{"typescript", []string{"main.ts", "const n: number = ;\nexport default function () {}\n"}, "main.ts:1: "},
	} {
		_, err := Load(writeScript(t, c.files...), Config{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line starting %q", c.name, err, c.want)
		}
	}
}

// TestTypeScriptStackNamesItsLine: an exception thrown in a TypeScript
// module is logged with the .ts file's own line, through esbuild's source
// map.
func TestTypeScriptStackNamesItsLine(t *testing.T) {
	_, base := startTarget(t, robust())
	var logs testwait.Buffer
	path := writeScript(t, "main.js", "import { helper } from './lib/h.ts';\nexport const options = { iterations: 1 };\nexport default function () { helper(1); }\n",
		"lib/h.ts", "interface Big { a: number; b: string }\n\n\nexport function helper(n: number): void {\n  throw new Error('boom ' + n);\n}\n")
	runScript(t, path, base, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, 30*time.Second)
	if got := logs.String(); !strings.Contains(got, "boom 1") || !strings.Contains(got, "lib/h.ts:5:") {
		t.Fatalf("log %q: want the throw at lib/h.ts line 5", got)
	}
}

// TestDynamicImport: import() loads a local module relative to the
// importing file, evaluated once per VU like a static import.
func TestDynamicImport(t *testing.T) {
	got := consoleOf(t, "main.js", `
import { load } from './lib/loader.js';
const m = await load();
export const options = { iterations: 1 };
export default function () { console.log(m.value, typeof m.default); }
`, "lib/loader.js", "export function load() { return import('./dyn.js'); }\n",
		"lib/dyn.js", "export const value = 'dynamic';\nexport default function () {}\n")
	if got != "dynamic function" {
		t.Fatalf("console %q", got)
	}
}

// TestAsyncGeneratorIsLowered: syntax sobek does not parse (for await,
// async generators) is lowered by esbuild and runs.
func TestAsyncGeneratorIsLowered(t *testing.T) {
	got := consoleOf(t, "main.js", `
async function* count() { yield 1; yield 2; }
let sum = 0;
for await (const n of count()) sum += n;
export const options = { iterations: 1 };
export default function () { console.log('sum', sum); }
`)
	if got != "sum 3" {
		t.Fatalf("console %q", got)
	}
}

// TestRequire: require() serves the k6 modules, the same object an import
// gives; a local file is refused with a line saying to import it.
func TestRequire(t *testing.T) {
	got := consoleOf(t, "main.js", `
import imported from 'k6/http';
const http = require('k6/http');
let local;
try { require('./lib.js'); } catch (e) { local = e.message; }
export const options = { iterations: 1 };
export default function () { console.log(http === imported, http.get(__ENV.BASE + '/').status, local); }
`, "lib.js", "export const x = 1;\n")
	if want := `true 200 require("./lib.js"): local files are ES modules here; import them (import { f } from "./lib.js")`; got != want {
		t.Fatalf("console %q, want %q", got, want)
	}
}

// consoleOf runs the script made of files (name, source, ...) against a
// robust target and returns its console lines, joined by commas.
func consoleOf(t *testing.T, files ...string) string {
	t.Helper()
	_, base := startTarget(t, robust())
	var out consoleLines
	runScript(t, writeScript(t, files...), base, Config{Console: out.add}, 30*time.Second)
	return strings.Join(out.all(), ",")
}
