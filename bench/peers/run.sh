#!/usr/bin/env bash
# run.sh: `make bench-peers` (not part of CI, not part of `make bench`: it
# installs from PyPI). perfwatch's changepoints beside apache-otava, ruptures
# and MongoDB's signal-processing-algorithms, same series, same run
# (peers.py says how; docs/changepoints.md, "Peers", has the figures).
#
#   bench/peers/run.sh BUILD_DIR [peers.py options]
#
# Two venvs under run/peers/ (PW_PEERS_DIR), made once from the pinned
# requirements-*.txt by pip from PyPI alone and remade when a requirements
# file changes: apache-otava 0.8.0 pins numpy 2.2.0 and
# signal-processing-algorithms 2.1.6 needs numpy < 2, so no single venv holds
# all three.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/peers/run.sh BUILD_DIR [peers.py options]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
dir=${PW_PEERS_DIR:-${PW_RUN_DIR:-$repo/run}/peers}
python=${PW_PEERS_PYTHON:-python3}

venv() { # NAME REQUIREMENTS
  local v=$dir/$1 req=$2 sum
  sum=$(sha256sum <"$req" | cut -d' ' -f1)
  if [ "$(cat "$v/.requirements.sha256" 2>/dev/null)" != "$sum" ]; then
    echo "peers: making the $1 venv from $(basename "$req") (pip, PyPI)" >&2
    rm -rf "$v"
    "$python" -m venv "$v"
    # PyPI only: no local wheel directory
    PIP_FIND_LINKS= "$v/bin/pip" install --quiet --no-cache-dir -r "$req" >&2
    echo "$sum" >"$v/.requirements.sha256"
  fi
}
mkdir -p "$dir"
venv otava "$here/requirements-otava.txt"
venv spa "$here/requirements-spa.txt"
exec "$python" "$here/peers.py" --perfwatch "$build/tools/perfwatch" \
  --otava-python "$dir/otava/bin/python" --spa-python "$dir/spa/bin/python" \
  --work "$dir/data" "$@"
