package script

import (
	"crypto/rand"
	"encoding/hex"
	"hash"
	"unicode/utf8"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/script/k6crypto"
)

// cryptoModule is "k6/crypto": a function per hash, hmac, randomBytes,
// hexEncode, createHash and createHMAC (whose Hasher has update and digest).
func (vu *VU) cryptoModule() *sobek.Object {
	m := map[string]any{
		"randomBytes": func(n int) sobek.ArrayBuffer {
			if n < 1 {
				vu.throw("randomBytes: size must be a positive integer, got %d", n)
			}
			b := make([]byte, n)
			_, _ = rand.Read(b)
			return vu.rt.NewArrayBuffer(b)
		},
		// hexEncode is in k6's k6/crypto API (beside randomBytes, whose
		// ArrayBuffer scripts turn into ids with it): lowercase hex of a
		// string's UTF-8 or of an ArrayBuffer's (or typed array's) bytes.
		"hexEncode": func(data sobek.Value) string {
			return hex.EncodeToString(vu.bytes(data))
		},
		"hmac": func(alg string, secret, input sobek.Value, encoding string) sobek.Value {
			h := vu.hasher(k6crypto.NewHMAC(alg, vu.bytes(secret)))
			h.Write(vu.bytes(input))
			return vu.digest(h, encoding)
		},
		"createHash": func(alg string) *sobek.Object {
			h, err := k6crypto.New(alg)
			return vu.hasherObject(vu.hasher(h, err))
		},
		"createHMAC": func(alg string, secret sobek.Value) *sobek.Object {
			return vu.hasherObject(vu.hasher(k6crypto.NewHMAC(alg, vu.bytes(secret))))
		},
	}
	for _, alg := range k6crypto.Algorithms() {
		m[alg] = func(input sobek.Value, encoding string) sobek.Value {
			h := vu.hasher(k6crypto.New(alg))
			h.Write(vu.bytes(input))
			return vu.digest(h, encoding)
		}
	}
	return vu.object(m)
}

// hasher is h, or err thrown in the script.
func (vu *VU) hasher(h hash.Hash, err error) hash.Hash {
	if err != nil {
		vu.throw("k6/crypto: %v", err)
	}
	return h
}

// digest is h's sum in a k6 output encoding: a string, or an ArrayBuffer
// for binary.
func (vu *VU) digest(h hash.Hash, encoding string) sobek.Value {
	out, err := k6crypto.Encode(h.Sum(nil), encoding)
	if err != nil {
		vu.throw("k6/crypto: %v", err)
	}
	if b, ok := out.([]byte); ok {
		return vu.rt.ToValue(vu.rt.NewArrayBuffer(b))
	}
	return vu.rt.ToValue(out)
}

// hasherObject is k6's Hasher: update(input) adds data, digest(encoding)
// gives the sum of what was added so far.
func (vu *VU) hasherObject(h hash.Hash) *sobek.Object {
	return vu.object(map[string]any{
		"update": func(input sobek.Value) { h.Write(vu.bytes(input)) },
		"digest": func(encoding string) sobek.Value { return vu.digest(h, encoding) },
	})
}

// webCrypto is the global crypto object k6 documents: getRandomValues and
// randomUUID. crypto.subtle is refused when read, naming itself.
func (vu *VU) webCrypto() *sobek.Object {
	c := vu.object(map[string]any{
		"getRandomValues": func(arr sobek.Value) sobek.Value {
			o, ok := arr.(*sobek.Object)
			if !ok {
				vu.throw("crypto.getRandomValues: want a typed array of integers")
			}
			kind := ""
			if c, ok := o.Get("constructor").(*sobek.Object); ok {
				kind = c.Get("name").String()
			}
			switch kind {
			case "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "BigInt64Array", "BigUint64Array":
			default:
				vu.throw("crypto.getRandomValues: want a typed array of integers, got %v", arr)
			}
			buf, _ := o.Get("buffer").Export().(sobek.ArrayBuffer)
			off, n := o.Get("byteOffset").ToInteger(), o.Get("byteLength").ToInteger()
			if n > 65536 {
				vu.throw("crypto.getRandomValues: %d bytes asked, at most 65536 allowed", n)
			}
			_, _ = rand.Read(buf.Bytes()[off : off+n])
			return arr
		},
		"randomUUID": func() string { return newUUIDv4() },
		"subtle": lazyGetter(func() any {
			vu.throw("crypto.subtle is not supported by throttle (it provides crypto.getRandomValues and crypto.randomUUID)")
			return nil
		}),
	})
	return c
}

// newUUIDv4 is a random (version 4) UUID.
func newUUIDv4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hexd = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, x := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hexd[x>>4], hexd[x&15])
	}
	return string(out)
}

// textCodecs are the TextEncoder and TextDecoder constructors (UTF-8, as
// the encoding standard's TextEncoder is; TextDecoder accepts only UTF-8
// too and says so).
func (vu *VU) textCodecs() map[string]any {
	rt := vu.rt
	uint8Array := func(b []byte) sobek.Value {
		ctor := rt.Get("Uint8Array")
		v, err := rt.New(ctor, rt.ToValue(rt.NewArrayBuffer(b)))
		if err != nil {
			panic(err)
		}
		return v
	}
	return map[string]any{
		"TextEncoder": func(call sobek.ConstructorCall) *sobek.Object {
			o := call.This
			_ = o.Set("encoding", "utf-8")
			_ = o.Set("encode", func(s sobek.Value) sobek.Value {
				if s == nil || sobek.IsUndefined(s) {
					return uint8Array(nil)
				}
				return uint8Array([]byte(s.String()))
			})
			return nil
		},
		"TextDecoder": func(call sobek.ConstructorCall) *sobek.Object {
			label := "utf-8"
			if a := call.Argument(0); !sobek.IsUndefined(a) {
				label = a.String()
			}
			if label != "utf-8" && label != "utf8" && label != "unicode-1-1-utf-8" {
				vu.throw("TextDecoder: encoding %q is not supported by throttle (it decodes utf-8)", label)
			}
			fatal := false
			if o, ok := call.Argument(1).(*sobek.Object); ok {
				if f := o.Get("fatal"); f != nil {
					fatal = f.ToBoolean()
				}
			}
			o := call.This
			_ = o.Set("encoding", "utf-8")
			_ = o.Set("fatal", fatal)
			_ = o.Set("decode", func(in sobek.Value) string {
				if in == nil || sobek.IsUndefined(in) {
					return ""
				}
				b := vu.bytes(in)
				if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
					b = b[3:]
				}
				if fatal && !utf8.Valid(b) {
					vu.throw("TextDecoder: the input is not valid utf-8")
				}
				return string([]rune(string(b)))
			})
			return nil
		},
	}
}
