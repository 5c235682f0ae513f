/*
 * cmd_gate.c: `perfwatch gate show RELEASE` (the gate console report of
 * artifact 7, from PostgreSQL) and `perfwatch gate request ...` (publishes a
 * GateRequest on perf.gate.requests.v1, as release tooling does).
 *
 * The report reads what services/gate stored (gate_evaluations,
 * gate_family_results, gate_series_results of migrations/0004_gate.sql, and
 * the compounding drift of migrations/0051_p1_tickets.sql): it
 * shows the gate's own numbers and decides nothing again. The request is
 * built from the options and published with pw_producer (pw_kafka.h), keyed
 * by release_id. PW_PG_DSN and PW_KAFKA_BOOTSTRAP_SERVERS come from the
 * environment (run/stack.env of the dev stack).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "cli.h"
#include "pw_limits.h"
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_stats.h"
#include "pw_topics.h"

#include "perfwatch/v1/gate.pb-c.h"

#define GATE_CLI_MAX 64

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: perfwatch gate show RELEASE [--evaluation N] [--json]\n"
	        "       perfwatch gate request --release ID --candidate BUILD --baseline RELEASE\n"
	        "              [--evaluation N] [--cl CL] [--family MODEL]... [--fdr Q]\n"
	        "              [--expect SERIES_KEY=PCT]... [--waive MODEL:OWNER:EXPIRY[:ID]]...\n"
	        "              [--pin MODEL:SIGNOFF[:ARTIFACT[:RELEASE]]]...\n"
	        "              [--tier top|tail=N[:MDE]]... [--deadline-s SECONDS]\n"
	        "  EXPIRY is unix seconds, or +S / -S seconds from now\n"
	        "  --pin makes MODEL's --waive a pin: MODEL stays on N-1 (RELEASE, default the\n"
	        "  baseline) with ARTIFACT; SIGNOFF is the model team's (an empty one is sent\n"
	        "  as is, and the gate refuses it)\n");
}

/* ------------------------------------------------------------------- show */

static double num(PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NAN : strtod(PQgetvalue(res, row, col), NULL);
}

static void upper(char *dst, size_t len, const char *s)
{
	size_t i = 0;
	for (; s[i] && i + 1 < len; i++)
		dst[i] = (char)toupper((unsigned char)s[i]);
	dst[i] = '\0';
}

static void json_str(FILE *out, const char *k, const char *v, bool comma)
{
	fprintf(out, "%s\"%s\":\"", comma ? "," : "", k);
	pw_json_escape(out, v);
	fputc('"', out);
}

static void json_num(FILE *out, const char *k, double v, bool comma)
{
	fprintf(out, "%s\"%s\":", comma ? "," : "", k);
	pw_cli_json_number(out, v);
}

enum {
	S_FAMILY, S_PLATFORM, S_CONFIG, S_METRIC, S_KEY, S_BMED, S_BMAD, S_BN, S_CMED, S_CN, S_U,
	S_P, S_Q, S_DELTA, S_MDE, S_TWOSIG, S_EFFECT, S_VERDICT, S_EXPECTED, S_WAIVER, S_ALERT,
	S_WELCH_P, S_UNIT, S_EFFECT_PCT, S_EXCESS, S_PRACTICAL, S_NOISE_FLOOR, S_THRESHOLD,
	S_REQUIRED_N, S_TIER_MDE, S_NUMERICS, S_BASE_NUMERICS, S_CAND_NUMERICS, S_NUMERICS_REASON
};

/*
 * §9's faster-but-wrong check of a win (or of a series it blocked): the
 * reason and both fingerprints, a match, or "numerics not checked" when a
 * run carries no fingerprint (never a guess). Other series: nothing.
 */
static void show_numerics_text(PGresult *s, int i)
{
	const char *v = PQgetvalue(s, i, S_VERDICT), *n = PQgetvalue(s, i, S_NUMERICS);
	const char *b = PQgetvalue(s, i, S_BASE_NUMERICS), *c = PQgetvalue(s, i, S_CAND_NUMERICS);
	if (*PQgetvalue(s, i, S_NUMERICS_REASON))
		printf("    %s: baseline numerics %s, candidate numerics %s\n",
		       PQgetvalue(s, i, S_NUMERICS_REASON), b, c);
	else if (strcmp(v, "investigate") != 0 && strcmp(v, "validated_win") != 0)
		return;
	else if (strcmp(n, "match") == 0)
		printf("    numerics match the baseline's (%s)\n", b);
	else if (strcmp(n, "mismatch") == 0) /* not reached: a mismatching win is blocked */
		printf("    numerics differ: baseline %s, candidate %s\n", b, c);
	else
		printf("    numerics not checked (%s)\n",
		       !*b ? "no baseline run carries a numerics fingerprint"
		           : "a candidate run carries no numerics fingerprint");
}

