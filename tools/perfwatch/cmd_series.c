/*
 * cmd_series.c: `perfwatch series show [--text] [--no-redis] SERIES`, what the
 * baseliner holds for one series: its baseline and band, its state
 * (baselining, active, frozen, quarantined) and why.
 *
 * Reads PostgreSQL (PW_PG_DSN): perfwatch.baseliner_series (the state machine's
 * state and window progress, migration 0012), the latest baseline and the
 * open freeze with its fleet change. The baseline itself comes through
 * pw_baseline_get (common/pw_baseline.h), the reader the services use:
 * Redis when PW_REDIS_ADDR is set and it holds PostgreSQL's current version,
 * PostgreSQL otherwise or when Redis is down; "source" says which and
 * "cache" what the cache did. Prints one JSON object, or with --text a few
 * lines for humans.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baseliner_store.h"
#include "cli.h"
#include "pw_limits.h"
#include "pw_log.h"
#include "pw_pg.h"
#include "pw_redis.h"

static int series_usage(const char *msg)
{
	fprintf(stderr, "perfwatch: series: %s\n", msg);
	fprintf(stderr, "usage: perfwatch series show [--text] [--no-redis] SERIES\n"
	                "       perfwatch series plot SERIES [-o FILE.svg]\n");
	return PW_CLI_EXIT_USAGE;
}

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	pw_json_escape(f, s ? s : "");
	fputc('"', f);
}

static void iso_time(char *buf, size_t len, int64_t us)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

typedef struct series_view {
	char key[PW_ST_KEY_MAX];
	long long series_id;
	char state[16];          /* from baseliner_series, else the baseline's */
	bool seen;               /* baseliner_series has the series */
	int window_n;
	char need[256];
	bool has_baseline;
	pw_baseline_record b;
	pw_baseline_source src;
	pw_baseline_outcome cache;
	bool redis_failed;
	bool frozen;
	char fev[64], fkind[32], freason[256], frozen_at[40];
	long long frozen_version;
	/* the latest re-baseline request (issue 17), open or done */
	bool has_rb;
	char rb_event[64], rb_status[8], rb_job[160], rb_since[40], rb_requested[40], rb_done_at[40];
	long long rb_runs_needed, rb_runs_have, rb_runs_missing, rb_chip_sets, rb_job_runs;
	long long rb_done_version;
	double rb_days, rb_age_s, rb_data_age_s;
	bool rb_has_data_age;
	/* the latest accepted shift, pending or done (0035) */
	bool has_acc;
	char acc[15][192];       /* ACC_COLS, as text; "" for SQL null */
	bool acc_null[15];
	char why[768];
} series_view;

/* the columns of the accepted_shift object, in the order of the query; the
 * first seven are strings */
static const char *const ACC_COLS[15] = {
	"reason", "status", "source_id", "accept_id", "shift_at", "accepted_at", "done_at",
	"level_before", "level_after", "nightlies_held", "old_version", "old_level", "new_version",
	"new_level", "delta_pct"};
#define ACC_NSTR 7

