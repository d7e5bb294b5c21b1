package targets

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// memFiles serves @body files from a map, as if from a directory.
func memFiles(files map[string]string) Option {
	return WithReadFile(func(path string) ([]byte, error) {
		b, ok := files[filepath.ToSlash(path)]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		return []byte(b), nil
	})
}

func TestParse(t *testing.T) {
	files := memFiles(map[string]string{"dir/body.json": `{"a":1}`, "/abs/b": "B"})
	type want struct {
		method, url string
		header      http.Header
		body        string
	}
	cases := []struct {
		name, in string
		want     []want
	}{
		{"one", "GET http://127.0.0.1:8080/\n", []want{{"GET", "http://127.0.0.1:8080/", http.Header{}, ""}}},
		{"no trailing newline", "GET http://h/x", []want{{"GET", "http://h/x", http.Header{}, ""}}},
		{"headers and body", "POST https://h/items\nContent-Type: application/json\nx-id:  7 \n@body.json\n",
			[]want{{"POST", "https://h/items", http.Header{"Content-Type": {"application/json"}, "X-Id": {"7"}}, `{"a":1}`}}},
		{"absolute body", "PUT http://h/\n@/abs/b", []want{{"PUT", "http://h/", http.Header{}, "B"}}},
		{"blank lines and comments", "# top\n\n\nGET http://a/\n# inside\nA: 1\n\n\nDELETE http://b/\n\n# end\n",
			[]want{{"GET", "http://a/", http.Header{"A": {"1"}}, ""}, {"DELETE", "http://b/", http.Header{}, ""}}},
		{"request line ends a target without a blank line", "GET http://a/\nA: 1\nGET http://b/\nB: 2",
			[]want{{"GET", "http://a/", http.Header{"A": {"1"}}, ""}, {"GET", "http://b/", http.Header{"B": {"2"}}, ""}}},
		{"repeated header", "GET http://a/\nA: 1\nA: 2", []want{{"GET", "http://a/", http.Header{"A": {"1", "2"}}, ""}}},
		{"header value with colon", "GET http://a/\nAuthorization: Basic a:b", []want{{"GET", "http://a/", http.Header{"Authorization": {"Basic a:b"}}, ""}}},
		{"CRLF and indentation", "  GET http://a/\r\n\tA: 1\r\n", []want{{"GET", "http://a/", http.Header{"A": {"1"}}, ""}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(c.in), "t.txt", WithDir("dir"), files)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %d targets, want %d", len(got), len(c.want))
			}
			for i, w := range c.want {
				g := got[i]
				if g.Method != w.method || g.URL.String() != w.url || string(g.Body) != w.body || !reflect.DeepEqual(g.Header, w.header) {
					t.Errorf("target %d = %s %s %v %q, want %s %s %v %q", i, g.Method, g.URL, g.Header, g.Body, w.method, w.url, w.header, w.body)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	files := memFiles(map[string]string{"b": "x"})
	cases := []struct{ name, in, want string }{
		{"empty", "", "t.txt: no targets"},
		{"only comments", "# a\n\n# b\n", "t.txt: no targets"},
		{"lowercase method", "get http://a/", "t.txt:1: request line \"get http://a/\": method \"get\" is not an uppercase token"},
		{"missing URL", "GET", "t.txt:1: request line \"GET\": want METHOD URL"},
		{"extra field", "GET http://a/ HTTP/1.1", "t.txt:1: request line \"GET http://a/ HTTP/1.1\": want METHOD URL"},
		{"header first", "Host: a", "t.txt:1: request line \"Host: a\": method \"Host:\" is not"},
		{"relative URL", "GET /path", "t.txt:1: URL \"/path\": scheme must be http or https"},
		{"ftp URL", "GET ftp://a/", "t.txt:1: URL \"ftp://a/\": scheme must be http or https"},
		{"no host", "GET http:///x", "t.txt:1: URL \"http:///x\" has no host"},
		{"bad escape", "GET http://a/%zz", "t.txt:1: malformed URL \"http://a/%zz\": invalid URL escape \"%zz\""},
		{"bad port", "GET http://a:x/", "t.txt:1: malformed URL \"http://a:x/\": invalid port \":x\" after host"},
		{"header without colon", "GET http://a/\nnot a header", "t.txt:2: header line \"not a header\" has no colon"},
		{"empty header key", "GET http://a/\n: v", "t.txt:2: header line \": v\" has an empty key"},
		{"bad header key", "GET http://a/\nX Y: v", "t.txt:2: header key \"X Y\" holds a character"},
		{"control char in value", "GET http://a/\nX: a\x01b", "t.txt:2: header \"X\" value holds a control character"},
		{"missing body file", "POST http://a/\n@nope", "t.txt:2: body file: open nope: file does not exist"},
		{"empty body path", "POST http://a/\n@", "t.txt:2: body line names no file"},
		{"two bodies", "POST http://a/\n@b\n@b", "t.txt:3: second body line"},
		{"header after body", "POST http://a/\n@b\nX: 1", "t.txt:3: header line after the @body line"},
		{"error on a later target", "GET http://a/\n\nGET http://b/\nbad", "t.txt:4: header line \"bad\" has no colon"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.in), "t.txt", files)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("err = %v, want prefix %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestParseLongLine(t *testing.T) {
	in := "GET http://a/\nX: " + strings.Repeat("v", MaxLine+1)
	_, err := Parse(strings.NewReader(in), "t.txt")
	if err == nil || !strings.HasPrefix(err.Error(), "t.txt:2: line longer than") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte(`{"x":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(path, []byte("POST http://127.0.0.1:1/\n@body.json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Body) != `{"x":1}` {
		t.Errorf("body %q: @path must resolve against the targets file's directory", got[0].Body)
	}

	got, err = Load("-", strings.NewReader("HEAD http://127.0.0.1:1/\n"))
	if err != nil || got[0].Method != "HEAD" {
		t.Fatalf("stdin: %v %v", got, err)
	}
	_, err = Load("-", strings.NewReader("nope"))
	if err == nil || !strings.HasPrefix(err.Error(), "stdin:1:") {
		t.Errorf("stdin error %v should name stdin:1", err)
	}

	_, err = Load(filepath.Join(dir, "missing.txt"), nil)
	if !errors.Is(err, fs.ErrNotExist) && (err == nil || !strings.Contains(err.Error(), "no such file")) {
		t.Errorf("missing file: %v", err)
	}
}

func TestFromURLs(t *testing.T) {
	h := http.Header{"X": {"1"}}
	got, err := FromURLs([]string{"http://a/", "https://b:8443/x?y=1"}, "POST", h, []byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].URL.Port() != "8443" || got[0].Method != "POST" || string(got[1].Body) != "b" || got[0].Header.Get("X") != "1" {
		t.Fatalf("got %+v", got)
	}
	got[0].Header.Set("X", "changed")
	if got[1].Header.Get("X") != "1" || h.Get("X") != "1" {
		t.Error("targets must not share header maps")
	}
	for _, c := range []struct {
		urls   []string
		method string
		want   string
	}{
		{nil, "GET", "no URLs"},
		{[]string{"http://a/"}, "get", "method \"get\""},
		{[]string{"localhost:8080"}, "GET", "URL \"localhost:8080\": scheme must be http or https"},
		{[]string{"http://"}, "GET", "URL \"http://\" has no host"},
	} {
		if _, err := FromURLs(c.urls, c.method, nil, nil); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("FromURLs(%v, %q) = %v, want prefix %q", c.urls, c.method, err, c.want)
		}
	}
}

// FuzzParse checks that any input yields targets or one error line, never a
// panic, and that what it accepts holds the invariants the engine relies on.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"GET http://127.0.0.1:8080/\n",
		"POST https://h/items\nContent-Type: application/json\n@body\n\nGET http://a/\n",
		"# c\nGET http://a/\nA: 1\nGET http://b/",
		"GET http://a/%zz", "X: y", "@", "GET http://a/\n@b\n@b", "\x00\xff",
	} {
		f.Add(s)
	}
	files := WithReadFile(func(path string) ([]byte, error) {
		if filepath.Base(path) == "body" {
			return []byte("B"), nil
		}
		return nil, fs.ErrNotExist
	})
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Parse(strings.NewReader(in), "f", files)
		if err != nil {
			if got != nil {
				t.Fatal("targets returned with an error")
			}
			if !strings.HasPrefix(err.Error(), "f") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q must name the input and fit one line", err)
			}
			return
		}
		if len(got) == 0 {
			t.Fatal("no targets and no error")
		}
		for _, tg := range got {
			if !isMethod(tg.Method) || tg.URL == nil || tg.URL.Host == "" || tg.Header == nil {
				t.Fatalf("bad target %+v", tg)
			}
			if tg.URL.Scheme != "http" && tg.URL.Scheme != "https" {
				t.Fatalf("scheme %q", tg.URL.Scheme)
			}
		}
	})
}
