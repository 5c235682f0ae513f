#!/usr/bin/env bash
# test_migrate.sh: tools/pw-migrate against a real PostgreSQL: fresh apply,
# idempotent re-run, --status, a new migration, and every refusal (changed,
# renamed, gap, duplicate, failing migration rolled back, concurrent runners).
#
# tests/integration/run.sh runs it with PW_PG_DSN (the dev stack's database)
# and PW_BUILD (the build folder) in the environment; it can also run by hand
# against any PostgreSQL >= 11. It never touches the database PW_PG_DSN names:
# it creates scratch databases owned by the DSN's role, works on a copy of
# migrations/ in a temporary folder, and drops both at exit. Creating a
# database needs CREATEDB; when the DSN's role lacks it, PW_PG_ADMIN_DSN (default:
# the same DSN as user postgres, the dev stack's superuser) creates them.
# Exits non-zero if any expectation fails.
# "A && pass || fail" is safe here: pass always succeeds.
# shellcheck disable=SC2015
set -u

: "${PW_PG_DSN:?set PW_PG_DSN to a libpq connection string of a running PostgreSQL}"
: "${PW_BUILD:?set PW_BUILD to the build folder}"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
MIGRATE=$PW_BUILD/tools/pw-migrate
SRC=$repo/migrations
[ -x "$MIGRATE" ] || { echo "FAIL: no executable $MIGRATE; build target pw-migrate" >&2; exit 1; }
command -v psql >/dev/null || { echo "FAIL: psql not found" >&2; exit 1; }

# dsn_set DSN KEY VALUE: DSN with KEY overridden (key=value form or URI).
dsn_set() {
	case $1 in
	postgres://* | postgresql://*)
		case $1 in *\?*) echo "$1&$2=$3" ;; *) echo "$1?$2=$3" ;; esac ;;
	*) echo "$1 $2='$3'" ;;
	esac
}

TMP=$(mktemp -d)
suffix="$$_$(date +%s)"
DB1=pw_migtest_a_$suffix
DB2=pw_migtest_b_$suffix
FAILS=0
PASSES=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; PASSES=$((PASSES + 1)); }

sql() { # DSN SQL: one value, unaligned
	psql "$1" -X -qAt -v ON_ERROR_STOP=1 -c "$2"
}

owner=$(sql "$PW_PG_DSN" "SELECT current_user") ||
	{ echo "FAIL: cannot connect with PW_PG_DSN" >&2; exit 1; }
if [ "$(sql "$PW_PG_DSN" "SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user")" = t ]; then
	ADMIN=$PW_PG_DSN
else
	ADMIN=${PW_PG_ADMIN_DSN:-$(dsn_set "$PW_PG_DSN" user postgres)}
fi

