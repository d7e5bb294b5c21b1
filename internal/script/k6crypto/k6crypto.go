// Package k6crypto is the Go side of k6's k6/crypto module: its hash
// algorithms by k6's names and its output encodings. The runtime wraps it
// for scripts; nothing here knows about JavaScript.
package k6crypto

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"sort"
	"strings"

	"golang.org/x/crypto/md4"       //nolint:staticcheck // k6 documents md4; kept for compatibility, not security
	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // k6 documents ripemd160
)

// algorithms are k6/crypto's hashes by the names k6 gives them.
var algorithms = map[string]func() hash.Hash{
	"md4":        md4.New,
	"md5":        md5.New,
	"sha1":       sha1.New,
	"sha256":     sha256.New,
	"sha384":     sha512.New384,
	"sha512":     sha512.New,
	"sha512_224": sha512.New512_224,
	"sha512_256": sha512.New512_256,
	"ripemd160":  ripemd160.New,
}

// Algorithms are the hash names k6/crypto accepts, sorted.
func Algorithms() []string {
	names := make([]string, 0, len(algorithms))
	for n := range algorithms {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New is the hash named name, or an error listing the names there are.
func New(name string) (hash.Hash, error) {
	f, ok := algorithms[name]
	if !ok {
		return nil, fmt.Errorf("unknown hash algorithm %q (want one of %s)", name, strings.Join(Algorithms(), ", "))
	}
	return f(), nil
}

// NewHMAC is an HMAC of the hash named name keyed with secret.
func NewHMAC(name string, secret []byte) (hash.Hash, error) {
	if _, err := New(name); err != nil {
		return nil, err
	}
	return hmac.New(algorithms[name], secret), nil
}

// Encode gives a digest in one of k6's output encodings: a string for
// hex, base64, base64url (padded) and base64rawurl, the bytes themselves
// for binary.
func Encode(sum []byte, encoding string) (any, error) {
	switch encoding {
	case "hex":
		return hex.EncodeToString(sum), nil
	case "base64":
		return base64.StdEncoding.EncodeToString(sum), nil
	case "base64url":
		return base64.URLEncoding.EncodeToString(sum), nil
	case "base64rawurl":
		return base64.RawURLEncoding.EncodeToString(sum), nil
	case "binary":
		return sum, nil
	}
	return nil, fmt.Errorf("unknown output encoding %q (want hex, base64, base64url, base64rawurl or binary)", encoding)
}
