#!/usr/bin/env python3
"""bench/gcoverlap.py WORK... — the local agents' GC cycles of bench/vus.sh
runs, from WORK/main.gc (GODEBUG=gctrace=1; an agent's lines are the
`1 P` ones): the cycles after 8 s of process time (past the VUs' bulk and
settle's cycle), when each began, their wall time, the seconds in which
two or more agents were in a cycle (each in its own process time: the
agents start within a few ms of each other), and the assist and
mark-worker time summed (assist + background + idle); forced: the cycles
runtime.GC began (gctrace's "(forced)": the GC turns' cycles)."""
import re, sys

pat = re.compile(r'gc \d+ @([\d.]+)s \d+%: ([\d.]+)\+([\d.]+)\+([\d.]+) ms clock, [\d.]+\+([\d.]+)/([\d.]+)/([\d.]+)\+')
for d in sys.argv[1:]:
    iv = []
    for line in open(d + '/main.gc'):
        m = pat.match(line)
        if not m or '1 P' not in line or float(m.group(1)) < 8:
            continue
        t = float(m.group(1))
        wall = sum(float(m.group(i)) for i in (2, 3, 4)) / 1000
        iv.append((t, t + wall, *(float(m.group(i)) / 1000 for i in (5, 6, 7)), '(forced)' in line))
    iv.sort()
    over, n, last = 0.0, 0, None
    for t, dx in sorted([(a, 1) for a, *_ in iv] + [(b, -1) for _, b, *_ in iv]):
        if n >= 2:
            over += t - last
        n, last = n + dx, t
    walls = [b - a for a, b, *_ in iv]
    print('%s: %d cycles (%d forced) at %s s; wall %s s; overlap %.2f s; assists %.2f s, mark workers %.2f s' % (
        d, len(iv), sum(x[5] for x in iv), ' '.join('%.1f%s' % (x[0], 'f' if x[5] else '') for x in iv),
        '%.2f-%.2f' % (min(walls), max(walls)) if walls else '-', over,
        sum(x[2] for x in iv), sum(x[2] + x[3] + x[4] for x in iv)))
