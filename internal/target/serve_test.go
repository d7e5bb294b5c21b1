package target

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/throttlekit/throttle/internal/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCheckLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "localhost:8080", "[::1]:0", "127.1.2.3:9"} {
		if err := checkLoopback(addr); err != nil {
			t.Errorf("checkLoopback(%q) = %v", addr, err)
		}
	}
	for addr, want := range map[string]string{
		":0":          "every interface",
		"0.0.0.0:80":  "not loopback",
		"10.1.2.3:80": "not loopback",
		"example:80":  "not loopback",
		"127.0.0.1":   "missing port",
	} {
		if err := checkLoopback(addr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkLoopback(%q) = %v, want an error saying %q", addr, err, want)
		}
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	tg, err := New(NewConfig(10))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Serve(context.Background(), "0.0.0.0:0", tg); err == nil {
		t.Fatal("Serve listened on every interface without AllowNonLoopback")
	}
	if _, err := Serve(context.Background(), "", nil); err == nil {
		t.Fatal("Serve accepted a nil target")
	}
	if _, err := Serve(context.Background(), "", tg, WithShutdownGrace(-1)); err == nil {
		t.Fatal("Serve accepted a negative grace")
	}
}

func get(c *http.Client, url string) (int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// served is a target on a loopback server with a client for it.
type served struct {
	tg     *Target
	srv    *Server
	client *http.Client
	stop   context.CancelFunc
}

func serveTarget(t *testing.T, cfg Config) served {
	t.Helper()
	tg, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Serve(ctx, "", tg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	t.Cleanup(client.CloseIdleConnections)
	t.Cleanup(cancel)
	return served{tg, srv, client, cancel}
}

// shutdown stops the server and waits until it has.
func (s served) shutdown(t *testing.T) {
	t.Helper()
	s.client.CloseIdleConnections()
	s.stop()
	if err := s.srv.Wait(); err != nil {
		t.Fatal(err)
	}
}

// Real clock, real sockets: a shedding target of 100 req/s hammered by 8
// closed-loop clients serves and sheds, and never serves more than its
// capacity allows: its bucket (2 tokens) plus 100 a second since it was
// made. The clients stop once it has served 60 and shed some (0.6 s on an
// idle machine), so a loaded machine only takes longer; how exactly tokens
// are earned is the fake-clock tests' to check.
func TestServeShedsOnLoopback(t *testing.T) {
	cfg := NewConfig(100)
	cfg.Latency = time.Millisecond
	start := time.Now()
	x := serveTarget(t, cfg)
	tg, srv, client := x.tg, x.srv, x.client
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %q is not on loopback", srv.URL())
	}
	enough := func() bool { s := tg.Stats(); return s.OK >= 60 && s.Shed > 0 }
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			for time.Since(start) < testwait.Deadline && !enough() {
				if _, err := get(client, srv.URL()+"/"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	x.shutdown(t)
	s := tg.Stats()
	if !enough() {
		t.Errorf("stats %+v after %.1fs: want 60 served and some shed", s, elapsed)
	}
	if max := 2 + 100*elapsed; float64(s.OK) > max+1 {
		t.Errorf("served %d in %.2fs at capacity 100/s, more than the %.0f it allows", s.OK, elapsed, max)
	}
	if s.OK+s.Shed != s.Arrivals {
		t.Errorf("stats %+v: want every arrival ok or shed", s)
	}
	t.Logf("served %d, shed %d in %.2fs", s.OK, s.Shed, elapsed)
}

// A target killed with DownClose resets connections (a transport error for
// the client), and answers again once recovered.
func TestServeDownAndRecover(t *testing.T) {
	cfg := NewConfig(1000)
	cfg.Latency, cfg.DownClose = 0, true
	x := serveTarget(t, cfg)
	tg, srv, client := x.tg, x.srv, x.client
	if code, err := get(client, srv.URL()); err != nil || code != 200 {
		t.Fatalf("up: %d %v", code, err)
	}
	tg.SetDown(true)
	if _, err := get(client, srv.URL()); err == nil {
		t.Fatal("down with DownClose: the request did not fail")
	}
	tg.SetDown(false)
	if code, err := get(client, srv.URL()); err != nil || code != 200 {
		t.Fatalf("recovered: %d %v", code, err)
	}
	x.shutdown(t)
	if _, err := get(client, srv.URL()); err == nil {
		t.Fatal("server still answers after shutdown")
	}
	// Down may be 2: the client retries an idempotent request once when a
	// reused connection is reset.
	if s := tg.Stats(); s.Down == 0 || s.OK != 2 || s.ByStatus[503] != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// Shutdown lets a request in its service time finish.
func TestServeGracefulShutdown(t *testing.T) {
	cfg := NewConfig(10)
	cfg.Latency = 200 * time.Millisecond
	x := serveTarget(t, cfg)
	tg, srv, client := x.tg, x.srv, x.client
	got := make(chan error, 1)
	go func() {
		code, err := get(client, srv.URL())
		if err == nil && code != 200 {
			err = errors.New(http.StatusText(code))
		}
		got <- err
	}()
	testwait.Until(t, testwait.Deadline, "the request to be in service", func() bool { return tg.Stats().Serving > 0 })
	x.stop()
	if err := <-got; err != nil {
		t.Fatalf("request in service during shutdown: %v", err)
	}
	x.shutdown(t)
}
