package k6crypto

import (
	"bytes"
	"testing"
)

// TestDigests checks each algorithm against its published digest of
// "hello world!" (k6's documentation examples) or of "abc" (the
// algorithms' own test vectors).
func TestDigests(t *testing.T) {
	for _, c := range []struct{ alg, in, hex string }{
		{"sha256", "hello world!", "7509e5bda0c762d2bac7f90d758b5b2263fa01ccbc542ab5e3df163be08e6ca9"},
		{"sha512_256", "hello world!", "595b5926068b4828fb1c27db21281e31118b8475cb6c3ceeb09be7b685414d5f"},
		{"md5", "abc", "900150983cd24fb0d6963f7d28e17f72"},
		{"md4", "abc", "a448017aaf21d8525fc10ae87aa6729d"},
		{"sha1", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{"ripemd160", "abc", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"},
	} {
		h, err := New(c.alg)
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(c.in))
		got, _ := Encode(h.Sum(nil), "hex")
		if got != c.hex {
			t.Errorf("%s(%q) = %s, want %s", c.alg, c.in, got, c.hex)
		}
	}
}

func TestHMACAndEncodings(t *testing.T) {
	// RFC 4231 test case 2.
	h, err := NewHMAC("sha256", []byte("Jefe"))
	if err != nil {
		t.Fatal(err)
	}
	h.Write([]byte("what do ya want for nothing?"))
	sum := h.Sum(nil)
	if got, _ := Encode(sum, "hex"); got != "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" {
		t.Fatalf("hmac = %s", got)
	}
	b, _ := Encode([]byte{0xfb, 0xff}, "base64url")
	r, _ := Encode([]byte{0xfb, 0xff}, "base64rawurl")
	s, _ := Encode([]byte{0xfb, 0xff}, "base64")
	if b != "-_8=" || r != "-_8" || s != "+/8=" {
		t.Fatalf("encodings: %v %v %v", b, r, s)
	}
	if raw, _ := Encode([]byte{1, 2}, "binary"); !bytes.Equal(raw.([]byte), []byte{1, 2}) {
		t.Fatalf("binary = %v", raw)
	}
	if _, err := Encode(nil, "base32"); err == nil {
		t.Fatal("an unknown encoding was accepted")
	}
	if _, err := New("sha3"); err == nil {
		t.Fatal("an unknown algorithm was accepted")
	}
}
