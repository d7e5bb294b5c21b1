#!/usr/bin/env bash
# k6-html-reporter.sh: does a third-party tool that reads k6's summary read
# throttle's? It runs a k6 script (40 iterations, one check, one threshold)
# against the built-in target with `throttle demo --script`, hands the data
# object its handleSummary received to the k6-html-reporter npm package
# (installed into a temporary directory), and checks the rendered page shows
# the counts the script produced. Needs node and npm; not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "k6-html-reporter: npm is required" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/throttle-k6rep.XXXXXX")
trap 'rm -rf "$work"' EXIT

go build -o "$work/throttle" ./cmd/throttle
(cd "$work" && npm install --silent --no-audit --no-fund k6-html-reporter@1.0.5 >/dev/null)

cat >"$work/s.js" <<'JS'
import http from 'k6/http';
import { check, group } from 'k6';
export const options = {
  scenarios: { load: { executor: 'shared-iterations', vus: 4, iterations: 40 } },
  thresholds: { http_req_duration: ['p(95)<2000'] },
};
export default function () {
  group('front page', function () {
    const res = http.get(`${__ENV.BASE}/`);
    check(res, { 'status is 200': (r) => r.status === 200 });
  });
}
export function handleSummary(data) { return { 'summary.json': JSON.stringify(data) }; }
JS
(cd "$work" && ./throttle demo --quiet --script s.js 2>/dev/null)
(cd "$work" && node -e "require('k6-html-reporter').generateSummaryReport({jsonFile: 'summary.json', output: 'out'})" >/dev/null)

# The page as text, one space between words.
text=$(sed -e 's/<[^>]*>/ /g' "$work/out/report.html" | tr -s ' \n\t' '   ')
fail=0
for want in 'All thresholds were met' 'front page ⇀ status is 200 40 0' 'http_reqs 40 ' 'iterations 40 ' 'http_req_failed 0 0 40'; do
	if grep -qF -- "$want" <<<"$text"; then
		echo "ok   report shows: $want"
	else
		echo "FAIL report lacks: $want"
		fail=1
	fi
done
[ $fail = 0 ] && echo "k6-html-reporter: rendered throttle's summary as k6's" || exit 1
