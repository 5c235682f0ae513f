/*
 * confirm.c: confirmation reruns of unconfirmed outliers (confirm.h).
 *
 * The decision itself is common/pw_confirm.h; this file stores the jobs and
 * the alerts (migration 0033), publishes the CONFIRM BisectJob and the
 * alert's revisions through the outbox, and reads the reruns back.
 */
#include "confirm.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bisect_msg.h"
#include "perfwatch/v1/bisect.pb-c.h"
#include "pw_alert_followup.h"
#include "pw_confirm.h"
#include "pw_outbox.h"
#include "pw_service.h"
#include "pw_time.h"
#include "pw_topics.h"

/* nightlies looked at to find where the outlier's level began (about two weeks) */
#define CONFIRM_LOOKBACK 14
#define CONFIRM_MAX_REPEATS 64

static char *nz(const char *s)
{
	return (char *)(s ? s : "");
}

const char *pw_confirm_outcome_name(Perfwatch__V1__ConfirmOutcome o)
{
	switch (o) {
	case PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_PENDING: return "pending";
	case PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_REPRODUCED: return "reproduced";
	case PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_NOT_REPRODUCED: return "not_reproduced";
	case PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_OVER_BUDGET: return "over_budget";
	default: break;
	}
	return "";
}

static void cl_name(int64_t cl, char *buf, size_t len)
{
	snprintf(buf, len, "cl/%" PRId64, cl);
}

pw_status pw_confirm_revision_pack(const void *payload, size_t len, const pw_confirm_revision *r,
                                   uint8_t **out, size_t *outlen)
{
	*out = NULL;
	*outlen = 0;
	Perfwatch__V1__Alert *al = perfwatch__v1__alert__unpack(NULL, len, payload);
	if (!al)
		return PW_ERR_INVALID;
	pw_status st = PW_OK;
	if (r->revision <= al->revision) {
		st = PW_ERR_INVALID;
		goto out;
	}
	/* the unpacked message owns its strings; ours are borrowed until packed */
	Perfwatch__V1__AlertChangepoint *own_cp = al->changepoint;
	Perfwatch__V1__AlertConfirmation *own_cf = al->confirmation;
	char *own_owner = al->owner_hint, *own_summary = al->summary, *own_evidence = al->signal_evidence;
	char *own_page = al->page;
	Perfwatch__V1__AlertChangepoint cp = PERFWATCH__V1__ALERT_CHANGEPOINT__INIT;
	Perfwatch__V1__AlertConfirmation cf = PERFWATCH__V1__ALERT_CONFIRMATION__INIT;
	char lo[32], hi[32], build[32];
	cl_name(r->cl, build, sizeof build);
	cf.outcome = r->outcome;
	cf.job_id = nz(r->job_id);
	cf.repeats = r->repeats;
	cf.n = r->n;
	cf.rerun_median = r->rerun_median;
	cf.band_lo = r->band_lo;
	cf.band_hi = r->band_hi;
	cf.build_cl = r->cl > 0 ? build : "";
	cf.point_unix_us = r->point_us;
	cf.confirmed_unix_us = r->confirmed_us;
	cf.reason = nz(r->reason);
	al->confirmation = &cf;
	al->revision = r->revision;
	al->follow_up = false;
	if (r->summary && r->summary[0])
		al->summary = (char *)r->summary;
	switch (r->outcome) {
	case PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_REPRODUCED:
		al->kind = r->regression ? PERFWATCH__V1__ALERT_KIND__ALERT_KIND_REGRESSION
		                         : PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT;
		al->owner_hint = "compiler";
		al->needs_confirmation = false;
		if (r->prev_cl > 0 && r->range_hi > r->prev_cl) {
			cl_name(r->prev_cl, lo, sizeof lo);
			cl_name(r->range_hi, hi, sizeof hi);
			cp.cl_range_lo = lo;
			cp.cl_range_hi = hi;
			cp.n_cls = (uint32_t)(r->range_hi - r->prev_cl);
			cp.nightly = nz(r->nightly);
			al->changepoint = &cp;
		}
		break;
	case PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_NOT_REPRODUCED:
		al->kind = PERFWATCH__V1__ALERT_KIND__ALERT_KIND_INFRA_HEALTH;
		al->owner_hint = "infra";
		al->needs_confirmation = false;
		al->signal_evidence = (char *)nz(r->reason);
		al->routing = PERFWATCH__V1__ROUTING__ROUTING_QUEUE;
		al->page = "";
		break;
	default:
		break; /* pending, over budget: still unconfirmed */
	}
	size_t n = perfwatch__v1__alert__get_packed_size(al);
	*out = malloc(n ? n : 1);
	if (!*out)
		st = PW_ERR_NOMEM;
	else
		*outlen = perfwatch__v1__alert__pack(al, *out);
	al->changepoint = own_cp;
	al->confirmation = own_cf;
	al->owner_hint = own_owner;
	al->summary = own_summary;
	al->signal_evidence = own_evidence;
	al->page = own_page;
out:
	perfwatch__v1__alert__free_unpacked(al, NULL);
	return st;
}

/* ---- storage ---------------------------------------------------------------------------- */

static void day_of(int64_t us, char *buf, size_t len)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d", &tm);
}

/* The CONFIRM job of run run_id: "cf-<run id>". */
static void job_id_of(const char *run_id, char *buf, size_t len)
{
	snprintf(buf, len, "cf-%s", run_id);
}

typedef struct job_row {
	char job_id[224], run_id[224], series_key[512], model[128], model_rev[128], hlo[128];
	char platform[64], config[256], firmware[128], metric[128], config_hash[224];
	int64_t cl, prev_cl, point_us, data_us, requested_us;
	uint32_t repeats;
} job_row;

