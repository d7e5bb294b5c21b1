package main

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
)

// serveDigestAuth is httpbin's /digest-auth/auth/{user}/{pass}, which k6's
// documentation uses for auth: "digest": 401 with an MD5, qop=auth Digest
// challenge, unless the request answers it for user:pass; then 200.
func serveDigestAuth(w http.ResponseWriter, r *http.Request) {
	user, pass := r.PathValue("user"), r.PathValue("pass")
	const realm, nonce = "compat@throttle", "6f2a9c0d1b7e4c55"
	md5hex := func(s string) string {
		h := md5.Sum([]byte(s))
		return hex.EncodeToString(h[:])
	}
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Digest ") {
		p := map[string]string{}
		for _, kv := range strings.Split(a[len("Digest "):], ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			p[k] = strings.Trim(v, `"`)
		}
		ha1 := md5hex(user + ":" + realm + ":" + pass)
		ha2 := md5hex(r.Method + ":" + r.URL.RequestURI())
		want := md5hex(ha1 + ":" + nonce + ":" + p["nc"] + ":" + p["cnonce"] + ":" + p["qop"] + ":" + ha2)
		if p["username"] == user && p["response"] == want {
			writeJSON(w, http.StatusOK, map[string]any{"authenticated": true, "user": user})
			return
		}
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Digest realm="%s", qop="auth", nonce="%s", algorithm=MD5`, realm, nonce))
	w.WriteHeader(http.StatusUnauthorized)
}
