#!/usr/bin/env bash
# test_deploy.sh: what can be validated of the production deployment
# (deploy/compose.yaml, deploy/k8s, deploy/Dockerfile, deploy/config) on a
# machine with no Docker engine and no Kubernetes:
#   - the static checks of tests/integration/deploy_check.py (YAML structure,
#     manifests up to date, probes, ConfigMaps, Secrets, every configuration
#     key and PW_* variable exists, every command is built and installed);
#   - each built service accepts its production .conf: started with it and
#     unreachable servers it is still running after 3 s (waiting for
#     PostgreSQL), while the same file plus one unknown key stops it at once
#     (the control that shows the check can fail);
#   - deploy/kafka/topics.txt is the topic table of `pw-topics list`;
#   - every shared library a service binary needs (its ELF NEEDED entries)
#     comes from a Debian package the Dockerfile's runtime stage installs;
#   - the shell scripts parse (sh -n).
# Nothing here starts a container: compose and the manifests are not run.
set -euo pipefail

. tests/integration/lib.sh
need_env PW_BUILD
need_tools python3 readelf dpkg
python3 -c 'import yaml' 2>/dev/null || { echo "FAIL: python3-yaml is not installed (make deps)"; exit 1; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if python3 tests/integration/deploy_check.py --repo "$repo" --build "$PW_BUILD"; then
  pass "deploy_check: static checks"
else
  fail "deploy_check reported failures (above)"
fi

# each built service accepts its production configuration file: every
# service's good and bad file at once (each good run lasts its 3 s)
run_conf() {
  local rc=0
  # the secrets a deployment provides in the environment (deploy/secrets.sh), here made up
  PW_PAGER_TRIAGE_KEY=deploy-check-triage-key-0123456789 \
  PW_HTTP_LISTEN=127.0.0.1:0 PW_PG_DSN='host=127.0.0.1 port=1 connect_timeout=1 dbname=none' \
  PW_KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:1 PW_REDIS_ADDR=127.0.0.1:1 \
    timeout 3 "$1" --config "$2" >"$3.log" 2>&1 || rc=$?
  echo "$rc" >"$3.rc"
}
names=()
for conf in "$repo"/deploy/config/*.conf; do
  n=$(basename "$conf" .conf)
  bin=$PW_BUILD/services/$n/pw-$n
  if [ ! -f "$repo/services/$n/main.c" ]; then
    echo "PENDING: pw-$n: services/$n/main.c is not in the tree yet"
    continue
  fi
  [ -x "$bin" ] || { fail "$bin not built"; continue; }
  { cat "$conf"; echo "$n.no_such_key = 1"; } >"$work/$n.bad.conf"
  run_conf "$bin" "$conf" "$work/$n" &
  run_conf "$bin" "$work/$n.bad.conf" "$work/$n.bad" &
  names+=("$n")
done
wait
for n in "${names[@]}"; do
  rc=$(cat "$work/$n.rc")
  if [ "$rc" = 124 ]; then
    pass "pw-$n accepts deploy/config/$n.conf (still running after 3 s, waiting for PostgreSQL)"
  else
    fail "pw-$n stopped (exit $rc) with deploy/config/$n.conf: $(tail -n 3 "$work/$n.log")"
  fi
  rc=$(cat "$work/$n.bad.rc")
  if [ "$rc" != 124 ] && grep -q 'no_such_key' "$work/$n.bad.log"; then
    pass "pw-$n refuses the same file with an unknown key (exit $rc): the check above can fail"
  else
    fail "pw-$n did not refuse an unknown key (exit $rc)"
  fi
done

# the topic table
if diff <("$PW_BUILD/tools/pw-topics" list) deploy/kafka/topics.txt >"$work/topics.diff"; then
  pass "deploy/kafka/topics.txt is pw-topics list ($(wc -l <deploy/kafka/topics.txt) topics)"
else
  fail "deploy/kafka/topics.txt differs from pw-topics list (regenerate it):"
  cat "$work/topics.diff"
fi

# runtime libraries: NEEDED entries -> Debian packages -> the Dockerfile's runtime apt-get line
runtime_pkgs=$(awk '/^FROM debian:12$/ { rt = 1 } rt && /apt-get install/ { on = 1 } on { print } on && !/\\$/ { on = 0 }' deploy/Dockerfile |
  tr ' \\' '\n\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' | grep -vE '^(apt-get|install|rm|useradd)$' | sort -u)
missing=""
checked=0
declare -A pkg_of # a library's package, looked up once (dpkg -S is slow)
for bin in "$PW_BUILD"/services/*/pw-* "$PW_BUILD/tools/perfwatch" "$PW_BUILD/tools/pw-migrate"; do
  [ -x "$bin" ] && [ -f "$bin" ] || continue
  checked=$((checked + 1))
  for lib in $(readelf -d "$bin" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
    # (readers that consume all their input: an early exit would SIGPIPE the
    # writer and fail the pipeline under pipefail)
    if [ -z "${pkg_of[$lib]+set}" ]; then
      path=$(ldconfig -p | awk -v l="$lib" '$1 == l && !p { p = $NF } END { print p }')
      pkg=""
      if [ -n "$path" ]; then
        pkg=$({ dpkg -S "$(readlink -f "$path")" 2>/dev/null || true; } | awk -F: 'NR == 1 { print $1 }')
        [ -n "$pkg" ] || pkg=$({ dpkg -S "$path" 2>/dev/null || true; } | awk -F: 'NR == 1 { print $1 }')
      else
        pkg="(unresolved)"
      fi
      pkg_of[$lib]=$pkg
    fi
    pkg=${pkg_of[$lib]}
    [ "$pkg" != "(unresolved)" ] || { missing+=" $lib(unresolved,$(basename "$bin"))"; continue; }
    case $pkg in libc6 | libgcc-s1 | libstdc++6) continue ;; esac
    grep -qx "$pkg" <<<"$runtime_pkgs" || missing+=" $lib($pkg,$(basename "$bin"))"
  done
done
if [ -z "$missing" ] && [ "$checked" -gt 0 ]; then
  pass "every library of $checked binaries comes from a package the Dockerfile's runtime stage installs"
else
  fail "libraries whose package the Dockerfile does not install:$missing"
fi

for s in deploy/kafka/create-topics.sh deploy/postgres/init-roles.sh deploy/secrets.sh; do
  sh -n "$s" && pass "$s parses" || fail "$s does not parse"
done

if [ $fails -ne 0 ]; then
  echo "test_deploy: $fails check(s) failed"
  exit 1
fi
echo "test_deploy: all checks passed (compose and Kubernetes were not run: no Docker engine or cluster here)"