static pw_status job_pack(const job_row *j, const char *alert_id, uint8_t **out, size_t *len)
{
	Perfwatch__V1__BisectJob m = PERFWATCH__V1__BISECT_JOB__INIT;
	Perfwatch__V1__SeriesKey sk = PERFWATCH__V1__SERIES_KEY__INIT;
	Perfwatch__V1__RunKey rk = PERFWATCH__V1__RUN_KEY__INIT;
	Perfwatch__V1__Platform pf = PERFWATCH__V1__PLATFORM__INIT;
	Perfwatch__V1__Config cf = PERFWATCH__V1__CONFIG__INIT;
	char cl[32];
	cl_name(j->cl, cl, sizeof cl);
	sk.model = (char *)j->model;
	sk.hlo_fingerprint = (char *)j->hlo;
	sk.platform = (char *)j->platform;
	sk.config = (char *)j->config;
	sk.metric = (char *)j->metric;
	pf.name = (char *)j->platform;
	cf.name = (char *)j->config;
	rk.model = (char *)j->model;
	rk.model_rev = (char *)j->model_rev;
	rk.hlo_fingerprint = (char *)j->hlo;
	rk.platform = &pf;
	rk.config = &cf;
	rk.firmware = (char *)j->firmware;
	m.job_id = (char *)j->job_id;
	m.bisection_id = "";
	m.purpose = PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_CONFIRM;
	m.series_key = (char *)j->series_key;
	m.series = &sk;
	m.key = &rk;
	m.cl = cl;
	m.cl_number = j->cl;
	m.repeats = j->repeats;
	m.requested_unix_us = pw_now_us();
	m.alert_id = (char *)alert_id;
	m.data_unix_us = j->data_us;
	size_t n = perfwatch__v1__bisect_job__get_packed_size(&m);
	*out = malloc(n ? n : 1);
	if (!*out)
		return PW_ERR_NOMEM;
	*len = perfwatch__v1__bisect_job__pack(&m, *out);
	return PW_OK;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static uint8_t *unhex(const char *hex, size_t *n)
{
	size_t hl = strlen(hex);
	uint8_t *b = malloc(hl / 2 + 1);
	if (!b)
		return NULL;
	*n = 0;
	for (size_t i = 0; i + 1 < hl; i += 2) {
		int h = hexval(hex[i]), l = hexval(hex[i + 1]);
		if (h < 0 || l < 0)
			break;
		b[(*n)++] = (uint8_t)(h << 4 | l);
	}
	return b;
}

/*
 * Publishes revision r of alert_id (stored original: payload) with Kafka key
 * `key`, mirrors it into perfwatch.alerts and, for a reproduced regression,
 * starts its bisection event; in the open transaction. *bid gets the
 * bisection id ('' when none).
 */
static pw_status publish_revision(const pw_confirm *c, pw_pg *pg, const char *alert_id, const char *key,
                                  const uint8_t *payload, size_t len, const pw_confirm_revision *r,
                                  char *bid, size_t bidlen, char *errbuf, size_t errlen)
{
	bid[0] = 0;
	uint8_t *msg = NULL;
	size_t msglen = 0;
	pw_status st = pw_confirm_revision_pack(payload, len, r, &msg, &msglen);
	if (st != PW_OK)
		return pw_fail(st, errbuf, errlen, "alert \"%s\": its confirmation revision %" PRIu32 " does not pack",
		               alert_id, r->revision);
	char ref[256];
	snprintf(ref, sizeof ref, "alert:%.200s:r%" PRIu32, alert_id, r->revision);
	if ((st = pw_outbox_add(pg, c->service, ref, PW_TOPIC_ALERTS, key, msg, msglen, errbuf, errlen)) != PW_OK)
		goto out;
	bool repro = r->outcome == PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_REPRODUCED;
	bool infra = r->outcome == PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_NOT_REPRODUCED;
	char lo[32] = "", hi[32] = "";
	if (repro && r->prev_cl > 0 && r->range_hi > r->prev_cl) {
		cl_name(r->prev_cl, lo, sizeof lo);
		cl_name(r->range_hi, hi, sizeof hi);
	}
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, alert_id);
	pw_pg_params_int(&p, r->revision);
	pw_pg_params_text(&p, repro ? (r->regression ? "regression" : "improvement") : infra ? "infra_health" : "unconfirmed");
	pw_pg_params_text(&p, repro ? "compiler" : infra ? "infra" : "needs-confirmation");
	pw_pg_params_bool(&p, !repro && !infra);
	pw_pg_params_text(&p, nz(r->summary));
	pw_pg_params_text(&p, lo);
	pw_pg_params_text(&p, hi);
	pw_pg_params_opt_int(&p, lo[0] != 0, r->range_hi - r->prev_cl);
	pw_pg_params_text(&p, lo[0] ? nz(r->nightly) : NULL);
	pw_pg_params_text(&p, pw_confirm_outcome_name(r->outcome));
	pw_pg_params_text(&p, nz(r->job_id));
	pw_pg_params_text(&p, infra ? nz(r->reason) : NULL);
	if ((st = pw_pg_exec_params(pg,
	                            "UPDATE perfwatch.alerts SET revision = $2, kind = $3, owner_hint = $4, "
	                            "needs_confirmation = $5, summary = CASE WHEN $6 <> '' THEN $6 ELSE summary END, "
	                            "cl_range_lo = CASE WHEN $7 <> '' THEN $7 ELSE cl_range_lo END, "
	                            "cl_range_hi = CASE WHEN $8 <> '' THEN $8 ELSE cl_range_hi END, "
	                            "n_cls = coalesce($9::integer, n_cls), cp_nightly = coalesce($10::date, cp_nightly), "
	                            "confirm_outcome = $11, confirm_job_id = $12, "
	                            "signal_evidence = coalesce($13, signal_evidence), "
	                            "routing = CASE WHEN $3 = 'infra_health' THEN 'queue' ELSE routing END, "
	                            "page_route = CASE WHEN $3 = 'infra_health' THEN '' ELSE page_route END, "
	                            "updated_at = now() WHERE alert_id = $1 AND revision < $2",
	                            &p, 0, NULL, errbuf, errlen)) != PW_OK)
		goto out;
	if (repro && r->regression && lo[0] && c->start) {
		Perfwatch__V1__Alert *al = perfwatch__v1__alert__unpack(NULL, msglen, msg);
		if (!al) {
			st = PW_ERR_NOMEM;
			goto out;
		}
		char why[320] = "";
		/* the revision is what the bisection's follow-up revises */
		if ((st = pw_alert_followup_record(pg, al, key, msg, msglen, errbuf, errlen)) == PW_OK)
			st = c->start(c->start_ctx, pg, al, key, msg, msglen, bid, bidlen, why, sizeof why, errbuf,
			              errlen);
		if (st == PW_OK && !bid[0])
			pw_log_warn(c->lg, "confirmed regression \"%s\": no bisection started: %s", alert_id, why);
		perfwatch__v1__alert__free_unpacked(al, NULL);
	}
out:
	free(msg);
	return st;
}

