package script

import (
	"strings"
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
