#!/usr/bin/env bash
# bench/engine.sh — engine speed beside bombardier, wrk, hey and vegeta
# (make bench-engine), and the generator's self-watch.
#
# One loopback server (nginx from Debian's packages, one worker, a small
# static file; a Go server if nginx is missing — the table says which),
# then each client for DURATION at the same connection count, alternating
# rounds (A B C D E, then E D C B A, ...) so drift on a shared machine hits
# every client alike. Prints each client's median req/s, client CPU time per
# request and peak RSS, and throttle's ratio to each: the median over the
# rounds of the ratio within a round (throttle and bombardier run next to
# each other, so a round's ratio shares that moment's noise), beside the
# ratio of the medians. Then two open-loop runs show the generator's
# watch of itself (printed, not asserted): at SUSTAINED_RATE it must not
# say "generator saturated"; at --rate 100000 it should where that rate is
# beyond what the machine can generate. Where it is not (a machine that
# reached 94 900/s here, its drops the one nginx worker's: the loops were
# not busy), drops without the saturated line are the target's, as the
# watch's drop rule means them.
#
# throttle runs twice per round: on its default transport for this run
# (the event loop: a closed loop on one loopback address) and with
# THROTTLE_TRANSPORT=fasthttp, the transport every URL run had before
# (issue #26); the table names each row's transport. A third throttle row
# runs a one-request k6 script (`http.get(URL)`, CONNS VUs for DURATION,
# ungoverned) on the same target, so that a script iteration's CPU is
# read against the URL run's in the same rounds (issue #26 part 2).
#
# Knobs (environment): CONNS (default 50), DURATION (5s), ROUNDS (3),
# PORT (18080), SUSTAINED_RATE (1000). Traffic goes to 127.0.0.1 only and
# every run is bounded.
set -euo pipefail
cd "$(dirname "$0")/.."

CONNS=${CONNS:-50}
DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18080}
SUSTAINED_RATE=${SUSTAINED_RATE:-1000}
URL="http://127.0.0.1:${PORT}/index.html"
WORK=$(mktemp -d)
chmod 755 "$WORK" # nginx workers run as an unprivileged user and must read the file
trap 'kill $(jobs -p) 2>/dev/null || true; [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; rm -rf "$WORK"' EXIT

need_apt=()
command -v wrk >/dev/null || need_apt+=(wrk)
command -v hey >/dev/null || need_apt+=(hey)
command -v nginx >/dev/null || need_apt+=(nginx-light)
command -v curl >/dev/null || need_apt+=(curl)
[ -x /usr/bin/time ] || need_apt+=(time)
if [ ${#need_apt[@]} -gt 0 ]; then
	echo "installing ${need_apt[*]} from Debian's packages" >&2
	if [ "$(id -u)" = 0 ]; then
		apt-get update -qq >/dev/null && apt-get install -y -qq "${need_apt[@]}" >/dev/null || true
	else
		sudo apt-get update -qq >/dev/null && sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null || true
	fi
fi
for t in wrk hey curl /usr/bin/time; do command -v "$t" >/dev/null || { echo "bench-engine: $t is missing and could not be installed" >&2; exit 1; }; done

echo "building throttle; installing vegeta v12.13.0 and bombardier v1.2.6 into a temporary GOBIN" >&2
go build -o "$WORK/throttle" ./cmd/throttle
GOBIN="$WORK/bin" go install github.com/tsenart/vegeta/v12@v12.13.0
GOBIN="$WORK/bin" go install github.com/codesenberg/bombardier@v1.2.6
VEGETA="$WORK/bin/vegeta"
BOMBARDIER="$WORK/bin/bombardier"

# The script row's k6 script: one GET per iteration, no check, no sleep.
cat >"$WORK/one.js" <<JS
import http from 'k6/http';
export const options = { vus: ${CONNS}, duration: '${DURATION}' };
export default function () { http.get(__ENV.URL); }
JS

# The server: one nginx worker so the clients keep the other core.
printf 'hello from nginx\n' >"$WORK/index.html"
if command -v nginx >/dev/null; then
	SERVER="nginx $(nginx -v 2>&1 | sed 's/.*nginx\///'), 1 worker, small static file"
	cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx.err warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  server {
    listen 127.0.0.1:${PORT};
    root $WORK;
  }
}
CONF
	nginx -c "$WORK/nginx.conf" &
else
	SERVER="Go server (throttle target, shed model, capacity far above the clients) — nginx was not available"
	"$WORK/throttle" target --listen "127.0.0.1:${PORT}" --capacity 10000000 --latency 0s &
	URL="http://127.0.0.1:${PORT}/"
fi
for _ in $(seq 50); do curl -fsS -o /dev/null "$URL" 2>/dev/null && break; sleep 0.1; done
curl -fsS -o /dev/null "$URL" || { echo "bench-engine: server did not come up" >&2; exit 1; }

secs=${DURATION%s}

# run NAME CMD... : runs one client under /usr/bin/time, prints "req/s cpu_s rss_kb".
run() {
	local name=$1; shift
	local out="$WORK/$name.out"
	/usr/bin/time -f '%U %S %M' -o "$WORK/$name.time" "$@" >"$out" 2>"$WORK/$name.err" || { echo "bench-engine: $name failed:" >&2; cat "$WORK/$name.err" >&2; exit 1; }
	local rps
	case $name in
	wrk | hey) rps=$(awk '/Requests\/sec:/ {print $2}' "$out") ;;
	vegeta) rps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rate"])' "$out") ;;
	bombardier) rps=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["result"]; print(sum(r[k] for k in ("req1xx","req2xx","req3xx","req4xx","req5xx","others"))/r["timeTakenSeconds"])' "$out") ;;
	throttle*) rps=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["attempts"]["total"]/r["run"]["duration_s"])' "$WORK/$name.json") ;;
	esac
	# The time file's last line: a client that exits on a signal gets a
	# "Command terminated" line before it.
	local cpu rss
	read -r u s rss < <(tail -n 1 "$WORK/$name.time")
	cpu=$(awk -v u="$u" -v s="$s" 'BEGIN {print u+s}')
	echo "$rps $cpu $rss"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
