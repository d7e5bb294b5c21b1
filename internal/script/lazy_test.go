package script

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestLazyModulesBehaveAsObjects checks that the module objects and web
// globals made on first read (lazy.go) behave as the eager ones did: the
// same function on every read, enumerable members, replaceable methods,
// read-only accessors, globals found by name and on globalThis.
func TestLazyModulesBehaveAsObjects(t *testing.T) {
	var out consoleLines
	path := writeScript(t, "lazy.js", `
import http from 'k6/http';
import * as k6 from 'k6';
import { check } from 'k6';
import exec from 'k6/execution';
export const options = { iterations: 1 };
export default function () {
  const got = [];
  got.push(http.get === http.get, typeof http.get, Object.keys(http).includes('get'), http.TLS_1_3);
  got.push(check === k6.check, typeof exec.scenario.name, exec.scenario.name);
  let threw = '';
  try { exec.scenario.name = 'x'; } catch (e) { threw = e.name; }
  got.push(threw, exec.scenario.name);
  const orig = http.head;
  http.head = () => 'patched';
  got.push(http.head(), delete http.head, typeof http.head);
  http.head = orig;
  got.push(typeof setTimeout, typeof globalThis.clearInterval, typeof TextEncoder, new TextEncoder().encode('ab').length);
  got.push(console === globalThis.console, crypto.randomUUID().length);
  try { crypto.subtle; } catch (e) { threw = String(e.message).includes('crypto.subtle is not supported'); }
  got.push(threw, exec.vu.idInTest, exec.vu.tags === exec.vu.tags);
  console.log(got.join(','));
}
`)
	r, err := Load(path, Config{Console: out.add})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := "true,function,true,tls1.3,true,string,default,TypeError,default,patched,true,undefined,function,function,function,2,true,36,true,1,true"
	if got := strings.Join(out.all(), "|"); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// __ENV is a lazy object over a table the phase's VUs share, and behaves
// as each VU's own plain object: reads, keys, JSON, `in`, assignment of
// any value and deletion, none of which another VU sees.
func TestEnvIsEachVUsOwn(t *testing.T) {
	path := writeScript(t, "env.js", `export const options = { scenarios: { s: { executor: 'constant-vus', vus: 2, duration: '1s', env: { FROM: 'scenario' } } } };
export default function () {}`)
	r, err := Load(path, Config{Env: map[string]string{"A": "1", "B": "two"}})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Phases()[0]
	one, err := r.newVU(p)
	if err != nil {
		t.Fatal(err)
	}
	defer one.close()
	two, err := r.newVU(p)
	if err != nil {
		t.Fatal(err)
	}
	defer two.close()
	run := func(vu *VU, js string) string {
		t.Helper()
		v, err := vu.rt.RunString(js)
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v.String()
	}
	for _, c := range []struct{ js, want string }{
		{`__ENV.A + typeof __ENV.A`, "1string"},
		{`Object.keys(__ENV).join()`, "A,B,FROM"},
		{`JSON.stringify(__ENV)`, `{"A":"1","B":"two","FROM":"scenario"}`},
		{`'B' in __ENV && !('C' in __ENV)`, "true"},
		{`__ENV.hasOwnProperty('FROM')`, "true"},
		{`String(__ENV.MISSING)`, "undefined"},
		{`__ENV.A = 5; delete __ENV.B; __ENV.A + 1`, "6"},
		{`JSON.stringify(Object.entries(__ENV))`, `[["A",5],["FROM","scenario"]]`},
	} {
		if got := run(one, c.js); got != c.want {
			t.Errorf("%s = %s, want %s", c.js, got, c.want)
		}
	}
	if got := run(two, `JSON.stringify(__ENV)`); got != `{"A":"1","B":"two","FROM":"scenario"}` {
		t.Errorf("the other VU's __ENV: %s", got)
	}
}

// An __ENV variable's string is made once for every VU of a phase
// (envString) and read by VUs on their own goroutines at once (the race
// detector watches): it is the same string as a literal, ASCII or not,
// short or long, and each VU still owns its assignments to it.
func TestEnvStringsSharedByVUs(t *testing.T) {
	long := strings.Repeat("x", 40)
	path := writeScript(t, "envshared.js", `export const options = { scenarios: { s: { executor: 'constant-vus', vus: 4, duration: '1s' } } };
export default function () {}`)
	r, err := Load(path, Config{Env: map[string]string{"LONG": long, "UNI": "héllo wörld, ünïcode ≥ 16", "SHORT": "é"}})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Phases()[0]
	js := `[__ENV.LONG === '` + long + `', __ENV.UNI === 'héllo wörld, ünïcode ≥ 16', __ENV.UNI.length, __ENV.SHORT + __ENV.SHORT,
  __ENV.UNI.toUpperCase(), __ENV.LONG.indexOf('xx', 3), JSON.stringify(__ENV.UNI)].join('|')`
	want := "true|true|25|éé|HÉLLO WÖRLD, ÜNÏCODE ≥ 16|3|\"héllo wörld, ünïcode ≥ 16\""
	mine := `__ENV.LONG = 'mine'; [__ENV.LONG, delete __ENV.LONG, 'LONG' in __ENV, __ENV.UNI.length].join('|')`
	vus := make([]*VU, 4)
	for i := range vus {
		if vus[i], err = r.newVU(p); err != nil {
			t.Fatal(err)
		}
		defer vus[i].close()
	}
	got := make([]string, len(vus))
	var wg sync.WaitGroup
	for i, vu := range vus {
		wg.Go(func() {
			for range 3 {
				v, err := vu.rt.RunString(js)
				if err != nil {
					got[i] = err.Error()
					return
				}
				got[i] = v.String()
			}
			if v, err := vu.rt.RunString(mine); err != nil || v.String() != "mine|true|false|25" {
				got[i] = fmt.Sprint("assigned and deleted: ", v, err)
			}
		})
	}
	wg.Wait()
	for i, g := range got {
		if g != want {
			t.Errorf("VU %d: %s, want %s", i, g, want)
		}
	}
}
