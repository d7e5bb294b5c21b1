package throttlehttp

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/governor"
)

// BenchmarkRoundTrip is the Transport's own cost per request: gate,
// counting and the body wrapper, over a base that answers at once, with the
// gate wide open so nothing waits.
func BenchmarkRoundTrip(b *testing.B) {
	for _, mode := range []governor.Mode{governor.Rate, governor.Concurrency} {
		b.Run(mode.String(), func(b *testing.B) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
			})
			l := governor.NewLimits(mode, 1<<30)
			l.Start = l.Ceiling
			tr, err := New(base, WithLimits(l), quiet)
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://127.0.0.1/", nil)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}
