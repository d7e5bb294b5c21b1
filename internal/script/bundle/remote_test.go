package bundle

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// moduleServer serves JavaScript modules from files (path → source) on a
// loopback port and counts the requests for each path.
func moduleServer(t *testing.T, files map[string]string) (string, func(string) int) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		src, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/javascript")
		w.Write([]byte(src))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func(p string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[p]
	}
}

// TestRemoteModules: a remote module is fetched once, however many
// modules import it; its relative imports resolve against its URL; a k6
// import inside it is the runtime's.
func TestRemoteModules(t *testing.T) {
	base, hits := moduleServer(t, map[string]string{
		"/lib/1.0/index.js": "import { helper } from './util.js';\nimport { sleep } from 'k6';\nexport function f() { return helper() + typeof sleep; }\n",
		"/lib/1.0/util.js":  "import { shared } from '../shared.js';\nexport function helper() { return shared; }\n",
		"/lib/shared.js":    "export const shared = 'ok';\n",
	})
	dir := t.TempDir()
	write(t, dir, "other.js", "export { f as g } from '"+base+"/lib/1.0/index.js';\n")
	p := write(t, dir, "main.js", "import { f } from '"+base+"/lib/1.0/index.js';\nimport { g } from './other.js';\nexport default function () { return f() + g(); }\n")
	b, err := Load(p, Options{K6: k6Stub})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/lib/1.0/index.js", "/lib/1.0/util.js", "/lib/shared.js"} {
		if n := hits(path); n != 1 {
			t.Fatalf("%s fetched %d times, want once", path, n)
		}
	}
	if _, ok := b.byPath[base+"/lib/shared.js"]; !ok {
		t.Fatal("the relative import inside a remote module did not resolve against its URL")
	}
	if strings.Join(b.Modules, ",") != "k6" {
		t.Fatalf("k6 modules %v", b.Modules)
	}
}

// TestRemoteModuleErrors: a module the server does not have, or that
// does not parse, is one line naming its URL.
func TestRemoteModuleErrors(t *testing.T) {
	base, _ := moduleServer(t, map[string]string{"/bad.js": "export const = 1;\n"})
	dir := t.TempDir()
	for src, want := range map[string]string{
		"import x from '" + base + "/missing.js';\n": "main.js:1: remote module " + base + "/missing.js: 404 Not Found",
		"import x from '" + base + "/bad.js';\n":     base + "/bad.js:1: ",
	} {
		p := write(t, dir, "main.js", src)
		_, err := Load(p, Options{K6: k6Stub})
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line starting %q", src, err, want)
		}
	}
}

// TestModuleCacheOffline: a run with a module cache keeps what it
// fetched; an offline run loads it from there with the server gone, and
// names a module the cache lacks.
func TestModuleCacheOffline(t *testing.T) {
	base, hits := moduleServer(t, map[string]string{"/lib.js": "import { v } from './v.js';\nexport const w = v;\n", "/v.js": "export const v = 1;\n"})
	dir, cache := t.TempDir(), t.TempDir()
	p := write(t, dir, "main.js", "import { w } from '"+base+"/lib.js';\n")
	if _, err := Load(p, Options{K6: k6Stub, ModuleCache: cache}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p, Options{K6: k6Stub, ModuleCache: cache, Offline: true}); err != nil {
		t.Fatalf("offline from the cache: %v", err)
	}
	if hits("/lib.js") != 1 || hits("/v.js") != 1 {
		t.Fatalf("fetches %d and %d, want one each (the offline load fetched nothing)", hits("/lib.js"), hits("/v.js"))
	}
	q := write(t, dir, "other.js", "import x from '"+base+"/other.js';\n")
	if _, err := Load(q, Options{K6: k6Stub, ModuleCache: cache, Offline: true}); err == nil || !strings.Contains(err.Error(), "offline, and not in the module cache") {
		t.Fatalf("error %v, want the missing module named", err)
	}
}
