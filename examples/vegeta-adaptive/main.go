// Command vegeta-adaptive shows a governed vegeta attack: vegeta's Attacker
// sends the hits, throttle's governor sets their rate through an adaptive
// Pacer, so the attack finds the target's capacity instead of assaulting it
// at the authored rate.
//
// The authored -rate is the ceiling. The attack opens at the floor, climbs
// while the target answers cleanly and backs off in proportion to the
// failures when it does not; every movement logs one line on stderr and a
// status line per second shows the rate, the hits per second and the
// failure fraction. At the end it prints vegeta's own text report and the
// capacity the governor settled at.
//
// Start a target first, for example
//
//	go run ./cmd/throttle target --capacity 300 --listen 127.0.0.1:8080
//
// then, from examples/vegeta-adaptive (its own module, so that throttle's
// core never depends on vegeta),
//
//	go run . -url http://127.0.0.1:8080/ -rate 2000 -duration 20s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"time"

	throttlevegeta "github.com/throttlekit/throttle/adapters/vegeta"
	"github.com/throttlekit/throttle/governor"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "vegeta-adaptive:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// run is the whole program: it attacks until -duration has passed or ctx
// ends (main's ends on Ctrl-C; a test's when it has seen what it waits for).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("vegeta-adaptive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("url", "http://127.0.0.1:8080/", "URL to attack (loopback `throttle target` by default)")
	rate := fs.Float64("rate", 1000, "authored rate in hits per second: the ceiling")
	start := fs.Float64("start", 10, "opening rate")
	duration := fs.Duration("duration", 20*time.Second, "attack duration")
	window := fs.Duration("window", time.Second, "governor window")
	timeout := fs.Duration("timeout", 2*time.Second, "per-hit timeout")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if u, err := url.Parse(*target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: -url %q is not an http(s) URL", errUsage, *target)
	}
	if *duration <= 0 || *timeout <= 0 {
		return fmt.Errorf("%w: -duration and -timeout must be > 0", errUsage)
	}

	limits := governor.NewLimits(governor.Rate, *rate)
	limits.Start, limits.Window = *start, *window
	var (
		mu      sync.Mutex
		windows []governor.Window
	)
	g, err := throttlevegeta.Govern(limits, throttlevegeta.WithGovernorOptions(
		governor.WithLogger(slog.New(slog.NewTextHandler(stderr, nil))),
		governor.WithObserver(func(w governor.Window) {
			mu.Lock()
			windows = append(windows, w)
			mu.Unlock()
		})))
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer g.Close()

	attacker := vegeta.NewAttacker(vegeta.Timeout(*timeout))
	targeter := vegeta.NewStaticTargeter(vegeta.Target{Method: "GET", URL: *target})
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { <-ctx.Done(); attacker.Stop() }()

	var metrics vegeta.Metrics
	began := time.Now()
	var lastOK, lastFailed uint64
	for res := range g.Results(attacker.Attack(targeter, g.Pacer(), *duration, "governed")) {
		metrics.Add(res)
		if s := time.Since(began); s >= time.Second {
			// g.Results has counted every result already: report the difference.
			ok, failed := g.Attempts()
			dOK, dFailed := ok-lastOK, failed-lastFailed
			lastOK, lastFailed = ok, failed
			fmt.Fprintf(stdout, "rate %7.1f/s  hits %5d in %v  failed %5.1f%%\n", g.Pacer().Rate(0), dOK+dFailed, s.Round(time.Millisecond), pct(dFailed, dOK+dFailed))
			began = time.Now()
		}
	}
	stop()
	g.Close()
	metrics.Close()

	if err := vegeta.NewTextReporter(&metrics).Report(stdout); err != nil {
		return err
	}
	mu.Lock()
	est := governor.Capacity(windows, limits.High)
	mu.Unlock()
	switch {
	case est.Windows == 0:
		fmt.Fprintln(stdout, "capacity: never settled (attack longer, or the target failed even at the floor)")
	case est.AtCeiling:
		fmt.Fprintf(stdout, "capacity: at least the authored rate %.0f (%.0f ok/s over %d windows)\n", limits.Ceiling, est.Goodput, est.Windows)
	default:
		fmt.Fprintf(stdout, "capacity at the %.0f%% failure bound: rate %.0f/s, goodput %.0f ok/s, attempt failure %.1f%% over %d settled windows (%d saturated windows excluded)\n",
			limits.High*100, est.Offer, est.Goodput, est.Frac*100, est.Windows, est.Saturated)
	}
	return nil
}

func pct(part, whole uint64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
