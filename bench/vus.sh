#!/usr/bin/env bash
# bench/vus.sh — VU density: a typical k6 script (one GET, a check,
# sleep(20)) as a constant-vus scenario of VUS virtual users (default
# 100 000) for DURATION_S seconds (default 120), ungoverned, against a local nginx.
# Not part of make test: it takes about DURATION_S + 60 s and several GB.
#
# Reports (each line with the load average at that moment):
#   init      seconds (wall and CPU) from the process start until every VU
#             has run its init context (the script logs each tenth of its
#             VUs as they are made; the sampler runs every 0.25 s)
#   rss/VU    (RSS - RSS of a 1-VU run of the same script) / VUS, steady
#             (median of the samples after init) and peak (VmHWM)
#   iter/s    iterations per second in the report's windows after the
#             first 20 s period (the first iteration of each VU starts at a
#             random moment in it), over a whole number of periods (the
#             newest), against VUS / 20 s, the implied rate
#   saturated throttle's own generator watch (report.json generator.*)
#   gc p99    the 99th percentile of the GC stop-the-world pauses
#             (GODEBUG=gctrace=1: the two STW clock terms of each cycle)
#   cpu/iter  CPU of the throttle processes per iteration in the steady
#             state: the CPU seconds (summed over the processes, read from
#             the samples, interpolated at the span's ends) over the same
#             whole periods iter/s counts, over their iterations; the
#             scenario's clock is placed at the sample where every VU was
#             made (every planned VU is made before setup() and the clock)
#
# PERF_S=N records a CPU profile of the steady state alone: perf record
# (cpu-clock, call graphs by frame pointer, kernel frames included) of
# every throttle process for N seconds, from one period and 2 s after the
# last VU was made (cut to end 2 s before the scenario), to
# $WORK/steady.perf, and splits it by owner (bench/perfsplit.py: the
# runtime's sysmon and scheduler, the kernel's socket calls, sobek, the
# engine, ...), each row's share in µs of the CPU per iteration above.
#
# The first period (from the scenario's start, when every VU is made,
# until one period later each VU has started its first iteration and
# opened its connection): the report splits the run into spans (making
# the VUs; the first and second periods; the steady state of cpu/iter)
# and gives each one's cores of CPU used by the throttle processes, by
# nginx and by the whole machine (/proc/stat: other processes too), its
# iterations (and the report's 5 s windows' lowest and highest rate), its
# connects (TcpActiveOpens), the longest accept queue seen on nginx's
# listen sockets, and the kernel's TCP counters that moved in it (nstat:
# listen-queue overflows and drops, SYN retransmits, SYN cookies,
# timeouts, resets; they are the network namespace's, so another
# program's connections on this machine count too). A listen queue that
# overflows drops SYNs, which the client sends again after 1 s, 3 s, 7 s:
# the report says so when it happens, and the listen backlog nginx has.
#
# PERF_FIRST=N records the first N seconds of the scenario (from the
# sample where every VU was made) the same way, the throttle processes
# and nginx's workers together, to $WORK/first.perf, and splits it by
# owner (the connect's kernel and user sides, nginx's accept, the VUs'
# first iterations with the module members they make on first read, the
# GC, the scheduler, ...), each row in µs per VU: the throttle processes'
# and nginx's CPU over the profile's span, over the VUs.
#
# The script spreads its VUs over nginx's eight listen addresses
# (127.0.0.2-9): one loopback address pair has only ~28 000 ephemeral
# ports. It sets noConnectionReuse: a VU holding an idle keep-alive
# connection through its 20 s sleep needs one descriptor per VU, and on a
# machine whose hard open-file limit cannot be raised (a container without
# CAP_SYS_RESOURCE: 20 000 here) 100 000 of them do not fit. The open-file
# limit is raised to the hard limit, as k6's large-test guide says.
#
# REUSE=1 drops noConnectionReuse: each VU keeps its keep-alive connection
# through its sleep, as k6 does by default, so throttle and nginx each hold
# one descriptor per VU: under this machine's 20 000 limit that fits about
# 19 000 VUs (bench/vus.sh's largest keep-alive run here: VUS=18000 REUSE=1).
#
# AGENTS=N spreads the VUs over N agent processes on this machine
# (`throttle run --local-agents N`: each runs its execution segment, the
# controller merges the k6 metrics and writes the report). The open-file
# limit is per process, so keep-alive VUs beyond one process's limit fit:
# VUS=100000 REUSE=1 takes 7 agents of at most 16 000 VUs each, and nginx as
# many workers, each with its own limit, its listen sockets opened with
# reuseport so the kernel spreads the connections over the workers. Default:
# with REUSE=1 and more VUS than one process holds (the limit less 1 000),
# ceil(VUS / 16 000) agents; otherwise 0 (0 and 1: one process, as before).
# Then every figure is over every throttle process (controller and agents,
# one machine's): RSS summed per sample (steady: the median; peak: the
# largest sum; the sum of each process's VmHWM beside it, an upper bound),
# CPU summed, init until every agent's VUs have run their init context (each
# agent logs its own tenths and its last VU), iterations from the merged
# report, the generator summed over every agent's own watch (and each
# agent's in the report's "agents" entries), GC pauses from every process's
# gctrace (they share stderr). The 1-VU baseline runs as many processes
# (one VU per agent), so RSS per VU leaves out their fixed cost.
#
# FIRST_S=N spreads the VUs' first iterations (each VU's first request, and
# with REUSE=1 its connect) over N seconds instead of one period; iter/s
# then counts from N s after the start (the first period's cost per VU, at
# VUS / N VUs a second, may need more cores than the machine has).
#
# Knobs (environment): VUS (100000), DURATION_S (120), PORT (18090), REUSE (0),
# FIRST_S (20),
# AGENTS (see above), WORK (/tmp/density-vus), NGINX_WORKERS (1, or AGENTS with
# agents), PERF_S (0: no steady-state profile), PERF_FIRST (0: no first-period
# profile), BACKLOG (nginx's listen backlog, 4096; the kernel caps it at
# net.core.somaxconn, which the script raises to it when it may, and says
# so when it may not), BIN (a throttle binary; built from this tree if unset). Traffic
# goes to 127.0.0.2-9 only; the controller listens on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

