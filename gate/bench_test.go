package gate_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/time/rate"

	"github.com/throttlekit/throttle/gate"
)

// The benchmarks put the gate side by side with golang.org/x/time/rate's
// Limiter.Wait and a buffered-channel semaphore, in one run:
//
//	go test -run '^$' -bench . -benchmem -benchtime 200ms ./gate
//
// "Uncontended" rate benchmarks run both limiters at 1e9/s with the same
// burst, so neither ever waits and the figure is the cost of an admission.
// "Paced" runs both at 200 000/s, where the figure is the interval (5 µs)
// if the limiter keeps up, and allocs/op shows what waiting costs.

// fastRate is so high that an admission is always due: the benchmark times
// the gate, not the schedule.
const fastRate = 1e9

func newRateGate(b *testing.B, r float64) *gate.Gate {
	g, err := gate.New(gate.Config{Mode: gate.Rate, Floor: 1, Ceiling: r, Offer: r})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func newConcGate(b *testing.B, limit float64) *gate.Gate {
	g, err := gate.New(gate.Config{Mode: gate.Concurrency, Floor: 1, Ceiling: limit, Offer: limit})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// contenders are the admissions compared, each built for a given number of
// goroutines (a semaphore or concurrency gate sized for all of them unless
// its name says otherwise) and returning one admission+release.
var contenders = []struct {
	name string
	make func(b *testing.B, goroutines int) func(context.Context) error
}{
	{"gate-rate", func(b *testing.B, _ int) func(context.Context) error {
		g := newRateGate(b, fastRate)
		return func(ctx context.Context) error { _, err := g.Acquire(ctx); return err }
	}},
	{"gate-rate-try", func(b *testing.B, _ int) func(context.Context) error {
		g := newRateGate(b, fastRate)
		return func(context.Context) error { g.TryAcquire(); return nil }
	}},
	{"xrate-wait", func(b *testing.B, _ int) func(context.Context) error {
		l := rate.NewLimiter(rate.Limit(fastRate), burstTokens(fastRate, gate.DefaultBurst))
		return l.Wait
	}},
	{"gate-concurrency", func(b *testing.B, n int) func(context.Context) error {
		return concAdmit(newConcGate(b, float64(n)))
	}},
	{"chan-semaphore", func(b *testing.B, n int) func(context.Context) error { return chanAdmit(n) }},
	{"gate-concurrency-limit2", func(b *testing.B, _ int) func(context.Context) error {
		return concAdmit(newConcGate(b, 2))
	}},
	{"chan-semaphore-cap2", func(b *testing.B, _ int) func(context.Context) error { return chanAdmit(2) }},
}

// concAdmit is one Acquire and Release of a concurrency gate.
func concAdmit(g *gate.Gate) func(context.Context) error {
	return func(ctx context.Context) error {
		p, err := g.Acquire(ctx)
		p.Release()
		return err
	}
}

// chanAdmit is one admission and release of a buffered-channel semaphore of
// capacity n, the idiom a concurrency gate replaces.
func chanAdmit(n int) func(context.Context) error {
	sem := make(chan struct{}, n)
	return func(context.Context) error { sem <- struct{}{}; <-sem; return nil }
}

// BenchmarkUncontended is one goroutine admitting back to back.
func BenchmarkUncontended(b *testing.B) {
	ctx := context.Background()
	for _, c := range contenders {
		b.Run(c.name, func(b *testing.B) {
			admit := c.make(b, 1)
			b.ReportAllocs()
			for b.Loop() {
				if err := admit(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParallel is 2, 8 and 64 goroutines admitting at once.
func BenchmarkParallel(b *testing.B) {
	ctx := context.Background()
	procs := runtime.GOMAXPROCS(0)
	for _, n := range []int{2, 8, 64} {
		p := max(1, (n+procs-1)/procs) // RunParallel starts p × GOMAXPROCS goroutines
		for _, c := range contenders {
			b.Run(fmt.Sprintf("goroutines=%d/%s", p*procs, c.name), func(b *testing.B) {
				admit := c.make(b, p*procs)
				b.ReportAllocs()
				b.SetParallelism(p)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := admit(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkPaced admits at 200 000/s from one goroutine: ns/op is 5 000 when
// the limiter keeps the pace, more when waiting costs it admissions.
func BenchmarkPaced(b *testing.B) {
	const r = 200_000
	ctx := context.Background()
	b.Run("gate-rate", func(b *testing.B) {
		g := newRateGate(b, r)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Acquire(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("xrate-wait", func(b *testing.B) {
		l := rate.NewLimiter(r, burstTokens(float64(r), gate.DefaultBurst))
		b.ReportAllocs()
		for b.Loop() {
			if err := l.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
