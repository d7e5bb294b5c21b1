package script

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/script/bundle"
)

// plainCases are scripts the plain path must run exactly as the ES module
// path does; plain says whether the plain path must take the script (the
// others must fall back to ES modules).
var plainCases = []struct {
	name  string
	plain bool
	files []string
}{
	{"typical", true, []string{"script.js", `import http from 'k6/http';
import { check, sleep } from 'k6';
export const options = { vus: 1, iterations: 1 };
console.log('init', typeof http.get, typeof check, typeof sleep, __VU, __ITER, typeof __ENV);
export default function () {
  console.log('iter', __VU, __ITER, check({ status: 200 }, { ok: (r) => r.status === 200 }));
}
`}},
	{"throw at top level", true, []string{"script.js", `import { check } from 'k6';

  throw new Error('boom at init');
export default function () {}
`}},
	{"throw in a function called at top level", true, []string{"script.js", `function inner(x) {
  return x.missing.deeper;
}
function outer() { return inner({}); }
outer();
export default function () {}
`}},
	{"throw in default", true, []string{"script.js", `import { sleep } from 'k6';
function helper(n) { if (n > 1) { throw new TypeError('bad ' + n); } return helper(n + 1); }
export default function () {
  helper(0);
}
`}},
	{"default name in stack", true, []string{"script.js", `export default function () {
  console.log(new Error('where').stack);
  undefinedFunction();
}
`}},
	{"default arrow", true, []string{"script.js", `export default () => { throw new Error('arrow ' + (function () { return this; })()); };
`}},
	{"default expression names", true, []string{"script.js", `const f = function () {};
console.log(f.name, (() => {}).name, (class {}).name);
export default (function () { console.log(new Error('paren').stack); });
`}},
	{"default named function", true, []string{"script.js", `console.log(typeof main, main.name);
export default function main() { console.log('main', main.name, new Error('m').stack); }
`}},
	{"default class", true, []string{"script.js", `export default class { constructor() { console.log('made'); } }
`}},
	{"default named class", true, []string{"script.js", `export default class Named {}
console.log(Named.name);
`}},
	{"default object", true, []string{"script.js", `export default { a: 1 };
`}},
	{"hoisted function before definition", true, []string{"script.js", `console.log(early(2));
function early(n) { return n * 21; }
export default function () { console.log(later()); }
function later() { return 'later'; }
`}},
	{"TDZ at top level", true, []string{"script.js", `import http from 'k6/http';
console.log(x);
let x = 1;
export default function () {}
`}},
	{"TDZ through a hoisted function", true, []string{"script.js", `function read() { return y; }
try { read(); } catch (e) { console.log('caught', e.name, e.message); }
read();
const y = 2;
export default function () {}
`}},
	{"this at top level falls back", false, []string{"script.js", `console.log(typeof this, this === undefined, (() => this)() === undefined, (() => this)() === globalThis, typeof (() => this)(), String((() => this)()));
export default function () { console.log(this === undefined); }
`}},
	{"this in functions and methods", true, []string{"script.js", `function f() { return this; }
class C { m() { return this === undefined; } static s() { return typeof this; } }
console.log(f() === undefined, C.s(), new C().m(), ({ o() { return typeof this; } }).o());
export default function () { console.log(this === undefined, (() => typeof this)()); }
`}},
	{"this with top-level lexicals falls back", false, []string{"script.js", `const q = 1;
console.log(typeof this);
{ let inner = 2; console.log(typeof this); }
export default function () {}
`}},
	{"strict: undeclared assignment", true, []string{"script.js", `export default function () {
  undeclared = 5;
}
`}},
	{"strict: frozen object", true, []string{"script.js", `const o = Object.freeze({ a: 1 });
o.a = 2;
export default function () {}
`}},
	{"strict: assigning an import", true, []string{"script.js", `import http from 'k6/http';
import { sleep as nap } from 'k6';
export default function () {
  try { nap = 1; } catch (e) { console.log(e.name, e.message); }
  http = null;
}
`}},
	{"strict: delete unqualified is a syntax error", false, []string{"script.js", `let z = 1;
delete z;
export default function () {}
`}},
	{"named exports and scenarios", true, []string{"script.js", `export const options = { scenarios: {
  a: { executor: 'shared-iterations', exec: 'named', iterations: 1 },
  b: { executor: 'shared-iterations', exec: 'renamed', iterations: 1 },
} };
export function setup() { return { from: 'setup' }; }
export function teardown(data) { console.log('teardown', JSON.stringify(data)); }
export function named(data) { console.log('named', JSON.stringify(data), new Error('n').stack); }
function helper() { console.log('helper', new Error('h').stack); }
export { helper as renamed };
`}},
	{"keyed destructured exports: sobek refuses them", false, []string{"script.js", `export const { a, b: [c] } = { a: 1, b: [2] };
`}},
	{"several declarators exported", true, []string{"script.js", `const { a } = { a: 1 }, [c] = [2];
export var v = a + c, w;
export let d = 4, rest = [5, 6];
console.log(a, c, v, w, d, rest);
export default function () { console.log(a, c, d, rest.length, v); }
`}},
	{"live exports", true, []string{"script.js", `export let options = { iterations: 1 };
options = { iterations: 1, vus: 1, tags: { changed: 'yes' } };
export let count = 0;
export function bump() { count++; return count; }
export default function () { console.log('count', bump(), count); }
`}},
	{"globals: var and function are not global properties", true, []string{"script.js", `var gv = 1;
function gf() {}
globalThis.explicit = 'e';
console.log(typeof globalThis.gv, typeof globalThis.gf, explicit, typeof open, typeof require);
export default function () {}
`}},
	{"require and open", true, []string{"script.js", `const data = open('./data.txt');
console.log(data.trim(), typeof require('k6/http').get);
export default function () {
  try { open('./data.txt'); } catch (e) { console.log('open', e.message); }
  require('./other.js');
}
`, "data.txt", "file contents\n"}},
	{"throw a string", true, []string{"script.js", `throw 'just a string';
`}},
	{"throw an object", true, []string{"script.js", `export default function () { throw { code: 7 }; }
`}},
	{"throw an object at top level", true, []string{"script.js", `throw { code: 7, toString() { return 'seven'; } };
`}},
	{"throw null at top level", true, []string{"script.js", `throw null;
`}},
	{"throw a made error elsewhere", true, []string{"script.js", `function make() { return new RangeError('made here'); }
const e = make();
function thrower() { throw e; }
thrower();
`}},
	{"throw a SyntaxError", true, []string{"script.js", `throw new SyntaxError('hand made');
`}},
	{"throw an Error subclass", true, []string{"script.js", `class MyError extends Error { constructor(m) { super(m); this.name = 'MyError'; } }
throw new MyError('mine');
`}},
	{"promises and timers in init", true, []string{"script.js", `Promise.resolve(1).then((v) => console.log('then', v));
setTimeout(() => console.log('timer'), 1);
console.log('sync');
export default async function () {
  const v = await new Promise((res) => setTimeout(() => res('late'), 1));
  console.log('async', v);
}
`}},
	{"unhandled rejection in init", true, []string{"script.js", `Promise.reject(new Error('nobody handles this'));
export default function () {}
`}},
	{"rejection in default", true, []string{"script.js", `export default async function () { await null; throw new Error('async boom'); }
`}},
	{"host error in init", true, []string{"script.js", `import http from 'k6/http';
import { group } from 'k6';
export default function () { group(); }
http.get();
`}},
	{"k6/execution", true, []string{"script.js", `import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
const c = new Counter('things');
console.log(exec.vu.idInTest, typeof c.add);
export default function () { console.log(exec.vu.idInTest, exec.scenario.iterationInTest); }
`}},
	{"function source text", true, []string{"script.js", `function   spaced ( a ,b ) { return a+b }
console.log(String(spaced), String(() => 1));
export default function () {}
`}},
	{"syntax error", false, []string{"script.js", `export default function () {
  let = = 2;
}
`}},
	{"import not exported", false, []string{"script.js", `import { nope } from 'k6';
export default function () {}
`}},
	{"unsupported module", false, []string{"script.js", `import x from 'k6/nope';
export default function () {}
`}},
	{"local module", true, []string{"script.js", `import { two } from './lib.js';
export default function () { console.log(two()); }
`, "lib.js", `export function two() { return 2; }
`}},
	{"evaluation order", true, []string{"script.js", `import { sleep } from 'k6';
import { a } from './a.js';
import b from './b.js';
import './c.js';
console.log('main', a, b.name, __VU);
export default function () { console.log(a, b.name); }
`, "a.js", `import { c } from './c.js';
import http from 'k6/http';
console.log('a', c, typeof http.get);
export const a = 'A' + c;
`, "b.js", `import { c } from './c.js';
console.log('b', c);
export default class B {}
`, "c.js", `console.log('c');
export const c = 'C';
`}},
	{"microtasks in the entry module", true, []string{"script.js", `import './a.js';
Promise.resolve().then(() => console.log('main then'));
console.log('main body');
export default async function () { await null; console.log('after await'); }
`, "a.js", `console.log('a body');
export function plain() {}
`}},
	{"microtasks in an imported module fall back", false, []string{"script.js", `import './a.js';
Promise.resolve().then(() => console.log('main then'));
console.log('main body');
export default function () {}
`, "a.js", `Promise.resolve().then(() => console.log('a then'));
console.log('a body');
`}},
	{"a module's error", true, []string{"script.js", `import { f } from './lib.js';
console.log('never');
export default function () { f(); }
`, "lib.js", `export function f() { return g(); }
function g() { throw new Error('in lib'); }
f();
`}},
	{"an error through two files", true, []string{"script.js", `import { f } from './lib.js';
export default function () { f(1); }
`, "lib.js", `export function f(n) { console.log(new Error('stack').stack); return n.no.such; }
`}},
	{"a module's TDZ and default function", true, []string{"script.js", `import run, { later } from './lib.js';
export default function () { run(); console.log(later, run.name); }
`, "lib.js", `export default function () { console.log('run', new Error('r').stack); }
export const later = 'later';
`}},
	{"a module assigning its export falls back", false, []string{"script.js", `import { n, bump } from './lib.js';
export default function () { bump(); console.log(n); }
`, "lib.js", `export let n = 0;
export function bump() { n++; }
`}},
	{"a module assigning a member of its export", true, []string{"script.js", `import { state, bump } from './lib.js';
export default function () { bump(); console.log(state.n); }
`, "lib.js", `export const state = { n: 0 };
export function bump() { state.n++; }
`}},
	{"a cycle falls back", false, []string{"script.js", `import { a } from './a.js';
export default function () { console.log(a()); }
`, "a.js", `import { b } from './b.js';
export function a() { return 'a'; }
`, "b.js", `import { a } from './a.js';
export function b() { return a(); }
`}},
	{"a namespace import falls back", false, []string{"script.js", `import * as lib from './lib.js';
export default function () { console.log(Object.keys(lib)); }
`, "lib.js", `export const x = 1;
`}},
	{"k6 module whole in one file, by name in another falls back", false, []string{"script.js", `import http from 'k6/http';
import './lib.js';
export default function () {}
`, "lib.js", `import { get } from 'k6/http';
export const g = get;
`}},
	{"typescript", true, []string{"script.ts", `import http from 'k6/http';
interface Point { x: number; y: number }
function norm(p: Point): number {
  return Math.sqrt(p.x * p.x + p.y * p.y);
}
const bad = (p: Point): number => (p as any).z.w;
console.log(norm({ x: 3, y: 4 }), typeof http.get);
export default function (): void {
  console.log(new Error('ts').stack);
  bad({ x: 1, y: 2 });
}
`}},
	{"aliases and default by name", true, []string{"script.js", `import { default as h } from 'k6/http';
import { check as c } from 'k6';
import { default as lib, twice } from './lib.js';
const main = () => console.log(typeof h.get, typeof c, lib(), twice(2));
const again = twice;
export { main as default, again as "twice-again" };
`, "lib.js", `function inner() { return 'inner'; }
export { inner as default };
export const twice = (n) => n * 2;
`}},
	{"a side-effect import shared by two modules", true, []string{"script.js", `import './a.js';
import { b } from './b.js';
import './a.js';
export default function () { console.log(b, globalThis.count); }
`, "a.js", `globalThis.count = (globalThis.count || 0) + 1;
console.log('a ran', globalThis.count);
`, "b.js", `import './a.js';
export const b = 'b sees ' + globalThis.count;
`}},
	{"a class field with this falls back", false, []string{"script.js", `class C { v = this; }
export default function () { console.log(new C().v instanceof C); }
`}},
	{"jslib", true, []string{"script.js", `import { randomIntBetween, uuidv4 } from 'https://jslib.k6.io/k6-utils/1.4.0/index.js';
export default function () { console.log(randomIntBetween(3, 3), uuidv4().length); }
`}},
	{"top-level await falls back", false, []string{"script.js", `const v = await Promise.resolve(3);
console.log(v);
export default function () {}
`}},
	{"import.meta falls back", false, []string{"script.js", `console.log(typeof import.meta);
export default function () {}
`}},
	{"dynamic import falls back", false, []string{"script.js", `export default async function () { const m = await import('k6/http'); console.log(typeof m.default.get); }
`}},
	{"arguments in a function", true, []string{"script.js", `function count() { return arguments.length + ' ' + eval('typeof arguments'); }
console.log(count(1, 2), (function () { return (() => arguments[0])(); })('arrow'));
export default function () { console.log(arguments.length); }
`}},
	{"arguments outside a function falls back", false, []string{"script.js", `const f = () => typeof arguments;
export default function () { console.log(f()); }
`}},
	{"eval outside a function falls back", false, []string{"script.js", `console.log(eval('typeof this'));
export default function () {}
`}},
	{"named and whole import falls back", false, []string{"script.js", `import http, { get } from 'k6/http';
export default function () { console.log(typeof get, typeof http); }
`}},
	{"named import and require falls back", false, []string{"script.js", `import { get } from 'k6/http';
export default function () { require('k6/http').get = 1; console.log(typeof get); }
`}},
	{"eval with a named import falls back", false, []string{"script.js", `import { get } from 'k6/http';
function sneaky() { return eval('typeof get'); }
export default function () { console.log(sneaky()); }
`}},
	{"a template naming require with a named import falls back", false, []string{"script.js", `import { get } from 'k6/http';
export default function () { globalThis[` + "`require`" + `]('k6/http').get = null; console.log(typeof get); }
`}},
	{"re-export falls back", false, []string{"script.js", `export { check } from 'k6';
export default function () {}
`}},
	{"exporting an import falls back", false, []string{"script.js", `import { check } from 'k6';
export { check };
export default function () {}
`}},
}