VUS=${VUS:-100000}
DURATION_S=${DURATION_S:-120}
DURATION=${DURATION_S}s
REUSE=${REUSE:-0}
PORT=${PORT:-18090}
PERF_S=${PERF_S:-0}
PERF_FIRST=${PERF_FIRST:-0}
if [ "$PERF_S$PERF_FIRST" != 00 ] && ! command -v perf >/dev/null; then echo "vus: PERF_S and PERF_FIRST need perf (linux-perf / linux-tools)" >&2; exit 1; fi
WORK=${WORK:-/tmp/density-vus}
SLEEP_S=20
# The VUs' first iterations start at random moments of the first FIRST_S
# seconds (default one period): each opens its connection then.
FIRST_S=${FIRST_S:-$SLEEP_S}
SETTLE_S=$((FIRST_S > SLEEP_S ? FIRST_S : SLEEP_S))
PER_AGENT=16000

ensure_pkgs nginx:nginx-light curl:curl
mkdir -p "$WORK/nginx/logs" "$WORK/www"
chmod 755 "$WORK" "$WORK/www" # nginx workers run as an unprivileged user
printf 'hello from nginx\n' >"$WORK/www/index.html"

ulimit -n "$(ulimit -Hn)"
NOFILE=$(ulimit -n)
if [ -z "${AGENTS:-}" ]; then
	AGENTS=0
	[ "$REUSE" = 1 ] && [ "$VUS" -gt $((NOFILE - 1000)) ] && AGENTS=$(((VUS + PER_AGENT - 1) / PER_AGENT))
fi
[ "$AGENTS" -le 1 ] && AGENTS=0
NGINX_WORKERS=${NGINX_WORKERS:-$((AGENTS > 1 ? AGENTS : 1))}
# Several workers each open every listen address with SO_REUSEPORT: the
# kernel hashes each connection to one worker, so each holds its part.
REUSEPORT=$([ "$NGINX_WORKERS" -gt 1 ] && echo " reuseport" || true)

if [ -z "${BIN:-}" ]; then
	echo "building throttle" >&2
	go build -o "$WORK/throttle" ./cmd/throttle
	BIN=$WORK/throttle
fi

# The listen backlog: the kernel takes min(backlog, net.core.somaxconn).
BACKLOG=${BACKLOG:-4096}
SOMAXCONN=$(cat /proc/sys/net/core/somaxconn)
if [ "$SOMAXCONN" -lt "$BACKLOG" ]; then
	if (echo "$BACKLOG" >/proc/sys/net/core/somaxconn) 2>/dev/null; then
		echo "vus: net.core.somaxconn raised from $SOMAXCONN to $BACKLOG for nginx's backlog" >&2
		SOMAXCONN=$BACKLOG
	else
		echo "vus: net.core.somaxconn is $SOMAXCONN and cannot be raised here: nginx's listen backlog is $SOMAXCONN, not $BACKLOG" >&2
	fi