static void show_series_text(PGresult *s, int i, double fdr, int tests)
{
	char verdict[64];
	upper(verdict, sizeof verdict, PQgetvalue(s, i, S_VERDICT));
	const char *v = PQgetvalue(s, i, S_VERDICT);
	printf("  series %s/%s : ", PQgetvalue(s, i, S_METRIC), PQgetvalue(s, i, S_CONFIG));
	if (PQgetisnull(s, i, S_P)) {
		printf("not tested (base n=%s, rc n=%s)  ->  verdict: %s\n", PQgetvalue(s, i, S_BN),
		       PQgetvalue(s, i, S_CN), verdict);
		return;
	}
	double q = num(s, i, S_Q), delta = num(s, i, S_DELTA), mde = num(s, i, S_MDE);
	double expected = num(s, i, S_EXPECTED);
	bool effect = PQgetvalue(s, i, S_EFFECT)[0] == 't';
	printf("base med=%.4g (n=%s, MAD=%.3g)  rc med=%.4g (n=%s)\n", num(s, i, S_BMED),
	       PQgetvalue(s, i, S_BN), num(s, i, S_BMAD), num(s, i, S_CMED), PQgetvalue(s, i, S_CN));
	printf("    mann-whitney U=%g p=%.2g | welch p=%.2g | BH-q(%d tests)=%.2g %s\n",
	       num(s, i, S_U), num(s, i, S_P), num(s, i, S_WELCH_P), tests, q,
	       q < fdr ? "PASS" : "FAIL");
	if (expected != 0.0)
		printf("    registered %+.2f%%: observed %+.2f%%, excess tested against zero\n",
		       expected, delta);
	/* the filter as decided, in the rule's words (PW_COMPARE_FILTER_RULE): the
	 * HL effect (or its excess over a registration) against its threshold,
	 * stored since migration 0038 */
	/* "within-noise" only for PASS: an UNDER_POWERED series says so */
	const char *outcome = strcmp(v, "pass") == 0 ? "within-noise" : verdict;
	const char *by = *PQgetvalue(s, i, S_WAIVER) ? " by " : "";
	double thr = num(s, i, S_THRESHOLD), practical = num(s, i, S_PRACTICAL);
	if (isnan(thr)) {
		printf("    effect filter %s (threshold not recorded: decided before migration 0038)"
		       "  ->  verdict: %s%s%s\n",
		       effect ? "PASS" : "FAIL", outcome, by, PQgetvalue(s, i, S_WAIVER));
		return;
	}
	bool registered = expected != 0.0;
	double eff = registered ? num(s, i, S_EXCESS) : num(s, i, S_EFFECT_PCT);
	/* k from what was stored: noise floor / SE, SE = σ·√(1/n_b + 1/n_c) */
	double nb = num(s, i, S_BN), nc = num(s, i, S_CN), floor_pct = num(s, i, S_NOISE_FLOOR);
	double se = num(s, i, S_TWOSIG) / 2.0 * sqrt(1.0 / nb + 1.0 / nc);
	char filter[160];
	pw_compare_filter_text(filter, sizeof filter, registered ? "excess" : "effect", eff,
	                       mde > 0.0 ? practical / mde : 0.0, practical,
	                       se > 0.0 ? floor_pct / se : PW_COMPARE_NOISE_K, floor_pct);
	printf("    %s %s  ->  verdict: %s%s%s\n", filter, effect ? "PASS" : "FAIL", outcome, by,
	       PQgetvalue(s, i, S_WAIVER));
	/* §4.5: what the runs could certify, where it is less than the tier asks */
	double required = num(s, i, S_REQUIRED_N), tier_mde = num(s, i, S_TIER_MDE);
	bool short_runs = !isnan(required) && nc < required, gpu = tier_mde < mde;
	if (short_runs)
		printf("    power: rc n=%.0f < required n=%.0f for MDE=%g%% at this series' noise: a "
		       "change of the MDE could pass unseen\n",
		       nc, required, mde);
	if (gpu)
		printf("    GPU: certified at MDE=%g%%, the %g-%g%% band is the production canary's\n", mde,
		       tier_mde, mde);
	show_numerics_text(s, i);
}

