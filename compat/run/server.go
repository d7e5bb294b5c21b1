package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// target is the one loopback server every script talks to. It counts the
// requests it gets per path (and the distinct query strings per path), so a
// script's expectations can say what reached the server, whatever the
// script's own metrics claim.
type target struct {
	mu       sync.Mutex
	hits     map[string]int
	distinct map[string]map[string]bool
	srv      *http.Server
	url      string
}

func startTarget() (*target, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &target{url: "http://" + ln.Addr().String()}
	t.reset()
	mux := http.NewServeMux()
	mux.HandleFunc("/json", serveJSON)
	mux.HandleFunc("/status/{code}", serveStatus)
	mux.HandleFunc("/delay", serveDelay)
	mux.HandleFunc("/echo", serveEcho)
	mux.HandleFunc("/login", serveLogin)
	mux.HandleFunc("/cookies/check", serveCookieCheck)
	mux.HandleFunc("/cookies/set", serveCookieSet)
	mux.HandleFunc("/cookies", serveCookies)
	mux.HandleFunc("/html", serveHTML)
	mux.HandleFunc("/form-submit", serveFormSubmit)
	mux.HandleFunc("/redirect", serveRedirect)
	mux.HandleFunc("/modules/{file}", serveModule)
	mux.HandleFunc("/digest-auth/auth/{user}/{pass}", serveDigestAuth)
	httpbin(mux) // httpbin.go
	shop(mux)    // httpbin.go
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})
	handler, err := withProtocols(mux, t.count) // protocols.go
	if err != nil {
		return nil, err
	}
	t.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go t.srv.Serve(ln)
	return t, nil
}

func (t *target) close() { t.srv.Close() }

// fill writes the server's addresses into a script, an operand or an
// argument: {{BASE_URL}} (http://127.0.0.1:PORT), {{WS_URL}}
// (ws://127.0.0.1:PORT) and {{HOST}} (127.0.0.1:PORT).
func (t *target) fill(s string) string {
	host := strings.TrimPrefix(t.url, "http://")
	return strings.NewReplacer("{{BASE_URL}}", t.url, "{{WS_URL}}", "ws://"+host, "{{HOST}}", host).Replace(s)
}

func (t *target) reset() {
	t.mu.Lock()
	t.hits = map[string]int{}
	t.distinct = map[string]map[string]bool{}
	t.mu.Unlock()
}

func (t *target) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.mu.Lock()
		t.hits[r.URL.Path]++
		if t.distinct[r.URL.Path] == nil {
			t.distinct[r.URL.Path] = map[string]bool{}
		}
		t.distinct[r.URL.Path][r.URL.RawQuery] = true
		t.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (t *target) hitsOn(path string) (hits, distinct int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hits[path], len(t.distinct[path])
}

// paths lists what the server saw, for a failure's reason.
func (t *target) paths() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for p, n := range t.hits {
		out = append(out, fmt.Sprintf("%s:%d", p, n))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func serveJSON(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"name": "throttle", "items": []int{1, 2, 3}, "nested": map[string]any{"value": 42},
		// httpbin's /json is a slideshow; third parties' scripts check for it.
		"slideshow": map[string]any{"title": "Sample Slide Show", "author": "Yours Truly"},
	})
}

func serveStatus(w http.ResponseWriter, r *http.Request) {
	code, err := strconv.Atoi(r.PathValue("code"))
	if err != nil || code < 100 || code > 599 {
		http.Error(w, "bad status code", http.StatusBadRequest)
		return
	}
	w.WriteHeader(code)
	fmt.Fprintf(w, "status %d", code)
}

// serveDelay answers after ?ms= milliseconds (at most 10 s), or when the
// client goes away.
func serveDelay(w http.ResponseWriter, r *http.Request) {
	ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
	ms = min(max(ms, 0), 10000)
	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
		io.WriteString(w, "ok")
	case <-r.Context().Done():
	}
}

// serveEcho returns the request as JSON: method, path, query, headers,
// cookies and body.
func serveEcho(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[k] = strings.Join(v, ", ")
	}
	cookies := map[string]string{}
	for _, c := range r.Cookies() {
		cookies[c.Name] = c.Value
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery,
		"headers": headers, "cookies": cookies, "body": string(body),
	})
}

// serveLogin sets a session cookie and a CSRF cookie, as a login form does.
func serveLogin(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc123", Path: "/", HttpOnly: true})
	http.SetCookie(w, &http.Cookie{Name: "csrf", Value: "tok-42", Path: "/"})
	writeJSON(w, http.StatusOK, map[string]any{"logged_in": true})
}

// serveCookieCheck is 200 only for a request carrying the login's session.
func serveCookieCheck(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie("session"); err == nil && c.Value == "abc123" {
		io.WriteString(w, "welcome")
		return
	}
	http.Error(w, "no session", http.StatusUnauthorized)
}

// serveCookieSet sets one cookie per query parameter.
func serveCookieSet(w http.ResponseWriter, r *http.Request) {
	for k, v := range r.URL.Query() {
		http.SetCookie(w, &http.Cookie{Name: k, Value: v[0], Path: "/"})
	}
	io.WriteString(w, "set")
}

// serveCookies returns the cookies the request carried: {"cookies": {...}}.
func serveCookies(w http.ResponseWriter, r *http.Request) {
	cookies := map[string]string{}
	for _, c := range r.Cookies() {
		cookies[c.Name] = c.Value
	}
	writeJSON(w, http.StatusOK, map[string]any{"cookies": cookies})
}

const htmlPage = `<!DOCTYPE html>
<html><head><title>Compat Shop</title></head>
<body>
<h1 class="headline">Welcome</h1>
<ul id="products">
  <li><a href="/ok?p=1" class="product">One</a></li>
  <li><a href="/ok?p=2" class="product">Two</a></li>
  <li><a href="/ok?p=3" class="product">Three</a></li>
</ul>
<form id="login" action="/form-submit" method="POST">
  <input type="hidden" name="csrf" value="tok-42">
  <input type="text" name="user" value="">
  <input type="submit" value="Log in">
</form>
</body></html>
`

func serveHTML(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, htmlPage)
}

// serveFormSubmit returns the posted form's fields as JSON.
func serveFormSubmit(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fields := map[string]string{}
	for k, v := range r.PostForm {
		fields[k] = v[0]
	}
	writeJSON(w, http.StatusOK, map[string]any{"method": r.Method, "form": fields})
}

// serveRedirect redirects (302) to ?to= (a path on this server).
func serveRedirect(w http.ResponseWriter, r *http.Request) {
	to := r.URL.Query().Get("to")
	if !strings.HasPrefix(to, "/") {
		to = "/ok"
	}
	http.Redirect(w, r, to, http.StatusFound)
}

// modules are remote ES modules, served as a CDN would: greet.js imports
// its neighbour by a relative path.
var modules = map[string]string{
	"greet.js": "import { shout } from './shout.js';\n" +
		"export function greet(name) { return shout('hello ' + name); }\n",
	"shout.js": "export function shout(s) { return s.toUpperCase(); }\n",
}

func serveModule(w http.ResponseWriter, r *http.Request) {
	src, ok := modules[r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/javascript")
	io.WriteString(w, src)
}
