# bench/lib.sh — what the real-target scripts share (sourced, not run).
#
# ensure_pkgs CMD:PKG...   installs, from Debian's packages, the PKG of each CMD
#                          that is not on PATH (apt-get update once, then install).
# wait_url URL [TRIES]     waits until URL answers (0.1 s apart, default 100 tries).
# target_main "$@"         the start|stop|-- CMD... interface; the sourcing script
#                          defines target_start (prints nothing, leaves the server
#                          running, records it under $STATE), target_stop and
#                          target_url, and may define extra_command NAME ARGS...
#                          (returns 127 for a name it does not know).
#
# Everything binds 127.0.0.1 only; the state of a running server lives in
# $STATE (a directory under /tmp named after the script and its port).

ensure_pkgs() {
	local need=() pair
	for pair in "$@"; do
		command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
	done
	[ ${#need[@]} -eq 0 ] && return 0
	echo "installing ${need[*]} from Debian's packages" >&2
	local sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo)
	"${sudo[@]}" apt-get update -qq >/dev/null && "${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
	for pair in "$@"; do
		command -v "${pair%%:*}" >/dev/null 2>&1 || { echo "${0##*/}: ${pair%%:*} is missing and could not be installed" >&2; return 1; }
	done
}

wait_url() {
	local url=$1 tries=${2:-100} i
	for ((i = 0; i < tries; i++)); do
		curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "${0##*/}: $url did not come up (logs in $STATE)" >&2
	return 1
}

usage() {
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

target_main() {
	case ${1:-} in
	start)
		if [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null; then
			echo "${0##*/}: already running (pid $(cat "$STATE/pid"))" >&2
			target_url
			return 0
		fi
		# A start that fails half-way leaves nothing behind.
		trap 'target_stop >/dev/null 2>&1' EXIT
		target_start
		trap - EXIT
		target_url
		;;
	stop)
		target_stop
		;;
	--)
		shift
		[ $# -gt 0 ] || usage
		trap 'target_stop >/dev/null 2>&1' EXIT INT TERM
		target_start
		TARGET=$(target_url)
		echo "${0##*/}: $TARGET" >&2
		TARGET=$TARGET "$@"
		;;
	*)
		if declare -F extra_command >/dev/null; then
			local rc=0
			extra_command "$@" || rc=$?
			[ $rc -eq 127 ] || return $rc
		fi
		usage
		;;
	esac
}

# stop_pidfile FILE: ends the process whose pid FILE holds and waits for it
# (at most 10 s) so that the port is free when stop returns.
stop_pidfile() {
	local f=$1 pid i
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	kill "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
}

# tree_pids PID            PID and its direct children (a controller and the
#                          agents --local-agents started), one a line.
tree_pids() {
	echo "$1"
	pgrep -P "$1" 2>/dev/null || true
}

# tree_sample PID          one sample summed over tree_pids PID:
#                          "RSS-KiB HWM-KiB CPU-s processes" (VmRSS, VmHWM and
#                          user + system CPU of each process still there;
#                          "- - - 0" when none is).
tree_sample() {
	local hz p
	hz=$(getconf CLK_TCK)
	for p in $(tree_pids "$1"); do
		cat "/proc/$p/status" "/proc/$p/stat" 2>/dev/null | awk -v hz="$hz" '
			$1 == "VmRSS:" { r = $2 } $1 == "VmHWM:" { h = $2 }
			$2 ~ /^\(/ && NF > 40 { c = ($14 + $15) / hz }
			END { if (r != "" && c != "") printf "%s %s %.2f\n", r, h, c }'
	done | awk 'NF == 3 { r += $1; h += $2; c += $3; n++ } END { if (n) printf "%d %d %.2f %d\n", r, h, c, n; else print "- - - 0" }'
}
