package script

import (
	"strings"
	"testing"
)

// TestRefusedNamesAtOnce: every k6 module and name a script imports that
// throttle lacks is named in one line at load, not only the first.
func TestRefusedNamesAtOnce(t *testing.T) {
	path := writeScript(t, "main.js", `
import http, { nope } from 'k6/http';
import browser from 'k6/browser';
import { check, alsoNope } from 'k6';
export default function () {}
`)
	_, err := Load(path, Config{})
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, want := range []string{`main.js:2: The requested module "k6/http" does not provide an export named "nope"`,
		`main.js:3: module "k6/browser" is not supported`, `main.js:4: The requested module "k6" does not provide an export named "alsoNope"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, `"check"`) {
		t.Errorf("error %q: want one line naming only what is missing", msg)
	}
}

// TestHTTPExtras: http.url's one name tag, the constants and randomSeed.
func TestHTTPExtras(t *testing.T) {
	got := consoleOf(t, "main.js", `
import http, { TLS_1_3 } from 'k6/http';
import { randomSeed } from 'k6';
export const options = { iterations: 1 };
export default function () {
  const id = 7;
  const u = http.url`+"`${__ENV.BASE}/items/${id}`"+`;
  const res = http.get(u);
  randomSeed(42); const a = Math.random(); randomSeed(42); const b = Math.random();
  console.log(u.name.endsWith('/items/${}'), res.status, TLS_1_3, a === b);
}
`)
	if want := "true 200 tls1.3 true"; got != want {
		t.Fatalf("console %q, want %q", got, want)
	}
}
