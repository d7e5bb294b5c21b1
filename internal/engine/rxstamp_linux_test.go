//go:build linux

package engine

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/targets"
	"github.com/throttlekit/throttle/internal/testwait"
)

// rxHold is how long the tests hold the reader after the answer was
// written: far above what a loopback answer takes on a loaded machine.
const rxHold = 300 * time.Millisecond

// heldServer answers every request at once and sends the time its
// answer's write returned on wrote.
func heldServer(t *testing.T) (*rawServer, chan time.Time) {
	wrote := make(chan time.Time, 16)
	srv := newRawServer(t, func(_ net.Conn, w *bufio.Writer, _ *http.Request) bool {
		w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		w.Flush()
		wrote <- time.Now()
		return true
	})
	return srv, wrote
}

// holdReader makes readHook hold the reader until rxHold has passed since
// the server wrote the answer (as a generator short of CPU reads late).
func holdReader(t *testing.T, wrote chan time.Time) {
	readHook = func() {
		w := <-wrote
		for d := time.Since(w); d < rxHold; d = time.Since(w) {
			time.Sleep(rxHold - d)
		}
	}
	t.Cleanup(func() { readHook = nil })
}

// A script request on the raw transport whose reader is held after the
// server answered: with the kernel's stamps its time to first byte ends
// before the server's write returned (the stamp is made in it, on
// loopback), and the hold shows as its read delay; with the stamps off
// (THROTTLE_RXSTAMP=0) the hold is in its waiting time, as before. The
// first request dials, the next reuse the connection.
func TestRawTimingsFromKernel(t *testing.T) {
	for _, stamped := range []bool{true, false} {
		t.Run(map[bool]string{true: "stamped", false: "off"}[stamped], func(t *testing.T) {
			if !stamped {
				t.Setenv(RxStampEnv, "0")
			}
			srv, wrote := heldServer(t)
			r := lane(t, true, DriverConfig{})
			holdReader(t, wrote)
			var got []time.Time
			readHook0 := readHook
			readHook = func() {
				readHook0()
				got = append(got, time.Now())
			}
			m := r.d.cfg.Meter
			for i := range 3 {
				before := time.Now()
				var res Response
				if r.Iterate(&Request{URL: srv.url + "/"}, time.Time{}, &res) != IterationOK {
					t.Fatalf("request %d: %v", i, res.Err)
				}
				// The server's write returned before the hook let the
				// reader go; the hook's own record is after it.
				held := got[len(got)-1]
				ttfb := res.Timings.TTFB()
				if stamped && !res.rxStamped && i == 0 {
					continue // the kernel's stamping not on yet (rxKeyOn)
				}
				if stamped {
					if max := held.Add(-rxHold).Sub(before); ttfb > max || res.Timings.Duration > max {
						t.Errorf("request %d: ttfb %v, duration %v: want both within the server's answer, %v", i, ttfb, res.Timings.Duration, max)
					}
					if !res.rxStamped || res.rxDelay < rxHold {
						t.Errorf("request %d: read delay %v (stamped %v): want at least the hold, %v", i, res.rxDelay, res.rxStamped, rxHold)
					}
				} else if ttfb < rxHold || res.rxStamped {
					t.Errorf("request %d: ttfb %v (stamped %v): want the hold, %v, in it, unstamped", i, ttfb, res.rxStamped, rxHold)
				}
			}
			sum, n, longest := m.ReadDelay()
			if stamped && (n < 2 || sum < time.Duration(n)*rxHold || longest < rxHold) {
				t.Errorf("meter: read delay %v over %d, longest %v: want 2 or 3 of at least %v", sum, n, longest, rxHold)
			}
			if !stamped && n != 0 {
				t.Errorf("meter: %d read delays counted with the stamps off", n)
			}
			if _, conns := srv.stats(); conns != 1 {
				t.Errorf("%d connections: want one, kept alive", conns)
			}
		})
	}
}

// The event loop's reads, held the same way (the loop itself waits in
// readHook, as a loop busy with other slots would): the attempts' latency
// leaves the hold out and the read delay has it.
func TestEvLoopTimingsFromKernel(t *testing.T) {
	srv, wrote := heldServer(t)
	holdReader(t, wrote)
	u, _ := url.Parse(srv.url + "/")
	e := newEngine(t, Config{Targets: []targets.Target{{Method: "GET", URL: u, Header: http.Header{}}},
		Limits: fastLimits(governor.Concurrency, 1, 1), Fixed: true, Duration: time.Minute,
		Transport: TransportEvLoop, Watch: WatchConfig{CPU: -1}})
	m := e.Meter()
	halt := testwait.Start(t, func(ctx context.Context) error { _, err := e.Run(ctx); return err })
	testwait.Until(t, 30*time.Second, "three answers", func() bool { ok, _ := m.Attempts(); return ok >= 3 })
	if err := halt(); err != nil {
		t.Fatal(err)
	}
	ok, failed := m.Attempts()
	sum, n, longest := m.ReadDelay()
	// The first answer may come before the kernel's stamping is on
	// (rxKeyOn): unstamped, the hold in its latency.
	if failed != 0 || n+1 < ok || n < 2 || sum < time.Duration(n)*rxHold || longest < rxHold {
		t.Errorf("%d ok, %d failed; read delay %v over %d, longest %v: want every answer's (but the first's) at least %v", ok, failed, sum, n, longest, rxHold)
	}
	unstamped := time.Duration(ok-min(n, ok)) * (rxHold + rxHold/2)
	if total := m.Load().Latency; total > unstamped+rxHold/2 {
		t.Errorf("%d answers, %d stamped: latency %v in all, want the stamped ones' holds left out", ok, n, total)
	}
}

