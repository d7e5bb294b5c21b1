#!/usr/bin/env bash
# bench/nginx-limit.sh — the governor's cadence against a real shedding
# target (issue 11): nginx limit_req at 400 r/s on loopback, one worker,
# then `throttle run` with the default window and tick, then
# bench/cadence's figures from the JSON report.
#
#   bash bench/nginx-limit.sh                      # defaults, 100 s
#   DURATION=60s EXTRA="--early-breach=false" bash bench/nginx-limit.sh
#
# Knobs (environment): DURATION (100s), PORT (18081), EXTRA (more flags for
# throttle run), OUT (where to keep the report; default a temporary file).
# Traffic goes to 127.0.0.1 only and the run is bounded by DURATION. Not part
# of `make test`: it needs nginx, which it installs from Debian's packages if
# missing.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-100s}
PORT=${PORT:-18081}
EXTRA=${EXTRA:-}
WORK=$(mktemp -d)
chmod 755 "$WORK" # nginx workers run as an unprivileged user and must read the file
printf 'ok\n' >"$WORK/ok.txt"
OUT=${OUT:-$WORK/r.json}
trap '[ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; rm -rf "$WORK"' EXIT

if ! command -v nginx >/dev/null; then
	echo "installing nginx-light from Debian's packages" >&2
	if [ "$(id -u)" = 0 ]; then apt-get update -qq >/dev/null && apt-get install -y -qq nginx-light >/dev/null
	else sudo apt-get update -qq >/dev/null && sudo apt-get install -y -qq nginx-light >/dev/null; fi
fi

cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $WORK/nginx.pid;
error_log $WORK/nginx.err warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  limit_req_zone \$binary_remote_addr zone=cap:1m rate=400r/s;
  server {
    listen 127.0.0.1:${PORT};
    # A static file, not "return": return answers in the rewrite phase,
    # before limit_req could refuse anything.
    location = /limited {
      limit_req zone=cap burst=20 nodelay;
      limit_req_status 503;
      default_type text/plain;
      alias $WORK/ok.txt;
    }
  }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK"
for _ in $(seq 50); do [ -f "$WORK/nginx.pid" ] && break; sleep 0.1; done

go build -o "$WORK/throttle" ./cmd/throttle
echo "throttle run --url http://127.0.0.1:${PORT}/limited --rate 20000 --floor 10 --duration ${DURATION} --out r.json ${EXTRA}" >&2
# shellcheck disable=SC2086 # EXTRA is a list of flags
"$WORK/throttle" run --url "http://127.0.0.1:${PORT}/limited" --rate 20000 --floor 10 --duration "$DURATION" --out "$OUT" --quiet $EXTRA
echo
go run ./bench/cadence "$OUT"
