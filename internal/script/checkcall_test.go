package script

import (
	"sync"
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
	runChecks(t, path, map[string][2]uint64{ // pass, fail
		"truthy": {1, 0}, "falsy": {0, 1}, "arrow": {1, 0}, "self": {1, 0}, "proxy": {1, 0},
		"native": {1, 0}, "bound": {1, 0}, "nested": {1, 0}, "inner": {1, 0}, "shown": {1, 0},
	})
}

// runChecks runs the script at path, which must not throw, and compares
// its first phase's checks' pass and fail counts, by name, with want.
func runChecks(t *testing.T, path string, want map[string][2]uint64) {
	t.Helper()
	var thrown []string
	cfg := Config{Fixed: true, Exception: func(_, _, msg string) { thrown = append(thrown, msg) }}
	r, _ := runScript(t, path, "http://127.0.0.1:1", cfg, 20*time.Second)
	if len(thrown) != 0 {
		t.Fatalf("the iteration threw: %q", thrown)
	}
	got := map[string][2]uint64{}
	for _, c := range r.Phases()[0].Checks() {
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

// check() lists its object's keys before it runs any check, in the order
// JavaScript enumerates them (integer names first, ascending, then the
// rest as added): a key deleted by an earlier check is still checked (its
// value now undefined, a failure), a key added is not, and a getter's
// value is read when its check's turn comes. The object without integer
// names is one check() reads without sobek's Keys (ownkeys.go).
func TestCheckKeysReadFirst(t *testing.T) {
	path := writeScript(t, "check.js", `
import { check } from 'k6';
export const options = { iterations: 1 };
export default function () {
  for (const ints of [true, false]) {
    const s = ints ? '' : '-';
    const seen = [];
    const mark = (name, pass) => () => { seen.push(name); return pass; };
    const sets = {
      ['b' + s]: mark('b', true),
      ['first' + s]: () => { seen.push('first'); delete sets['gone' + s]; sets['added' + s] = mark('added', true); return true; },
      ['gone' + s]: mark('gone', true),
      ['é ✓' + s]: mark('é ✓', true),
      get ['lazy' + s]() { seen.push('get lazy'); return true; },
    };
    if (ints) {
      sets[10] = mark('10', true);
      sets[2] = mark('2', false);
    }
    Object.defineProperty(sets, 'hidden' + s, { value: mark('hidden', false), enumerable: false });
    if (check(null, sets) !== false) throw new Error('all passed');
    const want = (ints ? '2,10,' : '') + 'b,first,é ✓,get lazy';
    if (seen.join() !== want) throw new Error('order: ' + seen.join() + ', want ' + want);
  }
}
`)
	runChecks(t, path, map[string][2]uint64{ // pass, fail
		"2": {0, 1}, "10": {1, 0},
		"b": {1, 0}, "first": {1, 0}, "gone": {0, 1}, "é ✓": {1, 0}, "lazy": {1, 0},
		"b-": {1, 0}, "first-": {1, 0}, "gone-": {0, 1}, "é ✓-": {1, 0}, "lazy-": {1, 0},
	})
}

// A check is counted under its own group and name when others share its
// slot of recent counts (names of one length, one name in two groups),
// from many goroutines at once.
func TestChecksCountedByKey(t *testing.T) {
	var c checks
	keys := []checkKey{{"", "aa"}, {"", "bb"}, {"::g", "aa"}, {"::g::h", "aa"}, {"", "abcdefghij"}, {"::g", "bb"}}
	const workers, rounds = 4, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				for j, k := range keys {
					c.add(k.group, k.name, (i+j+w)%3 != 0)
				}
			}
		}()
	}
	wg.Wait()
	got := map[checkKey][2]uint64{}
	for _, r := range c.results() {
		got[checkKey{r.Group, r.Name}] = [2]uint64{r.Pass, r.Failed}
	}
	if len(got) != len(keys) {
		t.Fatalf("%d checks counted, want %d: %v", len(got), len(keys), got)
	}
	for j, k := range keys {
		var want [2]uint64
		for w := range workers {
			for i := range rounds {
				if (i+j+w)%3 != 0 {
					want[0]++
				} else {
					want[1]++
				}
			}
		}
		if got[k] != want {
			t.Errorf("%v: pass/fail %v, want %v", k, got[k], want)
		}
	}
}

// A check's tags, kept with its count when the VU gives none of its own,
// are its group's, its scenario's (each scenario its own), options.tags
// and its name; a check with a tags argument, or made once exec.vu.tags
// is set, gets its tags made for it.
func TestCheckTagsKept(t *testing.T) {
	path := writeScript(t, "tags.js", `
import { check, group } from 'k6';
import exec from 'k6/execution';
export const options = {
  tags: { env: 'x' },
  scenarios: {
    a: { executor: 'per-vu-iterations', vus: 1, iterations: 3, tags: { sc: 'a' } },
    b: { executor: 'per-vu-iterations', vus: 1, iterations: 3 },
  },
};
export default function () {
  if (exec.scenario.iterationInInstance === 1) exec.vu.tags.mine = '1';
  check(1, { c: true });
  group('g', () => { check(1, { c: true }); });
  check(1, { c: true }, { extra: 'y' });
}
`)
	cfg, points := tagPoints("checks")
	runScript(t, path, "http://127.0.0.1:1", cfg, 20*time.Second)
	want := map[string]int{}
	for _, sc := range []string{"sc=a,scenario=a", "scenario=b"} {
		for _, g := range []string{"group=", "group=::g"} {
			want["checks check=c,env=x,"+g+","+sc] = 1
			want["checks check=c,env=x,"+g+",mine=1,"+sc] = 2
		}
		want["checks check=c,env=x,extra=y,group=,"+sc] = 1
		want["checks check=c,env=x,extra=y,group=,mine=1,"+sc] = 2
	}
	wantPoints(t, points(), want)
}
