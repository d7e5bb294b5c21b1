#!/usr/bin/env bash
# bench/outage.sh — #24's outage experiment against a real nginx.
#
# Usage: bench/outage.sh [THROTTLE]   (default: ./throttle; build it first)
#
# Starts bench/nginx-limit.sh (sheds above RATE=300 r/s, port PORT=18403),
# runs `throttle run --rate 2000 --duration 70s --out r.json --timeline t.csv
# $TARGET/limited`, stops nginx with kill -QUIT 30 s in and starts it again
# 10 s later, then stops it. The report, timeline and movement lines land in
# OUT (default /tmp/throttle-outage): the offer before the stop, the outage
# interval, the offer of the first windows after it and last_bad are read off
# the timeline (t.csv) and the movement lines (stderr.txt). Not part of make test.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
throttle=$(realpath "${1:-./throttle}")
export PORT=${PORT:-18403} RATE=${RATE:-300}
STATE=/tmp/throttle-bench-nginx-limit-$PORT
OUT=${OUT:-/tmp/throttle-outage}
mkdir -p "$OUT"
target=$("$here/nginx-limit.sh" start)
trap '"$here/nginx-limit.sh" stop >/dev/null 2>&1 || true' EXIT
"$throttle" run --rate 2000 --duration 70s --out "$OUT/r.json" --timeline "$OUT/t.csv" "$target/limited" \
	>"$OUT/stdout.txt" 2>"$OUT/stderr.txt" &
run=$!
sleep 30
kill -QUIT "$(cat "$STATE/pid")"
sleep 10
nginx -e "$STATE/error.log" -p "$STATE" -c "$STATE/nginx.conf"
wait "$run"
cat "$OUT/stdout.txt"
grep -E 'outage|signal=(back-off|probe|dead-band)' "$OUT/stderr.txt" | sed -n '1,40p'
