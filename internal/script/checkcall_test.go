package script

import (
	"testing"
	"time"
)

// check() calls each kind of callable it may be given — arrow, function,
// proxy, native, bound, a nested check — with the value as its one
// argument and this undefined, takes truthiness of anything else, skips
// non-enumerable keys, lets a function's exception (a class's TypeError
// included) out, and counts each check once by name.
func TestCheckCallables(t *testing.T) {
	path := writeScript(t, "check.js", `
import { check } from 'k6';
class C {}
export const options = { iterations: 1 };
export default function () {
  const seen = [];
  const all = check(1, {
    truthy: 'yes',
    falsy: 0,
    arrow: (v) => { seen.push(v); return v === 1; },
    self: function () { return this === undefined && arguments.length === 1; },
    proxy: new Proxy((v) => v === 1, {}),
    native: Boolean,
    bound: ((a, v) => a + v === 3).bind(null, 2),
    nested: (v) => check(v, { inner: (w) => w === 1 }),
  });
  if (all !== false) throw new Error('all: ' + all);
  if (seen.length !== 1 || seen[0] !== 1) throw new Error('seen: ' + seen);
  if (check(1, null) !== true || check(1, 5) !== true) throw new Error('non-object sets');
  let thrown = '';
  try { check(1, { boom: () => { throw new Error('boom'); } }); } catch (e) { thrown = e.message; }
  if (thrown !== 'boom') throw new Error('thrown: ' + thrown);
  let ctor = '';
  try { check(1, { cls: C }); } catch (e) { ctor = e.name; }
  if (ctor !== 'TypeError') throw new Error('class: ' + ctor);
  const ne = {};
  Object.defineProperty(ne, 'hidden', { value: () => false, enumerable: false });
  ne.shown = () => true;
  if (check(1, ne) !== true) throw new Error('non-enumerable key checked');
}
`)
	var thrown []string
	cfg := Config{Fixed: true, Exception: func(_, _, msg string) { thrown = append(thrown, msg) }}
	r, _ := runScript(t, path, "http://127.0.0.1:1", cfg, 20*time.Second)
	if len(thrown) != 0 {
		t.Fatalf("the iteration threw: %q", thrown)
	}
	p := r.Phases()[0]
	want := map[string][2]uint64{ // pass, fail
		"truthy": {1, 0}, "falsy": {0, 1}, "arrow": {1, 0}, "self": {1, 0}, "proxy": {1, 0},
		"native": {1, 0}, "bound": {1, 0}, "nested": {1, 0}, "inner": {1, 0}, "shown": {1, 0},
	}
	got := map[string][2]uint64{}
	for _, c := range p.Checks() {
		got[c.Name] = [2]uint64{c.Pass, c.Failed}
	}
	if len(got) != len(want) {
		t.Errorf("checks %v, want %v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("check %q: pass/fail %v, want %v", name, got[name], w)
		}
	}
}
