#!/usr/bin/env python3
"""bench/perfsplit.py — a perf profile of throttle split by who spends the CPU.

    perf script -i FILE -F tid,ip,sym | bench/perfsplit.py [US_PER_ITERATION]

reads `perf record -g` samples (bench/vus.sh's PERF_S profile) and prints a
Markdown table: each sample goes to one owner, by its call chain — the Go
runtime's sysmon thread and its scheduler (idle Ps, wake-ups, netpoll: the
kernel's part of both is the thread sleeps and wake-ups), the GC,
allocation, the kernel's socket calls, sobek, the engine, the built-in
metrics, the VU's sleep, and throttle's other code; a runtime or kernel
function called by one of those owners counts as that owner's. Given the
CPU per iteration in µs, each row also says its part of it.
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
            tid = line.split()[0]; stack = []
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
def cat(st):
    s = ' '.join(st)
    kern = st[0].startswith('K ')
    if 'runtime.sysmon' in s: return 'Go runtime: sysmon thread (kernel: sleeps, wake-ups)' if kern else 'Go runtime: sysmon thread (user)'
    if any(x in s for x in ('runtime.gcBgMarkWorker', 'runtime.gcAssist', 'runtime.bgsweep', 'runtime.bgscavenge', 'runtime.gcDrain', 'runtime.gcStart', 'runtime.markroot')):
        return 'GC: mark, assist, sweep'
    if any(x in s for x in ('runtime.mcall', 'runtime.mstart', 'runtime.findRunnable', 'runtime.park_m', 'runtime.wakep', 'runtime.startm', 'runtime.stopm', 'runtime.goexit0', 'runtime.gosched')) and not owner(s):
        return 'Go runtime: scheduler, idle Ps, netpoll (kernel)' if kern else 'Go runtime: scheduler, idle Ps, netpoll (user)'
    if kern:
        if 'entry_SYSCALL' in s or 'do_syscall_64' in s:
            w = 'write' if 'sys_write' in s else 'read' if 'sys_read' in s else 'futex' if 'futex' in s else 'epoll' if 'epoll' in s else 'other'
            if w in ('futex', 'epoll'): return 'Go runtime: scheduler, idle Ps, netpoll (kernel)'
            return 'kernel: socket %s' % w if w in ('write', 'read') else 'kernel: other syscalls'
        return 'kernel: interrupts, page faults, other'
    leaf = st[0]
    if leaf.startswith(ALLOC): return 'Go runtime: allocation'
    if 'Syscall' in leaf or leaf.startswith('syscall.') or leaf.startswith('internal/runtime/syscall'): return 'kernel: syscall entry (user side)'
    for f in st:
        o = owner(f)
        if o: return o
    return 'Go runtime: other (chan, select, locks, timers)'
c = collections.Counter(); n = 0
for tid, st in samples(sys.stdin):
    if not st: continue
    c[cat(st)] += 1; n += 1
us = float(sys.argv[1]) if len(sys.argv) > 1 else 0
print('| owner | share of the samples | µs per iteration |')
print('| --- | --- | --- |')
for k, v in c.most_common():
    print('| %s | %.1f %% | %s |' % (k, 100 * v / n, '%.0f' % (us * v / n) if us else ''))
print('(%d samples)' % n)