static void show_series_json(FILE *out, PGresult *s, int i)
{
	fputc('{', out);
	json_str(out, "series_key", PQgetvalue(s, i, S_KEY), false);
	json_str(out, "platform", PQgetvalue(s, i, S_PLATFORM), true);
	json_str(out, "config", PQgetvalue(s, i, S_CONFIG), true);
	json_str(out, "metric", PQgetvalue(s, i, S_METRIC), true);
	json_str(out, "unit", PQgetvalue(s, i, S_UNIT), true);
	json_num(out, "baseline_median", num(s, i, S_BMED), true);
	json_num(out, "baseline_mad_n", num(s, i, S_BMAD), true);
	json_num(out, "baseline_n", num(s, i, S_BN), true);
	json_num(out, "candidate_median", num(s, i, S_CMED), true);
	json_num(out, "candidate_n", num(s, i, S_CN), true);
	json_num(out, "u", num(s, i, S_U), true);
	json_num(out, "p", num(s, i, S_P), true);
	json_num(out, "welch_p", num(s, i, S_WELCH_P), true);
	json_num(out, "q", num(s, i, S_Q), true);
	json_num(out, "delta_pct", num(s, i, S_DELTA), true);
	json_num(out, "expected_delta_pct", num(s, i, S_EXPECTED), true);
	json_num(out, "mde_pct", num(s, i, S_MDE), true);
	json_num(out, "two_sigma_pct", num(s, i, S_TWOSIG), true);
	json_num(out, "effect_pct", num(s, i, S_EFFECT_PCT), true);
	json_num(out, "excess_pct", num(s, i, S_EXCESS), true);
	json_num(out, "practical_pct", num(s, i, S_PRACTICAL), true);
	json_num(out, "noise_floor_pct", num(s, i, S_NOISE_FLOOR), true);
	json_num(out, "threshold_pct", num(s, i, S_THRESHOLD), true);
	json_num(out, "required_n", num(s, i, S_REQUIRED_N), true);
	json_num(out, "tier_mde_pct", num(s, i, S_TIER_MDE), true);
	json_str(out, "numerics", PQgetvalue(s, i, S_NUMERICS), true);
	json_str(out, "baseline_numerics_fingerprint", PQgetvalue(s, i, S_BASE_NUMERICS), true);
	json_str(out, "candidate_numerics_fingerprint", PQgetvalue(s, i, S_CAND_NUMERICS), true);
	json_str(out, "numerics_reason", PQgetvalue(s, i, S_NUMERICS_REASON), true);
	fprintf(out, ",\"effect_passed\":%s", PQgetvalue(s, i, S_EFFECT)[0] == 't' ? "true" : "false");
	json_str(out, "verdict", PQgetvalue(s, i, S_VERDICT), true);
	json_str(out, "waiver_id", PQgetvalue(s, i, S_WAIVER), true);
	json_str(out, "alert_id", PQgetvalue(s, i, S_ALERT), true);
	fputc('}', out);
}

/* What a pending evaluation waits for, what a decided one lacked (header row h). */
static void show_waiting(PGresult *h)
{
	const char *status = PQgetvalue(h, 0, 3), *waiting = PQgetvalue(h, 0, 9);
	double left = num(h, 0, 12);
	int late_of = atoi(PQgetvalue(h, 0, 11));
	if (late_of)
		printf("re-decision of evaluation %d on late data\n", late_of);
	if (strcmp(status, "pending") == 0) {
		printf("%s; deadline %s", *waiting ? waiting : "waiting: not looked at yet",
		       *PQgetvalue(h, 0, 13) ? PQgetvalue(h, 0, 13) : "none");
		if (!isnan(left))
			printf(left >= 0 ? " (in %.0f s)" : " (passed %.0f s ago)", fabs(left));
		printf("\n");
	} else if (atoi(PQgetvalue(h, 0, 10)) > 0) {
		printf("decided lacking: %s; a new evaluation follows when late data arrives\n",
		       waiting);
	}
}

