package engine

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// plainHeadSeeds are header blocks as the raw transport reads them: ones
// plainCheck passes and ones it must not (each an error of fasthttp's
// reader, or a case too close to one; some h1resp refuses itself).
var plainHeadSeeds = []struct {
	block string
	plain bool
}{
	{"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n", true},
	{"HTTP/1.1 200\r\n\r\n", true},
	{"HTTP/1.1 204 \r\n\r\n", true},
	{"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", true},
	{"HTTP/1.1 200 OK\r\nSet-Cookie: a=1; Path=/\r\nset-cookie: b=2\r\nX-Empty:\r\nX-Tab:\tv\t \r\n\r\n", true},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Utf8: caf\xc3\xa9\r\n\r\n", true},
	{"HTTP/1.1 200 OK\r\nContent-Length: 007 \r\n\r\n", true},
	{"HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\n", true},
	{"HTTP/1.1 2x0 OK\r\n\r\n", false},
	{"HTTP/1.1 20 OK\r\n\r\n", false},
	{"HTTP/1.1  200 OK\r\n\r\n", false},
	{"HTTP/x.1 200 OK\r\n\r\n", false},
	{"HTTP/1.1 200 O\x01K\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456789\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nTrailer: X-T\r\nTransfer-Encoding: chunked\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nX A: 1\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nX-A : 1\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\n: 1\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nX-A 1\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nX-A: 1\x7f\r\n\r\n", false},
	{"HTTP/1.1 200 OK\r\nX-A: a\rb\r\n\r\n", false},
	{"HTTP/1.1 200 OK\nX-A: 1\r\n\r\n", false},
	{"HTTP/1.1 100 Continue\r\n\r\n", false},
	{"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nX-A: 1\r\n\r\n", true}, // the final block
}

// What plainCheck passes, fasthttp's response header reader takes:
// the seeds, and 20 000 mutations of them (bytes changed, inserted,
// deleted, from the bytes that matter to either parser). And the headers
// made from a lazy block later are the ones keepHead's eager parse made.
func TestPlainHeadTakenByFastHTTP(t *testing.T) {
	for _, s := range plainHeadSeeds {
		if ok, _, _ := plainHead([]byte(s.block)); ok != s.plain {
			t.Errorf("plain(%q) = %v, want %v", s.block, ok, s.plain)
		}
		checkPlainHead(t, []byte(s.block))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "\r\n\t :;,-0123456789AaCcHhKkLlPpSsTtXx/.\x00\x01\x7f\x80\xff\"()"
	for range 20000 {
		checkPlainHead(t, mutate(rng, plainHeadSeeds[rng.IntN(len(plainHeadSeeds))].block, alphabet))
	}
}

// mutate is seed with one to three bytes changed, inserted or deleted,
// each byte taken from alphabet.
func mutate(rng *rand.Rand, seed, alphabet string) []byte {
	b := []byte(seed)
	for range 1 + rng.IntN(3) {
		i := rng.IntN(len(b) + 1)
		c := alphabet[rng.IntN(len(alphabet))]
		switch op := rng.IntN(3); {
		case op == 0 && i < len(b):
			b[i] = c
		case op == 1:
			b = append(b[:i], append([]byte{c}, b[i:]...)...)
		case i < len(b):
			b = append(b[:i], b[i+1:]...)
		}
	}
	return b
}

// FuzzPlainHead: the same claim on any block.
func FuzzPlainHead(f *testing.F) {
	for _, s := range plainHeadSeeds {
		f.Add([]byte(s.block))
	}
	f.Fuzz(checkPlainHead)
}

// plainHead reads block, then a body of 4 bytes, with h1resp as the raw
// transport does, checking the header blocks: whether plainCheck passed
// the final answer's block (which it returns: the block keepHead gets),
// and whether that has a Set-Cookie line.
func plainHead(block []byte) (ok, cookie bool, final []byte) {
	var p h1resp
	p.reset(false)
	p.keep, p.limit = true, 1<<20
	p.plain.on = true
	_, _, err := p.feed(append(append([]byte(nil), block...), "abcd"...))
	return err == nil && p.headBlock != nil && p.plain.ok, p.plain.cookie, p.headBlock
}

// checkPlainHead: if plainCheck passes block, fasthttp reads it whole
// without an error, its Set-Cookie flag is right, and Headers and
// HeaderValues from the lazy buffer equal those of keepHeader's records.
func checkPlainHead(t *testing.T, block []byte) {
	ok, cookie, block := plainHead(block)
	if !ok {
		return
	}
	var h fasthttp.ResponseHeader
	h.SetNoDefaultContentType(true)
	br := bufio.NewReader(bytes.NewReader(block))
	if err := h.Read(br); err != nil {
		t.Fatalf("plainHead kept %q, fasthttp fails it: %v", block, err)
	}
	if br.Buffered() != 0 {
		t.Fatalf("plainHead kept %q, fasthttp leaves %d bytes", block, br.Buffered())
	}
	if got := len(h.PeekAll("Set-Cookie")) > 0; got != cookie {
		t.Fatalf("%q: Set-Cookie flag %v, fasthttp %v", block, cookie, got)
	}
	records, _ := keepHeader(&h, nil)
	eager := Response{rawHeader: records}
	lazy := Response{rawHeader: lazyHeader(block, cookie, nil)}
	for _, k := range []string{"Set-Cookie", "Content-Type", "X-A"} {
		if e, l := eager.HeaderValues(k), lazy.HeaderValues(k); !reflect.DeepEqual(e, l) {
			t.Fatalf("%q: HeaderValues(%s) lazy %q, eager %q", block, k, l, e)
		}
	}
	if e, l := eager.Headers(), (&Response{rawHeader: lazyHeader(block, cookie, nil)}).Headers(); !reflect.DeepEqual(e, l) {
		t.Fatalf("%q: headers lazy %v, eager %v", block, l, e)
	}
	if e, l := eager.Headers(), lazy.Headers(); !reflect.DeepEqual(e, l) {
		t.Fatalf("%q: headers after HeaderValues: lazy %v, eager %v", block, l, e)
	}
}

// Every token byte plainCheck takes in a name, fasthttp's reader takes as
// one too (its own table of field bytes).
func TestPlainHeadNameBytes(t *testing.T) {
	for c := range 256 {
		if !tokenByte[c] {
			continue
		}
		block := "HTTP/1.1 200 OK\r\nX" + string(rune(c)) + ": v\r\n\r\n"
		var h fasthttp.ResponseHeader
		if err := h.Read(bufio.NewReader(strings.NewReader(block))); err != nil {
			t.Errorf("name byte %q: fasthttp fails %v", byte(c), err)
		}
	}
}

// alnumDash agrees with a byte-by-byte test on every byte in every lane.
func TestAlnumDash(t *testing.T) {
	isAlnumDash := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
	}
	for lane := range 8 {
		for c := range 256 {
			b := []byte("Content-")
			b[lane] = byte(c)
			w := uint64(0)
			for i := 7; i >= 0; i-- {
				w = w<<8 | uint64(b[i])
			}
			if got := alnumDash(w); got != isAlnumDash(byte(c)) {
				t.Errorf("lane %d, byte %#x: alnumDash %v", lane, c, got)
			}
		}
	}
}
