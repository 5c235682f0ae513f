/*
 * pw-migrate.c: applies the numbered SQL migrations of migrations/ to a
 * PostgreSQL database, each in its own transaction, and records what it
 * applied in perfwatch_meta.schema_migrations.
 *
 * The dev-stack scripts (deploy/dev/) and production deploys run
 * `pw-migrate --dsn DSN --dir migrations` before any service starts; the
 * services assume the schema the migrations describe (docs/schema.md).
 * Files are named NNNN_name.sql and numbered 1..N without gaps or
 * duplicates. An applied migration is immutable: its sha256 (computed by the
 * server with sha256(bytea), so no crypto library is needed) is recorded and
 * compared on every run, and a changed file stops the runner before it
 * applies anything. A session advisory lock serialises concurrent runners.
 * Logs are JSON lines on stderr (common/pw_log.h); --status prints a table
 * on stdout.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <libpq-fe.h>

#include "pw_log.h"
#include "pw_status.h"

enum {
	PW_MIGRATE_EXIT_OK = 0,
	PW_MIGRATE_EXIT_FAIL = 1,
	PW_MIGRATE_EXIT_USAGE = 2,
};

/* Key of the session advisory lock every runner takes: "pwmigrat" in ASCII. */
#define PW_MIGRATE_LOCK_KEY "8104633862017655156"
/* Hard caps on what the runner reads from the migrations directory. */
#define PW_MIGRATE_MAX_FILE_BYTES (16L * 1024 * 1024)
#define PW_MIGRATE_MAX_FILES 10000
/* PostgreSQL 11 introduced sha256(bytea). */
#define PW_MIGRATE_MIN_SERVER 110000

/* A failure with PostgreSQL-style parts: message, detail and hint lines. */
typedef struct pw_migrate_error {
	char msg[1024];
	char detail[2048];
	char hint[512];
} pw_migrate_error;

/* One migration file. */
typedef struct pw_migration {
	long version;      /* the NNNN prefix */
	char *name;        /* owned; file name, e.g. "0001_series.sql" */
	char *text;        /* owned; file contents, NUL-terminated */
	size_t len;        /* bytes of text */
	char sha256[65];   /* hex digest of text, filled in by the server */
} pw_migration;

/* One row of perfwatch_meta.schema_migrations. */
typedef struct pw_applied {
	long version;
	char *name;        /* owned */
	char sha256[65];
	char applied_at[64];
} pw_applied;

/* Everything one invocation owns; built by main and released once. */
typedef struct pw_migrate_app {
	const char *dsn;   /* borrowed from argv */
	const char *dir;   /* borrowed from argv or the default */
	bool status;       /* --status: report only */
	pw_log log;
	PGconn *conn;
	pw_migration *files;
	size_t nfiles;
	pw_applied *applied;
	size_t napplied;
	bool meta_exists;  /* perfwatch_meta.schema_migrations exists */
} pw_migrate_app;

static pw_status mig_fail(pw_migrate_error *err, pw_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static pw_status mig_fail(pw_migrate_error *err, pw_status st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return st;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: pw-migrate --dsn DSN [--dir DIR] [--status] [--log-level LEVEL]\n"
	        "\n"
	        "Applies the numbered migrations DIR/NNNN_name.sql (default: migrations) in\n"
	        "order, each in its own transaction, and records them in\n"
	        "perfwatch_meta.schema_migrations. Re-running applies nothing new.\n"
	        "\n"
	        "  --dsn DSN          libpq connection string or URI\n"
	        "  --dir DIR          migrations directory\n"
	        "  --status           print applied and pending migrations, change nothing\n"
	        "  --log-level LEVEL  debug, info (default), warn or error\n"
	        "\n"
	        "exit status: 0 done / consistent, 1 failed or refused, 2 usage\n");
}

/* Strips one trailing newline (libpq messages end with one). */
static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

/* Copies a libpq error field into dst, or "" when absent. */
static void copy_field(char *dst, size_t len, const PGresult *res, int field)
{
	const char *v = res ? PQresultErrorField(res, field) : NULL;
	snprintf(dst, len, "%s", v ? v : "");
	chomp(dst);
}