/*
 * An outlier at the level of a finding already made on its series — an
 * outlier reproduced by its rerun, or the watcher's shift — joins it
 * (pw_confirm_joins_finding): its revision carries the finding's outcome,
 * rerun (if any) and CL range, no rerun is asked for, and its bisection
 * start joins the finding's event (model, head CL). Without this, every
 * nightly after a shift stays an outlier until the shift is accepted, each
 * was rerun again, and once the shift was older than the range look-back
 * the split fell inside the shifted level and a second bisection started
 * on a range holding no change. In the open transaction; *joined says
 * whether it did.
 */
static pw_status join_finding(const pw_confirm *c, pw_pg *pg, const Perfwatch__V1__Alert *al, const char *key,
                              const void *payload, size_t len, int64_t series_id, const pw_confirm_band *band,
                              const job_row *j, bool *joined, char *errbuf, size_t errlen)
{
	*joined = false;
	PGresult *r = NULL;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, series_id);
	pw_pg_params_int(&p, j->point_us);
	pw_pg_params_int(&p, band->side);
	/*
	 * The series' findings before this point, on the outlier's side, newest
	 * first: outliers reproduced by a rerun (their level: the rerun median),
	 * and the watcher's shifts not annotated infra (their level after) — a
	 * small shift's first nightlies can stay inside the band, so the watcher
	 * may have found it before any outlier was rerun.
	 */
	pw_status st = pw_pg_exec_params(
	        pg,
	        "SELECT * FROM ("
	        "SELECT a.alert_id AS id, coalesce(a.job_id, '') AS job, a.rerun_median AS level, "
	        "a.range_lo_number AS lo, a.range_hi_number AS hi, "
	        "coalesce((extract(epoch FROM a.confirmed_data_at) * 1e6)::bigint, 0) AS confirmed_us, "
	        "(extract(epoch FROM cj.point_at) * 1e6)::bigint AS at_us, al.kind = 'regression' AS regression "
	        "FROM perfwatch.confirm_alerts a JOIN perfwatch.confirm_jobs cj USING (job_id) "
	        "JOIN perfwatch.alerts al ON al.alert_id = a.alert_id "
	        "WHERE a.series_id = $1 AND a.outcome = 'reproduced' AND a.rerun_median IS NOT NULL "
	        "AND a.range_lo_number > 0 AND a.range_hi_number > a.range_lo_number "
	        "AND cj.point_at < to_timestamp($2::bigint / 1e6) AND sign(a.point_value - a.baseline_median) = $3 "
	        "UNION ALL "
	        "SELECT coalesce((SELECT w.alert_id FROM perfwatch.alerts w WHERE w.changepoint_id = c.changepoint_id "
	        "AND w.source = 'watcher' ORDER BY w.alert_id LIMIT 1), c.changepoint_id), '', c.level_after, "
	        "c.last_clean_cl_number, c.first_shifted_cl_number, 0, (extract(epoch FROM c.shift_at) * 1e6)::bigint, "
	        "c.direction = 'regression' "
	        "FROM perfwatch.changepoints c WHERE c.series_id = $1 AND c.stage IN ('provisional', 'confirmed') "
	        "AND c.annotation = 'none' AND c.last_clean_cl_number > 0 "
	        "AND c.first_shifted_cl_number > c.last_clean_cl_number "
	        "AND c.shift_at < to_timestamp($2::bigint / 1e6) AND sign(c.level_after - c.level_before) = $3"
	        ") f ORDER BY at_us DESC, id LIMIT 8",
	        &p, 0, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	int row = -1;
	for (int i = 0; i < PQntuples(r) && row < 0; i++)
		if (pw_confirm_joins_finding(band, al->observed->median, strtod(PQgetvalue(r, i, 2), NULL)))
			row = i;
	if (row < 0) {
		PQclear(r);
		return PW_OK;
	}
	char finding[224], job[160], nightly[16], summary[1024], reason[400], lo[32], hi[32];
	snprintf(finding, sizeof finding, "%s", PQgetvalue(r, row, 0));
	snprintf(job, sizeof job, "%s", PQgetvalue(r, row, 1));
	double level = strtod(PQgetvalue(r, row, 2), NULL);
	int64_t range_lo = pw_pg_int(r, row, 3), range_hi = pw_pg_int(r, row, 4), confirmed_us = pw_pg_int(r, row, 5);
	day_of(pw_pg_int(r, row, 6), nightly, sizeof nightly);
	bool regression = strcmp(PQgetvalue(r, row, 7), "t") == 0;
	PQclear(r);
	cl_name(range_lo, lo, sizeof lo);
	cl_name(range_hi, hi, sizeof hi);
	if (job[0])
		snprintf(reason, sizeof reason, "at the level of alert \"%.100s\", confirmed by rerun %.100s (median %.6g, "
		         "beyond the band %.6g..%.6g): the same shift, not rerun", finding, job, level, band->lo, band->hi);
	else
		snprintf(reason, sizeof reason, "at the level of the watcher's shift of alert \"%.100s\" (level %.6g, "
		         "beyond the band %.6g..%.6g): the same shift, not rerun", finding, level, band->lo, band->hi);
	double pct = band->median != 0 ? (al->observed->median - band->median) / band->median * 100.0 : 0;
	snprintf(summary, sizeof summary, "confirmed %s %+.2f%% on %.300s nightly %s (%s..%s, %" PRId64 " CLs): %s",
	         regression ? "regression" : "improvement", pct, al->series_key, nightly, lo, hi, range_hi - range_lo,
	         reason);
	uint32_t revision = (al->revision ? al->revision : 1) + 1;
	pw_confirm_revision rev = {.revision = revision, .job_id = job, .rerun_median = level, .band_lo = band->lo,
	                           .band_hi = band->hi, .cl = j->cl, .prev_cl = range_lo, .range_hi = range_hi,
	                           .point_us = j->point_us, .confirmed_us = confirmed_us, .nightly = nightly,
	                           .summary = summary, .reason = reason, .regression = regression,
	                           .outcome = PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_REPRODUCED};
	const char *topic_key = key && key[0] ? key : al->series_key;
	char bid[200] = "";
	if ((st = publish_revision(c, pg, al->alert_id, topic_key, payload, len, &rev, bid, sizeof bid, errbuf,
	                           errlen)) != PW_OK)
		return st;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, al->alert_id);
	pw_pg_params_text(&p, job[0] ? job : NULL);
	pw_pg_params_text(&p, j->run_id);
	pw_pg_params_int(&p, series_id);
	pw_pg_params_text(&p, topic_key);
	pw_pg_params_int(&p, al->revision ? al->revision : 1);
	pw_pg_params_bin(&p, payload, len);
	pw_pg_params_double(&p, band->median);
	pw_pg_params_double(&p, al->observed->median);
	pw_pg_params_double(&p, band->lo);
	pw_pg_params_double(&p, band->hi);
	pw_pg_params_double(&p, level);
	pw_pg_params_int(&p, confirmed_us);
	pw_pg_params_int(&p, revision);
	pw_pg_params_text(&p, bid);
	pw_pg_params_int(&p, range_lo);
	pw_pg_params_int(&p, range_hi);
	pw_pg_params_text(&p, finding);
	if ((st = pw_pg_exec_params(pg,
	                            "INSERT INTO perfwatch.confirm_alerts (alert_id, job_id, run_id, series_id, topic_key, "
	                            "revision, payload, baseline_median, point_value, band_lo, band_hi, outcome, "
	                            "rerun_median, rerun_n, confirmed_data_at, published_revision, bisection_id, "
	                            "decided_at, range_lo_number, range_hi_number, joined_alert_id) VALUES ($1, $2, $3, $4, "
	                            "$5, $6, $7, $8, $9, $10, $11, 'reproduced', $12, 0, "
	                            "CASE WHEN $13::bigint > 0 THEN to_timestamp($13::bigint / 1e6) END, $14, $15, now(), "
	                            "$16, $17, $18)",
	                            &p, 0, NULL, errbuf, errlen)) != PW_OK)
		return st;
	*joined = true;
	pw_log_info(c->lg, "alert \"%s\" joins the finding of alert \"%s\" (%s..%s)%s%s", al->alert_id, finding, lo, hi,
	            bid[0] ? "; bisection " : "", bid);
	return PW_OK;
}

