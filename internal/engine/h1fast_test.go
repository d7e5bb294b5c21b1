package engine

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// fastHeadSeeds add to plainHeadSeeds the heads whose framing the fast
// path reads itself, and ones it must leave to the general path.
var fastHeadSeeds = []string{
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Sun, 06 Dec 2026 18:09:38 GMT\r\n\r\nok\n",
	"HTTP/1.1 200 OK\r\nServer: nginx/1.24.0\r\nDate: Sun, 06 Dec 2026 18:09:38 GMT\r\nContent-Type: text/html\r\nContent-Length: 5\r\nLast-Modified: Sun, 06 Dec 2026 10:00:00 GMT\r\nConnection: keep-alive\r\nETag: \"6753-5\"\r\nAccept-Ranges: bytes\r\n\r\nhello",
	"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nconnection:  CLOSE \r\ncontent-length:2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nConnection: cl\xc5\xbfe\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\xc2\xa0\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length:\t2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTrailer: X-T\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX_Under.Dot~: 1\r\nX-Long-Header-Name-Over-Eight: v\r\nx-a!#$%&'*+^`|: 2\r\n\r\n",
	"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
	"HTTP/1.1 204 No Content\r\n\r\n",
	"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx",
	"HTTP/1.1 200 \xc3\xa9t\xc3\xa9\r\nX-Utf8: caf\xc3\xa9\r\n\r\n",
	"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX: \x7f\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX:\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX: 1\n\r\n",
	"HTTP/1.1 200 OK\r\nX: 1\r\r\n\r\n",
	"\r\n\r\n",
	"HTTP/1.1 200 OK\r\n",
}

// The fast path reads every head as the general path does: the same
// consumed bytes, verdict and error, and the same parser state after it
// (status, framing, body buffer, plain check, kept block), for the seeds
// and 15 000 mutations of them, fed whole and in pieces (the seeds
// byte by byte too), with the plain
// check on (the raw transport) and off (the event loop), body kept or not.
func TestFastHeadLikeGeneral(t *testing.T) {
	var seeds []string
	for _, s := range plainHeadSeeds {
		seeds = append(seeds, s.block+"abcd")
	}
	seeds = append(seeds, fastHeadSeeds...)
	fast := 0
	check := func(raw []byte, steps ...int) {
		for _, mode := range []struct{ plain, keep bool }{{true, true}, {false, false}, {true, false}} {
			for _, step := range append(steps, len(raw)+1, 7) {
				want := feedTrace(raw, step, mode.plain, mode.keep, true)
				got := feedTrace(raw, step, mode.plain, mode.keep, false)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%q (plain %v, keep %v, step %d):\nfast    %+v\ngeneral %+v", raw, mode.plain, mode.keep, step, got, want)
				}
			}
		}
		var p h1resp
		p.reset(false)
		if _, ok := p.fastHead(raw); ok {
			fast++
		}
	}
	for _, s := range seeds {
		check([]byte(s), 1, 2, 3)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "\r\n\t :;,-0123456789AaCcEeHhIiKkLlNnOoPpSsTtXx/._~\x00\x01\x7f\x80\xa0\xc2\xc5\xbf\xff\"()"
	for range 15000 {
		check(mutate(rng, seeds[rng.IntN(len(seeds))], alphabet))
	}
	if fast < 2500 {
		t.Fatalf("the fast path read only %d heads", fast)
	}
}

// feedStep is one feed call's result and the parser's state after it
// (its slices as strings, the kept block as it was then).
type feedStep struct {
	n                       int
	done                    bool
	err                     string
	state                   h1resp
	body, block, room, tail string
}

// feedTrace feeds raw in pieces of step bytes, as the transports do,
// with the fast path off when general, and returns every call's result
// and the parser's state after it.
func feedTrace(raw []byte, step int, plain, keep, general bool) []feedStep {
	fastHeadOff = general
	defer func() { fastHeadOff = false }()
	var p h1resp
	p.reset(false)
	p.keep, p.limit, p.plain.on = keep, 1<<20, plain
	var pend []byte
	var out []feedStep
	for i := 0; i < len(raw); i += step {
		pend = append(pend, raw[i:min(i+step, len(raw))]...)
		n, done, err := p.feed(pend)
		s := feedStep{n: n, done: done, body: string(p.body), block: string(p.headBlock), room: string(p.room), tail: string(p.trailer)}
		if err != nil {
			s.err = err.Error()
		}
		p.headBlock = nil
		s.state = p
		s.state.body, s.state.room, s.state.trailer = nil, nil, nil
		out = append(out, s)
		pend = pend[n:]
		if err != nil || done {
			break
		}
	}
	return out
}

// valueScan, valueEnd and nameScan stop where a byte-by-byte scan stops,
// in every lane of a word.
func TestScansByteByByte(t *testing.T) {
	for c := range 256 {
		for lane := range 12 {
			b := []byte("abcdefghijklmnopqrst")
			b[lane] = byte(c)
			for _, c := range []struct {
				name string
				scan func([]byte) int
				stop func(byte) bool
			}{
				{"valueScan", valueScan, func(x byte) bool { return x < ' ' || x == 0x7f }},
				{"valueEnd", valueEnd, func(x byte) bool { return x < ' ' && x != '\t' || x == 0x7f }},
				{"nameScan", func(b []byte) int { return nameScan(b, 0) }, func(x byte) bool { return !tokenByte[x] }},
			} {
				want := len(b)
				for i, x := range b {
					if c.stop(x) {
						want = i
						break
					}
				}
				if got := c.scan(b); got != want {
					t.Fatalf("%s(%q) = %d, want %d", c.name, b, got, want)
				}
			}
		}
	}
	// a byte of 0x80 and above before a flagged one: the carry is above it
	b := []byte("ab\xff:defghijk")
	if got := nameScan(b, 0); got != 2 {
		t.Fatalf("nameScan(%q) = %d", b, got)
	}
}

// lowerIs, eight bytes at a time, says what a byte-by-byte compare says.
func TestLowerIsByteByByte(t *testing.T) {
	want := func(name []byte, lower string) bool {
		if len(name) != len(lower) {
			return false
		}
		for i := range name {
			if name[i]|0x20 != lower[i] {
				return false
			}
		}
		return true
	}
	for _, lower := range []string{"trailer", "set-cookie", "connection", "content-length", "transfer-encoding"} {
		for i := range len(lower) {
			for c := range 256 {
				name := []byte(lower)
				name[i] = byte(c)
				if got := lowerIs(name, lower); got != want(name, lower) {
					t.Fatalf("lowerIs(%q, %q) = %v", name, lower, got)
				}
			}
		}
		if lowerIs([]byte(lower+"x"), lower) || lowerIs([]byte(lower[1:]), lower) {
			t.Fatalf("lowerIs of another length is true: %q", lower)
		}
	}
}