/* Server notices (e.g. "schema already exists, skipping") become log lines. */
static void notice_receiver(void *arg, const PGresult *res)
{
	const pw_log *lg = arg;
	const char *sev = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	char msg[1024];
	copy_field(msg, sizeof msg, res, PG_DIAG_MESSAGE_PRIMARY);
	pw_log_level level = PW_LOG_DEBUG;
	if (sev && strcmp(sev, "WARNING") == 0)
		level = PW_LOG_WARN;
	pw_log_write(lg, level, (const char *[]){"severity", sev ? sev : "", NULL},
	             "server: %s", msg);
}

/* 1-based line of the character at 1-based position pos of text (UTF-8). */
static long line_of_position(const char *text, long pos)
{
	long line = 1, chars = 0;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if ((*p & 0xC0) == 0x80)
			continue; /* continuation byte: same character */
		if (++chars >= pos)
			break;
		if (*p == '\n')
			line++;
	}
	return line;
}

/* Parses "NNNN_name.sql"; returns false if name does not have that shape. */
static bool parse_migration_name(const char *name, long *version)
{
	const char *p = name;
	long v = 0;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > 99999999L)
			return false;
		v = v * 10 + (*p - '0');
	}
	if (*p++ != '_')
		return false;
	const char *stem = p;
	for (; *p && strcmp(p, ".sql") != 0; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	if (p == stem || strcmp(p, ".sql") != 0)
		return false;
	*version = v;
	return true;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int migration_cmp(const void *a, const void *b)
{
	const pw_migration *x = a, *y = b;
	if (x->version != y->version)
		return x->version < y->version ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Reads dir/name into m->text. */
static pw_status read_migration(const char *dir, pw_migration *m, pw_migrate_error *err)
{
	pw_status st = PW_OK;
	char *path = NULL;
	FILE *f = NULL;
	size_t plen = strlen(dir) + strlen(m->name) + 2;

	path = malloc(plen);
	if (!path)
		return mig_fail(err, PW_ERR_NOMEM, "out of memory");
	snprintf(path, plen, "%s/%s", dir, m->name);

	f = fopen(path, "rb");
	if (!f) {
		st = mig_fail(err, PW_ERR_IO, "could not open migration file \"%s\": %s", path,
		              strerror(errno));
		goto out_path;
	}
	struct stat sb;
	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
		st = mig_fail(err, PW_ERR_IO, "migration \"%s\" is not a regular file", path);
		goto out_file;
	}
	if (sb.st_size > PW_MIGRATE_MAX_FILE_BYTES) {
		st = mig_fail(err, PW_ERR_INVALID, "migration file \"%s\" is too large", path);
		snprintf(err->detail, sizeof err->detail, "The file has %lld bytes; the limit is %ld.",
		         (long long)sb.st_size, PW_MIGRATE_MAX_FILE_BYTES);
		goto out_file;
	}
	m->text = malloc((size_t)sb.st_size + 1);
	if (!m->text) {
		st = mig_fail(err, PW_ERR_NOMEM, "out of memory");
		goto out_file;
	}
	m->len = fread(m->text, 1, (size_t)sb.st_size, f);
	if (ferror(f) || m->len != (size_t)sb.st_size) {
		st = mig_fail(err, PW_ERR_IO, "could not read migration file \"%s\"", path);
		goto out_file;
	}
	m->text[m->len] = '\0';
	if (strlen(m->text) != m->len) {
		st = mig_fail(err, PW_ERR_INVALID, "migration file \"%s\" contains a NUL byte", path);
		goto out_file;
	}
out_file:
	fclose(f);
out_path:
	free(path);
	return st;
}

/*
 * Loads every *.sql of app->dir, sorted by version. Refuses files that are
 * not named NNNN_name.sql, duplicate numbers and gaps in 1..N.
 */
static pw_status load_migrations(pw_migrate_app *app, pw_migrate_error *err)
{
	pw_status st = PW_OK;
	DIR *d = opendir(app->dir);
	if (!d)
		return mig_fail(err, PW_ERR_IO, "could not open migrations directory \"%s\": %s",
		                app->dir, strerror(errno));

	size_t cap = 0;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		const char *name = de->d_name;
		if (name[0] == '.' || !has_suffix(name, ".sql"))
			continue;
		long version;
		if (!parse_migration_name(name, &version)) {
			st = mig_fail(err, PW_ERR_INVALID,
			              "migration file \"%s/%s\" is not named NNNN_name.sql", app->dir, name);
			snprintf(err->hint, sizeof err->hint,
			         "Name migrations with a number, an underscore and a lower-case name, "
			         "e.g. 0012_pages_index.sql.");
			goto out;
		}
		if (app->nfiles == PW_MIGRATE_MAX_FILES) {
			st = mig_fail(err, PW_ERR_INVALID, "too many migration files in \"%s\"", app->dir);
			goto out;
		}
		if (app->nfiles == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			pw_migration *n = realloc(app->files, ncap * sizeof *n);
			if (!n) {
				st = mig_fail(err, PW_ERR_NOMEM, "out of memory");
				goto out;
			}
			app->files = n;
			cap = ncap;
		}
		pw_migration *m = &app->files[app->nfiles];
		memset(m, 0, sizeof *m);
		m->version = version;
		m->name = strdup(name);
		if (!m->name) {
			st = mig_fail(err, PW_ERR_NOMEM, "out of memory");
			goto out;
		}
		app->nfiles++;
		errno = 0;
	}
	if (errno != 0) {
		st = mig_fail(err, PW_ERR_IO, "could not read migrations directory \"%s\": %s",
		              app->dir, strerror(errno));
		goto out;
	}
	if (app->nfiles == 0) {
		st = mig_fail(err, PW_ERR_NOT_FOUND, "no migrations found in \"%s\"", app->dir);
		goto out;
	}
	qsort(app->files, app->nfiles, sizeof app->files[0], migration_cmp);
	for (size_t i = 0; i < app->nfiles; i++) {
		const pw_migration *m = &app->files[i];
		if (i > 0 && m->version == app->files[i - 1].version) {
			st = mig_fail(err, PW_ERR_INVALID, "duplicate migration number %04ld in \"%s\"",
			              m->version, app->dir);
			snprintf(err->detail, sizeof err->detail, "Files \"%s\" and \"%s\" share the number.",
			         app->files[i - 1].name, m->name);
			goto out;
		}
		if (m->version != (long)i + 1) {
			st = mig_fail(err, PW_ERR_INVALID, "gap in migration numbers in \"%s\" before \"%s\"",
			              app->dir, m->name);
			snprintf(err->detail, sizeof err->detail,
			         "Expected migration %04ld, found %04ld; migrations are numbered 1..N "
			         "without gaps.", (long)i + 1, m->version);
			goto out;
		}
	}
	for (size_t i = 0; i < app->nfiles; i++) {
		st = read_migration(app->dir, &app->files[i], err);
		if (st != PW_OK)
			goto out;
	}
out:
	closedir(d);
	return st;
}

