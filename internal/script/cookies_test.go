package script

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// cookieServer is a login flow: /login sets a CSRF cookie, POST /login
// with it (and the token in the form) sets a session, /me answers 200
// only with the session; /echo returns the Cookie header it got.
func cookieServer(t *testing.T) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "csrf", Value: "tok123", Path: "/", HttpOnly: true, MaxAge: 600})
		w.Write([]byte("form"))
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("csrf")
		if err != nil || c.Value != r.FormValue("csrf") {
			http.Error(w, "bad csrf", http.StatusForbidden)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1", Path: "/"})
	})
	mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err != nil || c.Value != "s1" {
			http.Error(w, "who?", http.StatusUnauthorized)
		}
	})
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.Header.Get("Cookie")))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCookiesLoginFlow: Set-Cookie is stored in the VU's jar and sent on
// later requests; res.cookies shows it; the jar is emptied at the start
// of each iteration.
func TestCookiesLoginFlow(t *testing.T) {
	base := cookieServer(t)
	var out consoleLines
	path := writeScript(t, "login.js", `
import http from 'k6/http';
export const options = { vus: 1, iterations: 2 };
export default function () {
  const before = http.get(__ENV.BASE + '/me');
  const form = http.get(__ENV.BASE + '/login');
  const c = form.cookies.csrf[0];
  console.log('cookie', c.name, c.value, c.path, c.http_only, c.secure, c.max_age);
  const login = http.post(__ENV.BASE + '/login', { csrf: form.cookies.csrf[0].value });
  const me = http.get(__ENV.BASE + '/me');
  console.log('flow', before.status, login.status, me.status);
}
`)
	r, _ := runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	got := out.all()
	if n := len(slices.DeleteFunc(slices.Clone(got), func(s string) bool { return s != "flow 401 200 200" })); n != 2 {
		t.Fatalf("console = %q, want the flow (401 before login, then 200, 200) in both iterations", got)
	}
	if !slices.Contains(got, "cookie csrf tok123 / true false 600") {
		t.Fatalf("console = %q, want res.cookies' fields", got)
	}
	if c := r.Phases()[0].Counts(); c.IterOK+c.IterFailed != 2 {
		t.Fatalf("counts = %+v", c)
	}
}

// TestCookiesNoReset: with noCookiesReset the session outlives the
// iteration.
func TestCookiesNoReset(t *testing.T) {
	base := cookieServer(t)
	var out consoleLines
	path := writeScript(t, "noreset.js", `
import http from 'k6/http';
export const options = { vus: 1, iterations: 2, noCookiesReset: true };
export default function () {
  if (__ITER === 0) {
    const form = http.get(__ENV.BASE + '/login');
    http.post(__ENV.BASE + '/login', { csrf: form.cookies.csrf[0].value });
  }
  console.log('me', __ITER, http.get(__ENV.BASE + '/me').status);
}
`)
	runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	if got := out.all(); !slices.Contains(got, "me 1 200") {
		t.Fatalf("console = %q, want the session kept into iteration 1", got)
	}
}

// TestCookieJarAPI: http.cookieJar()'s set, cookiesForURL, delete and
// clear; params.cookies plain and replacing; params.jar.
func TestCookieJarAPI(t *testing.T) {
	base := cookieServer(t)
	var out consoleLines
	path := writeScript(t, "jar.js", `
import http from 'k6/http';
export const options = { iterations: 1 };
export default function () {
  const jar = http.cookieJar();
  jar.set(__ENV.BASE, 'a', '1');
  jar.set(__ENV.BASE, 'b', '2', { path: '/echo' });
  console.log('for', JSON.stringify(jar.cookiesForURL(__ENV.BASE + '/echo')));
  console.log('sent', http.get(__ENV.BASE + '/echo').body);
  console.log('plain', http.get(__ENV.BASE + '/echo', { cookies: { c: '3' } }).body);
  console.log('replace', http.get(__ENV.BASE + '/echo', { cookies: { a: { value: '9', replace: true } } }).body);
  jar.delete(__ENV.BASE + '/echo', 'b');
  console.log('deleted', http.get(__ENV.BASE + '/echo').body);
  jar.clear(__ENV.BASE + '/echo');
  console.log('cleared', JSON.stringify(jar.cookiesForURL(__ENV.BASE + '/echo')));
  const other = new http.CookieJar();
  other.set(__ENV.BASE, 'z', '26');
  console.log('other', http.get(__ENV.BASE + '/echo', { jar: other }).body);
}
`)
	runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	got := out.all()
	for _, want := range []string{`for {"b":["2"],"a":["1"]}`, "sent b=2; a=1", "plain b=2; a=1; c=3", "replace b=2; a=9",
		"deleted a=1", "cleared {}", "other z=26"} {
		if !slices.Contains(got, want) {
			t.Fatalf("console = %q, want %q", got, want)
		}
	}
}
