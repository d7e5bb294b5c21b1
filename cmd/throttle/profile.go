package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
)

// The profile hooks: set, they write Go pprof profiles of the process
// itself, for measuring throttle (docs/performance.md). Unset, they cost
// nothing.
const (
	// cpuProfileEnv names a file the CPU profile of the whole command is
	// written to when it ends.
	cpuProfileEnv = "THROTTLE_CPUPROFILE"
	// heapProfileEnv names a file the heap profile is written to when the
	// command ends and each time the process gets SIGUSR1 (overwritten:
	// the latest wins); each write also says on stderr what the Go runtime
	// holds then (runtime.MemStats), for attributing the process's RSS.
	heapProfileEnv = "THROTTLE_HEAPPROFILE"
)

// startProfiles starts the profiles the environment asks for; stop writes
// them. A file that cannot be created is bad input, before anything runs.
func startProfiles(stderr io.Writer) (stop func(), err error) {
	cpuPath, heapPath := strings.TrimSpace(os.Getenv(cpuProfileEnv)), strings.TrimSpace(os.Getenv(heapProfileEnv))
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err != nil {
			return stop, usagef("%s: %v", cpuProfileEnv, err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return stop, usagef("%s: %v", cpuProfileEnv, err)
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if heapPath != "" {
		f, err := os.Create(heapPath) // a bad path fails before anything runs
		if err != nil {
			stop()
			return func() {}, usagef("%s: %v", heapProfileEnv, err)
		}
		f.Close()
		sig := make(chan os.Signal, 1)
		done := make(chan struct{})
		if profileSignal != nil {
			signal.Notify(sig, profileSignal)
		}
		go func() {
			for {
				select {
				case <-sig:
					if err := writeHeapProfile(heapPath, stderr); err != nil {
						fmt.Fprintf(stderr, "throttle: %s: %v\n", heapProfileEnv, err)
					}
				case <-done:
					return
				}
			}
		}()
		stops = append(stops, func() {
			signal.Stop(sig)
			close(done)
			if err := writeHeapProfile(heapPath, stderr); err != nil {
				fmt.Fprintf(stderr, "throttle: %s: %v\n", heapProfileEnv, err)
			}
		})
	}
	return stop, nil
}

// writeHeapProfile writes the heap profile as of a GC run now, after
// saying on w what the runtime held before that GC.
func writeHeapProfile(path string, w io.Writer) error {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	mib := func(b uint64) float64 { return float64(b) / (1 << 20) }
	fmt.Fprintf(w, "memstats     heap in use %.1f MiB (objects %.1f MiB, %d), heap idle %.1f MiB (released %.1f), stacks %.1f MiB, "+
		"span/mcache/gc/other %.1f MiB, sys %.1f MiB, next GC at %.1f MiB, %d GCs, %d goroutines\n",
		mib(m.HeapInuse), mib(m.HeapAlloc), m.HeapObjects, mib(m.HeapIdle), mib(m.HeapReleased), mib(m.StackInuse),
		mib(m.MSpanInuse+m.MCacheInuse+m.GCSys+m.OtherSys+m.BuckHashSys), mib(m.Sys), mib(m.NextGC), m.NumGC, runtime.NumGoroutine())
	runtime.GC() // the profile's in-use figures are as of the last GC
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	runtime.ReadMemStats(&m)
	fmt.Fprintf(w, "wrote        %s (heap profile; after a GC: live heap %.1f MiB, stacks %.1f MiB)\n", path, mib(m.HeapAlloc), mib(m.StackInuse))
	return nil
}