// TestPlainMatchesModules runs every case on the plain path and on the
// ES module path (THROTTLE_MODULES=esm) and asserts the same transcript:
// load error, console output, each scenario VU's init error and the
// results of calling its exec function twice, setup's, and teardown's.
func TestPlainMatchesModules(t *testing.T) {
	for _, c := range plainCases {
		t.Run(c.name, func(t *testing.T) {
			path := writeScript(t, c.files...)
			plain, took := transcript(t, path, "")
			esm, _ := transcript(t, path, "esm")
			if took != c.plain {
				t.Errorf("plain path taken: %v, want %v (%s)", took, c.plain, why(t, path))
			}
			if plain != esm {
				t.Fatalf("the paths differ\n--- plain:\n%s\n--- esm:\n%s", plain, esm)
			}
			t.Logf("transcript:\n%s", plain)
		})
	}
}

// TestPlainMatchesModulesOnCompat loads every script of the compat
// corpus on both paths: the same load error or none, the same console
// output from the init context, the same scenarios. PLAIN_CORPUS=DIR
// loads another folder of scripts instead (make compat-real's, as they
// are: its harness's rewrites are not made).
func TestPlainMatchesModulesOnCompat(t *testing.T) {
	dir := filepath.Join("..", "..", "compat", "scripts")
	if d := os.Getenv("PLAIN_CORPUS"); d != "" {
		dir = d
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	plainN, n := 0, 0
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		path, _ := filepath.Abs(filepath.Join(dir, e.Name()))
		n++
		t.Run(e.Name(), func(t *testing.T) {
			plain, took := loadTranscript(t, path, "")
			esm, _ := loadTranscript(t, path, "esm")
			if took {
				plainN++
			}
			if plain != esm {
				t.Fatalf("the paths differ\n--- plain:\n%s\n--- esm:\n%s", plain, esm)
			}
		})
	}
	t.Logf("%d of %d compat scripts take the plain path", plainN, n)
	if plainN == 0 {
		t.Fatal("no compat script takes the plain path")
	}
}

