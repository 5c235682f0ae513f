/*
 * canary_store.c: the canary's PostgreSQL side (canary_store.h).
 */
#include "canary_store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canary_door.h"
#include "pw_outbox.h"
#include "pw_topics.h"

/* 'epoch' + $n microseconds, exactly */
#define TS(n) "(timestamptz 'epoch' + $" #n "::bigint * interval '1 microsecond')"

/* The window's key as $1..$4: rollout, family, metric, start (µs). */
static void window_key(pw_pg_params *p, const Perfwatch__V1__CanaryWindow *w)
{
	pw_pg_params_init(p);
	pw_pg_params_text(p, w->rollout_id);
	pw_pg_params_text(p, w->family);
	pw_pg_params_text(p, pw_canary_metric_name((pw_canary_metric)(w->metric - 1)));
	pw_pg_params_int(p, w->window_start_unix_us);
}

pw_status canary_store_family_lock(pw_pg *pg, const Perfwatch__V1__CanaryWindow *w, double alpha,
                                   double mde_pct, double tolerance_pct, int64_t pilot_windows,
                                   int64_t horizon_s, canary_family_row *out, char *errbuf,
                                   size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, w->rollout_id);
	pw_pg_params_text(&p, w->family);
	pw_pg_params_text(&p, w->family_kind);
	pw_pg_params_text(&p, w->release);
	pw_pg_params_text(&p, w->artifact);
	pw_pg_params_text(&p, w->previous_release);
	pw_pg_params_text(&p, w->previous_artifact);
	pw_pg_params_double(&p, alpha);
	pw_pg_params_double(&p, mde_pct);
	pw_pg_params_double(&p, tolerance_pct);
	pw_pg_params_int(&p, pilot_windows);
	pw_pg_params_int(&p, horizon_s);
	pw_pg_params_int(&p, w->window_start_unix_us);
	pw_status st = pw_pg_exec_params(pg,
	                                 "INSERT INTO perfwatch.canary_families (rollout_id, family, family_kind, release, "
	                                 "artifact, previous_release, previous_artifact, alpha, mde_pct, tolerance_pct, "
	                                 "pilot_windows, horizon_s, first_window_start, last_window_end) VALUES ($1, $2, $3, "
	                                 "$4, $5, $6, $7, $8, $9, $10, $11, $12, " TS(13) ", " TS(13) ") "
	                                 "ON CONFLICT (rollout_id, family) DO NOTHING",
	                                 &p, 0, NULL, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_pg_params k;
	pw_pg_params_init(&k);
	pw_pg_params_text(&k, w->rollout_id);
	pw_pg_params_text(&k, w->family);
	PGresult *res = NULL;
	st = pw_pg_exec_params(pg,
	                       "SELECT windows, final, family_kind, alpha, mde_pct, tolerance_pct, pilot_windows, horizon_s, "
	                       "release, previous_release, previous_artifact, pinned_at IS NOT NULL, "
	                       "pin_expired_at IS NOT NULL, coalesce(pin_waiver_id, '') "
	                       "FROM perfwatch.canary_families WHERE rollout_id = $1 AND family = $2 FOR UPDATE",
	                       &k, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return pw_fail(PW_ERR_PG, errbuf, errlen, "canary family \"%s/%s\" vanished", w->rollout_id, w->family);
	}
	out->windows = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	out->final = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
	snprintf(out->family_kind, sizeof out->family_kind, "%s", PQgetvalue(res, 0, 2));
	out->alpha = strtod(PQgetvalue(res, 0, 3), NULL);
	out->mde_pct = strtod(PQgetvalue(res, 0, 4), NULL);
	out->tolerance_pct = strtod(PQgetvalue(res, 0, 5), NULL);
	out->pilot_windows = strtoll(PQgetvalue(res, 0, 6), NULL, 10);
	out->horizon_s = strtoll(PQgetvalue(res, 0, 7), NULL, 10);
	snprintf(out->release, sizeof out->release, "%s", PQgetvalue(res, 0, 8));
	snprintf(out->previous_release, sizeof out->previous_release, "%s", PQgetvalue(res, 0, 9));
	snprintf(out->previous_artifact, sizeof out->previous_artifact, "%s", PQgetvalue(res, 0, 10));
	out->pinned = PQgetvalue(res, 0, 11)[0] == 't';
	out->pin_expired = PQgetvalue(res, 0, 12)[0] == 't';
	snprintf(out->pin_waiver_id, sizeof out->pin_waiver_id, "%s", PQgetvalue(res, 0, 13));
	PQclear(res);
	return PW_OK;
}

