#!/usr/bin/env python3
"""bench/heapsplit.py — a heap profile of script VUs split into what a VU holds.

    go tool pprof -sample_index=inuse_space -traces BINARY PROFILE | bench/heapsplit.py VUS [ITEM]

reads the live heap's allocation stacks (a profile written by
THROTTLE_HEAPPROFILE on SIGUSR1, or by BenchmarkSleepingVU's
THROTTLE_VU_HEAPPROFILE) and prints, per VU, KiB by item: the VU's
runtime, its init context (sobek's built-ins the script's code made, the
script's own closures and objects, k6 module members made on first read),
its iteration (the request lane and its connection, the check, values
left on sobek's value stack, the sleep), and the process's own set-up. Each
stack goes to the first item whose rule it matches, so the order of RULES
matters. With ITEM (a part of an item's name), that item's 15 largest
stacks are listed under it. docs/performance.md, "A running VU's live heap
(issue 26, session 10)", has what the items are.

The profile's sampling decides the precision: at Go's default (one sample
per 512 KiB) 10 000 VUs give a few hundred samples; GODEBUG=memprofilerate=4096
(the CLI) or -test.memprofilerate=1 (a benchmark) gives every KiB.
"""
import collections
import re
import sys


def size(s):
    if s == "0":
        return 0
    m = re.match(r"([\d.]+)([kMG]?B)$", s)
    return float(m.group(1)) * {"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[m.group(2)]


def traces(text):
    for block in text.split("-----------+-------------------------------------------------------")[1:]:
        lines = [l for l in block.split("\n") if l.strip()]
        if not lines or "bytes:" not in lines[0]:
            continue
        first = lines[1].split()
        yield size(first[0]), [first[1]] + [l.split()[0] for l in lines[2:]]


def has(*parts):
    return lambda f: any(p in x for x in f for p in parts)


def both(a, b):
    return lambda f: a(f) and b(f)


def ends(*names):
    return lambda f: any(x.endswith(n) for x in f for n in names)


ITER = has("VU).call", "vuWorker.Iterate")
RULES = [
    ("process set-up (Load, phases, recorders: not per VU)", has("script.Load", "newPhase", "report.NewRecorder", "main.run")),
    ("goroutine (its g)", has("runtime.malg")),
    ("iteration: request lane (slot, driver, runner)", has("VU).newSlot", "VU).slot")),
    ("iteration: request on the wire (connection, kept headers, pooled buffers)", has("engine.(*Runner).Iterate")),
    ("iteration: http.get's URL", has("httpModule).resolve")),
    ("iteration: sleep (pause, timer, dropStale's stacks)", has("Pause", "VU).sleep")),
    ("iteration: check()", has("checkCall")),
    ("iteration: Math.random (Math, the function)", both(has("createMathTemplate", "getMath"), ITER)),
    ("iteration: k6 members made on first read", both(has("lazyObject).Get"), ITER)),
    ("iteration: other (values left on sobek's stack, global reads)", ITER),
    ("runtime: sobek.New", both(ends("sobek.New"), has("newRuntime"))),
    ("runtime: global object's names, __ENV", both(has("newRuntime"), has("newEnv", "materialisePropNames"))),
    ("runtime: open and require", both(has("newRuntime.(*Object).Set"), has("newNativeFunc"))),
    ("runtime: other (the VU, the global object's map)", has("newRuntime")),
    ("init: String constructor (String(), or a string's method)", ends("(*Runtime).getString")),
    ("init: Array constructor (map's species)", ends("(*Runtime).getArray")),
    ("init: Number constructor", ends("(*Runtime).getNumber")),
    ("init: built-in methods (split, map, includes)", has("ProtoTemplate.func")),
    ("init: String.prototype's singleton", has("getStringSingleton")),
    ("init: built-in prototypes", lambda f: any(re.search(r"get(String|Array|Function|Number|Object)Prototype", x) for x in f)),
    ("init: global object's built-ins read", has("createGlobalObjectTemplate")),
    ("init: k6 modules required", has("VU).require", "VU).module")),
    ("init: k6 members made on first read", both(has("lazyObject).Get"), has("evalPlain", "runPlain"))),
    ("init: the script's closures and objects", has("runPlain", "evalPlain")),
    ("init: other", has("initVU", "initInterruptible", "makeVU")),
]


def main():
    vus = float(sys.argv[1])
    detail = sys.argv[2] if len(sys.argv) > 2 else None
    total, stacks = collections.Counter(), collections.defaultdict(collections.Counter)
    for n, frames in traces(sys.stdin.read()):
        item = next((name for name, rule in RULES if rule(frames)), "other")
        total[item] += n
        short = [x.replace("github.com/grafana/", "").replace("github.com/throttlekit/throttle/internal/", "") for x in frames[:4]]
        stacks[item][" < ".join(short)] += n
    per_vu = 0.0
    for item, n in sorted(total.items(), key=lambda kv: -kv[1]):
        print("%7.2f  %s" % (n / vus / 1024, item))
        if not item.startswith("process set-up"):
            per_vu += n
        if detail and detail in item:
            for s, m in stacks[item].most_common(15):
                print("           %6.3f  %s" % (m / vus / 1024, s))
    print("%7.2f  per VU, the process set-up left out" % (per_vu / vus / 1024))


if __name__ == "__main__":
    main()