// why is why the script at path does or does not take the plain path.
func why(t *testing.T, path string) string {
	t.Setenv(bundle.PlainEnv, "")
	var h *VU
	runtimeHook = func(vu *VU) {
		if h == nil {
			h = vu
		}
	}
	defer func() { runtimeHook = nil }()
	_, _ = Load(path, Config{Env: map[string]string{"BASE": "http://127.0.0.1:9"}})
	if h == nil || h.r.bundle == nil {
		return "not loaded"
	}
	return h.r.bundle.PlainWhy
}

// pcs are the bytecode positions in stack traces, which the two paths'
// function preambles shift.
var pcs = regexp.MustCompile(`\(\d+\)`)

// loadTranscript loads path with THROTTLE_MODULES=mode and writes down
// what a user would see of it; took is whether the plain path ran it.
func loadTranscript(t *testing.T, path, mode string) (string, bool) {
	t.Setenv(bundle.PlainEnv, mode)
	first := watchLoad(t)
	var out consoleLines
	var b strings.Builder
	r, err := Load(path, Config{Console: out.add, Env: map[string]string{"BASE": "http://127.0.0.1:9", "BASE_URL": "http://127.0.0.1:9"}})
	fmt.Fprintf(&b, "load error: %v\n", err)
	took := first.plain()
	if mode == "" {
		switch {
		case err != nil:
			t.Logf("%s: load error (plain %v): %v", filepath.Base(path), took, err)
		case !took:
			t.Logf("%s: not plain: %s", filepath.Base(path), r.bundle.PlainWhy)
		}
	}
	if err == nil {
		fmt.Fprintf(&b, "scenarios: %d, modules %v\n", len(r.Phases()), r.Modules())
		for _, p := range r.Phases() {
			fmt.Fprintf(&b, "scenario %s exec %s\n", p.sc.Name, p.sc.Exec)
		}
	}
	for _, l := range out.all() {
		fmt.Fprintf(&b, "console: %s\n", l)
	}
	return pcs.ReplaceAllString(b.String(), "(pc)"), took
}