pw_status canary_store_window_get(pw_pg *pg, const Perfwatch__V1__CanaryWindow *w, bool *found,
                                  double *canary, double *baseline, uint32_t *window_s, char *errbuf,
                                  size_t errlen)
{
	pw_pg_params p;
	window_key(&p, w);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "SELECT canary_value, baseline_value, window_s FROM perfwatch.canary_windows "
	                                 "WHERE rollout_id = $1 AND family = $2 AND metric = $3 AND window_start = " TS(4),
	                                 &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	*found = PQntuples(res) == 1;
	if (*found) {
		*canary = strtod(PQgetvalue(res, 0, 0), NULL);
		*baseline = strtod(PQgetvalue(res, 0, 1), NULL);
		*window_s = (uint32_t)strtoul(PQgetvalue(res, 0, 2), NULL, 10);
	}
	PQclear(res);
	return PW_OK;
}

pw_status canary_store_replay(pw_pg *pg, const char *rollout_id, const char *family, pw_canary_family *f,
                              int64_t *n, char *errbuf, size_t errlen)
{
	*n = 0;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, rollout_id);
	pw_pg_params_text(&p, family);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "SELECT metric, (extract(epoch FROM window_start) * 1000000)::bigint, window_s, "
	                                 "canary_value, baseline_value FROM perfwatch.canary_windows "
	                                 "WHERE rollout_id = $1 AND family = $2 ORDER BY seq",
	                                 &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	int rows = PQntuples(res);
	for (int i = 0; i < rows && st == PW_OK; i++) {
		pw_canary_metric m;
		if (!pw_canary_metric_parse(PQgetvalue(res, i, 0), &m)) {
			st = pw_fail(PW_ERR_PG, errbuf, errlen, "canary window of \"%s/%s\": unknown metric \"%s\"", rollout_id,
			             family, PQgetvalue(res, i, 0));
			break;
		}
		/* %.17g round-trips every double: the replayed pair is the pair taken */
		st = pw_canary_family_add(f, m, strtoll(PQgetvalue(res, i, 1), NULL, 10),
		                          (uint32_t)strtoul(PQgetvalue(res, i, 2), NULL, 10), strtod(PQgetvalue(res, i, 3), NULL),
		                          strtod(PQgetvalue(res, i, 4), NULL), NULL);
		if (st != PW_OK)
			pw_fail(st, errbuf, errlen, "replaying window %d of \"%s/%s\": %s", i + 1, rollout_id, family,
			        pw_strerror(st));
		else
			(*n)++;
	}
	PQclear(res);
	return st;
}

pw_status canary_store_window_put(pw_pg *pg, const Perfwatch__V1__CanaryWindow *w, int64_t seq, char *errbuf,
                                  size_t errlen)
{
	pw_pg_params p;
	window_key(&p, w);
	pw_pg_params_int(&p, w->window_s);
	pw_pg_params_double(&p, w->canary_value);
	pw_pg_params_double(&p, w->baseline_value);
	pw_pg_params_int(&p, w->canary_replicas);
	pw_pg_params_int(&p, w->baseline_replicas);
	pw_pg_params_double(&p, w->canary_fraction);
	pw_pg_params_int(&p, seq);
	pw_pg_params_text(&p, w->source ? w->source : "");
	return pw_pg_exec_params(pg,
	                         "INSERT INTO perfwatch.canary_windows (rollout_id, family, metric, window_start, window_s, "
	                         "canary_value, baseline_value, canary_replicas, baseline_replicas, canary_fraction, seq, "
	                         "source) VALUES ($1, $2, $3, " TS(4) ", $5, $6, $7, $8, $9, $10, $11, $12)",
	                         &p, 0, NULL, errbuf, errlen);
}