clients=(throttle throttle-fasthttp bombardier wrk hey vegeta throttle-governed throttle-script)
declare -A results
for r in $(seq "$ROUNDS"); do
	order=("${clients[@]}")
	if [ $((r % 2)) = 0 ]; then
		order=()
		for ((i = ${#clients[@]} - 1; i >= 0; i--)); do order+=("${clients[$i]}"); done
	fi
	for c in "${order[@]}"; do
		case $c in
		throttle) line=$(run throttle "$WORK/throttle" run --no-governor --concurrency "$CONNS" --duration "$DURATION" --quiet --out "$WORK/throttle.json" "$URL") ;;
		throttle-fasthttp) line=$(run throttle-fasthttp env THROTTLE_TRANSPORT=fasthttp "$WORK/throttle" run --no-governor --concurrency "$CONNS" --duration "$DURATION" --quiet --out "$WORK/throttle-fasthttp.json" "$URL") ;;
		throttle-governed) line=$(run throttle-governed "$WORK/throttle" run --concurrency "$CONNS" --start "$CONNS" --duration "$DURATION" --quiet --out "$WORK/throttle-governed.json" "$URL") ;;
		throttle-script) line=$(run throttle-script "$WORK/throttle" run --quiet -e URL="$URL" --out "$WORK/throttle-script.json" "$WORK/one.js") ;;
		bombardier) line=$(run bombardier "$BOMBARDIER" -c "$CONNS" -d "$DURATION" -p r -o json "$URL") ;;
		vegeta) line=$(echo "GET $URL" | run vegeta sh -c "'$VEGETA' attack -rate=0 -workers=$CONNS -max-workers=$CONNS -duration=$DURATION | '$VEGETA' report -type=json") ;;
		hey) line=$(run hey hey -z "$DURATION" -c "$CONNS" "$URL") ;;
		wrk) line=$(run wrk wrk -t2 -c "$CONNS" -d "$DURATION" "$URL") ;;
		esac
		results[$c]+="$line;"
		echo "round $r $c: $line (req/s cpu_s rss_kb)" >&2
	done
done

# The generator's watch of itself at 100000/s and at a rate the machine
# sustains (the header says how to read them).
watch() {
	local rate=$1
	"$WORK/throttle" run --no-governor --rate "$rate" --duration "$DURATION" --quiet --out "$WORK/rate-$rate.json" "$URL" >"$WORK/rate-$rate.txt" 2>&1 || { cat "$WORK/rate-$rate.txt" >&2; exit 1; }
	python3 - "$rate" "$WORK/rate-$rate.json" "$WORK/rate-$rate.txt" <<'PY'
import json, sys
rate, js, txt = sys.argv[1], json.load(open(sys.argv[2])), open(sys.argv[3]).read()
g = js["generator"]
line = next((l.strip() for l in txt.splitlines() if l.startswith("generator")), "(no generator line)")
achieved = js["attempts"]["total"] / js["run"]["duration_s"]
print(f"--rate {rate}: achieved {achieved:,.0f}/s, dropped {js['dropped_arrivals']}, saturated {g['saturated']} "
      f"({g['saturated_ticks']} of {g['ticks']} ticks; cpu {g['signals']['cpu']}, lag {g['signals']['lag']}, schedule {g['signals']['schedule']}, drop {g['signals'].get('drop', 0)}); report: {line}")
PY
}
WATCH_HI=$(watch 100000)
WATCH_LO=$(watch "$SUSTAINED_RATE")
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