static int gate_show(int argc, char **argv)
{
	const char *release = NULL, *evaluation = NULL;
	bool json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--evaluation") == 0 && i + 1 < argc)
			evaluation = argv[++i];
		else if (argv[i][0] != '-' && !release)
			release = argv[i];
		else {
			usage(stderr);
			return PW_CLI_EXIT_USAGE;
		}
	}
	if (!release) {
		usage(stderr);
		return PW_CLI_EXIT_USAGE;
	}
	int rc = pw_cli_check_id("release id", release, PW_RELEASE_ID_MAX);
	if (rc >= 0)
		return rc;
	if (evaluation) {
		char *end;
		errno = 0;
		long ev = strtol(evaluation, &end, 10);
		if (end == evaluation || *end || errno || ev < 1 || ev > INT32_MAX) {
			fprintf(stderr, "perfwatch: --evaluation takes a number from 1 to %d\n", INT32_MAX);
			return PW_CLI_EXIT_USAGE;
		}
	}
	PGconn *conn;
	rc = pw_cli_pg_connect(&conn);
	if (rc >= 0)
		return rc;
	rc = PW_CLI_EXIT_FAIL;
	PGresult *h = NULL, *f = NULL, *s = NULL, *d = NULL, *pn = NULL;
	const char *hp[] = {release, evaluation};
	h = pw_cli_pg_query(conn, "reading gate evaluations failed",
	                    "SELECT evaluation, candidate_build_id, baseline_release, status, "
	                    "coalesce(verdict, ''), tests, fleet_weighted_impact_pct, summary, fdr_q, "
	                    "waiting, lacking, coalesce(late_of, 0), "
	                    "coalesce(extract(epoch FROM deadline - now()), 'NaN'), "
	                    "coalesce(to_char(deadline AT TIME ZONE 'UTC', "
	                    "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '') "
	                    "FROM perfwatch.gate_evaluations WHERE release_id = $1 "
	                    "AND ($2::integer IS NULL OR evaluation = $2::integer) "
	                    "ORDER BY evaluation DESC LIMIT 1",
	                    2, hp);
	if (!h)
		goto out;
	if (PQntuples(h) == 0) {
		fprintf(stderr, "perfwatch: no gate evaluation of release \"%s\"\n", release);
		rc = PW_CLI_EXIT_USAGE;
		goto out;
	}
	const char *kp[] = {release, PQgetvalue(h, 0, 0)};
	if (!(f = pw_cli_pg_query(conn, "reading gate results failed",
	                          "SELECT family, tier, verdict, spend_share, spend_weighted_impact_pct, "
	                          "gated_series, regressed_series, under_powered_series, inherits_from, "
	                          "inherit_similarity, verdict_inherited "
	                          "FROM perfwatch.gate_family_results "
	                          "WHERE release_id = $1 AND evaluation = $2 ORDER BY family COLLATE \"C\"",
	                          2, kp)) ||
	    !(s = pw_cli_pg_query(conn, "reading gate results failed",
	                          "SELECT r.family, s.platform, s.config, s.metric, s.series_key, "
	                          "r.baseline_median, r.baseline_mad_n, r.baseline_n, r.candidate_median, "
	                          "r.candidate_n, r.u, r.p, r.q, r.delta_pct, r.mde_pct, r.two_sigma_pct, "
	                          "r.effect_passed, r.verdict, r.expected_delta_pct, r.waiver_id, r.alert_id, "
	                          "r.welch_p, r.unit, r.effect_pct, r.excess_pct, r.practical_pct, "
	                          "r.noise_floor_pct, r.threshold_pct, r.required_n, r.tier_mde_pct, "
	                          "r.numerics, r.baseline_numerics_fingerprint, "
	                          "r.candidate_numerics_fingerprint, r.numerics_reason "
	                          "FROM perfwatch.gate_series_results r "
	                          "JOIN perfwatch.series s USING (series_id) "
	                          "WHERE r.release_id = $1 AND r.evaluation = $2 "
	                          "ORDER BY r.family COLLATE \"C\", s.platform COLLATE \"C\", "
	                          "s.config COLLATE \"C\", s.metric COLLATE \"C\"",
	                          2, kp)) ||
	    !(d = pw_cli_pg_query(conn, "reading compounding drift failed",
	                          "SELECT d.ticket_id, d.series_key, d.found_release, d.age_s, d.line, "
	                          "t.status FROM perfwatch.gate_compounding_drift d "
	                          "JOIN perfwatch.p1_tickets t USING (ticket_id) "
	                          "WHERE d.release_id = $1 AND d.evaluation = $2 ORDER BY d.ticket_id",
	                          2, kp)) ||
	    !(pn = pw_cli_pg_query(conn, "reading pins failed",
	                           "SELECT model, waiver_id, pin_release, pin_artifact, owner, "
	                           "pin_signed_off_by, to_char(expires_at AT TIME ZONE 'UTC', "
	                           "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
	                           "(extract(epoch FROM expires_at) * 1e6)::bigint, expires_at <= now(), "
	                           "EXISTS (SELECT 1 FROM perfwatch.pin_expiries e WHERE "
	                           "e.release_id = w.release_id AND e.waiver_id = w.waiver_id) "
	                           "FROM perfwatch.waivers w WHERE release_id = $1 AND pin "
	                           "ORDER BY model COLLATE \"C\", waiver_id COLLATE \"C\"",
	                           1, kp)))
		goto out;
	double fdr = num(h, 0, 8);
	int tests = atoi(PQgetvalue(h, 0, 5));
	if (json) {
		printf("{");
		json_str(stdout, "release_id", release, false);
		json_num(stdout, "evaluation", num(h, 0, 0), true);
		json_str(stdout, "candidate_build_id", PQgetvalue(h, 0, 1), true);
		json_str(stdout, "baseline_release", PQgetvalue(h, 0, 2), true);
		json_str(stdout, "status", PQgetvalue(h, 0, 3), true);
		json_str(stdout, "verdict", PQgetvalue(h, 0, 4), true);
		json_num(stdout, "tests", tests, true);
		json_num(stdout, "fdr_q", fdr, true);
		json_num(stdout, "fleet_weighted_impact_pct", num(h, 0, 6), true);
		json_str(stdout, "summary", PQgetvalue(h, 0, 7), true);
		json_str(stdout, "waiting", PQgetvalue(h, 0, 9), true);
		json_num(stdout, "lacking", num(h, 0, 10), true);
		json_num(stdout, "late_of", num(h, 0, 11), true);
		json_str(stdout, "deadline", PQgetvalue(h, 0, 13), true);
		printf(",\"families\":[");
		for (int j = 0; j < PQntuples(f); j++) {
			printf("%s{", j ? "," : "");
			json_str(stdout, "family", PQgetvalue(f, j, 0), false);
			json_str(stdout, "tier", PQgetvalue(f, j, 1), true);
			json_str(stdout, "verdict", PQgetvalue(f, j, 2), true);
			json_num(stdout, "spend_share", num(f, j, 3), true);
			json_num(stdout, "spend_weighted_impact_pct", num(f, j, 4), true);
			json_num(stdout, "gated_series", num(f, j, 5), true);
			json_num(stdout, "regressed_series", num(f, j, 6), true);
			json_num(stdout, "under_powered_series", num(f, j, 7), true);
			json_str(stdout, "inherits_from", PQgetvalue(f, j, 8), true);
			if (!PQgetisnull(f, j, 9))
				json_num(stdout, "inherit_similarity", num(f, j, 9), true);
			printf(",\"verdict_inherited\":%s", PQgetvalue(f, j, 10)[0] == 't' ? "true" : "false");
			printf(",\"series\":[");
			int k = 0;
			for (int i = 0; i < PQntuples(s); i++) {
				if (strcmp(PQgetvalue(s, i, S_FAMILY), PQgetvalue(f, j, 0)) != 0)
					continue;
				if (k++)
					putchar(',');
				show_series_json(stdout, s, i);
			}
			printf("]}");
		}
		printf("],\"compounding_drift\":[");
		for (int k = 0; k < PQntuples(d); k++) {
			printf("%s{", k ? "," : "");
			json_num(stdout, "ticket_id", num(d, k, 0), false);
			json_str(stdout, "series_key", PQgetvalue(d, k, 1), true);
			json_str(stdout, "found_release", PQgetvalue(d, k, 2), true);
			json_num(stdout, "age_s", num(d, k, 3), true);
			json_str(stdout, "line", PQgetvalue(d, k, 4), true);
			json_str(stdout, "status_now", PQgetvalue(d, k, 5), true);
			printf("}");
		}
		printf("],\"pins\":[");
		for (int k = 0; k < PQntuples(pn); k++) {
			printf("%s{", k ? "," : "");
			json_str(stdout, "family", PQgetvalue(pn, k, 0), false);
			json_str(stdout, "waiver_id", PQgetvalue(pn, k, 1), true);
			json_str(stdout, "pinned_release", PQgetvalue(pn, k, 2), true);
			json_str(stdout, "pinned_artifact", PQgetvalue(pn, k, 3), true);
			json_str(stdout, "owner", PQgetvalue(pn, k, 4), true);
			json_str(stdout, "signed_off_by", PQgetvalue(pn, k, 5), true);
			json_str(stdout, "expires", PQgetvalue(pn, k, 6), true);
			printf(",\"expires_unix_us\":%s", PQgetvalue(pn, k, 7)); /* a bigint, exactly */
			printf(",\"expired\":%s,\"expiry_reported\":%s",
			       PQgetvalue(pn, k, 8)[0] == 't' ? "true" : "false",
			       PQgetvalue(pn, k, 9)[0] == 't' ? "true" : "false");
			printf("}");
		}
		printf("]}\n");
		rc = PW_CLI_EXIT_OK;
		goto out;
	}
	char verdict[64];
	upper(verdict, sizeof verdict, PQgetvalue(h, 0, 4));
	printf("[gate-eval %s] evaluation=%s candidate=%s baseline=%s status=%s\n", release,
	       PQgetvalue(h, 0, 0), PQgetvalue(h, 0, 1), PQgetvalue(h, 0, 2), PQgetvalue(h, 0, 3));
	show_waiting(h);
	if (strcmp(PQgetvalue(h, 0, 3), "pending") == 0) {
		rc = PW_CLI_EXIT_OK; /* nothing decided yet */
		goto out;
	}
	for (int j = 0; j < PQntuples(f); j++) {
		const char *fam = PQgetvalue(f, j, 0);
		const char *platform = NULL;
		for (int i = 0; i < PQntuples(s); i++) {
			if (strcmp(PQgetvalue(s, i, S_FAMILY), fam) != 0)
				continue;
			if (!platform || strcmp(platform, PQgetvalue(s, i, S_PLATFORM)) != 0) {
				platform = PQgetvalue(s, i, S_PLATFORM);
				printf("[gate-eval %s] family=%s platform=%s\n", release, fam, platform);
			}
			show_series_text(s, i, fdr, tests);
		}
		char fv[64];
		upper(fv, sizeof fv, PQgetvalue(f, j, 2));
		printf("  family verdict: %s (%s gated series, %s regressed, spend-weighted impact "
		       "%.2f%% fleet, share %.3f, tier %s",
		       fv, PQgetvalue(f, j, 5), PQgetvalue(f, j, 6), num(f, j, 4), num(f, j, 3),
		       PQgetvalue(f, j, 1));
		if (atoi(PQgetvalue(f, j, 7)) > 0)
			printf(", %s under-powered", PQgetvalue(f, j, 7));
		if (PQgetvalue(f, j, 8)[0])
			printf(", inherits from %s, similarity %.2f%s", PQgetvalue(f, j, 8), num(f, j, 9),
			       PQgetvalue(f, j, 10)[0] == 't' ? ": its verdict" : "");
		printf(")\n");
	}
	for (int k = 0; k < PQntuples(d); k++)
		printf("%s%s\n", PQgetvalue(d, k, 4),
		       strcmp(PQgetvalue(d, k, 5), "open") == 0 ? "" : " (since resolved)");
	for (int k = 0; k < PQntuples(pn); k++)
		printf("pin: %s PINNED to N-1 %s (artifact %s) by waiver %s, owner %s, signed off by %s, "
		       "expires %s%s\n",
		       PQgetvalue(pn, k, 0), PQgetvalue(pn, k, 2),
		       *PQgetvalue(pn, k, 3) ? PQgetvalue(pn, k, 3) : "the canary's N-1 artifact",
		       PQgetvalue(pn, k, 1), PQgetvalue(pn, k, 4), PQgetvalue(pn, k, 5),
		       PQgetvalue(pn, k, 6),
		       PQgetvalue(pn, k, 8)[0] != 't' ? ""
		       : PQgetvalue(pn, k, 9)[0] == 't' ? " (EXPIRED, reported: the family must take this "
		                                          "release or get a new waiver)"
		                                        : " (EXPIRED)");
	printf("release verdict: %s (%d tests, BH q=%.2g, fleet impact %.2f%%)\n", verdict, tests,
	       fdr, num(h, 0, 6));
	printf("summary: %s\n", PQgetvalue(h, 0, 7));
	rc = PW_CLI_EXIT_OK;

