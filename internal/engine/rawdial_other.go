//go:build !linux

package engine

import (
	"context"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// Off Linux every connect is net's (connectJob): connectDirect is
// rawdial_linux.go's.

type directAddr struct{}

func newDirect(netip.AddrPort) *directAddr { return nil }

type sockConn struct{ net.Conn }

func (*sockConn) rxRaw() syscall.RawConn { return nil }

func (c *rawConn) connectDirect(*rawHost, context.Context, time.Time) (*sockConn, error) {
	panic("connectDirect off Linux")
}
