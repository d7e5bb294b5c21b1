//go:build unix

package main

import (
	"os"
	"syscall"
)

// profileSignal asks a process with THROTTLE_HEAPPROFILE set for a heap
// profile now.
var profileSignal os.Signal = syscall.SIGUSR1