cleanup() {
	for db in "$DB1" "$DB2"; do
		psql "$ADMIN" -X -q -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 ||
			echo "warning: could not drop scratch database $db" >&2
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

for db in "$DB1" "$DB2"; do
	sql "$ADMIN" "CREATE DATABASE \"$db\" OWNER \"$owner\"" >/dev/null ||
		{ echo "FAIL: cannot create scratch database $db (set PW_PG_ADMIN_DSN)" >&2; exit 1; }
done
DSN1=$(dsn_set "$PW_PG_DSN" dbname "$DB1")
DSN2=$(dsn_set "$PW_PG_DSN" dbname "$DB2")

DIR=$TMP/migrations
cp -r "$SRC" "$DIR"
n_files=$(find "$DIR" -maxdepth 1 -name '[0-9]*_*.sql' | wc -l)
next=$(printf '%04d' $((n_files + 1)))
[ "$n_files" -ge 1 ] || { echo "FAIL: no migrations in $SRC" >&2; exit 1; }

run() { # OUT_PREFIX ARGS...: runs pw-migrate, stdout/stderr to files, returns its status
	local out=$1
	shift
	"$MIGRATE" "$@" >"$TMP/$out.out" 2>"$TMP/$out.err"
}
count_applied() { sql "$1" "SELECT count(*) FROM perfwatch_meta.schema_migrations"; }
has() { grep -q -- "$2" "$TMP/$1" || { fail "$1 lacks '$2':"; sed 's/^/    /' "$TMP/$1" >&2; return 1; }; }

# 1. fresh apply
if run fresh --dsn "$DSN1" --dir "$DIR"; then pass "fresh apply exits 0"; else fail "fresh apply exited $?"; cat "$TMP/fresh.err" >&2; fi
[ "$(count_applied "$DSN1")" = "$n_files" ] && pass "fresh apply recorded $n_files migrations" ||
	fail "fresh apply recorded $(count_applied "$DSN1"), want $n_files"
has fresh.err "applied $n_files migration" && pass "fresh apply says how many it applied"
[ "$(sql "$DSN1" "SELECT to_regclass('perfwatch.series') IS NOT NULL AND to_regclass('perfwatch.dead_letters') IS NOT NULL")" = t ] &&
	pass "fresh apply created the perfwatch tables" || fail "perfwatch tables missing after fresh apply"
want=$(sha256sum "$DIR/0001_"*.sql | cut -d' ' -f1)
[ "$(sql "$DSN1" "SELECT sha256 FROM perfwatch_meta.schema_migrations WHERE version = 1")" = "$want" ] &&
	pass "recorded sha256 equals sha256sum of the file" || fail "recorded sha256 differs from sha256sum"
# every line of stderr is one JSON object
if grep -qv '^{.*}$' "$TMP/fresh.err"; then fail "non-JSON log line in fresh.err"; else pass "logs are JSON lines"; fi

# natural keys make writes idempotent
sql "$DSN1" "INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, metric, unit, direction)
             VALUES ('chat-8b', 'hlo:9f31c2ab', 'v6e-4', 'decode.B64.s2048.int8', 'tpot_p50_ms', 'ms', 'lower_is_better')
             ON CONFLICT DO NOTHING" >/dev/null
sql "$DSN1" "INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, metric, unit, direction)
             VALUES ('chat-8b', 'hlo:9f31c2ab', 'v6e-4', 'decode.B64.s2048.int8', 'tpot_p50_ms', 'ms', 'lower_is_better')
             ON CONFLICT DO NOTHING" >/dev/null
[ "$(sql "$DSN1" "SELECT count(*) || ' ' || min(series_key) FROM perfwatch.series")" = "1 chat-8b/hlo:9f31c2ab/v6e-4/decode.B64.s2048.int8/tpot_p50_ms" ] &&
	pass "series insert is idempotent and series_key is generated" || fail "series natural key or series_key wrong"

# 2. idempotent re-run
before=$(sql "$DSN1" "SELECT string_agg(version || '@' || applied_at, ',' ORDER BY version) FROM perfwatch_meta.schema_migrations")
if run rerun --dsn "$DSN1" --dir "$DIR"; then pass "re-run exits 0"; else fail "re-run exited $?"; fi
has rerun.err "nothing to apply" && pass "re-run says nothing to apply"
after=$(sql "$DSN1" "SELECT string_agg(version || '@' || applied_at, ',' ORDER BY version) FROM perfwatch_meta.schema_migrations")
[ "$before" = "$after" ] && pass "re-run changed no bookkeeping row" || fail "re-run changed schema_migrations"

# 3. status
if run status --dsn "$DSN1" --dir "$DIR" --status; then pass "status exits 0 when consistent"; else fail "status exited $?"; fi
has status.out "$n_files applied, 0 pending, 0 inconsistent" && pass "status summary line"
[ "$(grep -c ' applied ' "$TMP/status.out")" = "$n_files" ] && pass "status lists every migration as applied" ||
	fail "status does not list $n_files applied migrations"

# 4. a new migration is pending, then applied
cat >"$DIR/${next}_test_extra.sql" <<'EOF'
-- a migration added by test_migrate.sh
CREATE TABLE perfwatch.test_extra (id integer PRIMARY KEY);
EOF
run pending --dsn "$DSN1" --dir "$DIR" --status || fail "status with a pending migration exited $?"
has pending.out "pending" && has pending.out "${next}_test_extra.sql" && pass "status shows the new migration pending"
if run extra --dsn "$DSN1" --dir "$DIR"; then pass "new migration applies"; else fail "new migration exited $?"; fi
[ "$(count_applied "$DSN1")" = "$((n_files + 1))" ] && pass "new migration recorded" || fail "new migration not recorded"
has extra.err "applied 1 migration" && pass "says it applied 1 migration"

# 5. a changed applied migration is refused, before anything else is applied
second=$(basename "$(ls "$DIR"/0002_*.sql)")
cp "$DIR/$second" "$TMP/second.orig"
echo "-- an edit after the fact" >>"$DIR/$second"
cat >"$DIR/$(printf '%04d' $((n_files + 2)))_test_after.sql" <<'EOF'
CREATE TABLE perfwatch.test_after (id integer);
EOF
if run changed --dsn "$DSN1" --dir "$DIR"; then fail "changed migration was not refused"; else pass "changed migration refused (non-zero exit)"; fi
has changed.err "$second" && has changed.err "has changed since it was applied" &&
	pass "refusal names the file in PostgreSQL style"
has changed.err '"level":"error"' && pass "refusal is an error log line"
[ "$(sql "$DSN1" "SELECT to_regclass('perfwatch.test_after') IS NULL")" = t ] &&
	pass "nothing pending was applied after the refusal" || fail "a pending migration was applied despite the refusal"
if run changed_status --dsn "$DSN1" --dir "$DIR" --status; then fail "status exited 0 with a changed migration"; else pass "status exits non-zero with a changed migration"; fi
grep -q "changed .*$second" "$TMP/changed_status.out" && pass "status marks the file changed" || fail "status does not mark $second changed"
cp "$TMP/second.orig" "$DIR/$second"
rm -f "$DIR/$(printf '%04d' $((n_files + 2)))_test_after.sql"

# 6. a renamed applied migration is refused
mv "$DIR/${next}_test_extra.sql" "$DIR/${next}_test_renamed.sql"
if run renamed --dsn "$DSN1" --dir "$DIR"; then fail "renamed migration was not refused"; else pass "renamed migration refused"; fi
has renamed.err "was applied as" && pass "rename refusal says what was applied"
mv "$DIR/${next}_test_renamed.sql" "$DIR/${next}_test_extra.sql"

# 7. gaps and duplicate numbers are refused
gap=$(printf '%04d' $((n_files + 3)))
echo "SELECT 1;" >"$DIR/${gap}_test_gap.sql"
if run gap --dsn "$DSN1" --dir "$DIR"; then fail "gap was not refused"; else pass "gap refused"; fi
has gap.err "gap in migration numbers" && pass "gap refusal names the gap"
rm -f "$DIR/${gap}_test_gap.sql"
dup=$(printf '%04d' $((n_files + 2)))
echo "SELECT 1;" >"$DIR/${dup}_test_dup_a.sql"
echo "SELECT 1;" >"$DIR/${dup}_test_dup_b.sql"
if run dup --dsn "$DSN1" --dir "$DIR"; then fail "duplicate number was not refused"; else pass "duplicate number refused"; fi
has dup.err "duplicate migration number" && has dup.err "_test_dup_a.sql" && pass "duplicate refusal names both files"
rm -f "$DIR/${dup}_test_dup_"*.sql
echo "SELECT 1;" >"$DIR/badname.sql"
if run badname --dsn "$DSN1" --dir "$DIR"; then fail "badly named file was not refused"; else pass "badly named file refused"; fi
rm -f "$DIR/badname.sql"

# 8. a failing migration rolls back whole and is not recorded
cat >"$DIR/${dup}_test_broken.sql" <<'EOF'
CREATE TABLE perfwatch.test_broken (id integer);

SELEC 1;
EOF
if run broken --dsn "$DSN1" --dir "$DIR"; then fail "broken migration exited 0"; else pass "broken migration fails"; fi
has broken.err "${dup}_test_broken.sql\\\\\" failed at line 3" && pass "failure names the file and line"
[ "$(sql "$DSN1" "SELECT to_regclass('perfwatch.test_broken') IS NULL")" = t ] &&
	pass "broken migration rolled back" || fail "broken migration left its table behind"
[ "$(count_applied "$DSN1")" = "$((n_files + 1))" ] && pass "broken migration not recorded" || fail "broken migration recorded"
rm -f "$DIR/${dup}_test_broken.sql"

# 9. two runners at once: the advisory lock lets one apply, the other finds it done
run race1 --dsn "$DSN2" --dir "$SRC" &
p1=$!
run race2 --dsn "$DSN2" --dir "$SRC" &
p2=$!
r1=0 r2=0
wait $p1 || r1=$?
wait $p2 || r2=$?
[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && pass "concurrent runners both exit 0" || fail "concurrent runners exited $r1 and $r2"
[ "$(count_applied "$DSN2")" = "$n_files" ] && pass "concurrent runners recorded each migration once" ||
	fail "concurrent runners recorded $(count_applied "$DSN2"), want $n_files"
n_nothing=$(cat "$TMP/race1.err" "$TMP/race2.err" | grep -c "nothing to apply")
[ "$n_nothing" = 1 ] && pass "exactly one concurrent runner found nothing to apply" ||
	fail "$n_nothing runners said nothing to apply, want 1"

# 10. usage and connection errors
"$MIGRATE" >/dev/null 2>&1
[ $? -eq 2 ] && pass "no --dsn is a usage error (exit 2)" || fail "no --dsn did not exit 2"
if run noconn --dsn "$(dsn_set "$PW_PG_DSN" dbname "pw_migtest_does_not_exist_$suffix")" --dir "$DIR"; then
	fail "missing database did not fail"
else
	has noconn.err "could not connect to the database" && pass "connection failure reported"
fi

echo "test_migrate: $PASSES passed, $FAILS failed"
[ $FAILS -eq 0 ]
