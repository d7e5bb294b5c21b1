#!/usr/bin/env bash
# stress.sh: does the whole suite pass every time on a loaded machine?
#
# It clones the repository's committed HEAD twice into fresh temporary
# directories and runs `make test` in both at once, two rounds in a row: four
# runs, each competing with the other for the CPU, as CI may run the suite
# twice at once on a 2-core machine. It prints each run's result and
# "N/4 passed", shows the tail of every failing run's log, and exits non-zero
# unless all four passed.
#
# Only what is committed is tested: uncommitted changes get a warning.
# Environment: ROUNDS (default 2), GO (default go), KEEP=1 keeps the clones.
set -u

ROUNDS=${ROUNDS:-2}
GO=${GO:-go}
root=$(git rev-parse --show-toplevel) || { echo "stress: not in a git repository" >&2; exit 2; }
head=$(git -C "$root" rev-parse --short HEAD) || exit 2
if [ -n "$(git -C "$root" status --porcelain)" ]; then
	echo "stress: WARNING: the working tree has uncommitted changes; they are NOT tested (only HEAD $head is)" >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/throttle-stress.XXXXXX") || exit 2
logs="$work/logs"
mkdir -p "$logs"
cleanup() {
	if [ "${KEEP:-0}" = 1 ]; then
		echo "stress: clones kept in $work"
	else
		rm -rf "$work/a" "$work/b"
	fi
}
trap cleanup EXIT
trap 'echo "stress: interrupted" >&2; kill 0; exit 130' INT TERM

for c in a b; do
	git clone --quiet --no-hardlinks "$root" "$work/$c" || { echo "stress: cloning $root failed" >&2; exit 2; }
	git -C "$work/$c" checkout --quiet --detach "$head" || exit 2
done

echo "stress: HEAD $head, $ROUNDS rounds of 2 concurrent 'make test' runs; logs in $logs"
passed=0 total=0 failed_logs=()
for round in $(seq 1 "$ROUNDS"); do
	declare -A pid=()
	begin=$(date +%s)
	for c in a b; do
		log="$logs/round$round-$c.log"
		(cd "$work/$c" && exec make test GO="$GO") >"$log" 2>&1 &
		pid[$c]=$!
	done
	for c in a b; do
		log="$logs/round$round-$c.log"
		total=$((total + 1))
		if wait "${pid[$c]}"; then
			passed=$((passed + 1))
			echo "round $round clone $c: PASS ($(($(date +%s) - begin)) s)"
		else
			echo "round $round clone $c: FAIL ($(($(date +%s) - begin)) s, $log)"
			failed_logs+=("$log")
		fi
	done
	unset pid
done

for log in "${failed_logs[@]}"; do
	echo
	echo "=== $log (failures, then the last 40 lines)"
	grep -E -- '^(--- FAIL|FAIL|panic:)|_test\.go:[0-9]+:' "$log" | head -40
	echo "..."
	tail -n 40 "$log"
done
echo
echo "stress: $passed/$total passed (HEAD $head)"
[ "$passed" -eq "$total" ]
