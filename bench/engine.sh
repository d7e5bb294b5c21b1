#!/usr/bin/env bash
# bench/engine.sh — engine speed beside vegeta, hey and wrk (make bench-engine).
#
# One loopback server (nginx from Debian's packages serving a small static
# file, or a Go server if nginx is missing — the table says which), then each
# client for DURATION at the same connection count, alternating A B C D A B C D
# so drift on a shared machine hits every client alike. Prints median req/s,
# ratios to vegeta and wrk, and client CPU time per request.
#
# Knobs (environment): CONNS (default 50), DURATION (10s), ROUNDS (3),
# PORT (18080). Traffic goes to 127.0.0.1 only and every run is bounded.
set -euo pipefail
cd "$(dirname "$0")/.."

CONNS=${CONNS:-50}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18080}
URL="http://127.0.0.1:${PORT}/index.html"
WORK=$(mktemp -d)
chmod 755 "$WORK" # nginx workers run as an unprivileged user and must read the file
trap 'kill $(jobs -p) 2>/dev/null || true; [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; rm -rf "$WORK"' EXIT

need_apt=()
command -v wrk >/dev/null || need_apt+=(wrk)
command -v hey >/dev/null || need_apt+=(hey)
command -v nginx >/dev/null || need_apt+=(nginx-light)
[ -x /usr/bin/time ] || need_apt+=(time)
if [ ${#need_apt[@]} -gt 0 ]; then
	echo "installing ${need_apt[*]} from Debian's packages" >&2
	if [ "$(id -u)" = 0 ]; then
		apt-get update -qq >/dev/null && apt-get install -y -qq "${need_apt[@]}" >/dev/null || true
	else
		sudo apt-get update -qq >/dev/null && sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null || true
	fi
fi
for t in wrk hey /usr/bin/time; do command -v "$t" >/dev/null || { echo "bench-engine: $t is missing and could not be installed" >&2; exit 1; }; done

echo "building throttle and vegeta v12.13.0 (into a temporary GOBIN)" >&2
go build -o "$WORK/throttle" ./cmd/throttle
GOBIN="$WORK/bin" go install github.com/tsenart/vegeta/v12@v12.13.0
VEGETA="$WORK/bin/vegeta"

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

# run NAME CMD... : runs one client under /usr/bin/time, prints "req/s cpu_s".
run() {
	local name=$1; shift
	local out="$WORK/$name.out"
	/usr/bin/time -f '%U %S' -o "$WORK/$name.time" "$@" >"$out" 2>"$WORK/$name.err" || { echo "bench-engine: $name failed:" >&2; cat "$WORK/$name.err" >&2; exit 1; }
	local rps
	case $name in
	wrk | hey) rps=$(awk '/Requests\/sec:/ {print $2}' "$out") ;;
	vegeta) rps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rate"])' "$out") ;;
	throttle*) rps=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["attempts"]["total"]/r["run"]["duration_s"])' "$WORK/$name.json") ;;
	esac
	local cpu
	cpu=$(awk '{print $1+$2}' "$WORK/$name.time")
	echo "$rps $cpu"
}

clients=(throttle vegeta hey wrk throttle-governed)
declare -A results
for r in $(seq "$ROUNDS"); do
	for c in "${clients[@]}"; do
		case $c in
		throttle) line=$(run throttle "$WORK/throttle" run --no-governor --concurrency "$CONNS" --duration "$DURATION" --quiet --out "$WORK/throttle.json" "$URL") ;;
		throttle-governed) line=$(run throttle-governed "$WORK/throttle" run --concurrency "$CONNS" --start "$CONNS" --duration "$DURATION" --quiet --out "$WORK/throttle-governed.json" "$URL") ;;
		vegeta) line=$(echo "GET $URL" | run vegeta sh -c "'$VEGETA' attack -rate=0 -workers=$CONNS -max-workers=$CONNS -duration=$DURATION | '$VEGETA' report -type=json") ;;
		hey) line=$(run hey hey -z "$DURATION" -c "$CONNS" "$URL") ;;
		wrk) line=$(run wrk wrk -t2 -c "$CONNS" -d "$DURATION" "$URL") ;;
		esac
		results[$c]+="$line;"
		echo "round $r $c: $line (req/s cpu_s)" >&2
	done
done

python3 - "$secs" "$CONNS" "$SERVER" "${clients[@]}" <<PY
import statistics, sys
secs, conns, server = float(sys.argv[1]), sys.argv[2], sys.argv[3]
clients = sys.argv[4:]
raw = {$(for c in "${clients[@]}"; do printf '"%s": "%s", ' "$c" "${results[$c]}"; done)}
med = {}
cpu = {}
for c in clients:
    rows = [tuple(map(float, x.split())) for x in raw[c].split(";") if x.strip()]
    med[c] = statistics.median(r[0] for r in rows)
    cpu[c] = statistics.median(r[1] / (r[0] * secs) * 1e6 for r in rows)
names = {"throttle": "throttle run --no-governor", "throttle-governed": "throttle run (governed, start = ceiling)",
         "vegeta": "vegeta attack -rate=0", "hey": "hey", "wrk": "wrk -t2"}
print(f"Server: {server}; {conns} connections; {secs:g} s per run; median of {len(raw[clients[0]].split(';'))-1} alternating rounds.\n")
print("| client | req/s (median) | vs vegeta | vs wrk | client CPU µs/request |")
print("| --- | ---: | ---: | ---: | ---: |")
for c in clients:
    print(f"| {names[c]} | {med[c]:,.0f} | {med[c]/med['vegeta']:.2f}× | {med[c]/med['wrk']:.2f}× | {cpu[c]:.1f} |")
print(f"\nGovernor + gate overhead at the engine level: governed / fixed = {med['throttle-governed']/med['throttle']:.3f}")
PY