fi
BACKLOG_EFF=$((BACKLOG < SOMAXCONN ? BACKLOG : SOMAXCONN))
listen=""
for i in 2 3 4 5 6 7 8 9; do listen+="    listen 127.0.0.$i:$PORT backlog=$BACKLOG$REUSEPORT;"$'\n'; done
cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes $NGINX_WORKERS;
worker_rlimit_nofile $NOFILE;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
events { worker_connections $((NOFILE - 100)); multi_accept on; }
http {
  access_log off;
  keepalive_timeout 30s;
  # The target shares the machine with the generator: without a cache each
  # worker opens, stats and closes index.html for every request, CPU the
  # generator then lacks (docs/performance.md, "The first period").
  open_file_cache max=64 inactive=60s;
  open_file_cache_valid 60s;
  server {
$listen    root $WORK/www;
  }
}
EOF
cleanup() {
	[ -f "$WORK/nginx/nginx.pid" ] && kill "$(cat "$WORK/nginx/nginx.pid")" 2>/dev/null || true
	[ -n "${TPID:-}" ] && kill "$TPID" 2>/dev/null || true
}
trap cleanup EXIT
nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/logs/error.log"
STATE=$WORK wait_url "http://127.0.0.2:$PORT/index.html"

cat >"$WORK/vus.js" <<'EOF'
import http from 'k6/http';
import { check, sleep } from 'k6';

// One loopback address pair has only ~28 000 ephemeral ports: the VUs
// spread over the eight addresses nginx listens on.
const url = `http://127.0.0.${2 + (__VU % 8)}:${__ENV.PORT}/index.html`;
// Init progress, for the benchmark's clock: VU ids are given in order as
// VUs are made (in each process: an agent numbers its own), so each STEP-th
// marks a tenth and the one a process makes last (LAST1 or LAST2) its end.
// Numbers and strings alone (% and == convert): a built-in this called
// (String(), split, map, includes, Number()) would be made in every VU and
// kept, 11 KiB of each VU's live heap that is the benchmark's, not the
// workload's (docs/performance.md, "A running VU's live heap").
if (__VU > 0 && (__VU % __ENV.STEP === 0 || __VU == __ENV.LAST1 || __VU == __ENV.LAST2)) console.log(`initialised ${__VU}`);

export const options = {
  noConnectionReuse: __ENV.REUSE !== '1',
  scenarios: {
    density: { executor: 'constant-vus', vus: +__ENV.VUS, duration: __ENV.DURATION },
  },
};

export default function () {
  // All VUs start together (k6 runs every init context before the test
  // starts): spread the first requests over FIRST_S seconds (one period
  // by default), as scripts at scale do, instead of 100 000 connects in
  // the same millisecond.
  if (__ITER === 0) sleep(Math.random() * __ENV.FIRST_S); // * converts: no Number() per VU
  const res = http.get(url);
  check(res, { 'status is 200': (r) => r.status === 200 });
  sleep(20);
}
EOF

load() { cut -d' ' -f1 /proc/loadavg; }

# The kernel's TCP counters the report follows (nstat's names), in the
# order of $tag.net's columns after the first three.
NET_COUNTERS="TcpExtListenOverflows TcpExtListenDrops TcpExtTCPReqQFullDrop TcpExtTCPReqQFullDoCookies TcpExtSyncookiesSent TcpExtSyncookiesRecv TcpExtSyncookiesFailed TcpExtTCPSynRetrans TcpExtTCPTimeouts TcpRetransSegs TcpAttemptFails TcpEstabResets TcpExtTCPAbortOnTimeout TcpExtTCPAbortOnData TcpExtTCPBacklogDrop TcpActiveOpens TcpPassiveOpens"
HZ=$(getconf CLK_TCK)
# net_sample: "NGINX-CPU-s MACHINE-BUSY-s COUNTER... ACCEPT-QUEUE" — nginx's
# processes' CPU (master and workers), the machine's busy CPU (/proc/stat:
# all but idle and iowait), NET_COUNTERS' values and the longest accept
# queue of nginx's listen sockets at that moment (ss: a listen socket's
# Recv-Q; it overflows at the backlog).
net_sample() {
	local np ng=0
	np=$(cat "$WORK/nginx/nginx.pid" 2>/dev/null || true)
	[ -n "$np" ] && ng=$({ cat "/proc/$np/stat"; for p in $(pgrep -P "$np"); do cat "/proc/$p/stat"; done; } 2>/dev/null | awk -v hz="$HZ" '{ c += $14 + $15 } END { printf "%.2f", c / hz }')
	echo "$ng $(awk -v hz="$HZ" '$1 == "cpu" { printf "%.2f", ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit }' /proc/stat) $(nstat -azs 2>/dev/null | awk -v want="$NET_COUNTERS" '
		BEGIN { n = split(want, w, " ") } { v[$1] = $2 } END { for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " " : ""), (w[i] in v ? v[w[i]] : 0) }') $(ss -Hltn "sport = :$PORT" 2>/dev/null | awk '$2 > q { q = $2 } END { print q + 0 }')"
}

