#!/bin/sh
# secrets.sh: writes the secrets deploy/compose.yaml reads, once, as env
# files under deploy/secrets/ (mode 600, git-ignored): random passwords for
# the PostgreSQL administrator, the perfwatch role and Grafana's read-only
# role, Grafana's admin password, and the pager's triage key (HMAC-SHA256 of
# the one-click verdict links; docs/operations.md, "Rotating the triage key").
# Existing files are kept: re-running it changes nothing.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)/secrets
mkdir -p "$dir"
chmod 700 "$dir"
umask 077
rnd() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }
put() { [ -e "$dir/$1" ] && { echo "secrets: $dir/$1 exists, kept"; return 0; }; cat >"$dir/$1"; echo "secrets: wrote $dir/$1"; }
pg=$(rnd)
printf 'POSTGRES_PASSWORD=%s\nPERFWATCH_PASSWORD=%s\n' "$(rnd)" "$pg" | put postgres.env
[ -e "$dir/perfwatch.env" ] || pg=$(sed -n 's/^PERFWATCH_PASSWORD=//p' "$dir/postgres.env")
printf 'PGPASSWORD=%s\n' "$pg" | put perfwatch.env
printf 'PW_GRAFANA_PG_PASSWORD=%s\nGF_SECURITY_ADMIN_PASSWORD=%s\n' "$(rnd)" "$(rnd)" | put grafana.env
printf 'PW_PAGER_TRIAGE_KEY=%s%s\n' "$(rnd)" "$(rnd)" | put pager.env