// watchLoad records the first VU the next Load makes: its runner has the
// bundle once loaded, even when its init context then failed.
type loadWatch struct{ vu *VU }

func watchLoad(t *testing.T) *loadWatch {
	h := &loadWatch{}
	runtimeHook = func(vu *VU) {
		if h.vu == nil {
			h.vu = vu
		}
	}
	t.Cleanup(func() { runtimeHook = nil })
	return h
}

// plain is whether the script took the plain path.
func (h *loadWatch) plain() bool {
	return h.vu != nil && h.vu.r.bundle != nil && h.vu.r.bundle.Plain != nil
}

// transcript is loadTranscript and more: setup's result, each scenario
// VU's init and two calls of its exec function, teardown.
func transcript(t *testing.T, path, mode string) (string, bool) {
	t.Setenv(bundle.PlainEnv, mode)
	first := watchLoad(t)
	var out consoleLines
	var b strings.Builder
	flush := func() {
		for _, l := range out.all() {
			fmt.Fprintf(&b, "console: %s\n", l)
		}
		out.mu.Lock()
		out.lines = nil
		out.mu.Unlock()
	}
	r, err := Load(path, Config{Console: out.add, Env: map[string]string{"BASE": "http://127.0.0.1:9"}})
	fmt.Fprintf(&b, "load error: %v\n", err)
	flush()
	took := first.plain()
	if err != nil {
		return pcs.ReplaceAllString(b.String(), "(pc)"), took
	}
	callFn := func(vu *VU, what string, f sobek.Callable, args ...sobek.Value) sobek.Value {
		v, err := vu.call(f, nil, args...)
		fmt.Fprintf(&b, "%s: %v, error: %v\n", what, v, err)
		flush()
		return v
	}
	call := func(vu *VU, what string, fn sobek.Value, args ...sobek.Value) sobek.Value {
		f, ok := sobek.AssertFunction(fn)
		if !ok {
			fmt.Fprintf(&b, "%s: not a function (%v)\n", what, fn)
			return nil
		}
		return callFn(vu, what, f, args...)
	}
	keys := r.setupVU.exports.Keys()
	fmt.Fprintf(&b, "exports: %v\n", keys)
	data := call(r.setupVU, "setup", r.setupVU.exports.Get("setup"))
	for _, p := range r.Phases() {
		vu, err := r.newVU(p)
		fmt.Fprintf(&b, "scenario %s VU: error %v\n", p.sc.Name, err)
		flush()
		if err != nil {
			continue
		}
		arg := sobek.Undefined()
		if data != nil {
			if js, err := r.setupVU.stringify(data); err == nil && js != "" {
				arg, _ = vu.parseJSON(js)
			}
		}
		for i := range 2 {
			// the exec function the VU took when it was made (it keeps
			// no view of its exports)
			callFn(vu, fmt.Sprintf("%s call %d", p.sc.Exec, i), vu.fn, arg)
		}
		vu.close()
	}
	call(r.setupVU, "teardown", r.setupVU.exports.Get("teardown"), data)
	return pcs.ReplaceAllString(b.String(), "(pc)"), took
}

// TestPlainInitTimeoutMatchesModules: an init context that never ends is
// stopped by the init timeout on both paths with the same one line,
// naming where it was (in the entry module, and in a module it imports).
func TestPlainInitTimeoutMatchesModules(t *testing.T) {
	for _, files := range [][]string{
		{"script.js", "import http from 'k6/http';\nlet n = 0;\nwhile (true) { n++; }\nexport default function () {}\n"},
		{"script.js", "import { spin } from './lib.js';\nexport default function () {}\n", "lib.js", "export function spin() { for (;;) {} }\nspin();\n"},
	} {
		path := writeScript(t, files...)
		var got [2]string
		for i, mode := range []string{"", "esm"} {
			t.Setenv(bundle.PlainEnv, mode)
			_, err := Load(path, Config{InitTimeout: 300 * time.Millisecond})
			if err == nil {
				t.Fatalf("%s (%q): loaded, want the init timeout", files[0], mode)
			}
			got[i] = pcs.ReplaceAllString(err.Error(), "(pc)")
		}
		if got[0] != got[1] || !strings.Contains(got[0], "init timeout") {
			t.Fatalf("plain: %s\nesm:   %s", got[0], got[1])
		}
		t.Log(got[0])
	}
}