/* Fills err from a failed result and returns PW_ERR_PG. what names the step. */
static pw_status pg_fail(pw_migrate_error *err, const PGconn *conn, const PGresult *res,
                         const char *what)
{
	char primary[768];
	copy_field(primary, sizeof primary, res, PG_DIAG_MESSAGE_PRIMARY);
	if (primary[0] == '\0') {
		snprintf(primary, sizeof primary, "%s", PQerrorMessage(conn));
		chomp(primary);
	}
	mig_fail(err, PW_ERR_PG, "%s: %s", what, primary);
	copy_field(err->detail, sizeof err->detail, res, PG_DIAG_MESSAGE_DETAIL);
	copy_field(err->hint, sizeof err->hint, res, PG_DIAG_MESSAGE_HINT);
	return PW_ERR_PG;
}

/* Runs a command that returns no rows. */
static pw_status exec_command(PGconn *conn, const char *sql, const char *what,
                              pw_migrate_error *err)
{
	PGresult *res = PQexec(conn, sql);
	pw_status st = PW_OK;
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		st = pg_fail(err, conn, res, what);
	PQclear(res);
	return st;
}

static pw_status connect_db(pw_migrate_app *app, pw_migrate_error *err)
{
	const char *keys[] = {"dbname", "fallback_application_name", NULL};
	const char *vals[] = {app->dsn, "pw-migrate", NULL};
	app->conn = PQconnectdbParams(keys, vals, 1);
	if (!app->conn)
		return mig_fail(err, PW_ERR_NOMEM, "out of memory");
	if (PQstatus(app->conn) != CONNECTION_OK) {
		/* libpq's first line is the reason; what follows goes to the detail */
		char reason[768];
		snprintf(reason, sizeof reason, "%s", PQerrorMessage(app->conn));
		chomp(reason);
		char *nl = strchr(reason, '\n');
		if (nl) {
			*nl = '\0';
			const char *rest = nl + 1;
			rest += strspn(rest, " \t");
			snprintf(err->detail, sizeof err->detail, "%s", rest);
		}
		return mig_fail(err, PW_ERR_UNAVAILABLE, "could not connect to the database: %s",
		                reason);
	}
	PQsetNoticeReceiver(app->conn, notice_receiver, &app->log);
	if (PQserverVersion(app->conn) < PW_MIGRATE_MIN_SERVER)
		return mig_fail(err, PW_ERR_UNAVAILABLE,
		                "server version %d is too old: PostgreSQL 11 or later is required",
		                PQserverVersion(app->conn));
	return PW_OK;
}

