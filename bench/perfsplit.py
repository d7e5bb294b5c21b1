#!/usr/bin/env python3
"""bench/perfsplit.py — a perf profile of throttle split by who spends the CPU.

    perf script -i FILE -F comm,tid,ip,sym | bench/perfsplit.py [US_PER_UNIT [UNIT]]

reads `perf record -g` samples (bench/vus.sh's PERF_S and PERF_FIRST
profiles; -F tid,ip,sym, without the command name, too) and prints a
Markdown table: each sample goes to one owner, by its call chain — the Go
runtime's sysmon thread and its scheduler (idle Ps, wake-ups, netpoll: the
kernel's part of both is the thread sleeps and wake-ups), the GC,
allocation, the kernel's socket calls, sobek, the engine, the built-in
metrics, the VU's sleep, and throttle's other code; a runtime or kernel
function called by one of those owners counts as that owner's. The
connect has rows of its own (the kernel's socket, connect, setsockopt and
epoll_ctl calls, and net's dial on the Go side), as do the script's
module members made on first read (sobek and allocation under them
included), stack growth and goroutine creation. Samples of other
processes (nginx's, by command name) go to rows named after the process
and its kernel call (accept, read, write, close, epoll). Given the CPU per
UNIT in µs (default: per iteration), each row also says its part of it.
"""
import sys, collections
def samples(f):
    tid, stack = None, []
    for line in f:
        line = line.rstrip('\n')
        if not line.strip():
            if tid is not None: yield tid, stack
            tid, stack = None, []
            continue
        if not line.startswith('\t'):
            # "comm tid" with -F comm,tid; "tid" alone with -F tid.
            f = line.split()
            tid = (f[0], f[1]) if len(f) > 1 and f[1].isdigit() else ('throttle', f[0]); stack = []
        else:
            parts = line.strip().split(None, 1)
            stack.append(('K ' if parts[0].startswith('ffffffff') else '') + (parts[1] if len(parts) > 1 else '?'))
    if tid is not None: yield tid, stack
ALLOC = ('runtime.mallocgc', 'runtime.newobject', 'runtime.(*mspan).writeHeapBits', 'runtime.memclrNoHeapPointers', 'runtime.makeslice',
         'runtime.nextFreeFast', 'runtime.(*mcache)', 'runtime.(*mcentral)', 'runtime.(*mheap)', 'runtime.growslice', 'runtime.convT',
         'runtime.newarray', 'runtime.(*spanSet)', 'runtime.heapSetType', 'runtime.(*mspan)', 'runtime.deductAssistCredit', 'runtime.makemap', 'runtime.rawstring', 'runtime.rawbyteslice', 'runtime.concatstring', 'runtime.slicebytetostring')
def owner(f):
    if 'github.com/grafana/sobek' in f: return 'sobek (the VM, property lookups, its maps)'
    if 'hdrhistogram' in f.lower() or 'internal/script.(*Metric)' in f or 'internal/script.recordSet' in f or 'internal/script.(*builtins)' in f or 'internal/script.(*httpModule).record' in f: return 'throttle: built-in metrics'
    if 'throttle/internal/engine' in f or 'valyala' in f: return 'engine: request and response (user side)'
    if 'throttle/internal/phase.(*Pause)' in f or f.endswith('(*VU).sleep') or 'sleepCall' in f: return 'sleep: the VU\'s timer wait (select, park)'
    if 'throttlekit/throttle' in f: return 'throttle: script glue, phase loop, gate, report'
    return None
def syscall(s):
    """The socket or poller call a kernel stack is in, by its entry point."""
    for name, keys in (('connect', ('__sys_connect', 'sys_connect')), ('socket', ('__sys_socket', 'sys_socket')),
                       ('accept', ('do_accept', 'sys_accept')), ('setsockopt', ('setsockopt',)), ('getsockopt', ('getsockopt',)),
                       ('getsockname/getpeername', ('getsockname', 'getpeername')), ('close', ('sys_close', '__fput', 'task_work_run', 'close_fd')),
                       ('epoll_ctl', ('epoll_ctl',)), ('epoll_wait', ('epoll_wait', 'epoll_pwait')), ('futex', ('futex',)),
                       ('write', ('sys_write', 'sys_sendto', 'sys_writev', 'sys_sendmsg')), ('read', ('sys_read', 'sys_recvfrom', 'sys_recvmsg'))):
        if any(k in s for k in keys):
            return name
    return 'other'