/* NULL for NaN (no interval yet); ±Infinity as PostgreSQL spells it (a side not bounded yet). */
static void opt_num(pw_pg_params *p, double v)
{
	pw_pg_params_opt_double(p, !isnan(v), v);
}

pw_status canary_store_metric_put(pw_pg *pg, const char *rollout_id, const char *family, pw_canary_metric m,
                                  const pw_canary_metric_state *s, char *errbuf, size_t errlen)
{
	bool has_verdict = s->verdict == PW_CS_REGRESSION || s->verdict == PW_CS_NO_REGRESSION;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, rollout_id);
	pw_pg_params_text(&p, family);
	pw_pg_params_text(&p, pw_canary_metric_name(m));
	pw_pg_params_int(&p, (int64_t)s->windows);
	pw_pg_params_int(&p, s->last_start_us);
	pw_pg_params_text(&p, pw_cs_decision_name(s->last.decision));
	if (has_verdict)
		pw_pg_params_text(&p, pw_cs_decision_name(s->verdict));
	else
		pw_pg_params_null(&p);
	pw_pg_params_opt_int(&p, has_verdict, (int64_t)s->at_verdict.n_windows);
	pw_pg_params_opt_int(&p, has_verdict, s->verdict_start_us);
	opt_num(&p, s->last.effect_pct);
	opt_num(&p, s->last.lo_pct);
	opt_num(&p, s->last.hi_pct);
	return pw_pg_exec_params(pg,
	                         "INSERT INTO perfwatch.canary_metrics (rollout_id, family, metric, windows, last_window_start, "
	                         "cs_decision, verdict, verdict_windows, verdict_window_start, effect_pct, lo_pct, hi_pct) "
	                         "VALUES ($1, $2, $3, $4, " TS(5) ", $6, $7, $8, "
	                         "CASE WHEN $9::bigint IS NULL THEN NULL ELSE " TS(9) " END, $10, $11, $12) "
	                         "ON CONFLICT (rollout_id, family, metric) DO UPDATE SET windows = EXCLUDED.windows, "
	                         "last_window_start = EXCLUDED.last_window_start, cs_decision = EXCLUDED.cs_decision, "
	                         "verdict = EXCLUDED.verdict, verdict_windows = EXCLUDED.verdict_windows, "
	                         "verdict_window_start = EXCLUDED.verdict_window_start, effect_pct = EXCLUDED.effect_pct, "
	                         "lo_pct = EXCLUDED.lo_pct, hi_pct = EXCLUDED.hi_pct",
	                         &p, 0, NULL, errbuf, errlen);
}