/* Takes the session advisory lock, saying so when another runner holds it. */
static pw_status take_lock(pw_migrate_app *app, pw_migrate_error *err)
{
	PGresult *res = PQexec(app->conn, "SELECT pg_try_advisory_lock(" PW_MIGRATE_LOCK_KEY ")");
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		pw_status st = pg_fail(err, app->conn, res, "could not take the migration lock");
		PQclear(res);
		return st;
	}
	bool got = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (got)
		return PW_OK;
	pw_log_info(&app->log, "waiting for the migration lock held by another pw-migrate");
	return exec_command(app->conn, "SELECT pg_advisory_lock(" PW_MIGRATE_LOCK_KEY ")",
	                    "could not take the migration lock", err);
}

static const char meta_sql[] =
	"BEGIN;\n"
	"CREATE SCHEMA IF NOT EXISTS perfwatch_meta;\n"
	"CREATE TABLE IF NOT EXISTS perfwatch_meta.schema_migrations (\n"
	"    version     integer PRIMARY KEY CHECK (version >= 1),\n"
	"    name        text NOT NULL UNIQUE,\n"
	"    sha256      text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),\n"
	"    applied_at  timestamptz NOT NULL DEFAULT now(),\n"
	"    applied_by  text NOT NULL DEFAULT current_user,\n"
	"    duration_ms double precision NOT NULL DEFAULT 0\n"
	");\n"
	"COMMENT ON TABLE perfwatch_meta.schema_migrations IS "
	"'migrations applied by pw-migrate; one row per migrations/NNNN_name.sql';\n"
	"COMMENT ON COLUMN perfwatch_meta.schema_migrations.sha256 IS "
	"'hex sha256 of the file bytes as applied (same as sha256sum)';\n"
	"COMMENT ON COLUMN perfwatch_meta.schema_migrations.duration_ms IS "
	"'milliseconds the migration took to apply';\n"
	"COMMIT;";

/* Reads the applied migrations, if the bookkeeping table exists. */
static pw_status load_applied(pw_migrate_app *app, pw_migrate_error *err)
{
	pw_status st = PW_OK;
	PGresult *res = PQexec(app->conn,
	                       "SELECT to_regclass('perfwatch_meta.schema_migrations') IS NOT NULL");
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		st = pg_fail(err, app->conn, res, "could not inspect the database");
		goto out;
	}
	app->meta_exists = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	res = NULL;
	if (!app->meta_exists)
		goto out;

	res = PQexec(app->conn,
	             "SELECT version, name, sha256, "
	             "to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
	             "FROM perfwatch_meta.schema_migrations ORDER BY version");
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		st = pg_fail(err, app->conn, res, "could not read perfwatch_meta.schema_migrations");
		goto out;
	}
	int n = PQntuples(res);
	if (n > 0) {
		app->applied = calloc((size_t)n, sizeof *app->applied);
		if (!app->applied) {
			st = mig_fail(err, PW_ERR_NOMEM, "out of memory");
			goto out;
		}
	}
	for (int i = 0; i < n; i++) {
		pw_applied *a = &app->applied[i];
		a->version = strtol(PQgetvalue(res, i, 0), NULL, 10);
		a->name = strdup(PQgetvalue(res, i, 1));
		if (!a->name) {
			st = mig_fail(err, PW_ERR_NOMEM, "out of memory");
			goto out;
		}
		snprintf(a->sha256, sizeof a->sha256, "%s", PQgetvalue(res, i, 2));
		snprintf(a->applied_at, sizeof a->applied_at, "%s", PQgetvalue(res, i, 3));
		app->napplied++;
	}
