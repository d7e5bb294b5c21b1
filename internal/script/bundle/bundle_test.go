package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grafana/sobek"
)

func write(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// k6Stub stands in for the runtime's k6 modules: k6 and k6/http with a
// few exports, anything else refused.
func k6Stub(spec string) (sobek.ModuleRecord, error) {
	names := map[string][]string{"k6": {"sleep", "default"}, "k6/http": {"get", "default"}}[spec]
	if names == nil {
		return nil, errors.New("module \"" + spec + "\" is not supported")
	}
	return &stubRecord{names: names}, nil
}

type stubRecord struct{ names []string }

func (s *stubRecord) GetExportedNames(cb func([]string), _ ...sobek.ModuleRecord) bool {
	cb(s.names)
	return true
}

func (s *stubRecord) ResolveExport(name string, _ ...sobek.ResolveSetElement) (*sobek.ResolvedBinding, bool) {
	for _, n := range s.names {
		if n == name {
			return &sobek.ResolvedBinding{Module: s, BindingName: name}, false
		}
	}
	return nil, false
}

func (s *stubRecord) Link() error                               { return nil }
func (s *stubRecord) Evaluate(rt *sobek.Runtime) *sobek.Promise { p, _, _ := rt.NewPromise(); return p }

// TestLoadKeepsModulesApart: each file is its own record, TypeScript
// included, and the k6 modules come from the hook, listed once each.
func TestLoadKeepsModulesApart(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "lib/a.ts", "export const a: number = 1;\n")
	write(t, dir, "lib/b.js", "import http from 'k6/http';\nexport { a } from './a.ts';\n")
	p := write(t, dir, "main.js", "import http from 'k6/http';\nimport { sleep } from 'k6';\nimport { a } from './lib/b.js';\nexport default function () { sleep(a); http.get('x'); }\n")
	b, err := Load(p, Options{K6: k6Stub})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(b.Modules, ",") != "k6,k6/http" || b.Dir != dir || b.Main == nil {
		t.Fatalf("modules %v dir %s", b.Modules, b.Dir)
	}
	if len(b.byPath) != 3 {
		t.Fatalf("%d local modules, want main.js, lib/b.js and lib/a.ts apart", len(b.byPath))
	}
	for _, name := range []string{"main.js", "lib/b.js", "lib/a.ts"} {
		if m := b.byPath[filepath.Join(dir, filepath.FromSlash(name))]; m == nil || m.name != name {
			t.Fatalf("module %s missing or misnamed", name)
		}
	}
}

func TestLoadErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "lib/bad.js", "export const x = ;\n")
	write(t, dir, "lib/deep.js", "\nimport ws from 'k6/ws';\nexport const y = 1;\n")
	for _, c := range []struct{ src, want string }{
		{"import { x } from './lib/bad.js';\nexport default function () { x; }\n", "lib/bad.js:1: "},
		{"import { y } from './lib/deep.js';\n", `lib/deep.js:2: module "k6/ws" is not supported`},
		{"\n\nimport grpc from 'k6/net/grpc';\n", `main.js:3: module "k6/net/grpc" is not supported`},
		{"import x from 'lodash';\n", `main.js:1: cannot resolve "lodash"`},
		{"import x from '//cdn.example/x.js';\n", `main.js:1: remote import "//cdn.example/x.js"`},
		{"export * from 'https://cdn.example/x.js';\n", `main.js:1: remote import "https://cdn.example/x.js"`},
		{"\nimport './nope.js';\n", `main.js:2: import "./nope.js": nope.js: no such file or directory`},
		{"const a = 1;\n\nexport { a, nope };\n", `main.js:3: exporting unknown binding: "nope"`},
	} {
		p := write(t, dir, "main.js", c.src)
		_, err := Load(p, Options{K6: k6Stub})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line starting %q", c.src, err, c.want)
		}
	}
}

// TestFileURLImport: a file: URL is a local path.
func TestFileURLImport(t *testing.T) {
	dir := t.TempDir()
	lib := write(t, dir, "lib.js", "export const v = 1;\n")
	p := write(t, dir, "main.js", "import { v } from 'file://"+filepath.ToSlash(lib)+"';\n")
	b, err := Load(p, Options{K6: k6Stub})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.byPath) != 2 {
		t.Fatalf("%d modules, want main.js and lib.js", len(b.byPath))
	}
}

func TestLoadSaysAMissingScriptIsMissing(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		filepath.Join(dir, "nope.js"): "no such file or directory",
		dir:                           "is a directory",
	} {
		_, err := Load(path, Options{K6: k6Stub})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "resolve") {
			t.Errorf("Load(%s): %v, want an error saying %q", path, err, want)
		}
	}
}
