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
	interrupt, loaded := make(chan struct{}), make(chan struct{})
	defer close(loaded)
	cfg.Interrupt = interrupt
	notice := s.InitNotice
	if notice == 0 {
		notice = DefaultInitNotice
	}
	con := s.console()
	go func(sig <-chan os.Signal) {
		t := time.NewTimer(notice)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				con.Line(fmt.Sprintf("the script's init context is still running after %v (a top-level loop?): Ctrl-C stops it and names its line", notice))
				continue
			case <-sig:
				close(interrupt)
			case <-loaded:
			}
			return
		}
	}(s.Signals)
	return script.Load(path, cfg)
}

// DefaultInitNotice is Session.InitNotice's default.
const DefaultInitNotice = 10 * time.Second

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