out:
	PQclear(res);
	return st;
}

/* Has the server compute the sha256 of every file (sha256(bytea), PG >= 11). */
static pw_status hash_migrations(pw_migrate_app *app, pw_migrate_error *err)
{
	for (size_t i = 0; i < app->nfiles; i++) {
		pw_migration *m = &app->files[i];
		const Oid types[] = {17 /* bytea */};
		const char *values[] = {m->text};
		const int lengths[] = {(int)m->len};
		const int formats[] = {1};
		PGresult *res = PQexecParams(app->conn, "SELECT encode(sha256($1), 'hex')", 1, types,
		                             values, lengths, formats, 0);
		if (PQresultStatus(res) != PGRES_TUPLES_OK) {
			pw_status st = pg_fail(err, app->conn, res, "could not compute sha256");
			PQclear(res);
			return st;
		}
		snprintf(m->sha256, sizeof m->sha256, "%s", PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	return PW_OK;
}

static const pw_migration *file_of_version(const pw_migrate_app *app, long version)
{
	if (version >= 1 && (size_t)version <= app->nfiles)
		return &app->files[version - 1]; /* load_migrations checked 1..N */
	return NULL;
}

/*
 * Checks the applied rows against the directory: every applied migration has
 * its file, under the same name, with the same sha256, and the applied set is
 * 1..k. Returns PW_ERR_CONFLICT on the first disagreement.
 */
static pw_status check_applied(const pw_migrate_app *app, pw_migrate_error *err)
{
	for (size_t i = 0; i < app->napplied; i++) {
		const pw_applied *a = &app->applied[i];
		const pw_migration *m = file_of_version(app, a->version);
		if (a->version != (long)i + 1) {
			mig_fail(err, PW_ERR_CONFLICT,
			         "applied migrations in the database are not numbered 1..%zu",
			         app->napplied);
			snprintf(err->detail, sizeof err->detail,
			         "Expected applied migration %04ld, found %04ld \"%s\".", (long)i + 1,
			         a->version, a->name);
			return PW_ERR_CONFLICT;
		}
		if (!m) {
			mig_fail(err, PW_ERR_CONFLICT,
			         "applied migration \"%s\" is missing from \"%s\"", a->name, app->dir);
			snprintf(err->detail, sizeof err->detail,
			         "The database is at version %04ld; the directory ends at %04zu.",
			         app->applied[app->napplied - 1].version, app->nfiles);
			snprintf(err->hint, sizeof err->hint,
			         "Run the pw-migrate and migrations of the release that created this "
			         "database, or a newer one.");
			return PW_ERR_CONFLICT;
		}
		if (strcmp(m->name, a->name) != 0) {
			mig_fail(err, PW_ERR_CONFLICT,
			         "migration %04ld was applied as \"%s\" but the directory has \"%s\"",
			         a->version, a->name, m->name);
			snprintf(err->hint, sizeof err->hint,
			         "Applied migrations are immutable: restore the original file name.");
			return PW_ERR_CONFLICT;
		}
		if (strcmp(m->sha256, a->sha256) != 0) {
			mig_fail(err, PW_ERR_CONFLICT,
			         "migration file \"%s/%s\" has changed since it was applied", app->dir,
			         m->name);
			snprintf(err->detail, sizeof err->detail,
			         "Applied at %s with sha256 %s; the file now has sha256 %s.", a->applied_at,
			         a->sha256, m->sha256);
			snprintf(err->hint, sizeof err->hint,
			         "Applied migrations are immutable: restore the file and put the change "
			         "in a new migration.");
			return PW_ERR_CONFLICT;
		}
	}
	return PW_OK;
}

static double elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Applies one migration and records it, in one transaction. */
static pw_status apply_one(pw_migrate_app *app, const pw_migration *m, pw_migrate_error *err)
{
	pw_status st;
	PGresult *res = NULL;
	char what[512];
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);

	snprintf(what, sizeof what, "could not start a transaction for \"%s\"", m->name);
	st = exec_command(app->conn, "BEGIN", what, err);
	if (st != PW_OK)
		return st;

	res = PQexec(app->conn, m->text);
	ExecStatusType rs = PQresultStatus(res);
	if (rs == PGRES_EMPTY_QUERY) {
		st = mig_fail(err, PW_ERR_INVALID, "migration \"%s\" contains no statements", m->name);
		goto rollback;
	}
	if (rs != PGRES_COMMAND_OK && rs != PGRES_TUPLES_OK) {
		const char *pos = PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION);
		if (pos)
			snprintf(what, sizeof what, "migration \"%s/%s\" failed at line %ld", app->dir,
			         m->name, line_of_position(m->text, strtol(pos, NULL, 10)));
		else
			snprintf(what, sizeof what, "migration \"%s/%s\" failed", app->dir, m->name);
		st = pg_fail(err, app->conn, res, what);
		goto rollback;
	}
	PQclear(res);
	res = NULL;
	if (PQtransactionStatus(app->conn) != PQTRANS_INTRANS) {
		st = mig_fail(err, PW_ERR_INVALID,
		              "migration \"%s/%s\" ended the runner's transaction", app->dir, m->name);
		snprintf(err->detail, sizeof err->detail,
		         "Its statements up to the COMMIT or ROLLBACK may have been committed; it was "
		         "not recorded as applied.");
		snprintf(err->hint, sizeof err->hint,
		         "Migration files must not contain BEGIN, COMMIT or ROLLBACK.");
		goto rollback;
	}

	char version[32], duration[32];
	snprintf(version, sizeof version, "%ld", m->version);
	double ms = elapsed_ms(&t0);
	snprintf(duration, sizeof duration, "%.3f", ms);
	const char *params[] = {version, m->name, m->sha256, duration};
	res = PQexecParams(app->conn,
	                   "INSERT INTO perfwatch_meta.schema_migrations "
	                   "(version, name, sha256, duration_ms) VALUES ($1, $2, $3, $4)",
	                   4, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		snprintf(what, sizeof what, "could not record migration \"%s\"", m->name);
		st = pg_fail(err, app->conn, res, what);
		goto rollback;
	}
	PQclear(res);
	res = NULL;

	snprintf(what, sizeof what, "could not commit migration \"%s\"", m->name);
	st = exec_command(app->conn, "COMMIT", what, err);
	if (st != PW_OK)
		return st;
	pw_log_write(&app->log, PW_LOG_INFO,
	             (const char *[]){"version", version, "name", m->name, "sha256", m->sha256,
	                              "duration_ms", duration, NULL},
	             "applied migration \"%s\"", m->name);
	return PW_OK;

rollback:
	PQclear(res);
	if (PQtransactionStatus(app->conn) != PQTRANS_IDLE) {
		res = PQexec(app->conn, "ROLLBACK");
		PQclear(res);
	}
	return st;
}

