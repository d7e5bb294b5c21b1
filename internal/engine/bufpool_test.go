package engine

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// sharePools points a HostClient's buffer pools at the driver's. A
// fasthttp release that renames the fields fails here, not in production.
func TestSharedBufferPools(t *testing.T) {
	if !poolFieldsUsable {
		t.Fatal("fasthttp.HostClient has no clientReaderPool/clientWriterPool *sync.Pool fields: the runners cannot share buffers")
	}
	var p bufPools
	hc := &fasthttp.HostClient{}
	if !p.sharePools(hc) {
		t.Fatal("sharePools refused")
	}
	v := reflect.ValueOf(hc).Elem()
	if got := v.Field(readerPoolField).Pointer(); got != reflect.ValueOf(&p.read).Pointer() {
		t.Error("the reader pool is not the shared one")
	}
	if got := v.Field(writerPoolField).Pointer(); got != reflect.ValueOf(&p.write).Pointer() {
		t.Error("the writer pool is not the shared one")
	}
	var none *bufPools
	if none.sharePools(&fasthttp.HostClient{}) {
		t.Error("a nil pool shared")
	}
}

// Runners at once, of one driver or of drivers sharing SharedBuffers
// (a script's VUs), each get their own answers through the shared buffers:
// a buffer is never in two connections' hands.
func TestSharedBuffersKeepAnswersApart(t *testing.T) {
	tgts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Path", r.URL.Path)
		fmt.Fprint(w, strings.Repeat(r.URL.Path, 50))
	}))
	base := strings.TrimSuffix(tgts[0].URL.String(), "/")
	for _, perWorker := range []bool{false, true} {
		var shared SharedBuffers
		driver := func() *Driver {
			cfg := DriverConfig{Meter: NewMeter(), Timeout: 10 * time.Second}
			if perWorker {
				cfg.Buffers = &shared
			}
			d, err := NewDriver(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(d.Close)
			if perWorker && d.fast.bufs != &shared.p {
				t.Fatal("the driver does not take the shared buffers")
			}
			return d
		}
		one := driver()
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			d := one
			if perWorker {
				d = driver()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := d.Runner()
				defer r.Close()
				var res Response
				for i := range 100 {
					path := fmt.Sprintf("/w%d-%d", w, i)
					req := &Request{URL: base + path}
					if out := r.Iterate(req, time.Time{}, &res); out != IterationOK {
						errs <- fmt.Errorf("%s: outcome %d, %v", path, out, res.Err)
						return
					}
					if string(res.Body) != strings.Repeat(path, 50) || res.Headers().Get("X-Path") != path {
						errs <- fmt.Errorf("%s: got body %.40q…, X-Path %q", path, res.Body, res.Headers().Get("X-Path"))
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("driver per worker %v: %v", perWorker, err)
		}
	}
}
