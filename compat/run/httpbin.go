package main

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// httpbin serves the httpbin.org routes third parties' k6 scripts
// (-real) most often aim at, with httpbin's answer shapes: /get,
// /post, /put, /patch, /delete and /anything echo the request as JSON
// (args, headers, origin, url, and for a body data, json, form, files);
// /headers echoes the headers; /bearer is 200 {"authenticated": true,
// "token": …} for an Authorization: Bearer header, else 401.
func httpbin(mux *http.ServeMux) {
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		mux.HandleFunc(m+" /"+strings.ToLower(m), serveEchoBin)
	}
	mux.HandleFunc("/anything", serveEchoBin)
	mux.HandleFunc("/anything/", serveEchoBin)
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"headers": binHeaders(r)})
	})
	mux.HandleFunc("/bearer", func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || token == "" {
			w.Header().Set("WWW-Authenticate", "Bearer")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"authenticated": true, "token": token})
	})
}

// binHeaders is the request's headers as httpbin shows them: one string
// per canonical name (Go's canonical form is httpbin's: X-Correlation-Id).
func binHeaders(r *http.Request) map[string]string {
	h := map[string]string{"Host": r.Host}
	for k, v := range r.Header {
		h[k] = strings.Join(v, ",")
	}
	return h
}

// binValues is a query or a form as httpbin shows it: a string for one
// value, a list for several.
func binValues(v map[string][]string) map[string]any {
	out := map[string]any{}
	for k, vs := range v {
		if len(vs) == 1 {
			out[k] = vs[0]
		} else {
			out[k] = vs
		}
	}
	return out
}

func serveEchoBin(w http.ResponseWriter, r *http.Request) {
	resp := map[string]any{
		"args": binValues(r.URL.Query()), "headers": binHeaders(r), "origin": "127.0.0.1",
		"url": "http://" + r.Host + r.URL.RequestURI(), "method": r.Method,
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		form, files := map[string][]string{}, map[string]any{}
		var data string
		var parsed any
		ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		switch ct {
		case "multipart/form-data":
			mr := multipart.NewReader(io.LimitReader(r.Body, 8<<20), params["boundary"])
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				b, _ := io.ReadAll(p)
				if p.FileName() != "" {
					files[p.FormName()] = string(b)
				} else {
					form[p.FormName()] = append(form[p.FormName()], string(b))
				}
			}
		case "application/x-www-form-urlencoded":
			r.ParseForm()
			form = r.PostForm
		default:
			b, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
			data = string(b)
			if json.Unmarshal(b, &parsed) != nil {
				parsed = nil
			}
		}
		resp["data"], resp["json"], resp["form"], resp["files"] = data, parsed, binValues(form), files
	}
	writeJSON(w, http.StatusOK, resp)
}

// shop serves a small cookie-session web app under /shop/, the shape of
// jeroenheijmans/sample-asp-net-core-k6-load-tests's target: / redirects
// (302) to /user?returnUrl=/ until the login cookie is sent; POST /user
// (a form) logs in and sets it; /colors, /colors/{slug},
// /colors/{slug}/subjects[/{id}], /colors/{slug}/extra-details (a page
// naming the slug), /subjects and /subjects/{id} answer 200 with a
// session, 302 to the login page without.
func shop(mux *http.ServeMux) {
	const cookie = "SampleOrg.Auth"
	authed := func(r *http.Request) bool {
		c, err := r.Cookie(cookie)
		return err == nil && c.Value == "signed-in"
	}
	page := func(w http.ResponseWriter, r *http.Request, body string) {
		if !authed(r) {
			http.Redirect(w, r, "/shop/user?returnUrl="+r.URL.Path, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><body>"+body+"</body></html>")
	}
	mux.HandleFunc("GET /shop/{$}", func(w http.ResponseWriter, r *http.Request) { page(w, r, "Home") })
	mux.HandleFunc("GET /shop/user", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<form method="post"><input name="username"><input name="password"></form>`)
	})
	mux.HandleFunc("POST /shop/user", func(w http.ResponseWriter, r *http.Request) {
		if r.ParseForm() != nil || r.PostForm.Get("username") == "" || r.PostForm.Get("password") == "" {
			http.Error(w, "bad login", http.StatusBadRequest)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: cookie, Value: "signed-in", Path: "/shop", HttpOnly: true})
		io.WriteString(w, "signed in")
	})
	mux.HandleFunc("GET /shop/colors", func(w http.ResponseWriter, r *http.Request) { page(w, r, "Colors") })
	mux.HandleFunc("GET /shop/colors/{slug}", func(w http.ResponseWriter, r *http.Request) { page(w, r, r.PathValue("slug")) })
	mux.HandleFunc("GET /shop/colors/{slug}/subjects", func(w http.ResponseWriter, r *http.Request) { page(w, r, "Subjects") })
	mux.HandleFunc("GET /shop/colors/{slug}/subjects/{id}", func(w http.ResponseWriter, r *http.Request) { page(w, r, r.PathValue("id")) })
	mux.HandleFunc("GET /shop/colors/{slug}/extra-details", func(w http.ResponseWriter, r *http.Request) {
		page(w, r, "Extra Details for "+r.PathValue("slug"))
	})
	mux.HandleFunc("GET /shop/subjects", func(w http.ResponseWriter, r *http.Request) { page(w, r, "Subjects") })
	mux.HandleFunc("GET /shop/subjects/{id}", func(w http.ResponseWriter, r *http.Request) { page(w, r, r.PathValue("id")) })
}