/* The migration run: lock, bookkeeping table, checks, then every pending file. */
static pw_status run_migrate(pw_migrate_app *app, pw_migrate_error *err)
{
	pw_status st = take_lock(app, err);
	if (st != PW_OK)
		return st;
	st = exec_command(app->conn, meta_sql, "could not create perfwatch_meta.schema_migrations",
	                  err);
	if (st != PW_OK)
		return st;
	st = load_applied(app, err);
	if (st == PW_OK)
		st = check_applied(app, err);
	if (st != PW_OK)
		return st;

	size_t applied_now = 0;
	for (size_t i = app->napplied; i < app->nfiles; i++) {
		st = apply_one(app, &app->files[i], err);
		if (st != PW_OK)
			return st;
		applied_now++;
	}
	char version[32], count[32];
	snprintf(version, sizeof version, "%zu", app->nfiles);
	snprintf(count, sizeof count, "%zu", applied_now);
	if (applied_now == 0)
		pw_log_write(&app->log, PW_LOG_INFO,
		             (const char *[]){"version", version, "applied", count, NULL},
		             "database is up to date at version %04zu, nothing to apply", app->nfiles);
	else
		pw_log_write(&app->log, PW_LOG_INFO,
		             (const char *[]){"version", version, "applied", count, NULL},
		             "applied %zu migration%s, database is at version %04zu", applied_now,
		             applied_now == 1 ? "" : "s", app->nfiles);
	/* The session lock goes with the connection; release it explicitly anyway. */
	return exec_command(app->conn, "SELECT pg_advisory_unlock(" PW_MIGRATE_LOCK_KEY ")",
	                    "could not release the migration lock", err);
}

/*
 * --status: one line per migration on stdout, nothing changed. Returns
 * PW_ERR_CONFLICT when an applied migration changed or is missing.
 */
