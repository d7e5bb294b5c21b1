#!/usr/bin/env bash
# bench/soak.sh — does a long run stay flat? Ten minutes of one governed URL
# phase at SOAK_RATE (3000) attempts/s against a loopback nginx
# (bench/nginx-limit.sh, its unlimited "/"), with 1 s windows (600 of them,
# every one settled at the ceiling, so each keeps its latencies until the
# report), through a session writing its report and streamed timeline as
# `throttle run` does, sampling the process's resident memory, heap and
# goroutines every 10 s. Fails when resident memory grew by more than 10 %
# after the two-minute warm-up.
#
# Usage: bench/soak.sh                         (DURATION=10m SOAK_RATE=3000 PORT=18402)
#        DURATION=3m WARMUP=1m bench/soak.sh   (a shorter look)
#        MAX_VUS=300 PROFILE=/tmp/heap.pprof bench/soak.sh
#          (a worker bound other than the engine's 1000; a heap profile
#          halfway through, for `go tool pprof`)
# Not part of make test. Loopback only; nginx is stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
export PORT=${PORT:-18402}
export STATE=${STATE:-/tmp/throttle-soak-nginx-$PORT}
DURATION=${DURATION:-10m}
WARMUP=${WARMUP:-2m}
SOAK_RATE=${SOAK_RATE:-3000}
# 0: the engine's default bound (1000). The open loop's idle workers retire
# (internal/phase/pool.go), so a latency stall's workers no longer stay.
MAX_VUS=${MAX_VUS:-0}
PROFILE=${PROFILE:-}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/soak" ./bench/soak
bench/nginx-limit.sh -- sh -c "'$bin/soak' -url \$TARGET/ -rate $SOAK_RATE -start $SOAK_RATE -window 1s -max-vus $MAX_VUS -duration $DURATION -warmup $WARMUP${PROFILE:+ -midprofile $PROFILE}"