pw_status canary_store_family_put(pw_pg *pg, const char *service, const char *rollout_id, const char *family,
                                  const pw_canary_family *f, bool decided, const char *rollback_artifact,
                                  const void *packed, size_t len, char *errbuf, size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, rollout_id);
	pw_pg_params_text(&p, family);
	pw_pg_params_int(&p, (int64_t)f->windows);
	pw_pg_params_int(&p, f->last_end_us);
	pw_status st = pw_pg_exec_params(pg,
	                                 "UPDATE perfwatch.canary_families SET windows = $3, last_window_end = " TS(4) " "
	                                 "WHERE rollout_id = $1 AND family = $2",
	                                 &p, 0, NULL, errbuf, errlen);
	if (st != PW_OK || !decided)
		return st;
	pw_pg_params d;
	pw_pg_params_init(&d);
	pw_pg_params_text(&d, rollout_id);
	pw_pg_params_text(&d, family);
	pw_pg_params_text(&d, pw_canary_decision_name(f->decision));
	pw_pg_params_bool(&d, f->inconclusive);
	pw_pg_params_text(&d, pw_canary_metric_name(f->metric));
	opt_num(&d, f->decided.effect_pct);
	opt_num(&d, f->decided.lo_pct);
	opt_num(&d, f->decided.hi_pct);
	pw_pg_params_int(&d, (int64_t)f->decided.n_windows);
	pw_pg_params_int(&d, f->decided_start_us);
	if (rollback_artifact)
		pw_pg_params_text(&d, rollback_artifact);
	else
		pw_pg_params_null(&d);
	PGresult *res = NULL;
	st = pw_pg_exec_params(pg,
	                       "UPDATE perfwatch.canary_families SET decision = $3, inconclusive = $4, final = true, "
	                       "metric = $5, effect_pct = $6, lo_pct = $7, hi_pct = $8, decision_windows = $9, "
	                       "decided_window_start = " TS(10) ", rollback_artifact = $11, decided_at = now() "
	                       "WHERE rollout_id = $1 AND family = $2 AND NOT final RETURNING 1",
	                       &d, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	bool recorded = PQntuples(res) == 1;
	PQclear(res);
	if (!recorded)
		return PW_OK; /* recorded before: published then */
	return canary_store_rollout_out(pg, service, rollout_id, family, NULL, packed, len, errbuf, errlen);
}

pw_status canary_store_rollout_out(pw_pg *pg, const char *service, const char *rollout_id, const char *family,
                                   const char *ref, const void *packed, size_t len, char *errbuf, size_t errlen)
{
	char key[2 * PW_CANARY_NAME_MAX + 2];
	pw_canary_key(key, sizeof key, rollout_id, family);
	return pw_outbox_add(pg, service, ref ? ref : key, PW_TOPIC_ROLLOUTS, key, packed, len, errbuf, errlen);
}

#define PIN_COLS "release_id, waiver_id, model, pin_release, pin_artifact, owner, pin_signed_off_by, " \
	"(extract(epoch FROM expires_at) * 1000000)::bigint"

static void pin_read(PGresult *res, int i, canary_pin *out)
{
	snprintf(out->release_id, sizeof out->release_id, "%s", PQgetvalue(res, i, 0));
	snprintf(out->waiver_id, sizeof out->waiver_id, "%s", PQgetvalue(res, i, 1));
	snprintf(out->family, sizeof out->family, "%s", PQgetvalue(res, i, 2));
	snprintf(out->pin_release, sizeof out->pin_release, "%s", PQgetvalue(res, i, 3));
	snprintf(out->pin_artifact, sizeof out->pin_artifact, "%s", PQgetvalue(res, i, 4));
	snprintf(out->owner, sizeof out->owner, "%s", PQgetvalue(res, i, 5));
	snprintf(out->signed_off_by, sizeof out->signed_off_by, "%s", PQgetvalue(res, i, 6));
	out->expires_us = strtoll(PQgetvalue(res, i, 7), NULL, 10);
}

pw_status canary_store_pin_live(pw_pg *pg, const char *release, const char *family, bool *found, canary_pin *out,
                                char *errbuf, size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, release);
	pw_pg_params_text(&p, family);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "SELECT " PIN_COLS " FROM perfwatch.waivers WHERE release_id = $1 AND model = $2 "
	                                 "AND pin AND expires_at > now() ORDER BY expires_at DESC, waiver_id COLLATE \"C\" "
	                                 "LIMIT 1",
	                                 &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	*found = PQntuples(res) == 1;
	if (*found)
		pin_read(res, 0, out);
	PQclear(res);
	return PW_OK;
}