# marks VUS PROCESSES: "STEP LAST1 LAST2 LINES": the script's init markers for VUS
# over PROCESSES equal execution segments (each gets ceil(V·(i+1)/N) −
# ceil(V·i/N) VUs, options.Segment.Scale: two sizes at most, LAST1 and
# LAST2, the same when the segments are equal), and how many
# "initialised" lines all of them log once every VU is made.
marks() {
	python3 - "$1" "$2" <<'PY'
import sys
v, n = int(sys.argv[1]), max(1, int(sys.argv[2]))
ceil = lambda a, b: -(-a // b)
counts = [ceil(v * (i + 1), n) - ceil(v * i, n) for i in range(n)]
step = max(1, min(counts) // 10)
lasts = sorted(set(counts))
lines = sum(c // step + sum(1 for l in lasts if l <= c and l % step) for c in counts)
assert len(lasts) <= 2, lasts
print(step, lasts[0], lasts[-1], lines)
PY
}

# run VUS DURATION TAG: one run, sampled; leaves $WORK/TAG.{samples,gc,json,out,limits}.
run() {
	local vus=$1 dur=$2 tag=$3 step last1 last2 agents=()
	read -r step last1 last2 LINES < <(marks "$vus" "$((AGENTS > 1 ? AGENTS : 1))")
	[ "$AGENTS" -gt 1 ] && agents=(--local-agents "$AGENTS" --listen 127.0.0.1:0)
	GODEBUG=gctrace=1 "$BIN" run "${agents[@]}" -e PORT="$PORT" -e VUS="$vus" -e DURATION="$dur" -e REUSE="$REUSE" -e FIRST_S="$FIRST_S" \
		-e STEP="$step" -e LAST1="$last1" -e LAST2="$last2" --out "$WORK/$tag.json" "$WORK/vus.js" \
		>"$WORK/$tag.out" 2>"$WORK/$tag.gc" &
	TPID=$!
	local t0 now n=0 p inited= perf_at= perf_len
	t0=$(date +%s.%N)
	: >"$WORK/$tag.samples"
	: >"$WORK/$tag.limits"
	# columns: seconds NGINX-CPU-s MACHINE-BUSY-s NET_COUNTERS... ACCEPT-QUEUE
	echo "0.00 $(net_sample)" >"$WORK/$tag.net"
	local first_at=
	while kill -0 "$TPID" 2>/dev/null; do
		now=$(date +%s.%N)
		# columns: seconds RSS-KiB HWM-KiB load cpu-s lines processes
		read -r rss hwm cpu procs < <(tree_sample "$TPID")
		echo "$(awk -v a="$now" -v b="$t0" 'BEGIN { printf "%.2f", a - b }') $rss $hwm $(load) $cpu $(cat "$WORK/$tag.out" "$WORK/$tag.gc" 2>/dev/null | grep -c 'initialised [0-9]') $procs" >>"$WORK/$tag.samples"
		echo "$(awk -v a="$now" -v b="$t0" 'BEGIN { printf "%.2f", a - b }') $(net_sample)" >>"$WORK/$tag.net"
		# The first period's profile: from the sample where every VU was
		# made, the throttle processes and nginx's, PERF_FIRST seconds.
		if [ "$tag" = main ] && [ "$PERF_FIRST" != 0 ] && [ -z "$first_at" ] && [ "$(tail -1 "$WORK/$tag.samples" | cut -d' ' -f6)" -ge "$LINES" ]; then
			first_at=$(tail -1 "$WORK/$tag.samples" | cut -d' ' -f1)
			local fp
			fp=$({ tree_pids "$TPID"; cat "$WORK/nginx/nginx.pid"; pgrep -P "$(cat "$WORK/nginx/nginx.pid")"; } | paste -sd,)
			echo "perf: recording the first $PERF_FIRST s of $fp from $first_at s" >&2
			echo "$first_at" >"$WORK/first.at"
			perf record -q -e cpu-clock -F 997 -g -p "$fp" -o "$WORK/first.perf" -- sleep "$PERF_FIRST" >"$WORK/perf-first.log" 2>&1 &
		fi
		# The steady-state profile: one period and 2 s after the last VU
		# was made, for PERF_S seconds, ending 2 s before the scenario.
		if [ "$tag" = main ] && [ "$PERF_S" != 0 ] && [ -z "$perf_at" ]; then
			if [ -z "$inited" ] && [ "$(tail -1 "$WORK/$tag.samples" | cut -d' ' -f6)" -ge "$LINES" ]; then
				inited=$(tail -1 "$WORK/$tag.samples" | cut -d' ' -f1)
			fi
			if [ -n "$inited" ] && awk -v a="$now" -v b="$t0" -v i="$inited" -v p="$SETTLE_S" 'BEGIN { exit !(a - b >= i + p + 2) }'; then
				perf_at=$(awk -v a="$now" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
				perf_len=$(awk -v n="$PERF_S" -v d="${dur%s}" -v i="$inited" -v at="$perf_at" 'BEGIN { l = i + d - 2 - at; if (n < l) l = n; printf "%d", l }')
				if [ "$perf_len" -gt 0 ]; then
					echo "perf: recording $perf_len s of $(tree_pids "$TPID" | paste -sd,) from $perf_at s" >&2
					perf record -q -e cpu-clock -F 997 -g -p "$(tree_pids "$TPID" | paste -sd,)" -o "$WORK/steady.perf" -- sleep "$perf_len" >"$WORK/perf.log" 2>&1 &
				fi
			fi
		fi
		if [ $((n += 1)) = 20 ]; then
			# Each process's open-file limit once all run: Go raises its
			# soft limit to the hard one at start, agents' too.
			for p in $(tree_pids "$TPID"); do
				echo "$p $(awk '/^Max open files/ { print $4, $5 }' "/proc/$p/limits" 2>/dev/null)" >>"$WORK/$tag.limits"
			done
		fi
		sleep 0.25
	done
	wait "$TPID" || { echo "vus: throttle exited non-zero (see $WORK/$tag.out, $WORK/$tag.gc)" >&2; tail -5 "$WORK/$tag.out" >&2; grep -v '^gc ' "$WORK/$tag.gc" | tail -5 >&2; }
	TPID=
}

[ "$PERF_S" != 0 ] && rm -f "$WORK/steady.perf"
[ "$PERF_FIRST" != 0 ] && rm -f "$WORK/first.perf" "$WORK/first.at"
echo "baseline: $((AGENTS > 1 ? AGENTS : 1)) VU(s), 10s" >&2
run "$((AGENTS > 1 ? AGENTS : 1))" 10s base
# The baseline's RSS with every one of its processes there.
BASE_KIB=$(awk '$2 != "-" && $7 >= p { p = $7; v = $2 } END { print v }' "$WORK/base.samples")

echo "density: $VUS VUs, $DURATION (open-file limit $NOFILE$([ "$AGENTS" -gt 1 ] && echo ", $AGENTS local agents, $NGINX_WORKERS nginx workers"))" >&2
run "$VUS" "$DURATION" main

S=$WORK/main.samples
# columns: seconds RSS-KiB HWM-KiB load cpu-s lines processes
INIT=$(awk -v n="$LINES" '$6 >= n { print $1; exit }' "$S")
INIT_LOAD=$(awk -v n="$LINES" '$6 >= n { print $4; exit }' "$S")
INIT_CPU=$(awk -v n="$LINES" '$6 >= n { print $5; exit }' "$S")
# Steady: samples with every process there (agents end one by one).
PROCS=$(awk '$7 > v { v = $7 } END { print v + 0 }' "$S")
STEADY=$(awk -v t="${INIT:-1e9}" -v p="$PROCS" '$1 > t + 5 && $2 != "-" && $7 == p { print $2 }' "$S" | sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }')
PEAK=$(awk '$2 != "-" && $2 > v { v = $2 } END { print v }' "$S")
HWM=$(awk '$3 != "-" && $3 > v { v = $3 } END { print v }' "$S")
LOADS=$(awk '{ print $4 }' "$S" | sort -n | awk '{ a[NR] = $1 } END { printf "min %s median %s max %s", a[1], a[int((NR + 1) / 2)], a[NR] }')

# iterations per second: the report's windows from one period after the
# last VU was made (each VU's first iteration starts at a random moment of
# its first period) to the scenario's end; each VU then iterates once per
# period, spread evenly.
read -r ITERS SPAN SPAN_A SPAN_B < <(python3 - "$WORK/main.json" "$SLEEP_S" "$DURATION_S" "${INIT:-0}" "$FIRST_S" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); period, dur, init, first = (float(a) for a in sys.argv[2:6])
# The scenario's clock starts with its first window, VUs still being made.
start = d["windows"][0]["start_s"] if d["windows"] else 0
w = [x for x in d["windows"] if x["start_s"] >= max(start, init) + max(period, first) and x["end_s"] <= start + dur]
# A whole number of periods, the newest: VUs that a stall held (while VUs
# were made on a loaded machine) come back together and iterate in waves
# one period long, which a part of a period over- or under-counts.
while w and (w[-1]["end_s"] - w[0]["start_s"]) > period * 0.99 and ((w[-1]["end_s"] - w[0]["start_s"]) + 0.5) % period > 1:
    w = w[1:]
print(sum(x["ok"] + x["failed"] for x in w), sum(x["end_s"] - x["start_s"] for x in w), w[0]["start_s"] - start if w else 0, w[-1]["end_s"] - start if w else 0)
EOF
)
# CPU seconds of the throttle processes over the same span, the scenario's
# clock placed at INIT: each end interpolated between the samples around it.
CPUSPAN=$(awk -v a="$(awk -v i="${INIT:-0}" -v x="$SPAN_A" 'BEGIN { print i + x }')" -v b="$(awk -v i="${INIT:-0}" -v x="$SPAN_B" 'BEGIN { print i + x }')" -v p="$PROCS" '
	function at(x,   k) { for (k = 2; k <= n; k++) if (t[k] >= x) return c[k - 1] + (c[k] - c[k - 1]) * (x - t[k - 1]) / (t[k] - t[k - 1]); return "" }
	$5 != "-" && $7 == p { n++; t[n] = $1; c[n] = $5 }
	END { ca = at(a); cb = at(b); if (ca != "" && cb != "" && b > a) printf "%.2f", cb - ca }' "$S")
GEN=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); g = d["generator"]
s = lambda g: "%d of %d ticks; cpu %d wait %d read %d lag %d schedule %d" % (g["saturated_ticks"], g["ticks"], *(g.get("signals", {}).get(k, 0) for k in ("cpu", "wait", "read", "lag", "schedule")))
out = ("saturated" if g["saturated"] else "not saturated") + " (" + s(g) + ", max wait p99 %.1f ms, max read delay %.2f ms)" % (g.get("max_wait_ms", 0), g.get("max_read_delay_ms", 0))
rd = d.get("read_delay", {})
out += "; read delay mean %.3f ms, max %.1f ms over %d answers" % (rd.get("mean_ms", 0), rd.get("max_ms", 0), rd.get("answers", 0))
for a in d.get("agents", []):
    if a.get("watch"):
        out += "; %s: %s, peak %.2f cores, max wait p99 %.1f ms, max read delay %.2f ms" % (a["id"], s(a["watch"]), a["watch"]["peak_cpu"], a["watch"].get("max_wait_ns", 0) / 1e6, a["watch"].get("max_read_delay_ns", 0) / 1e6)
        if a["watch"].get("peak_machine_cpu"):
            out += ", machine peak %.2f cores, %d cpu-rule ticks let off by its room" % (a["watch"]["peak_machine_cpu"], a["watch"].get("machine_spared_ticks", 0))
print(out)' "$WORK/main.json")
FAILED=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["iterations"]["failed"])' "$WORK/main.json")
GC=$(awk '/^gc [0-9]+ @/ { split($5, c, "+"); print c[1] + c[3] }' "$WORK/main.gc" | sort -g | awk '{ a[NR] = $1 } END { if (NR) printf "p99 %.3f ms, max %.3f ms over %d cycles", a[int(NR * 0.99 + 0.999)], a[NR], NR; else print "no GC cycle" }')

echo
echo "machine      $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load average during the run: $LOADS"
echo "script       one GET, a check, sleep($SLEEP_S) (the first iterations spread over $FIRST_S s); constant-vus $VUS VUs for $DURATION, ungoverned, $([ "$REUSE" = 1 ] && echo "keep-alive (a connection per VU)" || echo noConnectionReuse)"
echo "processes    $([ "$AGENTS" -gt 1 ] && echo "a controller and $AGENTS local agents (--local-agents $AGENTS), nginx with $NGINX_WORKERS workers (reuseport)" || echo "one throttle process, nginx with $NGINX_WORKERS worker(s)"); open-file limit (soft hard) per process: $(awk '{ print $2 "/" $3 }' "$WORK/main.limits" | sort | uniq -c | awk '{ printf "%s%s x%d", (NR > 1 ? ", " : ""), $2, $1 }')"
echo "init         ${INIT:-never} s until all $VUS VUs were initialised, ${INIT_CPU:-?} s of CPU$([ "$AGENTS" -gt 1 ] && echo " over every process") (load $INIT_LOAD; goal < 15 s)"
awk -v s="$STEADY" -v p="$PEAK" -v h="$HWM" -v b="$BASE_KIB" -v n="$VUS" -v a="$AGENTS" 'BEGIN {
	what = a > 1 ? "summed over the controller and " a " agents, " : ""
	printf "rss/VU       steady %.1f KiB, peak %.1f KiB (RSS %s%.0f MiB steady, %.0f MiB peak, VmHWM summed %.0f MiB, the 1-VU-per-process run %.0f MiB; goal <= 64 KiB)\n", (s - b) / n, (p - b) / n, what, s / 1024, p / 1024, h / 1024, b / 1024 }'
awk -v i="$ITERS" -v s="$SPAN" -v n="$VUS" -v p="$SLEEP_S" -v f="$FAILED" 'BEGIN {
	r = s > 0 ? i / s : 0; want = n / p
	printf "iter/s       %.0f/s over %.0f s (whole periods) after the first period, %.2f%% of the implied %.0f/s (goal within 2%%); %d iterations failed\n", r, s, 100 * r / want, want, f }'