pw_status pw_confirm_take(const pw_confirm *c, pw_pg *pg, const Perfwatch__V1__Alert *al,
                          const char *key, const void *payload, size_t len,
                          pw_confirm_take_result *res, const char **outcome, char *detail,
                          size_t dlen, char *errbuf, size_t errlen)
{
	*res = PW_CONFIRM_TAKEN;
	*outcome = "redelivered";
	detail[0] = 0;
	pw_confirm_band band;
	if (pw_confirm_band_of(al->baseline->median, al->observed->median, al->delta->z_robust, al->baseline->mad,
	                       c->band_k, &band) != PW_OK) {
		/* the decoder checked the outlier against the same k; a smaller configured band still holds it */
		snprintf(detail, dlen, "alert \"%.100s\": point %g is not outside median %g -/+ %g sigma", al->alert_id,
		         al->observed->median, al->baseline->median, c->band_k);
		*res = PW_CONFIRM_DEAD;
		return PW_OK;
	}
	PGresult *r = NULL;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, al->series_key);
	pw_pg_params_text(&p, al->point_run_id);
	/* the series, and the outlier run's build and exact config */
	pw_status st = pw_pg_exec_params(
	        pg,
	        "SELECT se.series_id, se.model, se.hlo_fingerprint, se.platform, se.config, se.metric, "
	        "ru.model_rev, ru.firmware, ru.compiler_cl_number, "
	        "(SELECT max(x.compiler_cl_number) FROM perfwatch.runs x WHERE x.model = se.model AND "
	        " x.hlo_fingerprint = se.hlo_fingerprint AND x.platform = se.platform AND x.config = se.config "
	        " AND x.bisect_job_id = '' AND x.build_kind = 'nightly' AND x.compiler_cl_number < ru.compiler_cl_number "
	        " AND x.finished_at < ru.finished_at) "
	        "FROM perfwatch.series se LEFT JOIN LATERAL (SELECT model_rev, firmware, compiler_cl_number, finished_at "
	        "FROM perfwatch.runs WHERE run_id = $2 ORDER BY repeat_index LIMIT 1) ru ON true "
	        "WHERE se.series_key = $1",
	        &p, 0, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(r) != 1 || !pw_pg_value(r, 0, 8)) {
		snprintf(detail, dlen, "unconfirmed alert \"%.100s\": %s \"%.150s\" is not known", al->alert_id,
		         PQntuples(r) != 1 ? "series" : "run", PQntuples(r) != 1 ? al->series_key : al->point_run_id);
		PQclear(r);
		*res = PW_CONFIRM_DEAD;
		return PW_OK;
	}
	job_row j;
	memset(&j, 0, sizeof j);
	int64_t series_id = pw_pg_int(r, 0, 0);
	char *const f[] = {j.model, j.hlo, j.platform, j.config, j.metric, j.model_rev, j.firmware};
	const size_t fs[] = {sizeof j.model, sizeof j.hlo, sizeof j.platform, sizeof j.config, sizeof j.metric,
	                     sizeof j.model_rev, sizeof j.firmware};
	for (int i = 0; i < 7; i++)
		snprintf(f[i], fs[i], "%s", PQgetvalue(r, 0, i + 1));
	j.cl = pw_pg_int(r, 0, 8);
	j.prev_cl = pw_pg_int(r, 0, 9);
	PQclear(r);
	r = NULL;
	snprintf(j.series_key, sizeof j.series_key, "%s", al->series_key);
	snprintf(j.run_id, sizeof j.run_id, "%s", al->point_run_id);
	snprintf(j.config_hash, sizeof j.config_hash, "%s", nz(al->config_hash));
	job_id_of(al->point_run_id, j.job_id, sizeof j.job_id);
	j.point_us = al->point_unix_us;
	j.data_us = al->point_unix_us + c->lead_us;
	j.repeats = c->repeats;
	char day[16];
	day_of(al->point_unix_us, day, sizeof day);

	/*
	 * The range: from the nightly before the point's level began to the
	 * first nightly at it. The series' last CONFIRM_LOOKBACK nightlies up to
	 * this one are split where the level changed (pw_confirm_shift_start):
	 * usually between the previous nightly and this one (the one-day range);
	 * earlier when the nightlies before it already sat at its level — a small
	 * shift whose first nightlies stayed inside the band (one noisy nightly
	 * back inside does not cut the range short), or an alert that came late
	 * because the baseliner took several nightlies in one batch — so that the
	 * finding's event (model, head CL) is the one the watcher's changepoint
	 * and the gate name for the same shift.
	 */
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, series_id);
	pw_pg_params_int(&p, al->point_unix_us);
	pw_pg_params_int(&p, j.cl);
	pw_pg_params_int(&p, CONFIRM_LOOKBACK);
	if ((st = pw_pg_exec_params(pg,
	                            "SELECT value, compiler_cl_number FROM (SELECT value, compiler_cl_number, measured_at "
	                            "FROM perfwatch.samples WHERE series_id = $1 AND bisect_job_id = '' AND "
	                            "build_kind = 'nightly' AND compiler_cl_number <= $3 AND "
	                            "measured_at <= to_timestamp($2::bigint / 1e6) "
	                            "ORDER BY measured_at DESC, compiler_cl_number DESC LIMIT $4) l "
	                            "ORDER BY measured_at, compiler_cl_number",
	                            &p, 0, &r, errbuf, errlen)) != PW_OK)
		return st;
	int64_t range_lo = 0, range_hi = j.cl;
	{
		double xs[CONFIRM_LOOKBACK];
		int64_t cls[CONFIRM_LOOKBACK];
		size_t m = 0;
		for (int i = 0; i < PQntuples(r) && m < CONFIRM_LOOKBACK; i++) {
			xs[m] = strtod(PQgetvalue(r, i, 0), NULL);
			cls[m++] = pw_pg_int(r, i, 1);
		}
		/* the newest must be the outlier's own nightly; else nothing to split */
		if (m >= 2 && cls[m - 1] == j.cl) {
			size_t k = pw_confirm_shift_start(xs, m);
			range_lo = cls[k - 1];
			range_hi = cls[k];
		}
	}
	PQclear(r);
	r = NULL;
	bool tx = false;
	if ((st = pw_pg_begin(pg, errbuf, errlen)) != PW_OK)
		return st;
	tx = true;
	/* redelivered: the alert is taken already (its lock serialises two takers) */
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, al->alert_id);
	if ((st = pw_pg_exec_params(pg, "SELECT 1 FROM perfwatch.confirm_alerts WHERE alert_id = $1 FOR UPDATE", &p,
	                            0, &r, errbuf, errlen)) != PW_OK)
		goto out;
	bool seen = PQntuples(r) > 0;
	PQclear(r);
	r = NULL;
	if (seen)
		goto commit;
	bool joined;
	if ((st = join_finding(c, pg, al, key, payload, len, series_id, &band, &j, &joined, errbuf, errlen)) != PW_OK)
		goto out;
	if (joined) {
		*outcome = "joined_finding";
		goto commit;
	}
	/*
	 * The alerts of one run's metrics share its job but lie on different
	 * partitions, so two instances can take them at once: both would find
	 * no job and the second insert would fail (and be dead-lettered). A
	 * lock on the job id makes the second wait and join the first's job.
	 */
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, j.job_id);
	if ((st = pw_pg_exec_params(pg, "SELECT pg_advisory_xact_lock(hashtextextended('perfwatch.confirm_jobs:' || $1, 0))",
	                            &p, 0, NULL, errbuf, errlen)) != PW_OK)
		goto out;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, j.run_id);
	if ((st = pw_pg_exec_params(pg, "SELECT job_id FROM perfwatch.confirm_jobs WHERE run_id = $1", &p, 0, &r,
	                            errbuf, errlen)) != PW_OK)
		goto out;
	bool have_job = PQntuples(r) == 1;
	PQclear(r);
	r = NULL;
	bool granted = true;
	if (!have_job) {
		/* the day's budget, under its row lock: reserved with the job, in this transaction */
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, day);
		if ((st = pw_pg_exec_params(pg, "INSERT INTO perfwatch.confirm_budget (day) VALUES ($1::date) "
		                            "ON CONFLICT (day) DO NOTHING", &p, 0, NULL, errbuf, errlen)) != PW_OK ||
		    (st = pw_pg_exec_params(pg, "SELECT runs_used FROM perfwatch.confirm_budget WHERE day = $1::date "
		                            "FOR UPDATE", &p, 0, &r, errbuf, errlen)) != PW_OK)
			goto out;
		int64_t used = PQntuples(r) == 1 ? pw_pg_int(r, 0, 0) : 0;
		PQclear(r);
		r = NULL;
		granted = used + (int64_t)j.repeats <= c->budget_runs;
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, day);
		pw_pg_params_int(&p, granted ? j.repeats : 0);
		pw_pg_params_int(&p, granted ? 1 : 0);
		pw_pg_params_int(&p, granted ? 0 : 1);
		if ((st = pw_pg_exec_params(pg, "UPDATE perfwatch.confirm_budget SET runs_used = runs_used + $2, "
		                            "jobs = jobs + $3, refused = refused + $4 WHERE day = $1::date",
		                            &p, 0, NULL, errbuf, errlen)) != PW_OK)
			goto out;
		if (granted) {
			pw_pg_params_init(&p);
			pw_pg_params_text(&p, j.job_id);
			pw_pg_params_text(&p, j.run_id);
			pw_pg_params_text(&p, j.series_key);
			pw_pg_params_text(&p, j.model);
			pw_pg_params_text(&p, j.model_rev);
			pw_pg_params_text(&p, j.hlo);
			pw_pg_params_text(&p, j.platform);
			pw_pg_params_text(&p, j.config);
			pw_pg_params_text(&p, j.firmware);
			pw_pg_params_text(&p, j.metric);
			pw_pg_params_text(&p, j.config_hash);
			pw_pg_params_int(&p, j.cl);
			pw_pg_params_int(&p, j.prev_cl);
			pw_pg_params_int(&p, j.point_us);
			pw_pg_params_int(&p, j.data_us);
			pw_pg_params_int(&p, j.repeats);
			pw_pg_params_text(&p, day);
			if ((st = pw_pg_exec_params(
			             pg,
			             "INSERT INTO perfwatch.confirm_jobs (job_id, run_id, series_key, model, model_rev, "
			             "hlo_fingerprint, platform, config, firmware, metric, config_hash, cl, cl_number, "
			             "prev_cl_number, point_at, data_at, repeats, budget_day) VALUES ($1, $2, $3, $4, $5, $6, "
			             "$7, $8, $9, $10, $11, 'cl/' || $12::bigint, $12, $13, to_timestamp($14::bigint / 1e6), "
			             "to_timestamp($15::bigint / 1e6), $16, $17::date)",
			             &p, 0, NULL, errbuf, errlen)) != PW_OK)
				goto out;
			uint8_t *buf = NULL;
			size_t blen = 0;
			if ((st = job_pack(&j, al->alert_id, &buf, &blen)) != PW_OK)
				goto out;
			st = pw_outbox_add(pg, c->service, j.job_id, PW_TOPIC_BISECT_JOBS, j.job_id, buf, blen, errbuf,
			                   errlen);
			free(buf);
			if (st != PW_OK)
				goto out;
		}
	}
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, al->alert_id);
	pw_pg_params_text(&p, granted ? j.job_id : NULL);
	pw_pg_params_text(&p, j.run_id);
	pw_pg_params_int(&p, series_id);
	pw_pg_params_text(&p, key && key[0] ? key : al->series_key);
	pw_pg_params_int(&p, al->revision ? al->revision : 1);
	pw_pg_params_bin(&p, payload, len);
	pw_pg_params_double(&p, band.median);
	pw_pg_params_double(&p, al->observed->median);
	pw_pg_params_double(&p, band.lo);
	pw_pg_params_double(&p, band.hi);
	pw_pg_params_text(&p, granted ? "pending" : "over_budget");
	pw_pg_params_int(&p, range_lo);
	pw_pg_params_int(&p, range_hi);
	if ((st = pw_pg_exec_params(pg,
	                            "INSERT INTO perfwatch.confirm_alerts (alert_id, job_id, run_id, series_id, topic_key, "
	                            "revision, payload, baseline_median, point_value, band_lo, band_hi, outcome, "
	                            "decided_at, range_lo_number, range_hi_number) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
	                            "$9, $10, $11, $12, CASE WHEN $12 = 'over_budget' THEN now() END, $13, $14)",
	                            &p, 0, NULL, errbuf, errlen)) != PW_OK)
		goto out;
	char summary[1024], reason[320];
	pw_confirm_revision rev = {.revision = (al->revision ? al->revision : 1) + 1, .job_id = granted ? j.job_id : "",
	                           .repeats = j.repeats, .band_lo = band.lo, .band_hi = band.hi, .cl = j.cl,
	                           .prev_cl = range_lo, .range_hi = range_hi, .point_us = j.point_us, .summary = summary,
	                           .reason = reason};
	if (granted) {
		/* the row says the rerun is under way; the message waits for the decision */
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, al->alert_id);
		pw_pg_params_text(&p, j.job_id);
		if ((st = pw_pg_exec_params(pg, "UPDATE perfwatch.alerts SET confirm_outcome = 'pending', confirm_job_id = $2 "
		                            "WHERE alert_id = $1 AND confirm_outcome = ''", &p, 0, NULL, errbuf,
		                            errlen)) != PW_OK)
			goto out;
		*outcome = have_job ? "joined" : "requested";
	} else {
		rev.outcome = PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_OVER_BUDGET;
		snprintf(reason, sizeof reason, "the rerun budget of %" PRId64 " runs for %s is spent: not confirmed",
		         c->budget_runs, day);
		snprintf(summary, sizeof summary, "unconfirmed outlier on %.300s: %.320s", al->series_key, reason);
		char bid[200];
		if ((st = publish_revision(c, pg, al->alert_id, key && key[0] ? key : al->series_key, payload, len, &rev,
		                           bid, sizeof bid, errbuf, errlen)) != PW_OK)
			goto out;
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, al->alert_id);
		pw_pg_params_int(&p, rev.revision);
		if ((st = pw_pg_exec_params(pg, "UPDATE perfwatch.confirm_alerts SET published_revision = $2 "
		                            "WHERE alert_id = $1", &p, 0, NULL, errbuf, errlen)) != PW_OK)
			goto out;
		*outcome = "over_budget";
	}