pw_status canary_store_pin_put(pw_pg *pg, const char *service, const char *rollout_id, const char *family,
                               const canary_pin *pin, const char *artifact, const void *packed, size_t len,
                               bool *recorded, char *errbuf, size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, rollout_id);
	pw_pg_params_text(&p, family);
	pw_pg_params_text(&p, pin->waiver_id);
	pw_pg_params_text(&p, pin->pin_release);
	pw_pg_params_text(&p, artifact);
	pw_pg_params_text(&p, pin->owner);
	pw_pg_params_text(&p, pin->signed_off_by);
	pw_pg_params_int(&p, pin->expires_us);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "UPDATE perfwatch.canary_families SET pin_waiver_id = $3, pinned_release = $4, "
	                                 "pinned_artifact = $5, pin_owner = $6, pin_signed_off_by = $7, "
	                                 "pin_expires_at = " TS(8) ", pinned_at = now(), pin_expired_at = NULL "
	                                 "WHERE rollout_id = $1 AND family = $2 AND NOT final RETURNING 1",
	                                 &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	*recorded = PQntuples(res) == 1;
	PQclear(res);
	if (!*recorded)
		return PW_OK;
	char ref[2 * PW_CANARY_NAME_MAX + 32];
	snprintf(ref, sizeof ref, "%s/%s#pinned", rollout_id, family);
	return canary_store_rollout_out(pg, service, rollout_id, family, ref, packed, len, errbuf, errlen);
}

pw_status canary_store_pins_expired(pw_pg *pg, canary_pin *out, size_t max, size_t *n, char *errbuf,
                                    size_t errlen)
{
	*n = 0;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_int(&p, (int64_t)max);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "SELECT " PIN_COLS " FROM perfwatch.waivers w WHERE pin AND expires_at <= now() "
	                                 "AND NOT EXISTS (SELECT 1 FROM perfwatch.pin_expiries e WHERE "
	                                 "e.release_id = w.release_id AND e.waiver_id = w.waiver_id) "
	                                 "ORDER BY expires_at, release_id, waiver_id LIMIT $1",
	                                 &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int i = 0; i < PQntuples(res) && (size_t)i < max; i++)
		pin_read(res, i, &out[(*n)++]);
	PQclear(res);
	return PW_OK;
}

pw_status canary_store_pins_live_count(pw_pg *pg, int64_t *n, char *errbuf, size_t errlen)
{
	pw_pg_params p;
	pw_pg_params_init(&p);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(pg, "SELECT count(*) FROM perfwatch.waivers WHERE pin AND expires_at > now()",
	                                 &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	*n = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return PW_OK;
}

pw_status canary_store_pin_expire(pw_pg *pg, const canary_pin *pin, bool *claimed, PGresult **rollouts,
                                  char *errbuf, size_t errlen)
{
	*claimed = false;
	*rollouts = NULL;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, pin->release_id);
	pw_pg_params_text(&p, pin->waiver_id);
	pw_pg_params_text(&p, pin->family);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(pg,
	                                 "WITH ended AS (UPDATE perfwatch.canary_families SET pin_expired_at = now() "
	                                 "WHERE release = $1 AND pin_waiver_id = $2 AND family = $3 "
	                                 "AND pin_expired_at IS NULL "
	                                 "RETURNING rollout_id, release, previous_release, pinned_artifact), "
	                                 "claim AS (INSERT INTO perfwatch.pin_expiries (release_id, waiver_id, family, "
	                                 "expired_at, rollouts) SELECT release_id, waiver_id, model, expires_at, "
	                                 "(SELECT count(*) FROM ended) FROM perfwatch.waivers WHERE release_id = $1 "
	                                 "AND waiver_id = $2 ON CONFLICT DO NOTHING RETURNING 1) "
	                                 "SELECT (SELECT count(*) FROM claim), rollout_id, release, previous_release, "
	                                 "pinned_artifact FROM (SELECT 1) one LEFT JOIN ended ON true ORDER BY rollout_id",
	                                 &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	*claimed = PQntuples(res) >= 1 && strcmp(PQgetvalue(res, 0, 0), "1") == 0;
	if (!*claimed) {
		PQclear(res);
		return PW_OK; /* reported before: the caller rolls back (the UPDATE goes with it) */
	}
	*rollouts = res;
	return PW_OK;
}