awk -v c="$CPUSPAN" -v i="$ITERS" -v a="$SPAN_A" -v b="$SPAN_B" 'BEGIN {
	if (c != "" && i > 0) printf "cpu/iter     %.0f µs of CPU per iteration in the steady state (%.2f CPU s over %d iterations, scenario %.1f–%.1f s: the iter/s span; %.3f cores)\n", 1e6 * c / i, c, i, a, b, c / (b - a)
	else print "cpu/iter     not measured (no whole period after init)" }'
if [ -s "$WORK/steady.perf" ]; then
	echo "profile      $WORK/steady.perf (perf record of the steady state; perf report -i $WORK/steady.perf --no-children --sort sym); by owner:"
	perf script -i "$WORK/steady.perf" -F comm,tid,ip,sym 2>/dev/null | bench/perfsplit.py "$(awk -v c="$CPUSPAN" -v i="$ITERS" 'BEGIN { if (c != "" && i > 0) printf "%.1f", 1e6 * c / i; else print 0 }')" | sed 's/^/             /'
fi
echo "generator    $GEN"
# The machine's cores the throttle processes used (their CPU summed): a
# local agent's watch compares its CPU with the cores Go gives it, all of
# the machine's, so N agents sharing them each look unsaturated while
# together they use every core.
awk -v t="${INIT:-0}" -v n="$(nproc)" -v p="$PROCS" '$5 != "-" && $1 >= t && $7 == p {
	k++; ts[k] = $1; cs[k] = $5
	if (k == 1) w = 1
	while (ts[k] - ts[w] > 5) w++
	if (ts[k] - ts[w] >= 4.5) { r = (cs[k] - cs[w]) / (ts[k] - ts[w]); if (r > peak) peak = r }
} END { if (k > 1 && ts[k] > ts[1]) printf "cpu          throttle used %.2f of %d cores after init (peak %.2f over 5 s; its processes summed, load above)\n", (cs[k] - cs[1]) / (ts[k] - ts[1]), n, peak }' "$S"
echo "gc pause     $GC"
# The run by spans: making the VUs, the first and second periods, the
# steady state; CPU, iterations and the TCP counters that moved in each.
python3 - "$S" "$WORK/main.net" "$WORK/main.json" "${INIT:-0}" "$SLEEP_S" "$SPAN_A" "$SPAN_B" "$PROCS" "$NET_COUNTERS" "$BACKLOG_EFF" "$SOMAXCONN" "$FIRST_S" <<'EOF'
import json, sys
sf, nf, jf = sys.argv[1:4]
init, period, sa, sb = (float(a) for a in sys.argv[4:8])
procs, names, backlog, somax = int(sys.argv[8]), sys.argv[9].split(), sys.argv[10], sys.argv[11]
def series(rows, col):
    return [(r[0], r[col]) for r in rows]
