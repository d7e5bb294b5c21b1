package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Secrets stay out of throttle's outputs: a script run sending
// Authorization and Cookie headers, answered with a Set-Cookie, with -e
// TOKEN and API_KEY values (the key in its URLs, the token in a thrown
// error), and a URL run with -H Authorization, -H Cookie and a password
// in its URL. No secret is in any file written, nor on stdout or stderr —
// except the one console.log line where the script prints the token
// itself. The --http-debug dump shows the credential headers blanked.
func TestSecretsStayOut(t *testing.T) {
	secrets := []string{"TOKSECRET123", "APIKEYSECRET", "HDRCOOKIESECRET", "SETCOOKIESECRET", "URLPASSSECRET", "CLIHDRSECRET"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "SETCOOKIESECRET"})
		w.Write([]byte("ok\n"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	path := writeFile(t, "s.js", `
import http from 'k6/http';
import { check } from 'k6';
import 'k6/x/throttle';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 5 } } };
export default function () {
  const r = http.get(__ENV.BASE + '/?api_key=' + __ENV.API_KEY, { headers: { Authorization: 'Bearer ' + __ENV.TOKEN, Cookie: 'sid=HDRCOOKIESECRET' } });
  check(r, { ok: (x) => x.status === 200 });
  if (__ITER === 0) { console.log('the script prints ' + __ENV.TOKEN); }
  if (__ITER === 1) { throw new Error('failed with ' + __ENV.TOKEN); }
}
`)
	files := map[string]string{}
	for _, f := range []string{"report.json", "timeline.csv", "points.json", "points.csv", "export.json"} {
		files[f] = filepath.Join(dir, f)
	}
	r := cli(t, "", nil, "run", "--verbose", "--http-debug=full", "--window", "100ms", "-e", "BASE="+srv.URL, "-e", "TOKEN=TOKSECRET123", "-e", "API_KEY=APIKEYSECRET",
		"--out", files["report.json"], "--timeline", files["timeline.csv"], "--out", "json="+files["points.json"], "--out", "csv="+files["points.csv"],
		"--summary-export", files["export.json"], path)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	outputs := map[string]string{"stdout": r.stdout}
	for _, line := range strings.Split(r.stderr, "\n") {
		if !strings.Contains(line, "source=console") { // the script's own print
			outputs["stderr"] += line + "\n"
		} else if !strings.Contains(line, "TOKSECRET123") {
			t.Errorf("console line %q: the script's own print must stay as it is", line)
		}
	}
	if !strings.Contains(outputs["stderr"], "Authorization: [redacted]") || !strings.Contains(outputs["stderr"], "Set-Cookie: [redacted]") {
		t.Errorf("the --http-debug dump does not show its credential headers blanked: %s", r.stderr)
	}
	if !strings.Contains(outputs["stderr"], "failed with [redacted]") {
		t.Errorf("the exception line is not redacted: %s", r.stderr)
	}
	for name, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		outputs[name] = string(b)
	}
	if !strings.Contains(outputs["points.json"], "api_key=[redacted]") {
		t.Errorf("points.json's url tags are not redacted")
	}

	report := filepath.Join(dir, "url.json")
	u := strings.Replace(srv.URL, "http://", "http://user:URLPASSSECRET@", 1)
	r = cli(t, "", nil, "run", "--verbose", "--rate", "50", "--no-governor", "--duration", "300ms", "-H", "Authorization: Bearer CLIHDRSECRET",
		"-H", "Cookie: a=HDRCOOKIESECRET", "--out", report, u)
	if r.code != 0 {
		t.Fatalf("URL run: exit %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	outputs["url stdout"], outputs["url stderr"], outputs["url.json"] = r.stdout, r.stderr, string(b)
	for name, text := range outputs {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %s:\n%s", name, s, text)
			}
		}
	}
}

// What a script reads besides its own modules — a file with open(), a
// module over the network — is said on stderr at the end of every run
// (one line, each with its size), not only a governed or verbose one;
// --quiet keeps it out, and a script that read only its own modules adds
// no line.
func TestScriptSaysWhatItRead(t *testing.T) {
	mod := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("export function hi() { return 'hi'; }\n"))
	}))
	defer mod.Close()
	data := writeFile(t, "data.csv", "a,b\n")
	path := writeFile(t, "imp.js", `import { hi } from '`+mod.URL+`/lib.js';
const d = open('`+data+`');
export const options = { iterations: 1 };
export default function () { hi(); }
`)
	r := cli(t, "", nil, "run", path)
	want := "read         " + path + " (module, "
	if r.code != 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, mod.URL+"/lib.js (remote module, 38 B)") ||
		!strings.Contains(r.stderr, data+" (open, 4 B)") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q: want one line naming the module, the remote module and the file", r.code, r.stderr)
	}
	if r = cli(t, "", nil, "run", "--quiet", path); r.code != 0 || strings.Contains(r.stderr, "read ") {
		t.Fatalf("--quiet: exit %d, stderr %q", r.code, r.stderr)
	}
	own := writeFile(t, "own.js", "export const options = { iterations: 1 };\nexport default function () {}\n")
	if r = cli(t, "", nil, "run", own); r.code != 0 || strings.Contains(r.stderr, "read ") {
		t.Fatalf("own modules only: exit %d, stderr %q", r.code, r.stderr)
	}
}
