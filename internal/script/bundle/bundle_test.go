package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

func TestLoadKeepsK6ModulesExternal(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "lib/a.ts", "export const a: number = 1;\n")
	p := write(t, dir, "main.js", "import http from 'k6/http';\nimport { sleep } from 'k6';\nimport { a } from './lib/a.ts';\nexport default function () { sleep(a); http.get('x'); }\n")
	b, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(b.Modules, ",") != "k6,k6/http" || b.Dir != dir {
		t.Fatalf("modules %v dir %s", b.Modules, b.Dir)
	}
	if !strings.Contains(b.Code, `require("k6/http")`) || !strings.Contains(b.Code, "var a = 1") {
		t.Fatalf("code:\n%s", b.Code)
	}
}

func TestLoadErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "lib/bad.js", "export const x = ;\n")
	for _, c := range []struct{ src, want string }{
		{"import { x } from './lib/bad.js';\nexport default function () { x; }\n", "lib/bad.js:1: "},
		{"\n\nimport grpc from 'k6/net/grpc';\n", `main.js:3: module "k6/net/grpc" is not supported`},
		{"import x from 'lodash';\n", "main.js:1: "},
		{"import x from '//cdn.example/x.js';\n", `main.js:1: remote import "//cdn.example/x.js"`},
	} {
		p := write(t, dir, "main.js", c.src)
		_, err := Load(p)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line starting %q", c.src, err, c.want)
		}
	}
}

func TestLoadSaysAMissingScriptIsMissing(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		filepath.Join(dir, "nope.js"): "no such file or directory",
		dir:                           "is a directory",
	} {
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "resolve") {
			t.Errorf("Load(%s): %v, want an error saying %q", path, err, want)
		}
	}
}
