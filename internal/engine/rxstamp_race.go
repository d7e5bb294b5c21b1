//go:build linux && race

package engine

import "syscall"

// raceIO gives the race detector the order a read of a socket carries:
// syscall.Read acquires the I/O token every syscall.Write releases, so a
// server that sets a variable before it answers is seen to do so before
// the client that read the answer looks at it. rxReader's recvmsg, a raw
// system call, does not, and race-enabled tests of that pattern were
// reported racing. A read of no bytes acquires it without taking any
// (race builds only; rxstamp_norace.go is the no-op).
func raceIO(fd int) { syscall.Read(fd, nil) }

// raceWriting gives the race detector the order a write to a socket
// carries, before sockConn's raw write(2): syscall.Write releases the I/O
// token every syscall.Read acquires, whatever the descriptor, so a write
// to none (-1, EBADF) releases it and writes nothing.
func raceWriting() { syscall.Write(-1, nil) }