commit:
	if ((st = pw_pg_commit(pg, errbuf, errlen)) != PW_OK)
		goto out;
	tx = false;
	if (strcmp(*outcome, "requested") == 0)
		pw_metric_add(c->m_reruns, (const char *const[]){"requested"}, j.repeats);
	else if (strcmp(*outcome, "over_budget") == 0)
		pw_metric_add(c->m_reruns, (const char *const[]){"refused"}, j.repeats);
	pw_metric_inc(c->m_outcomes, (const char *const[]){*outcome});
out:
	if (r)
		PQclear(r);
	if (tx)
		pw_pg_rollback(pg, NULL, 0);
	return st;
}

/* ---- the tick: decide the jobs whose reruns are in --------------------------------------- */

typedef struct pend_alert {
	char alert_id[224], key[512];
	int64_t series_id;
	uint32_t revision;
	double median, point, lo, hi;
	bool lower_is_better;
	uint8_t *payload;
	size_t len;
	char series_key[512], unit[32];
	int64_t range_lo, range_hi;
} pend_alert;

/* Decides job j: every alert of it, its revision, its bisection; in one transaction. */
static pw_status decide_job(const pw_confirm *c, pw_pg *pg, const job_row *j, char *errbuf, size_t errlen)
{
	PGresult *r = NULL, *s = NULL;
	pend_alert *pa = NULL;
	int na = 0;
	bool tx = false;
	pw_pg_params p;
	/*
	 * One decider at a time per job: every instance's tick lists the same
	 * pending jobs, and two that decided one would each publish the alerts'
	 * next revision. A job another tick holds is left to it; its pending
	 * alerts are read after the lock, so a job just decided has none.
	 */
	pw_status st = pw_pg_begin(pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	tx = true;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, j->job_id);
	if ((st = pw_pg_exec_params(pg, "SELECT 1 FROM perfwatch.confirm_jobs WHERE job_id = $1 FOR UPDATE SKIP LOCKED",
	                            &p, 0, &r, errbuf, errlen)) != PW_OK)
		goto out;
	bool mine = PQntuples(r) == 1;
	PQclear(r);
	r = NULL;
	if (!mine)
		goto out;
	st = pw_pg_exec_params(
	        pg,
	        "SELECT a.alert_id, a.topic_key, a.series_id, greatest(a.revision, coalesce(al.revision, 0)), "
	        "a.baseline_median, a.point_value, a.band_lo, a.band_hi, se.direction = 'lower_is_better', "
	        "encode(a.payload, 'hex'), se.series_key, se.unit, a.range_lo_number, a.range_hi_number "
	        "FROM perfwatch.confirm_alerts a "
	        "JOIN perfwatch.series se USING (series_id) LEFT JOIN perfwatch.alerts al USING (alert_id) "
	        "WHERE a.job_id = $1 AND a.outcome = 'pending' ORDER BY a.alert_id",
	        &p, 0, &r, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	na = PQntuples(r);
	pa = calloc(na ? (size_t)na : 1, sizeof *pa);
	if (!pa) {
		st = PW_ERR_NOMEM;
		goto out;
	}
	for (int i = 0; i < na; i++) {
		snprintf(pa[i].alert_id, sizeof pa[i].alert_id, "%s", PQgetvalue(r, i, 0));
		snprintf(pa[i].key, sizeof pa[i].key, "%s", PQgetvalue(r, i, 1));
		pa[i].series_id = pw_pg_int(r, i, 2);
		pa[i].revision = (uint32_t)pw_pg_int(r, i, 3);
		pa[i].median = strtod(PQgetvalue(r, i, 4), NULL);
		pa[i].point = strtod(PQgetvalue(r, i, 5), NULL);
		pa[i].lo = strtod(PQgetvalue(r, i, 6), NULL);
		pa[i].hi = strtod(PQgetvalue(r, i, 7), NULL);
		pa[i].lower_is_better = strcmp(PQgetvalue(r, i, 8), "t") == 0;
		pa[i].payload = unhex(PQgetvalue(r, i, 9), &pa[i].len);
		snprintf(pa[i].series_key, sizeof pa[i].series_key, "%s", PQgetvalue(r, i, 10));
		snprintf(pa[i].unit, sizeof pa[i].unit, "%s", PQgetvalue(r, i, 11));
		pa[i].range_lo = pw_pg_int(r, i, 12);
		pa[i].range_hi = pw_pg_int(r, i, 13) > 0 ? pw_pg_int(r, i, 13) : j->cl;
		if (!pa[i].payload) {
			st = PW_ERR_NOMEM;
			goto out;
		}
	}
	PQclear(r);
	r = NULL;
	/* the reruns: every job-tagged point, by series */
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, j->job_id);
	if ((st = pw_pg_exec_params(pg,
	                            "SELECT series_id, value, (extract(epoch FROM measured_at) * 1e6)::bigint "
	                            "FROM perfwatch.samples WHERE bisect_job_id = $1 ORDER BY series_id, run_id, "
	                            "repeat_index",
	                            &p, 0, &s, errbuf, errlen)) != PW_OK)
		goto out;
	int ns = PQntuples(s);
	/* all in? every alert's series has its repeats */
	bool all_in = true;
	for (int i = 0; i < na && all_in; i++) {
		uint32_t n = 0;
		for (int k = 0; k < ns; k++)
			n += pw_pg_int(s, k, 0) == pa[i].series_id;
		all_in = n >= j->repeats;
	}
	if (!all_in) {
		if (pw_now_us() - j->requested_us > c->job_timeout_ms * 1000) {
			pw_pg_params_init(&p);
			pw_pg_params_text(&p, j->job_id);
			if ((st = pw_pg_exec_params(pg, "UPDATE perfwatch.confirm_jobs SET reissued = reissued + 1, "
			                            "requested_at = now() WHERE job_id = $1", &p, 0, NULL, errbuf, errlen)) != PW_OK ||
			    (st = pw_outbox_resend(pg, c->service, j->job_id, NULL, errbuf, errlen)) != PW_OK ||
			    (st = pw_pg_commit(pg, errbuf, errlen)) != PW_OK)
				goto out;
			tx = false;
			pw_log_warn(c->lg, "confirm job %s: results missing after %" PRId64 " ms: re-published", j->job_id,
			            c->job_timeout_ms);
		}
		goto out;
	}
	double x[CONFIRM_MAX_REPEATS * 4], work[CONFIRM_MAX_REPEATS * 8];
	char nightly[16];
	day_of(j->point_us, nightly, sizeof nightly);
	for (int i = 0; i < na; i++) {
		size_t n = 0;
		int64_t last_us = 0;
		for (int k = 0; k < ns && n < sizeof x / sizeof x[0]; k++) {
			if (pw_pg_int(s, k, 0) != pa[i].series_id)
				continue;
			x[n++] = strtod(PQgetvalue(s, k, 1), NULL);
			if (pw_pg_int(s, k, 2) > last_us)
				last_us = pw_pg_int(s, k, 2);
		}
		pw_confirm_band band = {.median = pa[i].median, .lo = pa[i].lo, .hi = pa[i].hi,
		                        .side = pa[i].point > pa[i].hi ? 1 : pa[i].point < pa[i].lo ? -1 : 0};
		band.k = 1;
		pw_confirm_result res;
		if (pw_confirm_decide(&band, x, n, pa[i].lower_is_better, work, &res) != PW_OK) {
			pw_log_error(c->lg, "confirm job %s: alert \"%s\": no finite rerun or no band; left pending",
			             j->job_id, pa[i].alert_id);
			continue;
		}
		char summary[1280], reason[400], lo[32], hi[32];
		cl_name(pa[i].range_lo, lo, sizeof lo);
		cl_name(pa[i].range_hi, hi, sizeof hi);
		double pct = pa[i].median != 0 ? (res.median - pa[i].median) / pa[i].median * 100.0 : 0;
		char build[32];
		cl_name(j->cl, build, sizeof build);
		snprintf(reason, sizeof reason, "rerun of %s (n %zu) median %.6g %s %s the band %.6g..%.6g %s", build, res.n,
		         res.median, pa[i].unit, res.reproduced ? "beyond" : "inside or across", pa[i].lo, pa[i].hi,
		         res.reproduced ? "on the outlier's side: reproduced" : ": not reproduced");
		pw_confirm_revision rev = {
			.revision = pa[i].revision + 1, .job_id = j->job_id, .repeats = j->repeats, .n = (uint32_t)res.n,
			.rerun_median = res.median, .band_lo = pa[i].lo, .band_hi = pa[i].hi, .cl = j->cl,
			.prev_cl = pa[i].range_lo, .range_hi = pa[i].range_hi, .point_us = j->point_us, .confirmed_us = last_us, .nightly = nightly,
			.summary = summary, .reason = reason, .regression = res.regression,
			.outcome = res.reproduced ? PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_REPRODUCED
			                          : PERFWATCH__V1__CONFIRM_OUTCOME__CONFIRM_OUTCOME_NOT_REPRODUCED};
		if (res.reproduced)
			snprintf(summary, sizeof summary, "confirmed %s %+.2f%% on %.300s nightly %s (%s..%s, %" PRId64
			         " CLs): %s", res.regression ? "regression" : "improvement", pct, pa[i].series_key,
			         nightly, lo, hi, pa[i].range_lo > 0 ? pa[i].range_hi - pa[i].range_lo : 0, reason);
		else
			snprintf(summary, sizeof summary, "infra outlier on %.300s nightly %.16s (not reproduced): %.400s",
			         pa[i].series_key, nightly, reason);
		char bid[200] = "";
		if ((st = publish_revision(c, pg, pa[i].alert_id, pa[i].key, pa[i].payload, pa[i].len, &rev, bid,
		                           sizeof bid, errbuf, errlen)) != PW_OK)
			goto out;
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, pa[i].alert_id);
		pw_pg_params_text(&p, pw_confirm_outcome_name(rev.outcome));
		pw_pg_params_double(&p, res.median);
		pw_pg_params_int(&p, (int64_t)res.n);
		pw_pg_params_int(&p, last_us);
		pw_pg_params_int(&p, rev.revision);
		pw_pg_params_text(&p, bid);
		if ((st = pw_pg_exec_params(pg,
		                            "UPDATE perfwatch.confirm_alerts SET outcome = $2, rerun_median = $3, rerun_n = $4, "
		                            "confirmed_data_at = to_timestamp($5::bigint / 1e6), published_revision = $6, "
		                            "bisection_id = $7, decided_at = now() WHERE alert_id = $1",
		                            &p, 0, NULL, errbuf, errlen)) != PW_OK)
			goto out;
		pw_metric_inc(c->m_outcomes, (const char *const[]){pw_confirm_outcome_name(rev.outcome)});
		pw_log_info(c->lg, "confirm job %s: alert \"%s\" %s%s%s (%.2f h of data time after the point)",
		            j->job_id, pa[i].alert_id, summary, bid[0] ? "; bisection " : "", bid,
		            (double)(last_us - j->point_us) / 3.6e9);
	}
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, j->job_id);
	if ((st = pw_pg_exec_params(pg, "UPDATE perfwatch.confirm_jobs SET status = 'done', finished_at = now() "
	                            "WHERE job_id = $1", &p, 0, NULL, errbuf, errlen)) != PW_OK)
		goto out;
	if ((st = pw_pg_commit(pg, errbuf, errlen)) != PW_OK)
		goto out;
	tx = false;