out:
	PQclear(h);
	PQclear(f);
	PQclear(s);
	PQclear(d);
	PQclear(pn);
	PQfinish(conn);
	return rc;
}

/* ---------------------------------------------------------------- request */

static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = s ? strtoll(s, &end, 10) : 0;
	if (!s || end == s || *end != '\0' || errno == ERANGE)
		return -1;
	*out = v;
	return 0;
}

static int parse_dbl(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = s ? strtod(s, &end) : 0.0;
	if (!s || end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

static int64_t wall_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int gate_request(int argc, char **argv)
{
	Perfwatch__V1__GateRequest req = PERFWATCH__V1__GATE_REQUEST__INIT;
	Perfwatch__V1__CompilerBuild cand = PERFWATCH__V1__COMPILER_BUILD__INIT;
	Perfwatch__V1__ExpectedWin wins[GATE_CLI_MAX], *winp[GATE_CLI_MAX];
	Perfwatch__V1__Waiver waivers[GATE_CLI_MAX], *waiverp[GATE_CLI_MAX];
	Perfwatch__V1__TierRepeats tiers[2], *tierp[2];
	char *families[GATE_CLI_MAX];
	char *owned[GATE_CLI_MAX * 4];
	size_t n_owned = 0;
	char *ids[GATE_CLI_MAX];
	const char *pins[GATE_CLI_MAX];
	size_t n_pins = 0;
	int64_t deadline_s = 0;
	int rc = PW_CLI_EXIT_USAGE;
	uint8_t *buf = NULL;
	pw_producer *p = NULL;

	req.evaluation = 1;
	req.candidate = &cand;
	cand.kind = PERFWATCH__V1__BUILD_KIND__BUILD_KIND_RC;
	req.expected_wins = winp;
	req.waivers = waiverp;
	req.tiers = tierp;
	req.families = families;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) {
			usage(stderr);
			goto out;
		}
		i++;
		if (strcmp(o, "--release") == 0) {
			req.release_id = (char *)v;
			cand.release_id = (char *)v;
		} else if (strcmp(o, "--candidate") == 0) {
			cand.build_id = (char *)v;
		} else if (strcmp(o, "--baseline") == 0) {
			req.baseline_release = (char *)v;
		} else if (strcmp(o, "--cl") == 0) {
			cand.cl = (char *)v;
		} else if (strcmp(o, "--evaluation") == 0) {
			int64_t e;
			if (parse_i64(v, &e) != 0 || e < 1 || e > UINT32_MAX) {
				fprintf(stderr, "perfwatch: --evaluation needs a number >= 1\n");
				goto out;
			}
			req.evaluation = (uint32_t)e;
		} else if (strcmp(o, "--family") == 0 && req.n_families < GATE_CLI_MAX) {
			families[req.n_families++] = (char *)v;
		} else if (strcmp(o, "--fdr") == 0) {
			if (parse_dbl(v, &req.fdr_q) != 0 || !(req.fdr_q > 0 && req.fdr_q < 1)) {
				fprintf(stderr, "perfwatch: --fdr needs a number in (0, 1)\n");
				goto out;
			}
		} else if (strcmp(o, "--deadline-s") == 0) {
			if (parse_i64(v, &deadline_s) != 0 || deadline_s < 0) {
				fprintf(stderr, "perfwatch: --deadline-s needs seconds >= 0\n");
				goto out;
			}
		} else if (strcmp(o, "--expect") == 0 && req.n_expected_wins < GATE_CLI_MAX) {
			const char *eq = strrchr(v, '=');
			Perfwatch__V1__ExpectedWin *w = &wins[req.n_expected_wins];
			*w = (Perfwatch__V1__ExpectedWin)PERFWATCH__V1__EXPECTED_WIN__INIT;
			if (!eq || eq == v || parse_dbl(eq + 1, &w->expected_delta_pct) != 0) {
				fprintf(stderr, "perfwatch: --expect needs SERIES_KEY=PCT, not \"%s\"\n", v);
				goto out;
			}
			char *key = strndup(v, (size_t)(eq - v));
			if (!key)
				goto out;
			owned[n_owned++] = key;
			w->series_key = key;
			w->registered_by = "perfwatch-cli";
			winp[req.n_expected_wins++] = w;
		} else if (strcmp(o, "--waive") == 0 && req.n_waivers < GATE_CLI_MAX) {
			char *copy = strdup(v);
			if (!copy)
				goto out;
			owned[n_owned++] = copy;
			/* MODEL:OWNER:EXPIRY[:ID]; the optional ID names the waiver (an id
			 * names a waiver of its release), by default wv-RELEASE-MODEL-k */
			char *model = copy, *owner = strchr(copy, ':');
			char *exp = owner ? strchr(owner + 1, ':') : NULL;
			char *given_id = exp ? strchr(exp + 1, ':') : NULL;
			if (given_id)
				*given_id++ = '\0';
			int64_t e;
			if (!owner || !exp || owner == model || exp == owner + 1 ||
			    parse_i64(exp + 1, &e) != 0 || (given_id && !*given_id)) {
				fprintf(stderr, "perfwatch: --waive needs MODEL:OWNER:EXPIRY[:ID], not \"%s\"\n",
				        v);
				goto out;
			}
			*owner++ = '\0';
			*exp++ = '\0';
			int64_t expires = (exp[0] == '+' || exp[0] == '-') ? wall_us() + e * 1000000
			                                                    : e * 1000000;
			size_t k = req.n_waivers;
			Perfwatch__V1__Waiver *w = &waivers[k];
			*w = (Perfwatch__V1__Waiver)PERFWATCH__V1__WAIVER__INIT;
			w->waiver_id = given_id; /* NULL: named once every option is read */
			w->model = model;
			w->owner = owner;
			w->approved_by = owner;
			w->reason = "waiver submitted with perfwatch gate request";
			w->expires_unix_us = expires;
			waiverp[req.n_waivers++] = w;
		} else if (strcmp(o, "--pin") == 0 && n_pins < GATE_CLI_MAX) {
			pins[n_pins++] = v; /* applied to MODEL's waiver once every --waive is read */
		} else if (strcmp(o, "--tier") == 0 && req.n_tiers < 2) {
			Perfwatch__V1__TierRepeats *t = &tiers[req.n_tiers];
			*t = (Perfwatch__V1__TierRepeats)PERFWATCH__V1__TIER_REPEATS__INIT;
			unsigned n = 0;
			double mde = 0;
			int got = 0;
			if (strncmp(v, "top=", 4) == 0) {
				t->tier = PERFWATCH__V1__TIER__TIER_TOP;
				mde = 1.0;
				got = sscanf(v + 4, "%u:%lf", &n, &mde);
			} else if (strncmp(v, "tail=", 5) == 0) {
				t->tier = PERFWATCH__V1__TIER__TIER_TAIL;
				mde = 3.0;
				got = sscanf(v + 5, "%u:%lf", &n, &mde);
			}
			if (got < 1 || n < 1 || !(mde > 0)) {
				fprintf(stderr, "perfwatch: --tier needs top|tail=N[:MDE], not \"%s\"\n", v);
				goto out;
			}
			t->n = n;
			t->mde_pct = mde;
			tierp[req.n_tiers++] = t;
		} else {
			fprintf(stderr, "perfwatch: unknown or repeated option \"%s\"\n", o);
			usage(stderr);
			goto out;
		}
	}
	/* protobuf-c's INIT leaves every string "" (not NULL): an empty one is a missing one */
	if (!req.release_id || !*req.release_id || !cand.build_id || !*cand.build_id ||
	    !req.baseline_release || !*req.baseline_release) {
		fprintf(stderr, "perfwatch: gate request needs --release, --candidate and --baseline\n");
		usage(stderr);
		goto out;
	}
	/* MODEL:SIGNOFF[:ARTIFACT[:RELEASE]]: MODEL's waiver pins it to N-1 */
	for (size_t k = 0; k < n_pins; k++) {
		char *copy = strdup(pins[k]);
		if (!copy)
			goto out;
		owned[n_owned++] = copy;
		char *signoff = strchr(copy, ':');
		char *artifact = signoff ? strchr(signoff + 1, ':') : NULL;
		char *prel = artifact ? strchr(artifact + 1, ':') : NULL;
		if (!signoff || signoff == copy) {
			fprintf(stderr, "perfwatch: --pin needs MODEL:SIGNOFF[:ARTIFACT[:RELEASE]], not \"%s\"\n",
			        pins[k]);
			goto out;
		}
		*signoff++ = '\0';
		if (artifact)
			*artifact++ = '\0';
		if (prel)
			*prel++ = '\0';
		Perfwatch__V1__Waiver *w = NULL;
		for (size_t j = 0; j < req.n_waivers && !w; j++)
			if (strcmp(waivers[j].model, copy) == 0)
				w = &waivers[j];
		if (!w) {
			fprintf(stderr, "perfwatch: --pin %s needs a --waive %s:... to pin\n", copy, copy);
			goto out;
		}
		w->pin = true;
		w->pin_signed_off_by = signoff;
		if (artifact)
			w->pin_artifact = artifact;
		if (prel)
			w->pin_release = prel;
	}
	/* unnamed waivers: wv-RELEASE-eEVALUATION-MODEL-k, so that a later
	 * evaluation's waiver (another expiry) is another waiver, not a conflict */
	for (size_t k = 0; k < req.n_waivers; k++) {
		if (waivers[k].waiver_id)
			continue;
		char id[512];
		snprintf(id, sizeof id, "wv-%s-e%" PRIu32 "-%s-%zu", req.release_id, req.evaluation,
		         waivers[k].model, k + 1);
		ids[k] = strdup(id);
		if (!ids[k])
			goto out;
		owned[n_owned++] = ids[k];
		waivers[k].waiver_id = ids[k];
	}
	req.requested_unix_us = wall_us();
	if (deadline_s > 0)
		req.deadline_unix_us = req.requested_unix_us + deadline_s * 1000000;

	rc = PW_CLI_EXIT_FAIL;
	const char *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	if (!brokers || !*brokers) {
		pw_cli_missing_env("PW_KAFKA_BOOTSTRAP_SERVERS");
		rc = PW_CLI_EXIT_USAGE;
		goto out;
	}
	pw_log lg;
	pw_log_init(&lg, "perfwatch", PW_LOG_WARN);
	char err[512];
	if (pw_producer_new(&p, brokers, NULL, 0, &lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "perfwatch: kafka producer: %s\n", err);
		goto out;
	}
	size_t len = perfwatch__v1__gate_request__get_packed_size(&req);
	buf = malloc(len + 1);
	if (!buf)
		goto out;
	perfwatch__v1__gate_request__pack(&req, buf);
	if (pw_producer_produce(p, PW_TOPIC_GATE_REQUESTS, req.release_id, strlen(req.release_id),
	                        buf, len, 5000, err, sizeof err) != PW_OK ||
	    pw_producer_flush(p, 15000, err, sizeof err) != PW_OK) {
		fprintf(stderr, "perfwatch: publishing the gate request failed: %s\n", err);
		goto out;
	}
	printf("published gate request %s evaluation %" PRIu32 " (candidate %s, baseline %s, "
	       "%zu expected wins, %zu waivers)\n",
	       req.release_id, req.evaluation, cand.build_id, req.baseline_release,
	       req.n_expected_wins, req.n_waivers);
	rc = PW_CLI_EXIT_OK;

out:
	pw_producer_free(p);
	free(buf);
	for (size_t i = 0; i < n_owned; i++)
		free(owned[i]);
	return rc;
}

int pw_cmd_gate(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return PW_CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "show") == 0)
		return gate_show(argc - 1, argv + 1);
	if (strcmp(argv[1], "request") == 0)
		return gate_request(argc - 1, argv + 1);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return PW_CLI_EXIT_OK;
	}
	fprintf(stderr, "perfwatch: unknown gate subcommand \"%s\"\n", argv[1]);
	usage(stderr);
	return PW_CLI_EXIT_USAGE;
}
