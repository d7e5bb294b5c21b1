#!/usr/bin/env bash
# k6-api-exports.sh: lists every name a k6 script can import or use from
# @types/k6 (the MIT-licensed definitions of k6's JavaScript API), outside
# k6/browser, into docs/k6-api-exports.txt, one "module name" a line:
# each module's exported functions, classes, constants, enums and
# namespaces (abstract classes are types of objects scripts receive, not
# names they import, and are left out), its default export when it has
# nothing else, and the globals (module "global"). The coverage test
# (internal/script, TestK6APICoverage) reads the list and writes
# docs/k6-api.md from what throttle provides.
#
# Usage: scripts/k6-api-exports.sh [version]   (needs npm; default: latest)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent "@types/k6@${1:-latest}" >/dev/null
tar xzf types-k6-*.tgz
version=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' k6/package.json | head -1)
cd k6
{
  echo "# @types/k6 $version: module name (scripts/k6-api-exports.sh)"
  for f in $(find . -name '*.d.ts' ! -path './browser/*' ! -name global.d.ts | sort); do
    m=$(dirname "$f" | sed 's|^\.$|k6|; s|^\./|k6/|')
    names=$(grep -o '^export \(declare \)\?\(function\|class\|const\|let\|var\|enum\|namespace\) [A-Za-z_$][A-Za-z0-9_$]*' "$f" |
      awk '{print $NF}' | sort -u || true)
    if [ -z "$names" ] && grep -q '^export default' "$f"; then
      names=default
    fi
    for n in $names; do echo "$m $n"; done
  done
  grep -o '^    \(function\|const\|let\|var\) [A-Za-z_$][A-Za-z0-9_$]*' global.d.ts | awk '{print "global", $2}' | sort -u
} >"$root/docs/k6-api-exports.txt"
echo "wrote docs/k6-api-exports.txt: $(grep -vc '^#' "$root/docs/k6-api-exports.txt") names from @types/k6 $version"
