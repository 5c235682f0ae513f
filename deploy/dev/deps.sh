#!/usr/bin/env bash
# deps.sh: installs the Debian packages in packages.txt that are missing, then
# the dev stack's Apache Kafka broker from Maven Central (kafka/pom.xml: the
# pinned jars, copied into kafka/lib/ by Maven with strict checksums).
# Idempotent: with everything present it changes nothing and says so. It
# prints one line per package group; apt's and Maven's own output go to a log
# file (run/deps.log, or PW_DEPS_LOG), whose tail is shown only on failure.
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
# The broker's jars are current when kafka/lib/.pom.sha256 is the hash of the
# pom that fetched them.
kafka_pom=$here/kafka/pom.xml
kafka_lib=$here/kafka/lib
kafka_current() {
  [ -f "$kafka_lib/.pom.sha256" ] &&
    [ "$(cat "$kafka_lib/.pom.sha256")" = "$(sha256sum <"$kafka_pom" | cut -d' ' -f1)" ]
}
if [ "${1:-}" = --check ]; then
  kafka_current || all_missing+=("kafka-broker-jars($kafka_lib)")
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

# The broker: Maven resolves the pinned artifacts and their dependencies from
# Maven Central, refusing any whose checksum does not match (-C), and copies
# the runtime classpath into kafka/lib/ (git-ignored).
if kafka_current; then
  echo "deps: kafka: $(ls "$kafka_lib"/*.jar | wc -l) jars present ($kafka_lib)"
else
  command -v mvn >/dev/null || { echo "deps: kafka: mvn not found (package maven)" >&2; exit 1; }
  t0=$SECONDS
  mkdir -p "$(dirname "$log")"
  rm -rf "$kafka_lib.tmp"
  if ! mvn -B -C -f "$kafka_pom" dependency:copy-dependencies -Dmdep.includeScope=runtime \
    -DoutputDirectory="$kafka_lib.tmp" >>"$log" 2>&1; then
    echo "deps: failed: mvn dependency:copy-dependencies -f $kafka_pom (last lines of $log):" >&2
    tail -n 20 "$log" >&2
    rm -rf "$kafka_lib.tmp"
    exit 1
  fi
  sha256sum <"$kafka_pom" | cut -d' ' -f1 >"$kafka_lib.tmp/.pom.sha256"
  rm -rf "$kafka_lib"
  mv "$kafka_lib.tmp" "$kafka_lib"
  echo "deps: kafka: fetched $(ls "$kafka_lib"/*.jar | wc -l) jars through Maven ($((SECONDS - t0)) s; log $log)"
fi