static int load_view(pw_pg *pg, pw_redis *rd, series_view *v, char *err, size_t errlen)
{
	const char *p[1] = {v->key};
	PGresult *res = NULL;
	/* with the newest baseline's version and state: what the cache is checked against */
	if (pw_pg_exec(pg, "SELECT s.series_id, coalesce(b.version, 0), coalesce(b.state, '') "
	                   "FROM perfwatch.series s LEFT JOIN LATERAL (SELECT version, state "
	                   "FROM perfwatch.baselines WHERE series_id = s.series_id "
	                   "ORDER BY version DESC LIMIT 1) b ON true WHERE s.series_key = $1",
	               1, p, &res, err, errlen) != PW_OK)
		return PW_CLI_EXIT_FAIL;
	if (PQntuples(res) != 1) {
		PQclear(res);
		snprintf(err, errlen, "no series \"%s\" in perfwatch.series", v->key);
		return PW_CLI_EXIT_USAGE;
	}
	v->series_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	uint64_t current = pw_baseline_cache_version_of(
		(uint32_t)strtoul(PQgetvalue(res, 0, 1), NULL, 10),
		pw_baseline_state_parse(PQgetvalue(res, 0, 2)));
	PQclear(res);

	if (pw_pg_exec(pg, "SELECT state, window_n, window_need FROM perfwatch.baseliner_series "
	                   "WHERE series_key = $1", 1, p, &res, err, errlen) != PW_OK)
		return PW_CLI_EXIT_FAIL;
	if (PQntuples(res) == 1) {
		v->seen = true;
		snprintf(v->state, sizeof v->state, "%s", PQgetvalue(res, 0, 0));
		v->window_n = atoi(PQgetvalue(res, 0, 1));
		snprintf(v->need, sizeof v->need, "%s", PQgetvalue(res, 0, 2));
	}
	PQclear(res);

	pw_baseline_reader br;
	pw_baseline_reader_init(&br, rd, pg, NULL);
	v->cache = rd ? PW_BASELINE_MISS : PW_BASELINE_UNCACHED; /* no baseline: nothing to read */
	pw_status st = current ? pw_baseline_get(&br, v->key, current, &v->b, &v->src, &v->cache,
	                                         err, errlen)
	                       : PW_ERR_NOT_FOUND;
	v->redis_failed = v->cache == PW_BASELINE_FALLBACK;
	if (st == PW_OK)
		v->has_baseline = true;
	else if (st != PW_ERR_NOT_FOUND)
		return PW_CLI_EXIT_FAIL;

	if (pw_pg_exec(pg, "SELECT event_id, kind, reason, to_char(frozen_at AT TIME ZONE 'UTC', "
	                   "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), coalesce(frozen_version, 0) "
	                   "FROM perfwatch.active_freezes WHERE series_key = $1 "
	                   "ORDER BY frozen_at DESC LIMIT 1", 1, p, &res, err, errlen) != PW_OK)
		return PW_CLI_EXIT_FAIL;
	if (PQntuples(res) == 1) {
		v->frozen = true;
		snprintf(v->fev, sizeof v->fev, "%s", PQgetvalue(res, 0, 0));
		snprintf(v->fkind, sizeof v->fkind, "%s", PQgetvalue(res, 0, 1));
		snprintf(v->freason, sizeof v->freason, "%s", PQgetvalue(res, 0, 2));
		snprintf(v->frozen_at, sizeof v->frozen_at, "%s", PQgetvalue(res, 0, 3));
		v->frozen_version = strtoll(PQgetvalue(res, 0, 4), NULL, 10);
	}
	PQclear(res);

	char idbuf[32];
	snprintf(idbuf, sizeof idbuf, "%lld", v->series_id);
	/* the freeze's age in wall time and in data time (to the newest
	 * measurement folded in while open; to the last point of the version
	 * that ended it once done: how long the series went ungated), and the
	 * runs the re-baseline still misses */
	if (pw_pg_exec(pg,
	               "SELECT r.event_id, r.status, r.job_id, "
	               "to_char(r.frozen_since AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
	               "to_char(r.requested_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
	               "coalesce(to_char(r.done_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ''), "
	               "r.runs_needed, CASE WHEN r.status = 'open' THEN coalesce(b.window_n, 0) "
	               "ELSE r.runs_needed END, r.chip_sets_needed, r.days_needed, r.job_runs, "
	               "coalesce(r.done_version, 0), "
	               "extract(epoch FROM coalesce(r.done_at, now()) - r.frozen_since), "
	               "extract(epoch FROM CASE WHEN r.status = 'open' THEN b.mark_measured_at ELSE "
	               "(SELECT x.window_end FROM perfwatch.baselines x WHERE x.series_id = r.series_id "
	               "AND x.version = r.done_version) END - r.frozen_since) "
	               "FROM perfwatch.rebaseline_requests r LEFT JOIN perfwatch.baseliner_series b "
	               "USING (series_id) WHERE r.series_id = $1::bigint "
	               "ORDER BY r.frozen_since DESC, r.requested_at DESC LIMIT 1",
	               1, (const char *[]){idbuf}, &res, err,
	               errlen) != PW_OK)
		return PW_CLI_EXIT_FAIL;
	if (PQntuples(res) == 1) {
		v->has_rb = true;
		snprintf(v->rb_event, sizeof v->rb_event, "%s", PQgetvalue(res, 0, 0));
		snprintf(v->rb_status, sizeof v->rb_status, "%s", PQgetvalue(res, 0, 1));
		snprintf(v->rb_job, sizeof v->rb_job, "%s", PQgetvalue(res, 0, 2));
		snprintf(v->rb_since, sizeof v->rb_since, "%s", PQgetvalue(res, 0, 3));
		snprintf(v->rb_requested, sizeof v->rb_requested, "%s", PQgetvalue(res, 0, 4));
		snprintf(v->rb_done_at, sizeof v->rb_done_at, "%s", PQgetvalue(res, 0, 5));
		v->rb_runs_needed = strtoll(PQgetvalue(res, 0, 6), NULL, 10);
		v->rb_runs_have = strtoll(PQgetvalue(res, 0, 7), NULL, 10);
		v->rb_runs_missing = v->rb_runs_needed > v->rb_runs_have
		                             ? v->rb_runs_needed - v->rb_runs_have : 0;
		v->rb_chip_sets = strtoll(PQgetvalue(res, 0, 8), NULL, 10);
		v->rb_days = strtod(PQgetvalue(res, 0, 9), NULL);
		v->rb_job_runs = strtoll(PQgetvalue(res, 0, 10), NULL, 10);
		v->rb_done_version = strtoll(PQgetvalue(res, 0, 11), NULL, 10);
		v->rb_age_s = strtod(PQgetvalue(res, 0, 12), NULL);
		v->rb_has_data_age = !PQgetisnull(res, 0, 13);
		v->rb_data_age_s = v->rb_has_data_age ? strtod(PQgetvalue(res, 0, 13), NULL) : 0.0;
	}
	PQclear(res);

#define ISO(c) "to_char(" c " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
	if (pw_pg_exec(pg,
	               "SELECT reason, status, source_id, accept_id, " ISO("shift_at") ", "
	               ISO("accepted_at") ", " ISO("done_at") ", level_before, level_after, "
	               "nightlies_held, old_version, old_level, new_version, new_level, "
	               "round((100 * (new_level / nullif(old_level, 0) - 1))::numeric, 3) "
	               "FROM perfwatch.shift_acceptances WHERE series_id = $1::bigint "
	               "ORDER BY shift_at DESC, recorded_at DESC LIMIT 1",
	               1, (const char *[]){idbuf}, &res, err, errlen) != PW_OK)
		return PW_CLI_EXIT_FAIL;
#undef ISO
	if (PQntuples(res) == 1) {
		v->has_acc = true;
		for (int c = 0; c < 15; c++) {
			v->acc_null[c] = PQgetisnull(res, 0, c);
			snprintf(v->acc[c], sizeof v->acc[c], "%s", PQgetvalue(res, 0, c));
		}
	}
	PQclear(res);

	if (!v->seen)
		snprintf(v->state, sizeof v->state, "%s",
		         v->has_baseline ? pw_baseline_state_name(v->b.state) : "baselining");
	if (v->frozen)
		snprintf(v->state, sizeof v->state, "frozen");

	/* why */
	if (strcmp(v->state, "frozen") == 0 && v->frozen && strcmp(v->fkind, "accepted_shift") == 0) {
		snprintf(v->why, sizeof v->why,
		         "frozen by accepted shift %s (%s) at %s; not gated; re-baselining from the "
		         "first shifted point: %s", v->fev, v->freason, v->frozen_at,
		         v->need[0] ? v->need : "window empty");
	} else if (strcmp(v->state, "frozen") == 0) {
		snprintf(v->why, sizeof v->why,
		         "frozen by fleet change %s (%s: %s) at %s; not gated; re-baselining from the "
		         "points after the change: %s",
		         v->frozen ? v->fev : (v->has_baseline ? v->b.freeze_event_id : "?"),
		         v->frozen ? v->fkind : "?", v->frozen ? v->freason : v->b.freeze_reason,
		         v->frozen ? v->frozen_at : "?", v->need[0] ? v->need : "window empty");
	} else if (strcmp(v->state, "quarantined") == 0) {
		snprintf(v->why, sizeof v->why, "%s; investigated as an infrastructure bug, not gated",
		         v->has_baseline && v->b.freeze_reason[0] ? v->b.freeze_reason
		                                                  : "sigma above the quarantine limit");
	} else if (strcmp(v->state, "active") == 0 && v->has_baseline) {
		snprintf(v->why, sizeof v->why,
		         "baseline v%u from %u runs over %u days on %u chip-sets; sigma %.3g%% within "
		         "the quarantine limit (platform norm %.3g%%); gated against it; a release "
		         "needs %u candidate runs at the top tier (MDE %g%%), %u at the tail (MDE %g%%)",
		         v->b.version, v->b.n, v->b.days, v->b.chip_sets, v->b.sigma_pct,
		         v->b.platform_norm_sigma_pct, v->b.required_n_top, v->b.mde_top_pct,
		         v->b.required_n_tail, v->b.mde_tail_pct);
	} else {
		snprintf(v->why, sizeof v->why, "collecting the null window: %s",
		         v->need[0] ? v->need : "no points of the baseline build line yet");
	}
	return PW_CLI_EXIT_OK;
}

