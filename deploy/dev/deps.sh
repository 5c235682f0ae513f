#!/usr/bin/env bash
# deps.sh: installs the Debian packages in packages.txt that are missing.
# Idempotent: with everything present it changes nothing and says so. It
# prints one line per package group; apt's own output goes to a log file
# (run/deps.log, or PW_DEPS_LOG), whose tail is shown only when apt fails.
#   deps.sh          install what is missing
#   deps.sh --check  exit 1 if anything is missing, install nothing
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
log=${PW_DEPS_LOG:-${PW_RUN_DIR:-$repo/run}/deps.log}

groups=()
declare -A members=()
group=other
while read -r line; do
  line=${line%%#*}
  line=${line//[[:space:]]/}
  [ -n "$line" ] || continue
  if [[ $line =~ ^\[([a-z0-9-]+)\]$ ]]; then
    group=${BASH_REMATCH[1]}
    continue
  fi
  [ -n "${members[$group]+x}" ] || { groups+=("$group"); members[$group]=""; }
  members[$group]+=" $line"
done <"$here/packages.txt"

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

all_missing=()
for g in "${groups[@]}"; do
  for p in ${members[$g]}; do installed "$p" || all_missing+=("$p"); done
done
if [ "${1:-}" = --check ]; then
  [ ${#all_missing[@]} -eq 0 ] && exit 0
  echo "deps: missing: ${all_missing[*]}" >&2
  exit 1
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$(dirname "$log")"
updated=0
apt_run() {
  if ! $sudo "$@" >>"$log" 2>&1; then
    echo "deps: failed: $* (last lines of $log):" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
}
for g in "${groups[@]}"; do
  missing=()
  n=0
  for p in ${members[$g]}; do
    n=$((n + 1))
    installed "$p" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: $g: $n packages present"
    continue
  fi
  if [ $updated -eq 0 ]; then
    : >"$log"
    apt_run apt-get update -qq
    updated=1
  fi
  t0=$SECONDS
  # prometheus pulls in a service; the dev stack starts its own servers, so
  # the packaged ones must not be left running where a test expects a free port.
  apt_run apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "deps: $g: installed ${missing[*]} ($((SECONDS - t0)) s; apt log $log)"
done