static pw_status run_status(pw_migrate_app *app, pw_migrate_error *err)
{
	pw_status st = load_applied(app, err);
	if (st != PW_OK)
		return st;
	size_t bad = 0;
	printf("%-8s %-8s %-12s %-20s %s\n", "version", "state", "sha256", "applied_at", "name");
	for (size_t i = 0; i < app->napplied; i++) {
		const pw_applied *a = &app->applied[i];
		const pw_migration *m = file_of_version(app, a->version);
		const char *state = "applied";
		if (!m)
			state = "missing";
		else if (strcmp(m->name, a->name) != 0)
			state = "renamed";
		else if (strcmp(m->sha256, a->sha256) != 0)
			state = "changed";
		if (strcmp(state, "applied") != 0)
			bad++;
		printf("%04ld     %-8s %-12.12s %-20s %s\n", a->version, state, a->sha256,
		       a->applied_at, a->name);
	}
	for (size_t i = app->napplied; i < app->nfiles; i++) {
		const pw_migration *m = &app->files[i];
		printf("%04ld     %-8s %-12.12s %-20s %s\n", m->version, "pending", m->sha256, "-",
		       m->name);
	}
	size_t pending = app->nfiles > app->napplied ? app->nfiles - app->napplied : 0;
	printf("%zu applied, %zu pending, %zu inconsistent\n", app->napplied, pending, bad);
	if (bad > 0) {
		st = check_applied(app, err);
		return st != PW_OK ? st : mig_fail(err, PW_ERR_CONFLICT, "migrations are inconsistent");
	}
	return PW_OK;
}

static void app_release(pw_migrate_app *app)
{
	for (size_t i = 0; i < app->nfiles; i++) {
		free(app->files[i].name);
		free(app->files[i].text);
	}
	free(app->files);
	for (size_t i = 0; i < app->napplied; i++)
		free(app->applied[i].name);
	free(app->applied);
	PQfinish(app->conn); /* accepts NULL */
	app->files = NULL;
	app->applied = NULL;
	app->conn = NULL;
}

int main(int argc, char **argv)
{
	pw_migrate_app app = {.dir = "migrations"};
	pw_migrate_error err = {{0}, {0}, {0}};
	pw_log_level level = PW_LOG_INFO;
	static const struct option opts[] = {
		{"dsn", required_argument, NULL, 'd'},
		{"dir", required_argument, NULL, 'D'},
		{"status", no_argument, NULL, 's'},
		{"log-level", required_argument, NULL, 'l'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': app.dsn = optarg; break;
		case 'D': app.dir = optarg; break;
		case 's': app.status = true; break;
		case 'l': {
			int lv = pw_log_level_parse(optarg);
			if (lv < 0) {
				fprintf(stderr, "pw-migrate: invalid log level \"%s\"\n", optarg);
				return PW_MIGRATE_EXIT_USAGE;
			}
			level = (pw_log_level)lv;
			break;
		}
		case 'h': usage(stdout); return PW_MIGRATE_EXIT_OK;
		default: usage(stderr); return PW_MIGRATE_EXIT_USAGE;
		}
	}
	if (optind < argc || !app.dsn || !app.dsn[0]) {
		usage(stderr);
		return PW_MIGRATE_EXIT_USAGE;
	}
	pw_log_init(&app.log, "pw-migrate", level);

	pw_status st = load_migrations(&app, &err);
	if (st == PW_OK)
		st = connect_db(&app, &err);
	if (st == PW_OK)
		st = hash_migrations(&app, &err);
	if (st == PW_OK)
		st = app.status ? run_status(&app, &err) : run_migrate(&app, &err);

	if (st != PW_OK) {
		/* detail and hint only when there is one, as PostgreSQL prints them */
		const char *fields[9] = {"code", pw_strerror(st), "dir", app.dir};
		size_t nf = 4;
		if (err.detail[0]) {
			fields[nf++] = "detail";
			fields[nf++] = err.detail;
		}
		if (err.hint[0]) {
			fields[nf++] = "hint";
			fields[nf++] = err.hint;
		}
		fields[nf] = NULL;
		pw_log_write(&app.log, PW_LOG_ERROR, fields, "%s", err.msg);
	}
	app_release(&app);
	return st == PW_OK ? PW_MIGRATE_EXIT_OK : PW_MIGRATE_EXIT_FAIL;
}