out:
	if (tx)
		pw_pg_rollback(pg, NULL, 0);
	if (r)
		PQclear(r);
	if (s)
		PQclear(s);
	for (int i = 0; pa && i < na; i++)
		free(pa[i].payload);
	free(pa);
	return st;
}

pw_status pw_confirm_tick(const pw_confirm *c, pw_pg *pg, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	pw_status st = pw_pg_exec(pg,
	                          "SELECT job_id, cl_number, prev_cl_number, (extract(epoch FROM point_at) * 1e6)::bigint, "
	                          "(extract(epoch FROM requested_at) * 1e6)::bigint, repeats FROM perfwatch.confirm_jobs j "
	                          "WHERE status = 'pending' OR EXISTS (SELECT 1 FROM perfwatch.confirm_alerts a WHERE "
	                          "a.job_id = j.job_id AND a.outcome = 'pending') ORDER BY requested_at, job_id LIMIT 200",
	                          0, NULL, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int i = 0; i < PQntuples(r); i++) {
		job_row j;
		memset(&j, 0, sizeof j);
		snprintf(j.job_id, sizeof j.job_id, "%s", PQgetvalue(r, i, 0));
		j.cl = pw_pg_int(r, i, 1);
		j.prev_cl = pw_pg_int(r, i, 2);
		j.point_us = pw_pg_int(r, i, 3);
		j.requested_us = pw_pg_int(r, i, 4);
		j.repeats = (uint32_t)pw_pg_int(r, i, 5);
		if ((st = decide_job(c, pg, &j, errbuf, errlen)) != PW_OK) {
			if (pw_service_retriable(st))
				break;
			pw_log_error(c->lg, "confirm job %s: %s", j.job_id, errbuf);
			st = PW_OK;
		}
	}
	PQclear(r);
	return st;
}
