#!/usr/bin/env python3
"""bench/watchtrace.py DIR [-v] — read the watch traces a run wrote with
THROTTLE_WATCH_TRACE=DIR (one CSV per phase and process, README
"generator") and print, on one clock (seconds from the earliest trace's
first tick): every saturated tick with the rule that marked it and what
each rule read, each process's GC cycle ends (gc-end: its cycle count
moved), with -v the ticks where a rule held without a streak, and the
machine's CPU pressure quantiles over every tick. Traces of fewer than 100
ticks (bench/vus.sh's 1-VU baseline) are left out. With GC turns
(local agents have them unless THROTTLE_GC_TURN=off), each agent's gcturn-PID.csv in DIR adds its turns
to the timeline (turn-forced: a cycle run in turn, the machine's busy
cores over the second before it, the runway used, the cycle's wall time;
turn-skipped: a cycle due and no room, the fewest busy cores read; turn-
off: no machine reading, nothing forced) and a line of each agent's
totals; the baseline's (no forced or skipped turn) are left out."""
import csv, glob, os, sys, collections

d = sys.argv[1]
rows = {}
for f in glob.glob(os.path.join(d, 'watch-*.csv')):
    r = list(csv.DictReader(open(f)))
    if len(r) >= 100:
        rows[os.path.basename(f)] = r
if not rows:
    sys.exit('no trace of 100 ticks or more in ' + d)
t0 = min(float(r[0]['unix_s']) for r in rows.values())
held, sat, events = collections.Counter(), collections.Counter(), []
for name, r in rows.items():
    prevgc = None
    for x in r:
        t = float(x['unix_s']) - t0
        gc = int(x['gc_cycles'])
        if prevgc is not None and gc != prevgc:
            events.append((t, name, 'gc-end', str(gc)))
        prevgc = gc
        if x['held']:
            held[x['held']] += 1
        what = 'cpu %s machine %s pressure %s wait p99 %s ms (%s samples) read %s ms (%s answers) runnable %s rate %s' % (
            x['cpu'], x['machine'], x.get('cpu_pressure', '?'), x['wait_p99_ms'], x['wait_samples'],
            x['read_ms'], x['read_answers'], x['runnable'], x['rate'])
        if x['saturated'] == 'true':
            sat[x['held']] += 1
            events.append((t, name, 'SAT ' + x['held'], what))
        elif x['held'] and '-v' in sys.argv:
            events.append((t, name, 'held ' + x['held'], what))
turns = []
for f in sorted(glob.glob(os.path.join(d, 'gcturn-*.csv'))):
    r = list(csv.DictReader(open(f)))
    acted = [x for x in r if x['event'] in ('forced', 'skipped', 'off')]
    end = [x for x in r if x['event'] == 'end']
    start = [x for x in r if x['event'] == 'start']
    if not acted and not (start and start[0]['note']):
        continue
    name = os.path.basename(f)
    for x in acted:
        what = 'machine %s of %s cores, runway %s' % (x['machine'], x['cores'], x['runway'])
        if x['event'] == 'forced':
            what += ', cycle %s s' % x['cycle_s']
        events.append((float(x['unix_s']) - t0, name, 'turn-' + x['event'], x['note'] or what))
    turns.append('%s turn %s: %s%s' % (name, r[0]['turn'] if r else '?', end[0]['note'] if end else 'no end line',
                                       ('; ' + start[0]['note']) if start and start[0]['note'] else ''))
print('traces %d, rule held in %s ticks, saturated %s' % (len(rows), dict(held), dict(sat)))
for line in turns:
    print(line)
for e in sorted(events):
    print('%7.2f %-22s %-10s %s' % e)
args = sys.argv[2:]
for i, a in enumerate(args):
    if a != '-m' or i + 1 >= len(args):
        continue
    lo, hi = (float(v) for v in args[i + 1].split('-'))
    r = rows[sorted(rows)[0]]
    m = [(float(x['unix_s']) - t0, float(x['machine'])) for x in r if float(x['machine']) >= 0]
    spans = sorted(sum(v for _, v in m[j - 3:j + 1]) / 4 for j in range(3, len(m)) if lo <= m[j][0] < hi)
    if spans:
        q = lambda f: spans[int(f * (len(spans) - 1))]
        print('machine %s s, %d spans of 1 s: p10 %.2f p50 %.2f p90 %.2f, above 1.0 %.0f%%, above 1.1 %.0f%%' % (
            args[i + 1], len(spans), q(0.1), q(0.5), q(0.9),
            100 * sum(v > 1.0 for v in spans) / len(spans), 100 * sum(v > 1.1 for v in spans) / len(spans)))
ps = sorted(float(x['cpu_pressure']) for r in rows.values() for x in r
            if float(x.get('cpu_pressure', -1)) >= 0)
if ps:
    print('cpu pressure p10 %.2f p50 %.2f p90 %.2f p99 %.2f' % tuple(ps[int(q * (len(ps) - 1))] for q in (0.1, 0.5, 0.9, 0.99)))