static void print_json(FILE *f, const series_view *v)
{
	fputs("{\"series_key\":", f);
	jstr(f, v->key);
	fprintf(f, ",\"series_id\":%lld,\"state\":", v->series_id);
	jstr(f, v->state);
	fputs(",\"why\":", f);
	jstr(f, v->why);
	fprintf(f, ",\"window\":{\"n\":%d,\"status\":", v->window_n);
	jstr(f, v->need);
	fputs("},\"baseline\":", f);
	if (!v->has_baseline) {
		fputs("null", f);
	} else {
		const pw_baseline_record *b = &v->b;
		char ws[40], we[40];
		iso_time(ws, sizeof ws, b->window_start_us);
		iso_time(we, sizeof we, b->window_end_us);
		fprintf(f, "{\"version\":%u,\"state\":", b->version);
		jstr(f, pw_baseline_state_name(b->state));
		fputs(",\"source\":", f);
		jstr(f, v->src == PW_BASELINE_FROM_REDIS ? "redis" : "postgres");
		fputs(",\"median\":", f);
		pw_cli_json_number(f, b->median);
		fputs(",\"mad_n\":", f);
		pw_cli_json_number(f, b->mad_n);
		fputs(",\"band\":[", f);
		pw_cli_json_number(f, b->band_lo);
		fputc(',', f);
		pw_cli_json_number(f, b->band_hi);
		fputs("],\"sigma_pct\":", f);
		pw_cli_json_number(f, b->sigma_pct);
		fputs(",\"platform_norm_sigma_pct\":", f);
		pw_cli_json_number(f, b->platform_norm_sigma_pct);
		fprintf(f, ",\"n\":%u,\"days\":%u,\"chip_sets\":%u,\"window_start\":", b->n, b->days,
		        b->chip_sets);
		jstr(f, ws);
		fputs(",\"window_end\":", f);
		jstr(f, we);
		fputs(",\"unit\":", f);
		jstr(f, b->unit);
		/* §4.5: the runs a release needs on it, per tier (0: not published) */
		fprintf(f, ",\"required_n_top\":%u,\"required_n_tail\":%u,\"mde_top_pct\":",
		        b->required_n_top, b->required_n_tail);
		pw_cli_json_number(f, b->mde_top_pct);
		fputs(",\"mde_tail_pct\":", f);
		pw_cli_json_number(f, b->mde_tail_pct);
		fprintf(f, ",\"gpu_class\":%s", b->gpu_class ? "true" : "false");
		fputc('}', f);
	}
	fputs(",\"freeze\":", f);
	if (!v->frozen) {
		fputs("null", f);
	} else {
		fputs("{\"event_id\":", f);
		jstr(f, v->fev);
		fputs(",\"kind\":", f);
		jstr(f, v->fkind);
		fputs(",\"reason\":", f);
		jstr(f, v->freason);
		fputs(",\"frozen_at\":", f);
		jstr(f, v->frozen_at);
		fprintf(f, ",\"frozen_version\":%lld}", v->frozen_version);
	}
	fputs(",\"rebaseline\":", f);
	if (!v->has_rb) {
		fputs("null", f);
	} else {
		fputs("{\"event_id\":", f);
		jstr(f, v->rb_event);
		fputs(",\"status\":", f);
		jstr(f, v->rb_status);
		fputs(",\"job_id\":", f);
		jstr(f, v->rb_job);
		fprintf(f, ",\"job_runs\":%lld,\"frozen_since\":", v->rb_job_runs);
		jstr(f, v->rb_since);
		fputs(",\"requested_at\":", f);
		jstr(f, v->rb_requested);
		fputs(",\"freeze_age_s\":", f);
		pw_cli_json_number(f, v->rb_age_s);
		fputs(",\"freeze_data_age_s\":", f);
		if (v->rb_has_data_age)
			pw_cli_json_number(f, v->rb_data_age_s);
		else
			fputs("null", f);
		fprintf(f, ",\"runs_needed\":%lld,\"runs_have\":%lld,\"runs_missing\":%lld,"
		           "\"chip_sets_needed\":%lld,\"days_needed\":",
		        v->rb_runs_needed, v->rb_runs_have, v->rb_runs_missing, v->rb_chip_sets);
		pw_cli_json_number(f, v->rb_days);
		fputs(",\"done_at\":", f);
		if (v->rb_done_at[0])
			jstr(f, v->rb_done_at);
		else
			fputs("null", f);
		fprintf(f, ",\"done_version\":%lld}", v->rb_done_version);
	}
	fputs(",\"accepted_shift\":", f);
	if (!v->has_acc) {
		fputs("null", f);
	} else {
		for (int c = 0; c < 15; c++) {
			fputs(c ? ",\"" : "{\"", f);
			fputs(ACC_COLS[c], f);
			fputs("\":", f);
			if (v->acc_null[c])
				fputs("null", f);
			else if (c < ACC_NSTR)
				jstr(f, v->acc[c]);
			else
				pw_cli_json_number(f, strtod(v->acc[c], NULL));
		}
		fputc('}', f);
	}
	fprintf(f, ",\"redis_failed\":%s,\"cache\":", v->redis_failed ? "true" : "false");
	jstr(f, pw_baseline_outcome_name(v->cache));
	fputs("}\n", f);
}

