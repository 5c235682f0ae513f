#!/usr/bin/env bash
# test_config_reference.sh: docs/config.md lists every key of the services
# whose tables it holds by hand (bisector, attributor, baseliner, planner, canary), exactly as the
# service prints it with --config-reference, and no key the service lacks.
# $1: the perfwatch binary (the services are found in the build tree beside it).
set -u
PW=${1:?usage: test_config_reference.sh PERFWATCH}
build=$(cd "$(dirname "$PW")/.." && pwd)
doc=$(cd "$(dirname "$0")/../.." && pwd)/docs/config.md
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
for svc in bisector attributor baseliner planner canary; do
  bin=$build/services/$svc/pw-$svc
  [ -x "$bin" ] || { fail "no $bin"; continue; }
  ref=$("$bin" --config-reference) || { fail "pw-$svc --config-reference failed"; continue; }
  rows=$(grep '^| `' <<<"$ref" || true)
  while IFS= read -r row; do
    [ -n "$row" ] || continue
    grep -Fxq -- "$row" "$doc" || fail "docs/config.md lacks pw-$svc's row: $row"
  done <<<"$rows"
  # every $svc.* row of the doc is one the service has
  while IFS= read -r row; do
    [ -n "$row" ] || continue
    grep -Fxq -- "$row" <<<"$rows" || fail "docs/config.md has a $svc row pw-$svc does not print: $row"
  done < <(grep "^| \`$svc\." "$doc")
  n=$(grep -c "^| \`$svc\." <<<"$rows")
  echo "pw-$svc: $n keys of its own, all in docs/config.md"
done
[ "$fails" = 0 ] || { echo "test_config_reference: $fails failure(s)" >&2; exit 1; }
echo "test_config_reference: PASS"