python3 - "$secs" "$CONNS" "$SERVER" "${clients[@]}" <<PY
import statistics, sys
secs, conns, server = float(sys.argv[1]), sys.argv[2], sys.argv[3]
clients = sys.argv[4:]
raw = {$(for c in "${clients[@]}"; do printf '"%s": "%s", ' "$c" "${results[$c]}"; done)}
med, cpu, rss = {}, {}, {}
for c in clients:
    rows = [tuple(map(float, x.split())) for x in raw[c].split(";") if x.strip()]
    med[c] = statistics.median(r[0] for r in rows)
    cpu[c] = statistics.median(r[1] / (r[0] * secs) * 1e6 for r in rows)
    rss[c] = statistics.median(r[2] for r in rows) / 1024
names = {"throttle": "throttle run --no-governor (evloop)", "throttle-fasthttp": "throttle run --no-governor (fasthttp)",
         "throttle-governed": "throttle run (governed, start = ceiling; evloop)",
         "throttle-script": "throttle run one.js (k6 script: http.get per iteration; raw)",
         "bombardier": "bombardier v1.2.6", "vegeta": "vegeta attack -rate=0", "hey": "hey", "wrk": "wrk -t2"}
rounds = len([x for x in raw[clients[0]].split(";") if x.strip()])
print(f"Server: {server}; {conns} connections; {secs:g} s per run; median of {rounds} alternating rounds; "
      f"machine: {__import__('os').cpu_count()} CPUs, load average $LOAD_BEFORE before, $LOAD_AFTER after.\n")
rows = {c: [tuple(map(float, x.split())) for x in raw[c].split(";") if x.strip()] for c in clients}
t = "throttle"
def paired(c):
    # Round by round: throttle's req/s and CPU per request over the client's.
    rps = statistics.median(a[0] / b[0] for a, b in zip(rows[t], rows[c]))
    cpr = statistics.median((a[1] / a[0]) / (b[1] / b[0]) for a, b in zip(rows[t], rows[c]))
    return rps, cpr
print("| client | req/s (median) | client CPU µs/request | peak RSS MB | throttle req/s ÷ client's | throttle CPU/request ÷ client's |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for c in clients:
    prps, pcpu = paired(c)
    print(f"| {names[c]} | {med[c]:,.0f} | {cpu[c]:.1f} | {rss[c]:.0f} | {prps:.2f}× ({med[t]/med[c]:.2f}×) | {pcpu:.2f}× ({cpu[t]/cpu[c]:.2f}×) |")
print("\nRatios: the median of the rounds' ratios, then (in brackets) the ratio of the medians.")
print(f"Governor + gate overhead at the engine level: governed / fixed = {med['throttle-governed']/med['throttle']:.3f}")
prps, pcpu = paired("bombardier")
ok_rps = prps >= 0.9
ok_cpu = pcpu <= 1.2
print(f"Target vs bombardier: req/s ≥ 0.9× {'met' if ok_rps else 'NOT met'} ({prps:.2f}×), "
      f"CPU/request ≤ 1.2× {'met' if ok_cpu else 'NOT met'} ({pcpu:.2f}×)")
prps, pcpu = paired("wrk")
print(f"Target vs wrk -t2 (#26): req/s ≥ 0.95× {'met' if prps >= 0.95 else 'NOT met'} ({prps:.2f}×), "
      f"CPU/request ≤ 1.1× {'met' if pcpu <= 1.1 else 'NOT met'} ({pcpu:.2f}×)")
rps, cpr = paired("throttle-script")
print(f"A script iteration vs the URL run's request (#26 part 2): CPU/request {1/cpr:.2f}× "
      f"({cpu['throttle-script']/cpu[t]:.2f}× by the medians), goal ≤ 1.2× {'met' if 1/cpr <= 1.2 else 'NOT met'}; req/s {1/rps:.2f}×")
print()
print("""$WATCH_HI""")
print("""$WATCH_LO""")
PY