// The kernel's stamps are sound on loopback TCP: CLOCK_REALTIME as
// time.Now's wall reading, made while the peer's write is in progress
// (the receive path runs in the sender's call) and never after the read;
// each answer on a kept-alive connection carries its own; a read that
// returns several segments carries the newest's. (Older kernels put
// TCP's departure time, a monotonic reading, in received loopback
// packets' stamps; 5.18 fixed it. This is the check that it holds here.)
func TestRxStampSound(t *testing.T) {
	fd, srv := loopbackPair(t, true)
	var rx rxReader
	buf := make([]byte, 4096)
	// The kernel turns its stamping on in deferred work (rxKeyOn): the
	// first answers may come unstamped. Wait for a stamped one.
	testwait.Until(t, 30*time.Second, "a stamped answer", func() bool {
		if _, err := srv.Write([]byte("w")); err != nil {
			t.Fatal(err)
		}
		_, stamp, err := rx.recv(fd, buf)
		if err != nil {
			t.Fatal(err)
		}
		return stamp != 0
	})
	// send writes each part, gap apart, and returns when each write began
	// and when the last ended.
	send := func(parts []string, gap time.Duration) (began []time.Time, ended time.Time) {
		for i, p := range parts {
			if i > 0 {
				time.Sleep(gap) // the segments' spacing is the input here
			}
			began = append(began, time.Now())
			if _, err := srv.Write([]byte(p)); err != nil {
				t.Fatal(err)
			}
		}
		return began, time.Now()
	}
	for i, c := range []struct {
		parts []string
		gap   time.Duration
	}{{[]string{"one"}, 0}, {[]string{"two"}, 0}, {[]string{"three"}, 0}, {[]string{"AAAA", "BBBB", "CC"}, 20 * time.Millisecond}} {
		began, ended := send(c.parts, c.gap)
		n, stamp, err := rx.recv(fd, buf) // blocking socket: the bytes are there
		read := time.Now()
		want := 0
		for _, p := range c.parts {
			want += len(p)
		}
		if err != nil || n != want {
			t.Fatalf("answer %d: read %d of %d, %v", i, n, want, err)
		}
		if stamp == 0 {
			t.Fatalf("answer %d: no stamp", i)
		}
		last := began[len(began)-1]
		if stamp < last.UnixNano() || stamp > ended.UnixNano() || stamp > read.UnixNano() {
			t.Errorf("answer %d: stamp %d not within its newest segment's write [%d, %d] and before the read %d",
				i, stamp, last.UnixNano(), ended.UnixNano(), read.UnixNano())
		}
		if at, d := rxAt(stamp, read); d < 0 || at.After(read) || at.Before(last) {
			t.Errorf("answer %d: placed at %v, delay %v: want between the write, %v, and the read, %v", i, at, d, last, read)
		}
	}
}

// An answer stamped before the writer's clock reading after its write (the
// writer held between the two) is split at the send's start: its Sending
// is 0 and its Waiting runs from the start to the arrival, never 0 by a
// late mark; unstamped, or stamped after the mark, the mark stands.
func TestRxWroteBeforeAnswer(t *testing.T) {
	start := time.Now()
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	for _, c := range []struct {
		wrote, first     int
		stamped          bool
		sending, waiting int
	}{
		{wrote: 5, first: 3, stamped: true, sending: 0, waiting: 3},
		{wrote: 2, first: 3, stamped: true, sending: 2, waiting: 1},
		{wrote: 5, first: 3, stamped: false, sending: 5, waiting: 0}, // user space: not possible, clamped as before
	} {
		var tm Timings
		tm.split(start, rxWrote(at(c.wrote), at(c.first), c.stamped), at(c.first), at(c.first+1))
		if tm.Sending != at(c.sending).Sub(start) || tm.Waiting != time.Duration(c.waiting)*time.Millisecond {
			t.Errorf("%+v: sending %v, waiting %v", c, tm.Sending, tm.Waiting)
		}
	}
}

// loopbackPair is a blocking client socket connected over loopback TCP,
// stamped or not, and the server's end of it; both close at the test's
// end.
func loopbackPair(tb testing.TB, stamped bool) (fd int, srv net.Conn) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { unix.Close(fd) })
	if stamped {
		if err := rxEnable(fd); err != nil {
			tb.Fatal(err)
		}
	}
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: ln.Addr().(*net.TCPAddr).Port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatal(err)
	}
	if srv, err = ln.Accept(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	return fd, srv
}
