#!/usr/bin/env bash
# bench/gunicorn.sh — a real target that queues: gunicorn, 2 sync workers, 10 ms handler.
#
# Usage:
#   bench/gunicorn.sh start        start gunicorn in the background, print its URL
#   bench/gunicorn.sh stop         stop it
#   bench/gunicorn.sh -- CMD...    start, run CMD with $TARGET set to the URL, stop
#   bench/gunicorn.sh truth        what a closed-loop peer measures at low
#                                  concurrency: hey -c $TRUTH_CONNS -z $TRUTH_DURATION
#                                  (default 4 and 10s); prints req/s. Starts and
#                                  stops the server itself if it is not running.
#
# gunicorn (Debian's package) on 127.0.0.1:$PORT (default 18401): $WORKERS
# (default 2) sync workers, --backlog 2048, a WSGI app that sleeps $SLEEP_MS
# (default 10) ms and answers 200 "ok". Overload never fails: the listen backlog
# grows and every answer comes later. Capacity ≈ workers / (10 ms + overhead),
# about 180 req/s on a loaded 2-core machine. Installs gunicorn and hey if
# missing. Not part of make test.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PORT=${PORT:-18401}
WORKERS=${WORKERS:-2}
SLEEP_MS=${SLEEP_MS:-10}
TRUTH_CONNS=${TRUTH_CONNS:-4}
TRUTH_DURATION=${TRUTH_DURATION:-10s}
STATE=${STATE:-/tmp/throttle-bench-gunicorn-$PORT}

target_url() { echo "http://127.0.0.1:$PORT"; }

target_start() {
	ensure_pkgs gunicorn:gunicorn curl:curl
	mkdir -p "$STATE"
	cat >"$STATE/app.py" <<PY
import time

BODY = b"ok\n"


def app(environ, start_response):
    time.sleep($SLEEP_MS / 1000.0)
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))])
    return [BODY]
PY
	gunicorn --daemon --pid "$STATE/pid" --chdir "$STATE" \
		--bind "127.0.0.1:$PORT" --workers "$WORKERS" --worker-class sync \
		--backlog 2048 --error-logfile "$STATE/error.log" app:app
	wait_url "$(target_url)/"
}

target_stop() {
	stop_pidfile "$STATE/pid"
	rm -rf "$STATE"
}

truth() {
	ensure_pkgs hey:hey
	local out rps
	out=$(hey -c "$TRUTH_CONNS" -z "$TRUTH_DURATION" "$(target_url)/")
	rps=$(awk '/Requests\/sec:/ {printf "%.1f", $2}' <<<"$out")
	echo "truth: $rps req/s (hey -c $TRUTH_CONNS -z $TRUTH_DURATION, $WORKERS sync workers, ${SLEEP_MS} ms handler)"
	grep -E '^\s+\[[0-9]+\]' <<<"$out" | sed 's/^\s*/status /' >&2 || true
}

extra_command() {
	[ "$1" = truth ] || return 127
	if curl -fsS -o /dev/null --max-time 2 "$(target_url)/" 2>/dev/null; then
		truth
	else
		trap 'target_stop >/dev/null 2>&1' EXIT INT TERM
		target_start
		truth
	fi
}

target_main "$@"
