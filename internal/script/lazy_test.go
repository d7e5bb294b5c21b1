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
