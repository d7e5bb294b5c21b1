package session

import (
	"fmt"
	"os"
	rtmetrics "runtime/metrics"
	"strings"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/internal/script"
)

// MemoryEnv bounds the heap a script run may hold while its scenarios run
// (a size: bytes, or with KiB, MiB or GiB; 0 for no bound). Unset, the
// bound is 90 % of the memory the process may use (its cgroup's limit, else
// the machine's): an iteration that allocates without end is stopped with
// one line and its report written, instead of the kernel killing the
// process and losing both.
const MemoryEnv = "THROTTLE_MEMORY"

// memoryWatch is how often the heap is looked at while a script runs.
const memoryWatch = 100 * time.Millisecond

// memoryLimit reads MemoryEnv, or makes the default; 0: no bound (set to
// 0, or the machine's memory unknown).
func memoryLimit() (int64, error) {
	if v := strings.TrimSpace(os.Getenv(MemoryEnv)); v == "0" {
		return 0, nil
	}
	n, err := sizeEnv(MemoryEnv)
	if err != nil || n > 0 {
		return n, err
	}
	return script.MachineMemory() / 10 * 9, nil
}

// guardMemory watches the heap until done closes. The first time it holds
// more than limit bytes (0: never), it says so in one line and calls stop
// (the run's scenarios stop and what is in flight is cut off, each
// iteration named where it was); the flag it returns says it did.
func guardMemory(limit int64, done <-chan struct{}, line func(string), stop func()) *atomic.Bool {
	var fired atomic.Bool
	if limit <= 0 {
		return &fired
	}
	go func() {
		t := time.NewTicker(memoryWatch)
		defer t.Stop()
		sample := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			rtmetrics.Read(sample)
			if sample[0].Value.Kind() != rtmetrics.KindUint64 || sample[0].Value.Uint64() <= uint64(limit) {
				continue
			}
			fired.Store(true)
			line(fmt.Sprintf("the heap passed %d MiB (%s): the script allocates without bound; the run is stopped and what is in flight cut off", limit>>20, memoryNote()))
			stop()
			return
		}
	}()
	return &fired
}

// memoryNote says where the bound came from and how to change it.
func memoryNote() string {
	if os.Getenv(MemoryEnv) != "" {
		return MemoryEnv
	}
	return "90 % of the memory the process may use; " + MemoryEnv + " sets it"
}
