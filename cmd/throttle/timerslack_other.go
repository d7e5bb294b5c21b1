//go:build !linux

package main

import (
	"os/exec"
	"time"
)

// Off Linux a thread has no timer slack to set (timerslack_linux.go):
// both leave the process as it is.

func startWithTimerSlack(c *exec.Cmd, _ time.Duration) error { return c.Start() }

func reexecWithTimerSlack(time.Duration) error { return nil }
