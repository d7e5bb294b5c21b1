#!/usr/bin/env python3
"""bench/allocsplit.py BIN EARLY LATE [ITERS]: what a throttle process
allocated between two of its heap profiles (THROTTLE_HEAPPROFILE, written
on SIGUSR1; GODEBUG=memprofilerate=1 so that every allocation is counted),
split by owner, in bytes and allocations per iteration.

LATE less EARLY (go tool pprof -base), each stack given to the first owner
whose rule it matches (RULES, in order). Iterations: the script's Response
structs made between the two (httpModule.request's, one a request), for a
script of one request an iteration, unless ITERS is given. The profile
writer's own allocations (the SIGUSR1 at EARLY) are shown and left out of
the total. docs/performance.md, "Bytes per iteration (issue 26, session 15)".
"""
import subprocess, sys, re, collections
bin_, base, new = sys.argv[1:4]
def traces(idx):
    out = subprocess.run(['go','tool','pprof','-sample_index='+idx,'-traces','-base',base,bin_,new],capture_output=True,text=True).stdout
    res=[]
    for blk in out.split('-----------+-------------------------------------------------------')[1:]:
        lines=[l for l in blk.strip('\n').split('\n') if l.strip()]
        if not lines: continue
        if lines[0].strip().startswith('bytes:'): lines=lines[1:]
        first=lines[0].split()
        v=first[0]; fr=[' '.join(first[1:])]+[l.strip() for l in lines[1:]]
        def num(s):
            mul=1
            for suf,mm in (('kB',1024),('MB',1<<20),('GB',1<<30),('B',1)):
                if s.endswith(suf): return float(s[:-len(suf)])*mm
            return float(s)
        res.append((num(v),fr))
    return res
RULES=[
 ('(profiler: excluded)', lambda f: any('runtime/pprof' in x or 'writeHeapProfile' in x for x in f)),
 ('one-time: a trend\'s first 10 000 values (exact lists, tables)', lambda f: any('pastExact' in x or 'newPendingTrend' in x for x in f) or f[0].split(' ')[0].endswith(('Metric).recordLocked','pendingDelta).add'))),
 ('sobek VM stack, regrown each iteration', lambda f: 'valueStack).expand' in f[0]),
 ('agent deltas: pending trend histograms (record)', lambda f: any('pendingDelta).add' in x for x in f)),
 ('agent deltas: take (new pending, HistV/HistN)', lambda f: any('Metric).take' in x or 'newPending' in x for x in f)),
 ('agent deltas: TakeDeltas checks/slices', lambda f: any('TakeDeltas' in x for x in f)),
 ('agent: shipping (json, nats, latencies)', lambda f: any('internal/agent.' in x for x in f) and not any('VU).iteration' in x for x in f)),
 ('built-in metrics (record, exact values)', lambda f: any('recordSet' in x or 'recordLocked' in x for x in f)),
 ('engine: connection, head/body buffer', lambda f: any('internal/engine.' in x for x in f)),
 ('k6/http: request, Response object', lambda f: any('httpModule)' in x for x in f)),
 ('check()', lambda f: any('checkcall' in x or 'script.(*checks)' in x or 'VU).check' in x for x in f)),
 ('sleep', lambda f: any('VU).sleep' in x or 'Pause' in x or 'pause' in x for x in f)),
 ('sobek: the script\'s own objects/functions/strings', lambda f: any('VU).iteration' in x for x in f) and 'sobek' in f[0]),
 ('VU iteration (globals, tags)', lambda f: any('VU).iteration' in x or 'VU).prepareIteration' in x or 'finishIteration' in x for x in f)),
 ('phase runtime, watch', lambda f: any('internal/phase.' in x for x in f)),
]
def split(idx):
    acc=collections.Counter(); other=collections.Counter()
    for v,f in traces(idx):
        for name,r in RULES:
            if r(f): acc[name]+=v; break
        else:
            acc['other']+=v; other[f[0]]+=v
    return acc, other
sp,oth=split('alloc_space'); ob,_=split('alloc_objects')
if len(sys.argv)>4: iters=float(sys.argv[4])
else:
    # the script's Response struct: one per request, one request an iteration
    iters=sum(v for v,f in traces('alloc_objects') if 'httpModule).request' in f[0])
print(f'iterations {iters:.0f}')
tot=0;totn=0
for name,_ in RULES+[('other',None)]:
    if name.startswith('(profiler') : 
        print(f'  {name:55s} {sp[name]/iters:8.0f} B {ob[name]/iters:6.1f} allocs'); continue
    tot+=sp[name]; totn+=ob[name]
    print(f'  {name:55s} {sp[name]/iters:8.0f} B {ob[name]/iters:6.1f} allocs')
print(f'  {"total (less the profiler)":55s} {tot/iters:8.0f} B {totn/iters:6.1f} allocs')
print('other:', [(k, round(v/iters)) for k,v in oth.most_common(8)])
