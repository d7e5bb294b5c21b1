//go:build !linux

package engine

import (
	"errors"
	"net/netip"

	"github.com/throttlekit/throttle/internal/phase"
)

// evLoopSupported: the event loop is Linux's (epoll).
const evLoopSupported = false

type evShared struct{}

func newEvShared(*Engine, netip.AddrPort) *evShared { return nil }

func newEvLoop(*Engine, int) (phase.Loop, error) {
	return nil, errors.New("the event-loop transport runs on Linux only")
}