static void print_text(FILE *f, const series_view *v)
{
	fprintf(f, "series   %s (id %lld)\n", v->key, v->series_id);
	fprintf(f, "state    %s\n", v->state);
	fprintf(f, "why      %s\n", v->why);
	if (v->has_baseline) {
		const pw_baseline_record *b = &v->b;
		fprintf(f, "baseline v%u (%s, from %s): median %.6g %s, MAD_n %.4g, band [%.6g, %.6g], "
		           "sigma %.3g%%\n",
		        b->version, pw_baseline_state_name(b->state),
		        v->src == PW_BASELINE_FROM_REDIS ? "redis" : "postgres", b->median, b->unit,
		        b->mad_n, b->band_lo, b->band_hi, b->sigma_pct);
	} else {
		fprintf(f, "baseline none yet\n");
	}
	if (v->need[0])
		fprintf(f, "window   %s\n", v->need);
	if (v->has_rb)
		fprintf(f, "rebaseline %s after %s (job %s): %lld of %lld runs, %lld missing; frozen "
		           "%.1f h (wall), %.1f h (data time)\n",
		        v->rb_status, v->rb_event, v->rb_job[0] ? v->rb_job : "none", v->rb_runs_have,
		        v->rb_runs_needed, v->rb_runs_missing, v->rb_age_s / 3600.0,
		        v->rb_has_data_age ? v->rb_data_age_s / 3600.0 : 0.0);
	if (v->has_acc)
		fprintf(f, "shift    %s %s (%s) from %s: %s -> %s; held %s nightlies; baseline v%s %s -> "
		           "v%s %s (%s%%)\n",
		        v->acc[1], v->acc[3], v->acc[0], v->acc[4], v->acc[7], v->acc[8],
		        v->acc_null[9] ? "-" : v->acc[9], v->acc_null[10] ? "-" : v->acc[10],
		        v->acc_null[11] ? "-" : v->acc[11], v->acc_null[12] ? "-" : v->acc[12],
		        v->acc_null[13] ? "-" : v->acc[13], v->acc_null[14] ? "-" : v->acc[14]);
}

