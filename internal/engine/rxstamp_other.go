//go:build !linux

package engine

import (
	"net"
	"syscall"
	"time"
)

// Off Linux there are no receive stamps here: every timing is user space
// (rxstamp_linux.go has the Linux side).

// RxStampEnv is Linux's switch for the kernel's receive stamps; it has no
// effect here.
const RxStampEnv = "THROTTLE_RXSTAMP"

const rxStampSupported = false

func rxStampOn() bool { return false }

func rxAt(_ int64, user time.Time) (time.Time, time.Duration) { return user, 0 }

func rxWrote(wrote, _ time.Time, _ bool) time.Time { return wrote }

// rxRead is never bound off Linux (rxStart returns nil).
type rxRead struct{}

func (*rxRead) init() {}

func rxStart(net.Conn) syscall.RawConn { return nil }

func (r *rxRead) on(net.Conn, syscall.RawConn) *rxRead { panic("rxRead off Linux") }

func (*rxRead) off() {}

func (*rxRead) Read([]byte) (int, int64, error) { panic("rxRead off Linux") }
