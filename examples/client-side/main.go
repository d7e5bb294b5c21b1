// Command client-side shows client-side adaptive throttling with
// throttlehttp: a Go program calling a fragile HTTP service through a
// Transport that finds how much the service takes and keeps to it.
//
// Its workers call the URL back to back for the duration. Every request
// passes the Transport's gate; the governor moves the gate's offer window by
// window (one movement line each, on stderr), and a status line per second
// shows the offer, the attempts per second and the attempt-failure fraction.
// At the end it prints the capacity the governor settled at.
//
// Start a fragile target first, for example
//
//	go run ./cmd/throttle target --capacity 300 --model collapse --listen 127.0.0.1:8080
//
// then
//
//	go run ./examples/client-side -url http://127.0.0.1:8080/ -duration 20s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/throttlehttp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "client-side:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// run is the whole program: it runs until -duration has passed or ctx ends
// (main's ends on Ctrl-C; a test's when it has seen what it waits for).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("client-side", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("url", "http://127.0.0.1:8080/", "URL to call (loopback `throttle target` by default)")
	rate := fs.Float64("rate", 1000, "ceiling in requests per second (rate mode)")
	conc := fs.Int("concurrency", 0, "ceiling in requests in flight (concurrency mode instead of rate mode when > 0)")
	start := fs.Float64("start", 20, "opening offer; with -window it must gather 20 attempts within 4 windows")
	workers := fs.Int("workers", 64, "callers making requests back to back")
	duration := fs.Duration("duration", 20*time.Second, "how long to run")
	window := fs.Duration("window", time.Second, "governor window")
	timeout := fs.Duration("timeout", 2*time.Second, "per-request timeout, throttling included")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if u, err := url.Parse(*target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: -url %q is not an http(s) URL", errUsage, *target)
	}
	if *workers < 1 || *duration <= 0 || *timeout <= 0 {
		return fmt.Errorf("%w: -workers, -duration and -timeout must be > 0", errUsage)
	}

	limits := governor.NewLimits(governor.Rate, *rate)
	if *conc > 0 {
		limits = governor.NewLimits(governor.Concurrency, float64(*conc))
	}
	limits.Start, limits.Window = *start, *window
	var (
		mu      sync.Mutex
		windows []governor.Window
	)
	tr, err := throttlehttp.New(http.DefaultTransport,
		throttlehttp.WithLimits(limits),
		throttlehttp.WithLogger(slog.New(slog.NewTextHandler(stderr, nil))),
		throttlehttp.WithGovernorOptions(governor.WithObserver(func(w governor.Window) {
			mu.Lock()
			windows = append(windows, w)
			mu.Unlock()
		})))
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer tr.Close()
	client := &http.Client{Transport: tr}

	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()

	var wg sync.WaitGroup
	for range *workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				call(ctx, client, *target, *timeout)
			}
		})
	}
	status(ctx, stdout, tr)
	wg.Wait()
	tr.Close()

	ok, failed := tr.Attempts()
	mu.Lock()
	est := governor.Capacity(windows, limits.High)
	mu.Unlock()
	fmt.Fprintf(stdout, "done: %d attempts, %d failed (%.1f%%), final offer %.0f\n", ok+failed, failed, pct(failed, ok+failed), tr.Offer())
	switch {
	case est.Windows == 0:
		fmt.Fprintln(stdout, "capacity: never settled (run longer, or the service failed even at the floor)")
	case est.AtCeiling:
		fmt.Fprintf(stdout, "capacity: at least the ceiling %.0f (%.0f ok/s over %d windows)\n", limits.Ceiling, est.Goodput, est.Windows)
	default:
		fmt.Fprintf(stdout, "capacity at the %.0f%% failure bound: offer %.0f, goodput %.0f ok/s, attempt failure %.1f%% over %d settled windows (%d saturated windows excluded)\n",
			limits.High*100, est.Offer, est.Goodput, est.Frac*100, est.Windows, est.Saturated)
	}
	return nil
}

// call makes one request; the Transport counts its outcome.
func call(ctx context.Context, client *http.Client, target string, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return
	}
	resp, err := client.Do(req)
	if err != nil {
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// status prints one line a second until ctx ends.
func status(ctx context.Context, w io.Writer, tr *throttlehttp.Transport) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var lastOK, lastFailed uint64
	for elapsed := 1; ; elapsed++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, failed := tr.Attempts()
		dOK, dFailed := ok-lastOK, failed-lastFailed
		lastOK, lastFailed = ok, failed
		fmt.Fprintf(w, "%3ds offer %7.1f  attempts %5d/s  failed %5.1f%%\n", elapsed, tr.Offer(), dOK+dFailed, pct(dFailed, dOK+dFailed))
	}
}

func pct(part, whole uint64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