int pw_cmd_series(int argc, char **argv)
{
	bool text = false, use_redis = true;
	const char *key = NULL;
	if (argc >= 2 && strcmp(argv[1], "plot") == 0)
		return pw_cmd_series_plot(argc - 1, argv + 1);
	if (argc < 2 || strcmp(argv[1], "show") != 0)
		return series_usage("the subcommands are \"show\" and \"plot\"");
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--text") == 0)
			text = true;
		else if (strcmp(argv[i], "--no-redis") == 0)
			use_redis = false;
		else if (argv[i][0] == '-')
			return series_usage("unknown option");
		else if (key)
			return series_usage("one SERIES only");
		else
			key = argv[i];
	}
	if (!key)
		return series_usage("missing SERIES (model/hlo_fingerprint/platform/config/metric)");
	int id_rc = pw_cli_check_id("series key", key, PW_SERIES_KEY_MAX - 1);
	if (id_rc >= 0)
		return id_rc;
	const char *dsn = getenv("PW_PG_DSN");
	if (!dsn || !*dsn) {
		pw_cli_missing_env("PW_PG_DSN");
		return PW_CLI_EXIT_USAGE;
	}
	const char *raddr = use_redis ? getenv("PW_REDIS_ADDR") : NULL;

	pw_log lg;
	pw_log_init(&lg, "perfwatch", PW_LOG_ERROR);
	char err[1024] = "";
	int rc = PW_CLI_EXIT_FAIL;
	pw_pg *pg = NULL;
	pw_redis *rd = NULL;
	series_view *v = calloc(1, sizeof *v);
	if (!v) {
		fprintf(stderr, "perfwatch: series: out of memory\n");
		return PW_CLI_EXIT_FAIL;
	}
	snprintf(v->key, sizeof v->key, "%s", key);
	if (pw_pg_new(&pg, dsn, NULL, &lg, err, sizeof err) != PW_OK ||
	    pw_pg_wait_connected(pg, 5000, NULL, err, sizeof err) != PW_OK) {
		fprintf(stderr, "perfwatch: series: postgresql: %s\n", err);
		goto out;
	}
	if (raddr && *raddr && pw_redis_new(&rd, raddr, NULL, &lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "perfwatch: series: redis address: %s\n", err);
		rc = PW_CLI_EXIT_USAGE;
		goto out;
	}
	rc = load_view(pg, rd, v, err, sizeof err);
	if (rc != PW_CLI_EXIT_OK) {
		fprintf(stderr, "perfwatch: series: %s\n", err);
		goto out;
	}
	if (text)
		print_text(stdout, v);
	else
		print_json(stdout, v);
out:
	pw_redis_free(rd);
	pw_pg_free(pg);
	free(v);
	return rc;
}