def at(pts, x):
    for (t0, c0), (t1, c1) in zip(pts, pts[1:]):
        if t0 <= x <= t1:
            return c0 + (c1 - c0) * (x - t0) / (t1 - t0) if t1 > t0 else c1
    return None
smp = [l.split() for l in open(sf)]
thr = [(float(r[0]), float(r[4])) for r in smp if r[4] != '-' and int(r[6]) == procs]
net = [[float(x) for x in l.split()] for l in open(nf)]
d = json.load(open(jf))
start = d["windows"][0]["start_s"] if d["windows"] else 0
end = net[-1][0]
first = float(sys.argv[12])
spans = [("making the VUs", net[0][0], init), ("period 1", init, init + period), ("period 2", init + period, init + 2 * period)]
if first > period:
    spans.insert(1, ("first iterations", init, init + first))
if sb > sa:
    spans.append(("steady (cpu/iter)", init + sa, init + sb))
spans.append(("whole run", net[0][0], end))
short = lambda n: n.replace("TcpExt", "").replace("Tcp", "")
print("spans        cores of CPU (throttle, nginx, the machine), iterations/s, connects/s, the longest accept queue seen (of %s) in each, and the TCP counters that moved (nstat, the whole network namespace's)" % backlog)
for name, a, b in spans:
    if b <= a or b > end + 0.5:
        continue
    b = min(b, end)
    ct = (at(thr, b) - at(thr, a)) / (b - a) if at(thr, a) is not None and at(thr, b) is not None else None
    cn = (at(series(net, 1), b) - at(series(net, 1), a)) / (b - a)
    cm = (at(series(net, 2), b) - at(series(net, 2), a)) / (b - a)
    it = sum(w["ok"] + w["failed"] for w in d["windows"] if w["start_s"] - start >= a - init - 0.01 and w["end_s"] - start <= b - init + 0.01)
    moved = []
    for i, n in enumerate(names):
        v = at(series(net, 3 + i), b) - at(series(net, 3 + i), a)
        if round(v) and n not in ("TcpActiveOpens", "TcpPassiveOpens"):
            moved.append("%s +%d" % (short(n), round(v)))
    opens = round(at(series(net, 3 + names.index("TcpActiveOpens")), b) - at(series(net, 3 + names.index("TcpActiveOpens")), a))
    q = max([r[-1] for r in net if a <= r[0] <= b] or [0])
    rates = [(w["ok"] + w["failed"]) / (w["end_s"] - w["start_s"]) for w in d["windows"] if w["start_s"] - start >= a - init - 0.01 and w["end_s"] - start <= b - init + 0.01 and w["end_s"] > w["start_s"]]
    swing = " (windows %.0f–%.0f)" % (min(rates), max(rates)) if rates else ""
    print("  %-18s %6.1f–%5.1f s  throttle %s  nginx %.2f  machine %.2f  iter/s %.0f%s  connects/s %.0f  accept queue ≤ %d%s" % (
        name, a - init, b - init, "%.2f" % ct if ct is not None else "  - ", cn, cm, it / (b - a) if name != "making the VUs" else 0, swing, opens / (b - a), q,
        ("  " + ", ".join(moved)) if moved else "  no drop, retransmit or cookie"))
