package session

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/throttlekit/throttle/internal/script"
)

// loadInterruptible loads a script while watching the session's signals:
// a signal during the init context (a top-level loop that never ends, say)
// interrupts it at once, and the run ends with one line.
func (s *Session) loadInterruptible(path string, cfg script.Config) (*script.Runner, error) {
	notice := s.InitNotice
	if notice == 0 {
		notice = DefaultInitNotice
	}
	con := s.console()
	onNotice := func() {
		con.Line(fmt.Sprintf("the script's init context is still running after %v (a top-level loop?): Ctrl-C stops it and names its line%s", notice, initLimitNote(cfg.InitTimeout)))
	}
	return watchLoad(s.Signals, notice, onNotice, func(interrupt <-chan struct{}) (*script.Runner, error) {
		cfg.Interrupt = interrupt
		return script.Load(path, cfg)
	})
}

// watchLoad runs load with an interrupt channel that the first signal on
// sig closes, calling onNotice once if notice passes meanwhile. A signal
// taken while load runs is never lost: one that came too late for load to
// stop on it (the init context had just ended) makes the load
// script.ErrInterrupted all the same, and one load had not taken stays on
// sig for the run's own watch.
func watchLoad(sig <-chan os.Signal, notice time.Duration, onNotice func(), load func(interrupt <-chan struct{}) (*script.Runner, error)) (*script.Runner, error) {
	interrupt, loaded, watched := make(chan struct{}), make(chan struct{}), make(chan struct{})
	took := false // written by the watcher before watched closes
	go func() {
		defer close(watched)
		t := time.NewTimer(notice)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				onNotice() // once
				continue
			case <-sig:
				took = true
				close(interrupt)
			case <-loaded:
			}
			return
		}
	}()
	r, err := load(interrupt)
	close(loaded)
	<-watched
	if took && err == nil {
		return nil, script.ErrInterrupted
	}
	return r, err
}

// DefaultInitNotice is Session.InitNotice's default.
const DefaultInitNotice = 10 * time.Second

// initLimitNote is when the init timeout stops an init context, for the
// notice that it still runs ("" when it never does).
func initLimitNote(timeout time.Duration) string {
	if timeout == 0 {
		timeout = script.DefaultInitTimeout
	}
	if timeout < 0 {
		return ""
	}
	return fmt.Sprintf("; the init timeout stops it at %v (%s)", timeout, InitTimeoutEnv)
}

// InitTimeoutEnv sets how long a script's init context may run
// (script.Config.InitTimeout, default script.DefaultInitTimeout): a
// duration such as 5m, or 0 for no limit.
const InitTimeoutEnv = "THROTTLE_INIT_TIMEOUT"

// initTimeout reads InitTimeoutEnv: 0 when unset (the default), < 0 for
// no limit.
func initTimeout() (time.Duration, error) {
	v := strings.TrimSpace(os.Getenv(InitTimeoutEnv))
	if v == "" {
		return 0, nil
	}
	if v == "0" {
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 90s or 5m, or 0 for no limit", InitTimeoutEnv, os.Getenv(InitTimeoutEnv))
	}
	return d, nil
}

// BodyLimitEnv raises (or lowers) the most bytes one response body a
// script keeps may hold (script.Config.BodyLimit): bytes, or a number with
// KiB, MiB or GiB.
const BodyLimitEnv = "THROTTLE_BODY_LIMIT"

// InitMemoryEnv raises (or lowers) the most heap the process may hold
// while a script's init context first runs (script.Config.InitMemory,
// default 2 GiB): a script that open()s a larger file needs more.
const InitMemoryEnv = "THROTTLE_INIT_MEMORY"

// bodyLimit reads BodyLimitEnv; 0 when unset (the default limit).
func bodyLimit() (int64, error) { return sizeEnv(BodyLimitEnv) }

// sizeEnv reads a size from the environment variable name: bytes, or a
// number with KiB, MiB or GiB; 0 when unset.
func sizeEnv(name string) (int64, error) {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return 0, nil
	}
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(v, suffix) {
			v, mult = strings.TrimSpace(strings.TrimSuffix(v, suffix)), m
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%s=%q: want a size in bytes > 0, or with KiB, MiB or GiB (e.g. 256MiB)", name, os.Getenv(name))
	}
	return n * mult, nil
}
