package faults

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"

	"github.com/throttlekit/throttle/internal/engine"
)

// proxied puts a toxiproxy proxy (the library, in this process) on
// loopback in front of a server answering every request with body bytes,
// and returns the proxy, its URL and the toxics' collection to add to.
func proxied(t *testing.T, body int) (*toxiproxy.Proxy, string) {
	t.Helper()
	zerolog.SetGlobalLevel(zerolog.Disabled) // the toxics log through zerolog's global logger
	payload := []byte(strings.Repeat("x", body))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(payload) }))
	t.Cleanup(srv.Close)
	api := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(api, t.Name(), "127.0.0.1:0", srv.Listener.Addr().String())
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p, "http://" + p.Listen + "/"
}

// addToxic adds a toxic on the responses' way (downstream).
func addToxic(t *testing.T, p *toxiproxy.Proxy, name, kind, attrs string) {
	t.Helper()
	js := fmt.Sprintf(`{"name":%q,"type":%q,"stream":"downstream","attributes":%s}`, name, kind, attrs)
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
		t.Fatalf("toxic %s: %v", js, err)
	}
}

// The faults toxiproxy makes between the engine and a healthy server.
// Attempts are timed out after 300 ms.
func TestProxyFaults(t *testing.T) {
	t.Run("latency spikes", func(t *testing.T) {
		// For 450 ms in every 800, responses take 700 ms longer (a spike's
		// end lets what it held through): attempts sent in a spike's
		// first 150 ms time out, the others are ok, and the run goes on
		// through both.
		p, u := proxied(t, 2)
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			tk := time.NewTicker(800 * time.Millisecond)
			defer tk.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tk.C:
				}
				spike := `{"name":"spike","type":"latency","stream":"downstream","attributes":{"latency":700}}`
				if _, err := p.Toxics.AddToxicJson(strings.NewReader(spike)); err != nil {
					t.Error(err)
					return
				}
				select {
				case <-stop:
					return
				case <-time.After(450 * time.Millisecond):
				}
				if err := p.Toxics.RemoveToxic(t.Context(), "spike"); err != nil {
					t.Error(err)
				}
			}
		}()
		r := runURL(t, u, 2*time.Second, 300*time.Millisecond)
		close(stop)
		<-done
		checkRun(t, r)
		classesWithin(t, r.res.Counts, []engine.Class{engine.ClassOK, engine.ClassTimeout}, engine.ClassOK, engine.ClassTimeout)
	})
	t.Run("jitter", func(t *testing.T) {
		// 30 ± 30 ms on every response: all ok, the latencies spread.
		p, u := proxied(t, 2)
		addToxic(t, p, "jitter", "latency", `{"latency":30,"jitter":30}`)
		r := runURL(t, u, 1500*time.Millisecond, 300*time.Millisecond)
		checkRun(t, r)
		minorityLate(t, r.res.Counts, engine.ClassOK)
		if o := r.rep.Latency.Overall; o.P90Ms < o.P50Ms+10 {
			t.Errorf("latency p50 %v ms, p90 %v ms: want the jitter's spread (p90 at least 10 ms above p50)", o.P50Ms, o.P90Ms)
		}
	})
	t.Run("bandwidth limit", func(t *testing.T) {
		// 16 KiB responses through 128 KB/s a connection: 125 ms each
		// at best, so slow but ok (the limit shows in the latency).
		p, u := proxied(t, 16<<10)
		addToxic(t, p, "bandwidth", "bandwidth", `{"rate":128}`)
		r := runURL(t, u, 1500*time.Millisecond, 600*time.Millisecond)
		checkRun(t, r)
		minorityLate(t, r.res.Counts, engine.ClassOK)
		if o := r.rep.Latency.Overall; o.P50Ms < 100 {
			t.Errorf("latency p50 %v ms: want the bandwidth limit's 125 ms or more", o.P50Ms)
		}
	})
}

// minorityLate asserts that every resolved attempt has class want but for
// a minority of timeouts (a loaded machine can make a slow fault slower
// than the attempt's timeout), and that want was seen.
func minorityLate(t *testing.T, c engine.Counts, want engine.Class) {
	t.Helper()
	resolved, late := c.OK+c.Failed, c.Classes[engine.ClassTimeout]
	if resolved == 0 || c.Classes[want]+late != resolved || late*2 > resolved {
		t.Errorf("classes %v: want every one of %d resolved attempts %v (a minority timed out on a loaded machine at most)", c.Classes, resolved, want)
	}
}