tot = {n: net[-1][3 + i] - net[0][3 + i] for i, n in enumerate(names)}
if tot["TcpExtListenOverflows"] or tot["TcpExtTCPSynRetrans"] or tot["TcpExtSyncookiesSent"]:
    print("listen       %d listen-queue overflows, %d SYN retransmits, %d SYN cookies sent over the run: nginx's backlog is %s per listen socket (somaxconn %s); a dropped SYN is sent again after 1 s, 3 s, 7 s" % (
        tot["TcpExtListenOverflows"], tot["TcpExtTCPSynRetrans"], tot["TcpExtSyncookiesSent"], backlog, somax))
else:
    print("listen       no listen-queue overflow, SYN retransmit or SYN cookie over the run (nginx's backlog %s per listen socket, somaxconn %s)" % (backlog, somax))
EOF
if [ -s "$WORK/first.perf" ]; then
	FIRST_AT=$(cat "$WORK/first.at")
	# µs per VU: the CPU of the throttle processes and nginx over the
	# profile's span, over the VUs (each opens its connection and runs its
	# first iteration in the first period).
	FIRST_US=$(awk -v a="$FIRST_AT" -v n="$PERF_FIRST" -v v="$VUS" -v p="$PROCS" -v nf="$WORK/main.net" '
		function at(x, T, C, k,   i) { for (i = 2; i <= k; i++) if (T[i] >= x) return C[i - 1] + (C[i] - C[i - 1]) * (x - T[i - 1]) / (T[i] - T[i - 1]); return "" }
		FILENAME == nf { m++; nt[m] = $1; nc[m] = $2; next }
		$5 != "-" && $7 == p { k++; t[k] = $1; c[k] = $5 }
		END { x = at(a + n, t, c, k) - at(a, t, c, k) + at(a + n, nt, nc, m) - at(a, nt, nc, m); printf "%.1f", 1e6 * x / v }' "$S" "$WORK/main.net")
	echo "first        $WORK/first.perf (perf record of the scenario's first $PERF_FIRST s, throttle and nginx: $FIRST_US µs of their CPU per VU); by owner:"
	perf script -i "$WORK/first.perf" -F comm,tid,ip,sym 2>/dev/null | bench/perfsplit.py "$FIRST_US" "µs per VU" | sed 's/^/             /'
fi
echo "raw          $WORK/main.{samples,gc,json,out}"