DIAL = ('(*connectJob).run', 'engine.(*rawConn).dialDirect', 'engine.(*rawConn).connectDirect', 'engine.(*sockConn).connect', 'net.(*Dialer)', 'net.(*sysDialer)', 'net.(*netFD).connect', 'net.internetSocket', 'net.socket', 'engine.(*rawConn).connect', 'engine.dialTCP', 'engine.(*rawDialer)')
LAZY = ('internal/script.(*lazyObject)', 'internal/script.(*lazyModule)', 'internal/script.lazyMake', 'internal/script.lazyGetter')
def cat(comm, st):
    s = ' '.join(st)
    kern = st[0].startswith('K ')
    # A thread perf saw no name for (":TID": it ran before perf attached
    # and was not renamed since) is one of Go's: nginx's workers are
    # single-threaded processes perf names.
    if not comm.startswith('throttle') and not comm.startswith(':'):
        if not kern: return '%s: user' % comm
        if 'entry_SYSCALL' in s or 'do_syscall_64' in s: return '%s: kernel %s' % (comm, syscall(s))
        return '%s: kernel interrupts, other' % comm
    if 'runtime.sysmon' in s: return 'Go runtime: sysmon thread (kernel: sleeps, wake-ups)' if kern else 'Go runtime: sysmon thread (user)'
    if any(x in s for x in ('runtime.gcBgMarkWorker', 'runtime.gcAssist', 'runtime.bgsweep', 'runtime.bgscavenge', 'runtime.gcDrain', 'runtime.gcStart', 'runtime.markroot')):
        return 'GC: mark, assist, sweep'
    if any(x in s for x in DIAL):
        if kern: return 'dial: kernel %s' % syscall(s)
        return 'dial: net and the engine (user side)'
    if any(x in s for x in LAZY): return 'script: module members made on first read (sobek, allocation)'
    if 'runtime.newstack' in s or 'runtime.copystack' in s: return 'Go runtime: stack growth'
    if 'runtime.newproc' in s: return 'Go runtime: goroutine creation'
    if any(x in s for x in ('runtime.mcall', 'runtime.mstart', 'runtime.findRunnable', 'runtime.park_m', 'runtime.wakep', 'runtime.startm', 'runtime.stopm', 'runtime.goexit0', 'runtime.gosched')) and not owner(s):
        return 'Go runtime: scheduler, idle Ps, netpoll (kernel)' if kern else 'Go runtime: scheduler, idle Ps, netpoll (user)'
    if kern:
        if 'entry_SYSCALL' in s or 'do_syscall_64' in s:
            w = syscall(s)
            if w in ('futex', 'epoll_wait'): return 'Go runtime: scheduler, idle Ps, netpoll (kernel)'
            return 'kernel: socket %s' % w if w in ('write', 'read', 'close') else 'kernel: %s' % w if w != 'other' else 'kernel: other syscalls'
        return 'kernel: interrupts, page faults, other'
    leaf = st[0]
    if leaf.startswith(ALLOC): return 'Go runtime: allocation'
    if 'Syscall' in leaf or leaf.startswith('syscall.') or leaf.startswith('internal/runtime/syscall'): return 'kernel: syscall entry (user side)'
    for f in st:
        o = owner(f)
        if o: return o
    return 'Go runtime: other (chan, select, locks, timers)'
c = collections.Counter(); n = 0
for (comm, tid), st in samples(sys.stdin):
    if not st: continue
    c[cat(comm, st)] += 1; n += 1
us = float(sys.argv[1]) if len(sys.argv) > 1 else 0
unit = sys.argv[2] if len(sys.argv) > 2 else 'µs per iteration'
print('| owner | share of the samples | %s |' % unit)
print('| --- | --- | --- |')
for k, v in c.most_common():
    print('| %s | %.1f %% | %s |' % (k, 100 * v / n, '%.0f' % (us * v / n) if us else ''))
print('(%d samples)' % n)
