#!/usr/bin/env bash
# deps.sh: installs the Debian packages in packages.txt that are missing.
# Idempotent: with everything present it changes nothing and says so.
#   deps.sh          install what is missing
#   deps.sh --check  exit 1 if anything is missing, install nothing
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t pkgs < <(grep -v '^\s*#' "$here/packages.txt" | grep -v '^\s*$')
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  [ "${1:-}" = --check ] || echo "deps: all ${#pkgs[@]} packages present"
  exit 0
fi
if [ "${1:-}" = --check ]; then
  echo "deps: missing: ${missing[*]}" >&2
  exit 1
fi
echo "deps: installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# prometheus pulls in a service; the dev stack starts its own servers, so the
# packaged ones must not be left running where a test expects a free port.
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
