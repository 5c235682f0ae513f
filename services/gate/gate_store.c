/*
 * gate_store.c: the release gate's reads and writes in PostgreSQL. See
 * gate_store.h for the contract and docs/gate.md for the rules (which
 * samples are the baseline, what is waited for, how a restart resumes).
 */
#include "gate_store.h"
#include "gate_request.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pw_time.h"
#include "pw_topics.h"

/* ------------------------------------------------------------------ arena */

typedef struct pw_gate_arena_block {
	struct pw_gate_arena_block *next;
	max_align_t data[];
} pw_gate_arena_block;

struct pw_gate_arena {
	pw_gate_arena_block *head;
};

void *pw_gate_release_alloc(pw_gate_release *r, size_t len)
{
	pw_gate_arena_block *b = calloc(1, sizeof *b + (len ? len : 1));
	if (!b)
		return NULL;
	b->next = r->arena->head;
	r->arena->head = b;
	return b->data;
}

char *pw_gate_release_strdup(pw_gate_release *r, const char *s)
{
	size_t n = strlen(s ? s : "");
	char *d = pw_gate_release_alloc(r, n + 1);
	if (d)
		memcpy(d, s ? s : "", n);
	return d;
}

void pw_gate_release_free(pw_gate_release *r)
{
	if (!r)
		return;
	if (r->arena) {
		pw_gate_arena_block *b = r->arena->head;
		while (b) {
			pw_gate_arena_block *next = b->next;
			free(b);
			b = next;
		}
		free(r->arena);
	}
	free(r);
}

static pw_gate_release *release_new(void)
{
	pw_gate_release *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->arena = calloc(1, sizeof *r->arena);
	if (!r->arena) {
		free(r);
		return NULL;
	}
	return r;
}

/* ---------------------------------------------------------------- helpers */

/* A growing text buffer for array literals; fails only on allocation. */
typedef struct tbuf {
	char *s;
	size_t n, cap;
	bool oom;
} tbuf;

static void tb_putc(tbuf *t, char c)
{
	if (t->oom)
		return;
	if (t->n + 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char *s = realloc(t->s, cap);
		if (!s) {
			t->oom = true;
			return;
		}
		t->s = s;
		t->cap = cap;
	}
	t->s[t->n++] = c;
	t->s[t->n] = '\0';
}

static void tb_puts(tbuf *t, const char *s)
{
	for (; *s; s++)
		tb_putc(t, *s);
}

/* Appends one field of COPY's text format: \\N for NULL, else the text with
 * backslash, tab, newline and carriage return escaped. */
static void tb_copy_field(tbuf *t, const char *s)
{
	if (!s) {
		tb_puts(t, "\\N");
		return;
	}
	for (; *s; s++) {
		switch (*s) {
		case '\\': tb_puts(t, "\\\\"); break;
		case '\t': tb_puts(t, "\\t"); break;
		case '\n': tb_puts(t, "\\n"); break;
		case '\r': tb_puts(t, "\\r"); break;
		default: tb_putc(t, *s); break;
		}
	}
}

/* Appends a quoted element of a PostgreSQL array literal. */
static void tb_array_elem(tbuf *t, const char *s, bool first)
{
	if (!first)
		tb_putc(t, ',');
	tb_putc(t, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			tb_putc(t, '\\');
		tb_putc(t, *s);
	}
	tb_putc(t, '"');
}

static const char *tier_text(pw_gate_tier t)
{
	return t == PW_GATE_TIER_TOP ? "top" : "tail";
}

static void fmt_double(char *buf, size_t len, double x, const char **param)
{
	if (!isfinite(x)) {
		*param = NULL;
		return;
	}
	snprintf(buf, len, "%.17g", x);
	*param = buf;
}

_Static_assert(sizeof ((pw_gate_pending *)0)->release_id == PW_GATE_RELEASE_ID_MAX,
               "a release id fits pw_gate_pending");

/* ---------------------------------------------------------------- request */

pw_status pw_gate_store_request(pw_pg *pg, const Perfwatch__V1__GateRequest *req,
                             const pw_gate_store_defaults *d, bool *duplicate, char *errbuf,
                             size_t errlen)
{
	pw_status st = PW_OK;
	PGresult *res = NULL;
	tbuf fam = {0};
	if (duplicate)
		*duplicate = false;

	/* what the schema's CHECKs would refuse: such a request can never be
	 * stored, and retrying it would stall the partition (the door checked it
	 * already; a caller that did not gets the same answer here) */
	if ((st = pw_gate_request_check(req, d->policy.fdr_q, pw_now_us(), errbuf, errlen)) != PW_OK)
		return st;
	double fdr = req->fdr_q == 0.0 ? d->policy.fdr_q : req->fdr_q;

	int64_t requested = req->requested_unix_us ? req->requested_unix_us : pw_now_us();
	int64_t deadline = req->deadline_unix_us ? req->deadline_unix_us
	                                         : requested + d->default_wait_us;
	tb_putc(&fam, '{');
	for (size_t i = 0; i < req->n_families; i++)
		tb_array_elem(&fam, req->families[i] ? req->families[i] : "", i == 0);
	tb_putc(&fam, '}');
	if (fam.oom) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory storing a gate request");
		goto out;
	}

	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, req->release_id);
	pw_pg_params_int(&p, req->evaluation);
	pw_pg_params_text(&p, req->candidate->build_id);
	pw_pg_params_text(&p, req->candidate->cl ? req->candidate->cl : "");
	pw_pg_params_text(&p, req->baseline_release);
	pw_pg_params_text(&p, fam.s);
	pw_pg_params_double(&p, fdr);
	pw_pg_params_int(&p, requested);
	pw_pg_params_int(&p, deadline);
	st = pw_pg_exec_params(pg,
	                       "INSERT INTO perfwatch.gate_evaluations (release_id, evaluation, "
	                       "candidate_build_id, candidate_cl, baseline_release, families, fdr_q, "
	                       "requested_at, deadline, status) VALUES ($1, $2, $3, $4, $5, $6::text[], "
	                       "$7, to_timestamp($8::double precision / 1e6), "
	                       "to_timestamp($9::double precision / 1e6), 'pending') "
	                       "ON CONFLICT (release_id, evaluation) DO NOTHING RETURNING 1",
	                       &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	bool dup = PQntuples(res) == 0;
	PQclear(res);
	res = NULL;
	if (dup) {
		if (duplicate)
			*duplicate = true;
		/* a re-sent request that brings waivers the stored one did not have
		 * would otherwise get the old verdict and lose them without a word */
		const char *wq[] = {req->release_id};
		st = pw_pg_exec(pg, "SELECT waiver_id FROM perfwatch.waivers WHERE release_id = $1", 1,
		                wq, &res, errbuf, errlen);
		if (st != PW_OK)
			goto out;
		for (size_t i = 0; i < req->n_waivers; i++) {
			bool known = false;
			for (int k = 0; k < PQntuples(res) && !known; k++)
				known = strcmp(PQgetvalue(res, k, 0), req->waivers[i]->waiver_id) == 0;
			if (!known) {
				st = pw_fail(PW_ERR_INVALID, errbuf, errlen,
				             "gate request \"%s\" evaluation %" PRIu32 " was already received without "
				             "waiver \"%s\": send the new waivers as evaluation %" PRIu32,
				             req->release_id, req->evaluation, req->waivers[i]->waiver_id,
				             req->evaluation + 1);
				goto out;
			}
		}
		PQclear(res);
		res = NULL;
		/* done already: publish the stored verdict again */
		char ref[PW_GATE_OUTBOX_REF_LEN];
		pw_gate_outbox_ref(ref, sizeof ref, req->release_id, req->evaluation);
		st = pw_outbox_resend(pg, PW_GATE_SERVICE, ref, NULL, errbuf, errlen);
		goto out;
	}

	for (size_t i = 0; i < req->n_tiers; i++) {
		const Perfwatch__V1__TierRepeats *t = req->tiers[i];
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, req->release_id);
		pw_pg_params_int(&p, req->evaluation);
		pw_pg_params_text(&p, t->tier == PERFWATCH__V1__TIER__TIER_TOP ? "top" : "tail");
		pw_pg_params_int(&p, t->n);
		pw_pg_params_double(&p, t->mde_pct);
		st = pw_pg_exec_params(pg,
		                       "INSERT INTO perfwatch.gate_tier_repeats (release_id, evaluation, "
		                       "tier, n, mde_pct) VALUES ($1, $2, $3, $4, $5) "
		                       "ON CONFLICT DO NOTHING",
		                       &p, 0, NULL, errbuf, errlen);
		if (st != PW_OK)
			goto out;
	}
	for (size_t i = 0; i < req->n_waivers; i++) {
		const Perfwatch__V1__Waiver *w = req->waivers[i];
		/* a release-wide waiver says so wherever its reason is shown (the verdict) */
		char wide[1100];
		snprintf(wide, sizeof wide, "RELEASE-WIDE WAIVER: %.1000s", w->reason);
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, w->waiver_id);
		pw_pg_params_text(&p, req->release_id);
		pw_pg_params_text(&p, w->model ? w->model : "");
		pw_pg_params_text(&p, w->platform ? w->platform : "");
		pw_pg_params_text(&p, w->config ? w->config : "");
		pw_pg_params_text(&p, w->metric ? w->metric : "");
		pw_pg_params_text(&p, w->owner);
		pw_pg_params_text(&p, w->approved_by ? w->approved_by : "");
		pw_pg_params_text(&p, w->release_wide ? wide : w->reason);
		pw_pg_params_int(&p, w->expires_unix_us);
		pw_pg_params_text(&p, w->pin ? "t" : "f");
		pw_pg_params_text(&p, pw_gate_pin_release(req, w));
		pw_pg_params_text(&p, w->pin_artifact ? w->pin_artifact : "");
		pw_pg_params_text(&p, w->pin_signed_off_by ? w->pin_signed_off_by : "");
		/* an id names a waiver of this release (0039): the same id stored for
		 * it already must be the same waiver (a redelivery), else the request
		 * is refused naming it; a waiver of another release is another row */
		st = pw_pg_exec_params(pg,
		                       "WITH ins AS (INSERT INTO perfwatch.waivers (waiver_id, release_id, model, "
		                       "platform, config, metric, owner, approved_by, reason, expires_at, "
		                       "pin, pin_release, pin_artifact, pin_signed_off_by) "
		                       "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
		                       "to_timestamp($10::double precision / 1e6), $11::boolean, $12, $13, $14) "
		                       "ON CONFLICT (release_id, waiver_id) DO NOTHING RETURNING 1) "
		                       "SELECT EXISTS (SELECT 1 FROM ins) OR EXISTS (SELECT 1 FROM "
		                       "perfwatch.waivers WHERE release_id = $2 AND waiver_id = $1 AND "
		                       "model = $3 AND platform = $4 AND config = $5 AND metric = $6 AND "
		                       "owner = $7 AND approved_by = $8 AND reason = $9 AND "
		                       "expires_at = to_timestamp($10::double precision / 1e6) AND "
		                       "pin = $11::boolean AND pin_release = $12 AND pin_artifact = $13 AND "
		                       "pin_signed_off_by = $14)",
		                       &p, 0, &res, errbuf, errlen);
		if (st != PW_OK)
			goto out;
		bool same = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't';
		PQclear(res);
		res = NULL;
		if (!same) {
			st = pw_fail(PW_ERR_CONFLICT, errbuf, errlen,
			             "gate request \"%s\" evaluation %" PRIu32 ": waiver \"%s\" is already "
			             "stored for release \"%s\" with other content (selectors, owner, "
			             "sign-off, reason, expiry or pin); a changed waiver needs a new id",
			             req->release_id, req->evaluation, w->waiver_id, req->release_id);
			goto out;
		}
	}
	for (size_t i = 0; i < req->n_expected_wins; i++) {
		const Perfwatch__V1__ExpectedWin *e = req->expected_wins[i];
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, req->release_id);
		pw_pg_params_text(&p, e->series_key);
		pw_pg_params_double(&p, e->expected_delta_pct);
		pw_pg_params_text(&p, e->registered_by ? e->registered_by : "");
		pw_pg_params_text(&p, e->cl ? e->cl : "");
		pw_pg_params_text(&p, e->note ? e->note : "");
		st = pw_pg_exec_params(pg,
		                       "INSERT INTO perfwatch.expected_wins (release_id, series_key, "
		                       "expected_delta_pct, registered_by, cl, note) VALUES ($1, $2, $3, $4, "
		                       "$5, $6) ON CONFLICT (release_id, series_key) DO NOTHING",
		                       &p, 0, NULL, errbuf, errlen);
		if (st != PW_OK)
			goto out;
	}

out:
	PQclear(res);
	free(fam.s);
	return st;
}

/* The key of an evaluation from columns 0 (release_id) and 1 (evaluation). */
static void pending_of_row(pw_gate_pending *out, PGresult *res, int row)
{
	snprintf(out->release_id, sizeof out->release_id, "%s", PQgetvalue(res, row, 0));
	out->evaluation = (uint32_t)strtoul(PQgetvalue(res, row, 1), NULL, 10);
}

pw_status pw_gate_store_pending(pw_pg *pg, pw_gate_pending *out, size_t cap, size_t *n, char *errbuf,
                             size_t errlen)
{
	PGresult *res = NULL;
	*n = 0;
	pw_status st = pw_pg_exec(pg,
	                          "SELECT release_id, evaluation FROM perfwatch.gate_evaluations "
	                          "WHERE status = 'pending' ORDER BY requested_at, release_id, "
	                          "evaluation",
	                          0, NULL, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int i = 0; i < PQntuples(res) && *n < cap; i++)
		pending_of_row(&out[(*n)++], res, i);
	PQclear(res);
	return PW_OK;
}

/* ---------------------------------------------------------------- waiting */

pw_status pw_gate_store_waiting(pw_pg *pg, const char *release_id, uint32_t evaluation,
                                const char *waiting, char *errbuf, size_t errlen)
{
	char ev[16];
	snprintf(ev, sizeof ev, "%" PRIu32, evaluation);
	const char *p[] = {release_id, ev, waiting};
	return pw_pg_exec(pg,
	                  "UPDATE perfwatch.gate_evaluations SET waiting = $3, waiting_at = now() "
	                  "WHERE release_id = $1 AND evaluation = $2 AND status = 'pending'",
	                  3, p, NULL, errbuf, errlen);
}

pw_status pw_gate_store_watched(pw_pg *pg, int64_t window_us, pw_gate_pending *out,
                                size_t *lacking, int64_t *seen, size_t cap, size_t *n,
                                char *errbuf, size_t errlen)
{
	PGresult *res = NULL;
	*n = 0;
	char win[32];
	snprintf(win, sizeof win, "%" PRId64, window_us);
	const char *p[] = {win};
	pw_status st = pw_pg_exec(pg,
	                          "SELECT g.release_id, g.evaluation, g.lacking, g.seen "
	                          "FROM perfwatch.gate_evaluations g WHERE g.status = 'done' "
	                          "AND g.lacking > 0 AND g.evaluated_at > now() - "
	                          "make_interval(secs => $1::double precision / 1e6) "
	                          "AND NOT EXISTS (SELECT 1 FROM perfwatch.gate_evaluations n "
	                          "WHERE n.release_id = g.release_id AND n.evaluation > g.evaluation) "
	                          "ORDER BY g.evaluated_at, g.release_id",
	                          1, p, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int i = 0; i < PQntuples(res) && *n < cap; i++) {
		pending_of_row(&out[*n], res, i);
		lacking[*n] = (size_t)strtoull(PQgetvalue(res, i, 2), NULL, 10);
		seen[*n] = strtoll(PQgetvalue(res, i, 3), NULL, 10);
		(*n)++;
	}
	PQclear(res);
	return PW_OK;
}

pw_status pw_gate_store_redecide(pw_pg *pg, const char *release_id, uint32_t evaluation,
                                 uint32_t *created, char *errbuf, size_t errlen)
{
	PGresult *res = NULL;
	*created = 0;
	char ev[16];
	snprintf(ev, sizeof ev, "%" PRIu32, evaluation);
	const char *p[] = {release_id, ev};
	pw_status st = pw_pg_begin(pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	/* the newest evaluation of the release only (a request of release tooling
	 * that arrived meanwhile ends the watch); two gates creating the same
	 * number meet on the primary key, and one of them creates nothing */
	st = pw_pg_exec(pg,
	                "INSERT INTO perfwatch.gate_evaluations (release_id, evaluation, "
	                "candidate_build_id, candidate_cl, baseline_release, families, fdr_q, "
	                "requested_at, deadline, status, late_of) "
	                "SELECT g.release_id, g.evaluation + 1, g.candidate_build_id, g.candidate_cl, "
	                "g.baseline_release, g.families, g.fdr_q, g.requested_at, g.deadline, "
	                "'pending', g.evaluation FROM perfwatch.gate_evaluations g "
	                "WHERE g.release_id = $1 AND g.evaluation = $2::integer AND g.status = 'done' "
	                "AND NOT EXISTS (SELECT 1 FROM perfwatch.gate_evaluations n "
	                "WHERE n.release_id = g.release_id AND n.evaluation > g.evaluation) "
	                "ON CONFLICT (release_id, evaluation) DO NOTHING RETURNING evaluation",
	                2, p, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	if (PQntuples(res) == 1)
		*created = (uint32_t)strtoul(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	res = NULL;
	if (*created) {
		st = pw_pg_exec(pg,
		                "INSERT INTO perfwatch.gate_tier_repeats (release_id, evaluation, tier, n, "
		                "mde_pct) SELECT release_id, evaluation + 1, tier, n, mde_pct FROM "
		                "perfwatch.gate_tier_repeats WHERE release_id = $1 AND evaluation = "
		                "$2::integer",
		                2, p, NULL, errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}
	return pw_pg_commit(pg, errbuf, errlen);

fail:
	PQclear(res);
	pw_pg_rollback(pg, NULL, 0);
	return st;
}

/* ------------------------------------------------------------------- load */

static pw_gate_series_state state_of(const char *s, bool has_row, bool open_freeze)
{
	if (open_freeze)
		return PW_GATE_STATE_FROZEN;
	if (!has_row)
		return PW_GATE_STATE_BASELINING;
	if (strcmp(s, "active") == 0)
		return PW_GATE_STATE_ACTIVE;
	if (strcmp(s, "frozen") == 0)
		return PW_GATE_STATE_FROZEN;
	if (strcmp(s, "quarantined") == 0)
		return PW_GATE_STATE_QUARANTINED;
	return PW_GATE_STATE_BASELINING;
}

typedef struct id_index {
	int64_t id;
	size_t idx;
} id_index;

static int id_cmp(const void *a, const void *b)
{
	int64_t x = ((const id_index *)a)->id, y = ((const id_index *)b)->id;
	return x < y ? -1 : x > y;
}

static pw_status load_samples(pw_pg *pg, pw_gate_release *r, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	PGresult *res = NULL;
	tbuf ids = {0}, wstart = {0}, wend = {0};
	id_index *index = NULL;
	size_t *nb = NULL, *nc = NULL;
	if (r->n_series == 0)
		return PW_OK;

	index = malloc(r->n_series * sizeof *index);
	nb = calloc(r->n_series, sizeof *nb);
	nc = calloc(r->n_series, sizeof *nc);
	if (!index || !nb || !nc) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory loading samples");
		goto out;
	}
	tb_putc(&ids, '{');
	tb_putc(&wstart, '{');
	tb_putc(&wend, '{');
	for (size_t i = 0; i < r->n_series; i++) {
		char b[32];
		snprintf(b, sizeof b, "%s%" PRId64, i ? "," : "", r->meta[i].series_id);
		tb_puts(&ids, b);
		index[i] = (id_index){r->meta[i].series_id, i};
		/* the window of the baseline read with the series (NULL: none) */
		const pw_gate_series_meta *m = &r->meta[i];
		bool w = m->baseline_version > 0 && m->window_end_us > 0;
		snprintf(b, sizeof b, "%s%" PRId64, i ? "," : "", m->window_start_us);
		tb_puts(&wstart, w ? b : i ? ",NULL" : "NULL");
		snprintf(b, sizeof b, "%s%" PRId64, i ? "," : "", m->window_end_us);
		tb_puts(&wend, w ? b : i ? ",NULL" : "NULL");
	}
	tb_putc(&ids, '}');
	tb_putc(&wstart, '}');
	tb_putc(&wend, '}');
	if (ids.oom || wstart.oom || wend.oom) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory loading samples");
		goto out;
	}
	qsort(index, r->n_series, sizeof *index, id_cmp);
	/* the candidate's runs; the baseline release's runs where it has enough,
	 * else the runs behind the baseline as of the request: the newest version
	 * whose window ends by then (nightly and release samples of its window, as
	 * the baseliner computed it); a version the baseliner folded from later
	 * nightlies must not decide the verdict, nor how far it had got */
	char minb[32];
	snprintf(minb, sizeof minb, "%zu", r->policy.min_baseline_n);
	char asked[32];
	snprintf(asked, sizeof asked, "%" PRId64, r->requested_us);
	const char *p[] = {ids.s, r->candidate_build_id, r->baseline_release, minb, asked, wstart.s,
	                   wend.s};
	st = pw_pg_exec(pg,
	                "WITH ids AS (SELECT * FROM unnest($1::bigint[], $6::bigint[], $7::bigint[]) "
	                "             AS i(series_id, ws, we)), "
	                "rel AS (SELECT series_id FROM perfwatch.samples WHERE series_id = ANY($1::bigint[]) "
	                "        AND build_id = $3 AND bisect_job_id = '' GROUP BY series_id "
	                "        HAVING count(*) >= $4::integer) "
	                "SELECT p.series_id, p.value, CASE WHEN p.build_id = $2 THEN 'c' ELSE 'r' END, "
	                "       p.measured_at, p.run_id, p.repeat_index, "
	                /* §9: the numerics fingerprint of the sample's run ('' when none) */
	                "       (SELECT n.numerics_fingerprint FROM perfwatch.runs n "
	                "         WHERE n.run_id = p.run_id AND n.repeat_index = p.repeat_index) "
	                "  FROM perfwatch.samples p WHERE p.series_id = ANY($1::bigint[]) "
	                "   AND p.bisect_job_id = '' AND (p.build_id = $2 OR (p.build_id = $3 "
	                "   AND p.series_id IN (SELECT series_id FROM rel))) "
	                "UNION ALL "
	                "SELECT p.series_id, p.value, 'w', p.measured_at, p.run_id, p.repeat_index, "
	                "       (SELECT n.numerics_fingerprint FROM perfwatch.runs n "
	                "         WHERE n.run_id = p.run_id AND n.repeat_index = p.repeat_index) "
	                "  FROM ids i "
	                "  JOIN perfwatch.samples p ON p.series_id = i.series_id "
	                "   AND p.build_kind IN ('nightly', 'release') AND p.bisect_job_id = '' "
	                "   AND p.build_id <> $2 "
	                "   AND p.measured_at BETWEEN ('epoch'::timestamptz + i.ws * interval '1 microsecond') "
	                "                         AND ('epoch'::timestamptz + i.we * interval '1 microsecond') "
	                /* nothing measured after the request: in a replay the baseliner may
	                 * already have folded the nightlies after the RC, and whether it had
	                 * must not decide the verdict */
	                "   AND p.measured_at <= to_timestamp($5::double precision / 1e6) "
	                " WHERE i.series_id NOT IN (SELECT series_id FROM rel) "
	                "ORDER BY 1, 4, 5, 6",
	                7, p, &res, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	int rows = PQntuples(res);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			for (size_t i = 0; i < r->n_series; i++) {
				double *b = pw_gate_release_alloc(r, (nb[i] + 1) * sizeof *b);
				double *c = pw_gate_release_alloc(r, (nc[i] + 1) * sizeof *c);
				const char **bn = pw_gate_release_alloc(r, (nb[i] + 1) * sizeof *bn);
				const char **cn = pw_gate_release_alloc(r, (nc[i] + 1) * sizeof *cn);
				if (!b || !c || !bn || !cn) {
					st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory loading samples");
					goto out;
				}
				r->series[i].base = b;
				r->series[i].cand = c;
				r->series[i].base_numerics = bn;
				r->series[i].cand_numerics = cn;
				r->series[i].n_base = 0;
				r->series[i].n_cand = 0;
			}
		}
		for (int row = 0; row < rows; row++) {
			id_index key = {pw_pg_int(res, row, 0), 0};
			id_index *hit = bsearch(&key, index, r->n_series, sizeof *index, id_cmp);
			if (!hit)
				continue;
			char src = PQgetvalue(res, row, 2)[0];
			bool cand = src == 'c';
			size_t i = hit->idx;
			if (src == 'w')
				r->meta[i].baseline_from_window = true;
			if (pass == 0) {
				(cand ? nc : nb)[i]++;
				continue;
			}
			double v = pw_pg_double(res, row, 1);
			/* NULL: a sample whose run row is not there; '': a run without one */
			const char *fp = NULL;
			if (!PQgetisnull(res, row, 6) && PQgetvalue(res, row, 6)[0] &&
			    !(fp = pw_gate_release_strdup(r, PQgetvalue(res, row, 6)))) {
				st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory loading samples");
				goto out;
			}
			if (cand) {
				((const char **)r->series[i].cand_numerics)[r->series[i].n_cand] = fp;
				((double *)r->series[i].cand)[r->series[i].n_cand++] = v;
			} else {
				((const char **)r->series[i].base_numerics)[r->series[i].n_base] = fp;
				((double *)r->series[i].base)[r->series[i].n_base++] = v;
			}
		}
	}

out:
	PQclear(res);
	free(ids.s);
	free(wstart.s);
	free(wend.s);
	free(index);
	free(nb);
	free(nc);
	return st;
}

/*
 * Series `in`'s platform class and required n (§4.5) from its latest
 * baseline's noise and the n it published for each tier, as
 * pw_gate_required_n chooses for the gate's MDE of the series. The waiting
 * rule reads them with the series; an evaluation again from the record whose
 * window it reads (load_windows), so that both come from one version.
 */
static void series_power(const pw_gate_release *r, pw_gate_series_input *in, bool has_baseline,
                         double sigma_pct, bool gpu_class, unsigned n_top, double mde_top_pct,
                         unsigned n_tail, double mde_tail_pct)
{
	in->gpu = has_baseline && gpu_class;
	bool top = in->tier == PW_GATE_TIER_TOP;
	in->required_n = pw_gate_required_n(has_baseline, sigma_pct, top ? n_top : n_tail,
	                                    top ? mde_top_pct : mde_tail_pct,
	                                    pw_gate_series_mde(&r->policy, in),
	                                    pw_gate_series_min_n(&r->policy, in));
}

/*
 * The window and power of the baseline as of the request of every series of
 * r that has one (meta[i].baseline_version > 0, in order; current[k] the
 * cache version the series query read for the k-th of them), read with one
 * pw_baseline_get_many. The cache holds a series' newest version: when that
 * is newer than the request's (a replay whose later nightlies the baseliner
 * has folded), the series query's row of the request's version stands.
 */
static pw_status load_windows(pw_baseline_reader *br, pw_gate_release *r, const uint64_t *current,
                              char *errbuf, size_t errlen)
{
	size_t nb = 0;
	for (size_t i = 0; i < r->n_series; i++)
		nb += r->meta[i].baseline_version > 0;
	if (nb == 0)
		return PW_OK;
	const char **keys = pw_gate_release_alloc(r, nb * sizeof *keys);
	size_t *at = pw_gate_release_alloc(r, nb * sizeof *at);
	bool *found = pw_gate_release_alloc(r, nb * sizeof *found);
	pw_baseline_record *rec = malloc(nb * sizeof *rec);
	if (!keys || !at || !found || !rec) {
		free(rec);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory reading %zu baselines", nb);
	}
	for (size_t i = 0, k = 0; i < r->n_series; i++)
		if (r->meta[i].baseline_version > 0) {
			at[k] = i;
			keys[k++] = r->meta[i].key;
		}
	pw_status st = pw_baseline_get_many(br, keys, current, nb, rec, found, NULL, NULL, errbuf,
	                                    errlen);
	for (size_t k = 0; st == PW_OK && k < nb; k++) {
		pw_gate_series_meta *m = &r->meta[at[k]];
		/* deleted since the series query, or a version newer than the request's
		 * (later nightlies folded in a replay): the series query's own row stands */
		if (!found[k] || (int)rec[k].version != m->baseline_version)
			continue;
		m->window_start_us = rec[k].window_start_us;
		m->window_end_us = rec[k].window_end_us;
		series_power(r, &r->series[at[k]], true, rec[k].sigma_pct, rec[k].gpu_class,
		             rec[k].required_n_top, rec[k].mde_top_pct, rec[k].required_n_tail,
		             rec[k].mde_tail_pct);
	}
	free(rec);
	return st;
}

/* The family of r named name, NULL when the release does not gate it. */
static pw_gate_family_input *family_named(pw_gate_release *r, const char *name)
{
	for (size_t j = 0; j < r->n_families; j++)
		if (strcmp(r->families[j].name, name) == 0)
			return &r->families[j];
	return NULL;
}

/*
 * Whether the plan of the candidate's sweep lists series s's benchmark
 * (model, fingerprint, platform, config): a plan whose release is the
 * request's release ($7) or its candidate build ($2). Such a series is
 * gated whether or not its runs arrived: without them it is missing.
 */
#define PLANNED_SERIES                                                                          \
	"EXISTS (SELECT 1 FROM perfwatch.plans pl JOIN perfwatch.plan_items pi USING (plan_id) " \
	"WHERE pl.release IN ($2, $7) AND pi.model = s.model AND pi.platform = s.platform "      \
	"AND pi.config = s.config AND pi.hlo_fingerprint = s.hlo_fingerprint)"

pw_status pw_gate_store_load(pw_baseline_reader *br, const char *release_id, uint32_t evaluation,
                          const pw_gate_store_defaults *d, bool with_samples, pw_gate_release **out,
                          char *errbuf, size_t errlen)
{
	pw_pg *pg = br->pg;
	pw_status st = PW_OK;
	PGresult *res = NULL;
	tbuf fams = {0};
	uint64_t *current = NULL; /* the cache versions of the baselines read with the series */
	pw_gate_release *r = release_new();
	*out = NULL;
	if (!r)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory loading a release");
	char ev[16];
	snprintf(ev, sizeof ev, "%" PRIu32, evaluation);
	const char *key[] = {release_id, ev};

	/* 1. the request */
	st = pw_pg_exec(pg,
	                "SELECT candidate_build_id, candidate_cl, baseline_release, fdr_q, "
	                "(extract(epoch FROM requested_at) * 1e6)::bigint, "
	                "coalesce((extract(epoch FROM deadline) * 1e6)::bigint, 0), "
	                "(extract(epoch FROM received_at) * 1e6)::bigint, "
	                "cardinality(families) > 0, coalesce(late_of, 0) "
	                "FROM perfwatch.gate_evaluations WHERE release_id = $1 AND evaluation = $2",
	                2, key, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	if (PQntuples(res) != 1) {
		st = pw_fail(PW_ERR_NOT_FOUND, errbuf, errlen, "gate evaluation \"%s\" #%s not found",
		             release_id, ev);
		goto fail;
	}
	r->release_id = pw_gate_release_strdup(r, release_id);
	r->evaluation = evaluation;
	r->candidate_build_id = pw_gate_release_strdup(r, PQgetvalue(res, 0, 0));
	r->candidate_cl = pw_gate_release_strdup(r, PQgetvalue(res, 0, 1));
	r->baseline_release = pw_gate_release_strdup(r, PQgetvalue(res, 0, 2));
	r->policy = d->policy;
	r->policy.fdr_q = pw_pg_double(res, 0, 3);
	r->requested_us = pw_pg_int(res, 0, 4);
	r->deadline_us = pw_pg_int(res, 0, 5);
	if (!r->deadline_us)
		r->deadline_us = r->requested_us + d->default_wait_us;
	r->received_us = pw_pg_int(res, 0, 6);
	r->families_named = PQgetvalue(res, 0, 7)[0] == 't';
	r->late_of = (uint32_t)pw_pg_int(res, 0, 8);
	/* a re-decision on late data is decided on what there is: its request's
	 * deadline passed long ago, and min_wait is no reason to wait again */
	if (!r->late_of && r->deadline_us < r->received_us + d->min_wait_us)
		r->deadline_us = r->received_us + d->min_wait_us;
	PQclear(res);
	res = NULL;
	if (!r->release_id || !r->candidate_build_id || !r->candidate_cl || !r->baseline_release)
		goto nomem;

	/* 2. tier repeats of this request override the configured n and MDE */
	st = pw_pg_exec(pg,
	                "SELECT tier, n, mde_pct FROM perfwatch.gate_tier_repeats "
	                "WHERE release_id = $1 AND evaluation = $2",
	                2, key, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	for (int i = 0; i < PQntuples(res); i++) {
		bool top = strcmp(PQgetvalue(res, i, 0), "top") == 0;
		size_t n = (size_t)pw_pg_int(res, i, 1);
		double mde = pw_pg_double(res, i, 2);
		if (top) {
			r->policy.min_candidate_n = n;
			r->policy.mde_top_pct = mde;
			r->policy.top_n_requested = true;
		} else {
			r->policy.min_candidate_tail_n = n;
			r->policy.mde_tail_pct = mde;
			r->policy.tail_n_requested = true;
		}
	}
	PQclear(res);
	res = NULL;

	/* 3. families: those named, or every family with a spend weight */
	st = pw_pg_exec(pg,
	                "WITH req AS (SELECT unnest(families) AS model FROM perfwatch.gate_evaluations "
	                "             WHERE release_id = $1 AND evaluation = $2), "
	                "fams AS (SELECT model FROM req UNION SELECT model FROM perfwatch.spend_weights "
	                "         WHERE NOT EXISTS (SELECT 1 FROM req)) "
	                "SELECT f.model, coalesce(w.spend_share, 0), coalesce(w.tier, 'tail') "
	                "FROM fams f LEFT JOIN perfwatch.spend_weights w USING (model) "
	                "ORDER BY f.model COLLATE \"C\"",
	                2, key, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	r->n_families = (size_t)PQntuples(res);
	r->families = pw_gate_release_alloc(r, (r->n_families + 1) * sizeof *r->families);
	r->family_tier = pw_gate_release_alloc(r, (r->n_families + 1) * sizeof *r->family_tier);
	r->fr = pw_gate_release_alloc(r, (r->n_families + 1) * sizeof *r->fr);
	r->family_waiver = pw_gate_release_alloc(r, (r->n_families + 1) * sizeof *r->family_waiver);
	if (!r->families || !r->family_tier || !r->fr || !r->family_waiver)
		goto nomem;
	tb_putc(&fams, '{');
	for (size_t j = 0; j < r->n_families; j++) {
		r->families[j].name = pw_gate_release_strdup(r, PQgetvalue(res, (int)j, 0));
		if (!r->families[j].name)
			goto nomem;
		r->families[j].spend_share = pw_pg_double(res, (int)j, 1);
		r->families[j].waived = false;
		r->family_tier[j] = strcmp(PQgetvalue(res, (int)j, 2), "top") == 0 ? PW_GATE_TIER_TOP
		                                                                   : PW_GATE_TIER_TAIL;
		r->family_waiver[j] = "";
		tb_array_elem(&fams, r->families[j].name, j == 0);
	}
	tb_putc(&fams, '}');
	PQclear(res);
	res = NULL;
	if (fams.oom)
		goto nomem;

	/* 4. the gated series: of those families, measured on the baseline
	 * release or the candidate, or by a nightly or release run within
	 * active_window of the request (either side: a replayed request is in
	 * the past of the clock) (a series of an old HLO fingerprint,
	 * no longer measured, is not waited for); state from the baseline as of
	 * the request (as load_samples picks it) and open freezes */
	char since[32], until[32];
	snprintf(since, sizeof since, "%" PRId64, r->requested_us - d->active_window_us);
	snprintf(until, sizeof until, "%" PRId64, r->requested_us + d->active_window_us);
	char asked[32];
	snprintf(asked, sizeof asked, "%" PRId64, r->requested_us);
	const char *sp[] = {fams.s, r->candidate_build_id, r->baseline_release, since, until, asked,
	                    r->release_id};
	st = pw_pg_exec(pg,
	                "SELECT s.series_id, s.series_key, s.model, s.platform, s.config, s.metric, "
	                "s.unit, s.direction, lb.version, lb.state, "
	                "EXISTS (SELECT 1 FROM perfwatch.freezes f WHERE f.series_id = s.series_id "
	                "        AND f.unfrozen_at IS NULL), "
	                "(SELECT count(*) FROM perfwatch.samples c WHERE c.series_id = s.series_id "
	                " AND c.build_id = $2 AND c.bisect_job_id = ''), "
	                /* the baseline is behind: a nightly or release point measured before the
	                 * request that the baseliner has not folded in (newer than its mark; a
	                 * series it has no mark of is baselining, or its baselines were not
	                 * the baseliner's) */
	                "EXISTS (SELECT 1 FROM perfwatch.baseliner_series bs JOIN perfwatch.samples n "
	                " ON n.series_id = bs.series_id AND n.measured_at > bs.mark_measured_at "
	                " WHERE bs.series_id = s.series_id "
	                " AND n.build_kind IN ('nightly', 'release') AND n.bisect_job_id = '' "
	                " AND n.measured_at <= to_timestamp($6::double precision / 1e6)) "
	                /* or the baseliner has not seen the series at all (no mark, no
	                 * baseline) while PostgreSQL holds such points: after an ingester
	                 * stall its points are on their way to the baseliner */
	                "OR (lb.version IS NULL AND NOT EXISTS (SELECT 1 FROM "
	                " perfwatch.baseliner_series bu WHERE bu.series_id = s.series_id) "
	                " AND EXISTS (SELECT 1 FROM perfwatch.samples u WHERE u.series_id = s.series_id "
	                " AND u.build_kind IN ('nightly', 'release') AND u.bisect_job_id = '' "
	                " AND u.measured_at <= to_timestamp($6::double precision / 1e6))), "
	                /* §4.5: the series' noise and the n its baseline published (13..18) */
	                "lb.sigma_pct, lb.gpu_class, lb.required_n_top, lb.mde_top_pct, "
	                "lb.required_n_tail, lb.mde_tail_pct, "
	                /* listed by the plan of the candidate's sweep (19) */
	                PLANNED_SERIES ", "
	                /* its window (20, 21), in case the cache holds a newer version */
	                "coalesce((extract(epoch FROM lb.window_start) * 1e6)::bigint, 0), "
	                "coalesce((extract(epoch FROM lb.window_end) * 1e6)::bigint, 0) "
	                "FROM perfwatch.series s "
	                "LEFT JOIN LATERAL (SELECT b.version, b.state, "
	                "  b.sigma_pct, b.gpu_class, b.required_n_top, b.mde_top_pct, "
	                "  b.required_n_tail, b.mde_tail_pct, b.window_start, b.window_end "
	                "  FROM perfwatch.baselines b WHERE b.series_id = s.series_id "
	                "  ORDER BY b.window_end <= to_timestamp($6::double precision / 1e6) "
	                "  DESC NULLS LAST, b.version DESC LIMIT 1) lb ON true "
	                "WHERE s.model = ANY($1::text[]) AND (EXISTS ("
	                "  SELECT 1 FROM perfwatch.samples p WHERE p.series_id = s.series_id "
	                "  AND p.build_id IN ($2, $3)) OR EXISTS ("
	                "  SELECT 1 FROM perfwatch.samples q WHERE q.series_id = s.series_id "
	                "  AND q.build_kind IN ('nightly', 'release') "
	                "  AND q.measured_at >= to_timestamp($4::double precision / 1e6) "
	                "  AND q.measured_at <= to_timestamp($5::double precision / 1e6)) "
	                "  OR " PLANNED_SERIES ") "
	                "ORDER BY s.series_key COLLATE \"C\"",
	                7, sp, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	r->n_series = (size_t)PQntuples(res);
	size_t ns1 = r->n_series + 1;
	r->series = pw_gate_release_alloc(r, ns1 * sizeof *r->series);
	r->meta = pw_gate_release_alloc(r, ns1 * sizeof *r->meta);
	r->sr = pw_gate_release_alloc(r, ns1 * sizeof *r->sr);
	r->series_out = pw_gate_release_alloc(r, ns1 * sizeof *r->series_out);
	r->series_waiver = pw_gate_release_alloc(r, ns1 * sizeof *r->series_waiver);
	r->series_alert = pw_gate_release_alloc(r, ns1 * sizeof *r->series_alert);
	current = pw_gate_release_alloc(r, ns1 * sizeof *current);
	if (!r->series || !r->meta || !r->sr || !r->series_out || !r->series_waiver ||
	    !r->series_alert || !current)
		goto nomem;
	size_t nb = 0;
	for (size_t i = 0; i < r->n_series; i++) {
		int row = (int)i;
		pw_gate_series_meta *m = &r->meta[i];
		pw_gate_series_input *in = &r->series[i];
		m->series_id = pw_pg_int(res, row, 0);
		m->key = pw_gate_release_strdup(r, PQgetvalue(res, row, 1));
		m->model = pw_gate_release_strdup(r, PQgetvalue(res, row, 2));
		m->platform = pw_gate_release_strdup(r, PQgetvalue(res, row, 3));
		m->config = pw_gate_release_strdup(r, PQgetvalue(res, row, 4));
		m->metric = pw_gate_release_strdup(r, PQgetvalue(res, row, 5));
		m->unit = pw_gate_release_strdup(r, PQgetvalue(res, row, 6));
		m->cl_note = "";
		if (!m->key || !m->model || !m->platform || !m->config || !m->metric || !m->unit)
			goto nomem;
		bool has_row = !PQgetisnull(res, row, 8);
		m->baseline_version = (int)pw_pg_int(res, row, 8);
		m->window_start_us = pw_pg_int(res, row, 20);
		m->window_end_us = pw_pg_int(res, row, 21);
		in->series = m->key;
		in->family = 0;
		for (size_t j = 0; j < r->n_families; j++)
			if (strcmp(r->families[j].name, m->model) == 0)
				in->family = j;
		in->tier = r->family_tier[in->family];
		in->direction = strcmp(PQgetvalue(res, row, 7), "higher_is_better") == 0
		                    ? PW_COMPARE_HIGHER_IS_BETTER
		                    : PW_COMPARE_LOWER_IS_BETTER;
		in->state = state_of(has_row ? PQgetvalue(res, row, 9) : "", has_row,
		                     PQgetvalue(res, row, 10)[0] == 't');
		in->n_cand = (size_t)pw_pg_int(res, row, 11);
		in->baseline_behind = PQgetvalue(res, row, 12)[0] == 't';
		in->planned = PQgetvalue(res, row, 19)[0] == 't';
		series_power(r, in, has_row, pw_pg_double(res, row, 13), PQgetvalue(res, row, 14)[0] == 't',
		             (unsigned)pw_pg_int(res, row, 15), pw_pg_double(res, row, 16),
		             (unsigned)pw_pg_int(res, row, 17), pw_pg_double(res, row, 18));
		if (has_row) /* the version just read is the current one: the cache's check */
			current[nb++] = pw_baseline_cache_version_of(
				(uint32_t)m->baseline_version,
				pw_baseline_state_parse(PQgetvalue(res, row, 9)));
		r->series_waiver[i] = "";
		r->series_alert[i] = "";
	}
	PQclear(res);
	res = NULL;
	/* 4a. the benchmarks the plan of the candidate's sweep lists for these
	 * families that have no series at all (never measured): missing, not
	 * absent, until their runs make series */
	const char *pp[] = {fams.s, r->candidate_build_id, r->release_id};
	st = pw_pg_exec(pg,
	                "SELECT i.model, count(*) FROM perfwatch.plans pl "
	                "JOIN perfwatch.plan_items i USING (plan_id) "
	                "WHERE pl.release IN ($2, $3) AND i.model = ANY($1::text[]) "
	                "AND NOT EXISTS (SELECT 1 FROM perfwatch.series s WHERE s.model = i.model "
	                "  AND s.hlo_fingerprint = i.hlo_fingerprint AND s.platform = i.platform "
	                "  AND s.config = i.config) "
	                "GROUP BY i.model",
	                3, pp, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	r->planned_unmeasured = 0;
	for (int row = 0; row < PQntuples(res); row++) {
		pw_gate_family_input *f = family_named(r, PQgetvalue(res, row, 0));
		if (f) {
			f->planned_unmeasured = (size_t)pw_pg_int(res, row, 1);
			r->planned_unmeasured += f->planned_unmeasured;
		}
	}
	PQclear(res);
	res = NULL;
	/* 4b'. the inheritances the plan of the candidate's sweep records for
	 * these families (docs/gate.md, "Inherited verdicts"): the newest plan
	 * of the release that holds one for the model */
	for (size_t j = 0; j < r->n_families; j++)
		r->families[j].representative = SIZE_MAX;
	st = pw_pg_exec(pg,
	                "SELECT DISTINCT ON (h.model) h.model, h.representative, h.similarity "
	                "FROM perfwatch.plans pl JOIN perfwatch.plan_inheritances h USING (plan_id) "
	                "WHERE pl.release IN ($2, $3) AND h.model = ANY($1::text[]) "
	                "ORDER BY h.model, pl.day DESC, pl.plan_id DESC",
	                3, pp, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	for (int row = 0; row < PQntuples(res); row++) {
		pw_gate_family_input *f = family_named(r, PQgetvalue(res, row, 0));
		if (!f)
			continue;
		f->inherits_from = pw_gate_release_strdup(r, PQgetvalue(res, row, 1));
		if (!f->inherits_from)
			goto nomem;
		f->inherit_similarity = pw_pg_double(res, row, 2);
		pw_gate_family_input *rep = family_named(r, f->inherits_from);
		f->representative = rep ? (size_t)(rep - r->families) : SIZE_MAX;
	}
	PQclear(res);
	res = NULL;
	/* 4b. for an evaluation, the windows of the series' latest baselines,
	 * through the baseline reader (Redis when it holds the version just
	 * read, else PostgreSQL); the waiting rule needs none */
	if (with_samples && (st = load_windows(br, r, current, errbuf, errlen)) != PW_OK)
		goto fail;

	/* 5. registered expected wins, matched by key (both lists in "C" order) */
	st = pw_pg_exec(pg,
	                "SELECT series_key, expected_delta_pct, cl FROM perfwatch.expected_wins "
	                "WHERE release_id = $1",
	                1, key, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	for (int row = 0; row < PQntuples(res); row++) {
		const char *k = PQgetvalue(res, row, 0);
		size_t lo = 0, hi = r->n_series;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			int c = strcmp(r->meta[mid].key, k);
			if (c == 0) {
				r->series[mid].has_expected = true;
				r->series[mid].expected_pct = pw_pg_double(res, row, 1);
				r->meta[mid].cl_note = pw_gate_release_strdup(r, PQgetvalue(res, row, 2));
				if (!r->meta[mid].cl_note)
					goto nomem;
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	PQclear(res);
	res = NULL;

	/* 6. waivers that arrived with this release or apply to any release */
	st = pw_pg_exec(pg,
	                "SELECT waiver_id, model, platform, config, metric, "
	                "(extract(epoch FROM expires_at) * 1e6)::bigint FROM perfwatch.waivers "
	                "WHERE release_id IN ($1, '') ORDER BY waiver_id COLLATE \"C\"",
	                1, key, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	r->n_waivers = (size_t)PQntuples(res);
	r->waivers = pw_gate_release_alloc(r, (r->n_waivers + 1) * sizeof *r->waivers);
	if (!r->waivers)
		goto nomem;
	for (size_t k = 0; k < r->n_waivers; k++) {
		pw_gate_waiver *w = &r->waivers[k];
		w->waiver_id = pw_gate_release_strdup(r, PQgetvalue(res, (int)k, 0));
		w->model = pw_gate_release_strdup(r, PQgetvalue(res, (int)k, 1));
		w->platform = pw_gate_release_strdup(r, PQgetvalue(res, (int)k, 2));
		w->config = pw_gate_release_strdup(r, PQgetvalue(res, (int)k, 3));
		w->metric = pw_gate_release_strdup(r, PQgetvalue(res, (int)k, 4));
		w->expires_unix_us = pw_pg_int(res, (int)k, 5);
		if (!w->waiver_id || !w->model || !w->platform || !w->config || !w->metric)
			goto nomem;
	}
	PQclear(res);
	res = NULL;

	if (with_samples) {
		st = load_samples(pg, r, errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}
	free(fams.s);
	*out = r;
	return PW_OK;

nomem:
	st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory loading gate evaluation \"%s\"",
	             release_id);
fail:
	PQclear(res);
	free(fams.s);
	pw_gate_release_free(r);
	return st;
}

/* ----------------------------------------------------------------- finish */

static const char *direction_text(const pw_gate_release *r, size_t i)
{
	const pw_gate_series_result *s = &r->sr[i];
	if (!s->tested || !(s->q < r->policy.fdr_q))
		return NULL;
	double worse = r->series[i].has_expected
	                   ? (r->series[i].direction == PW_COMPARE_LOWER_IS_BETTER ? s->excess_pct
	                                                                           : -s->excess_pct)
	                   : s->worse_pct;
	return worse > 0.0 ? "regression" : "improvement";
}

static pw_status insert_alert(pw_pg *pg, const Perfwatch__V1__Alert *a, char *errbuf,
                              size_t errlen)
{
	char created[32], sid[32], bmed[32], bmad[32], bn[16], bver[16], bws[32], bwe[32], omed[32],
	    on[16], dabs[32], dpct[32], z[32], q[32], mde[32], tsig[32], prac[32], nfl[32];
	const char *pbmed, *pbmad, *pomed, *pdabs, *pdpct, *pz, *pq, *pmde, *ptsig, *pprac, *pnfl;
	const Perfwatch__V1__AlertBaseline *b = a->baseline;
	const Perfwatch__V1__AlertObserved *o = a->observed;
	const Perfwatch__V1__AlertDelta *d = a->delta;
	const Perfwatch__V1__AlertEffectGate *e = a->effect_gate;
	snprintf(created, sizeof created, "%" PRId64, a->created_unix_us);
	snprintf(sid, sizeof sid, "%" PRId64, a->series_id);
	fmt_double(bmed, sizeof bmed, b->median, &pbmed);
	fmt_double(bmad, sizeof bmad, b->mad, &pbmad);
	snprintf(bn, sizeof bn, "%" PRIu32, b->n);
	snprintf(bver, sizeof bver, "%" PRIu32, b->version);
	snprintf(bws, sizeof bws, "%" PRId64, b->window_start_unix_us);
	snprintf(bwe, sizeof bwe, "%" PRId64, b->window_end_unix_us);
	fmt_double(omed, sizeof omed, o->median, &pomed);
	snprintf(on, sizeof on, "%" PRIu32, o->n);
	fmt_double(dabs, sizeof dabs, d->abs, &pdabs);
	fmt_double(dpct, sizeof dpct, d->pct, &pdpct);
	fmt_double(z, sizeof z, d->z_robust, &pz);
	fmt_double(q, sizeof q, d->fdr_q, &pq);
	fmt_double(mde, sizeof mde, e->mde_pct, &pmde);
	fmt_double(tsig, sizeof tsig, e->two_sigma_pct, &ptsig);
	fmt_double(prac, sizeof prac, e->practical_pct, &pprac);
	fmt_double(nfl, sizeof nfl, e->noise_floor_pct, &pnfl);
	tbuf corr = {0}, clean = {0};
	tb_putc(&corr, '{');
	for (size_t i = 0; i < a->scope->n_correlated_series; i++)
		tb_array_elem(&corr, a->scope->correlated_series[i], i == 0);
	tb_putc(&corr, '}');
	tb_putc(&clean, '{');
	for (size_t i = 0; i < a->scope->n_clean_series; i++)
		tb_array_elem(&clean, a->scope->clean_series[i], i == 0);
	tb_putc(&clean, '}');
	pw_status st;
	if (corr.oom || clean.oom) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory storing alert \"%s\"",
		             a->alert_id);
		goto out;
	}
	const char *kind = a->kind == PERFWATCH__V1__ALERT_KIND__ALERT_KIND_IMPROVEMENT
	                       ? "improvement"
	                       : "regression";
	const char *routing = a->routing == PERFWATCH__V1__ROUTING__ROUTING_PAGE ? "page" : "queue";
	const char *verdict = pw_gate_outcome_name((pw_gate_outcome)a->verdict);
	char rev[16];
	snprintf(rev, sizeof rev, "%" PRIu32, a->revision);
	const char *p[] = {a->alert_id, rev, kind, created, sid, a->series_key,
	                   pbmed, pbmad, bn, bver, b->window_start_unix_us ? bws : NULL,
	                   b->window_end_unix_us ? bwe : NULL, pomed, on, o->release, pdabs,
	                   d->abs_unit, pdpct, pz, pq, pmde, ptsig,
	                   e->passed_min_effect ? "true" : "false", corr.s, clean.s, verdict,
	                   a->owner_hint, a->page, routing, a->release_id, a->summary, pprac, pnfl};
	st = pw_pg_exec(pg,
	                "INSERT INTO perfwatch.alerts (alert_id, revision, kind, source, created_at, "
	                "series_id, series_key, baseline_median, baseline_mad, baseline_n, "
	                "baseline_version, baseline_window_start, baseline_window_end, "
	                "observed_median, observed_n, observed_release, delta_abs, delta_abs_unit, "
	                "delta_pct, z_robust, fdr_q, mde_pct, two_sigma_pct, passed_min_effect, "
	                "correlated_series, clean_series, verdict, owner_hint, page_route, routing, "
	                "release_id, summary, practical_pct, noise_floor_pct) VALUES ($1, $2, $3, "
	                "'gate', "
	                "to_timestamp($4::double precision / 1e6), $5, $6, $7, $8, $9, $10, "
	                "to_timestamp($11::double precision / 1e6), "
	                "to_timestamp($12::double precision / 1e6), $13, $14, $15, $16, $17, $18, "
	                "$19, $20, $21, $22, $23, $24::text[], $25::text[], $26, $27, $28, $29, $30, "
	                "$31, $32, $33) ON CONFLICT (alert_id) DO UPDATE SET revision = "
	                "EXCLUDED.revision, "
	                "updated_at = now(), verdict = EXCLUDED.verdict, summary = EXCLUDED.summary "
	                "WHERE perfwatch.alerts.revision < EXCLUDED.revision",
	                33, p, NULL, errbuf, errlen);
out:
	free(corr.s);
	free(clean.s);
	return st;
}

/* ------------------------------------------------------------------ P1 tickets */

pw_status pw_gate_store_drift(pw_pg *pg, pw_gate_release *r, char *errbuf, size_t errlen)
{
	r->drift = NULL;
	r->drift_line = NULL;
	r->n_drift = 0;
	if (r->n_series == 0)
		return PW_OK;
	int64_t *ids = pw_gate_release_alloc(r, r->n_series * sizeof *ids);
	/* "{1,2,...}": at most 21 bytes a bigint and its comma */
	char *list = pw_gate_release_alloc(r, r->n_series * 22 + 3);
	if (!ids || !list)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	size_t at = 0;
	list[at++] = '{';
	for (size_t i = 0; i < r->n_series; i++) {
		ids[i] = r->meta[i].series_id;
		at += (size_t)snprintf(list + at, 22, "%s%" PRId64, i ? "," : "", ids[i]);
	}
	list[at++] = '}';
	list[at] = '\0';

	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, list);
	PGresult *res = NULL;
	pw_status st = pw_pg_exec_params(
	    pg,
	    "SELECT ticket_id, series_id, series_key, found_release,"
	    " (extract(epoch FROM found_at) * 1e6)::bigint, effect_pct"
	    " FROM perfwatch.p1_tickets WHERE status = 'open' AND series_id = ANY($1::bigint[])"
	    " ORDER BY ticket_id",
	    &p, 0, &res, errbuf, errlen);
	if (st != PW_OK)
		return st;
	size_t n = (size_t)PQntuples(res);
	pw_gate_p1_ticket *t = pw_gate_release_alloc(r, (n + 1) * sizeof *t);
	if (!t) {
		PQclear(res);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	}
	for (size_t k = 0; k < n; k++) {
		t[k].ticket_id = strtoll(PQgetvalue(res, (int)k, 0), NULL, 10);
		t[k].series_id = strtoll(PQgetvalue(res, (int)k, 1), NULL, 10);
		t[k].series_key = pw_gate_release_strdup(r, PQgetvalue(res, (int)k, 2));
		t[k].found_release = pw_gate_release_strdup(r, PQgetvalue(res, (int)k, 3));
		t[k].found_us = strtoll(PQgetvalue(res, (int)k, 4), NULL, 10);
		t[k].effect_pct = strtod(PQgetvalue(res, (int)k, 5), NULL);
		if (!t[k].series_key || !t[k].found_release) {
			PQclear(res);
			return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
		}
	}
	PQclear(res);
	n = pw_gate_drift_select(r->release_id, r->requested_us, t, n, ids, r->n_series);
	const char **lines = pw_gate_release_alloc(r, (n + 1) * sizeof *lines);
	if (!lines)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	for (size_t k = 0; k < n; k++) {
		char line[512];
		pw_gate_drift_line(line, sizeof line, &t[k]);
		if (!(lines[k] = pw_gate_release_strdup(r, line)))
			return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	}
	r->drift = t;
	r->drift_line = lines;
	r->n_drift = n;
	return PW_OK;
}

/* Inside pw_gate_store_finish's transaction: the P1 tickets r files and the
 * compounding drift it reported. */
static pw_status store_p1(pw_pg *pg, const pw_gate_release *r, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	for (size_t i = 0; i < r->n_series && st == PW_OK; i++) {
		const pw_gate_series_result *s = &r->sr[i];
		if (!pw_gate_p1_files(r->series_out[i], s))
			continue;
		const pw_gate_series_input *in = &r->series[i];
		const char *owner = in->tier == PW_GATE_TIER_TOP && r->page_route && r->page_route[0]
		                        ? r->page_route
		                        : "queue";
		pw_pg_params p;
		pw_pg_params_init(&p);
		pw_pg_params_int(&p, r->meta[i].series_id);
		pw_pg_params_text(&p, r->meta[i].key);
		pw_pg_params_text(&p, r->release_id);
		pw_pg_params_int(&p, r->evaluation);
		pw_pg_params_text(&p, r->candidate_build_id);
		pw_pg_params_text(&p, r->baseline_release);
		pw_pg_params_text(&p, r->families[in->family].name);
		pw_pg_params_text(&p, r->series_alert[i]);
		pw_pg_params_double(&p, s->cmp.delta_pct);
		pw_pg_params_double(&p, s->cmp.effect_pct);
		pw_pg_params_double(&p, s->q);
		pw_pg_params_int(&p, r->requested_us);
		pw_pg_params_text(&p, owner);
		st = pw_pg_exec_params(pg,
		                       "INSERT INTO perfwatch.p1_tickets (series_id, series_key,"
		                       " found_release, found_evaluation, candidate_build_id,"
		                       " baseline_release, family, alert_id, delta_pct, effect_pct, q,"
		                       " found_at, owner) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,"
		                       " $11, to_timestamp($12::double precision / 1e6), $13)"
		                       " ON CONFLICT (series_id, found_release) DO NOTHING",
		                       &p, 0, NULL, errbuf, errlen);
	}
	for (size_t k = 0; k < r->n_drift && st == PW_OK; k++) {
		const pw_gate_p1_ticket *t = &r->drift[k];
		pw_pg_params p;
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, r->release_id);
		pw_pg_params_int(&p, r->evaluation);
		pw_pg_params_int(&p, t->ticket_id);
		pw_pg_params_text(&p, t->series_key);
		pw_pg_params_text(&p, t->found_release);
		pw_pg_params_int(&p, t->age_s);
		pw_pg_params_text(&p, r->drift_line[k]);
		st = pw_pg_exec_params(pg,
		                       "INSERT INTO perfwatch.gate_compounding_drift (release_id,"
		                       " evaluation, ticket_id, series_key, found_release, age_s, line)"
		                       " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
		                       &p, 0, NULL, errbuf, errlen);
		if (st != PW_OK)
			break;
		pw_pg_params_init(&p);
		pw_pg_params_int(&p, t->ticket_id);
		pw_pg_params_text(&p, r->release_id);
		st = pw_pg_exec_params(pg,
		                       "UPDATE perfwatch.p1_tickets SET due_release = $2"
		                       " WHERE ticket_id = $1 AND due_release = ''",
		                       &p, 0, NULL, errbuf, errlen);
	}
	return st;
}

pw_status pw_gate_store_finish(pw_pg *pg, const pw_gate_release *r, const pw_gate_outbox_msg *msgs,
                            size_t n, const Perfwatch__V1__Alert *const *alerts,
                            size_t n_alerts, bool *stored, char *errbuf, size_t errlen)
{
	PGresult *res = NULL;
	tbuf copy = {0};
	*stored = false;
	char ev[16], tests[32], impact[32], at[32];
	snprintf(ev, sizeof ev, "%" PRIu32, r->evaluation);
	snprintf(tests, sizeof tests, "%zu", r->rr.n_tests);
	snprintf(impact, sizeof impact, "%.17g", r->rr.aggregate_impact_pct);
	snprintf(at, sizeof at, "%" PRId64, r->evaluated_us);

	pw_status st = pw_pg_begin(pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	char lacking[32], seen[32];
	snprintf(lacking, sizeof lacking, "%zu", r->lacking);
	snprintf(seen, sizeof seen, "%" PRId64, r->seen);
	const char *p[] = {r->release_id, ev,
	                   pw_gate_outcome_name(pw_gate_family_outcome(r->rr.verdict)), tests,
	                   impact, r->summary, at, lacking, seen, r->waiting};
	st = pw_pg_exec(pg,
	                "UPDATE perfwatch.gate_evaluations SET status = 'done', verdict = $3, "
	                "tests = $4, fleet_weighted_impact_pct = $5, summary = $6, "
	                "evaluated_at = to_timestamp($7::double precision / 1e6), lacking = $8, "
	                "seen = $9, waiting = $10, waiting_at = now() "
	                "WHERE release_id = $1 AND evaluation = $2 AND status = 'pending'",
	                10, p, &res, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	bool updated = strcmp(PQcmdTuples(res), "1") == 0;
	PQclear(res);
	res = NULL;
	if (!updated) {
		pw_pg_rollback(pg, NULL, 0);
		return PW_OK;
	}

	for (size_t j = 0; j < r->n_families; j++) {
		const pw_gate_family_result *f = &r->fr[j];
		char share[32], imp[32], gated[32], regr[32];
		snprintf(share, sizeof share, "%.17g", r->families[j].spend_share);
		snprintf(imp, sizeof imp, "%.17g", f->impact_pct);
		snprintf(gated, sizeof gated, "%zu", f->n_tested);
		snprintf(regr, sizeof regr, "%zu", f->n_regressed);
		char under[32], sim[32];
		snprintf(under, sizeof under, "%zu", f->n_under_powered);
		const char *inherits = r->families[j].inherits_from ? r->families[j].inherits_from : "";
		snprintf(sim, sizeof sim, "%.17g", r->families[j].inherit_similarity);
		const char *q[] = {r->release_id, ev, r->families[j].name,
		                   tier_text(r->family_tier[j]),
		                   pw_gate_outcome_name(pw_gate_family_outcome(f->verdict)), share, imp,
		                   gated, regr, under, inherits, inherits[0] ? sim : NULL,
		                   f->inherited ? "true" : "false"};
		st = pw_pg_exec(pg,
		                "INSERT INTO perfwatch.gate_family_results (release_id, evaluation, "
		                "family, tier, verdict, spend_share, spend_weighted_impact_pct, "
		                "gated_series, regressed_series, under_powered_series, inherits_from, "
		                "inherit_similarity, verdict_inherited) VALUES ($1, $2, $3, "
		                "$4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING",
		                13, q, NULL, errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}

	/* the series results by COPY: no row of this evaluation can exist yet
	 * (they are only written here, in the transaction that ends pending) */
	if (r->n_series > 0) {
		st = pw_pg_copy_begin(pg,
		                      "COPY perfwatch.gate_series_results (release_id, evaluation, "
		                      "series_id, family, tier, baseline_version, baseline_median, "
		                      "baseline_mad_n, baseline_n, candidate_median, candidate_n, unit, u, "
		                      "p, welch_t, welch_p, q, delta_pct, expected_delta_pct, mde_pct, "
		                      "two_sigma_pct, effect_passed, direction, verdict, waiver_id, "
		                      "alert_id, effect_pct, excess_pct, practical_pct, noise_floor_pct, "
		                      "threshold_pct, required_n, tier_mde_pct, numerics, "
		                      "baseline_numerics_fingerprint, candidate_numerics_fingerprint, "
		                      "numerics_reason) FROM STDIN",
		                      errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}
	for (size_t i = 0; i < r->n_series; i++) {
		const pw_gate_series_input *in = &r->series[i];
		const pw_gate_series_result *s = &r->sr[i];
		const pw_gate_series_meta *m = &r->meta[i];
		bool t = s->tested;
		char sid[32], bver[16], bmed[32], bmad[32], bn[32], cmed[32], cn[32], u[32], pv[32],
		    wt[32], wp[32], qv[32], dp[32], ex[32], mde[32], ts[32], ef[32], xs[32], pr[32],
		    nf[32], th[32], rn[32], tm[32];
		const char *pbmed = NULL, *pbmad = NULL, *pcmed = NULL, *pu = NULL, *ppv = NULL,
		           *pwt = NULL, *pwp = NULL, *pqv = NULL, *pdp = NULL, *pts = NULL,
		           *pef = NULL, *pxs = NULL, *ppr = NULL, *pnf = NULL, *pth = NULL;
		snprintf(sid, sizeof sid, "%" PRId64, m->series_id);
		snprintf(bver, sizeof bver, "%d", m->baseline_version);
		snprintf(bn, sizeof bn, "%zu", in->n_base);
		snprintf(cn, sizeof cn, "%zu", in->n_cand);
		snprintf(ex, sizeof ex, "%.17g", in->has_expected ? in->expected_pct : 0.0);
		snprintf(mde, sizeof mde, "%.17g", pw_gate_series_mde(&r->policy, in));
		snprintf(tm, sizeof tm, "%.17g",
		         in->tier == PW_GATE_TIER_TOP ? r->policy.mde_top_pct : r->policy.mde_tail_pct);
		snprintf(rn, sizeof rn, "%zu", in->required_n);
		if (t) {
			fmt_double(bmed, sizeof bmed, s->cmp.median_base, &pbmed);
			fmt_double(bmad, sizeof bmad, s->cmp.mad_base, &pbmad);
			fmt_double(cmed, sizeof cmed, s->cmp.median_cand, &pcmed);
			fmt_double(u, sizeof u, s->cmp.mwu.u, &pu);
			fmt_double(pv, sizeof pv, s->cmp.mwu.p, &ppv);
			if (s->cmp.welch_ok) {
				fmt_double(wt, sizeof wt, s->cmp.welch.t, &pwt);
				fmt_double(wp, sizeof wp, s->cmp.welch.p, &pwp);
			}
			fmt_double(qv, sizeof qv, s->q, &pqv);
			fmt_double(dp, sizeof dp, s->cmp.delta_pct, &pdp);
			fmt_double(ts, sizeof ts, s->cmp.two_sigma_pct, &pts);
			fmt_double(ef, sizeof ef, s->cmp.effect_pct, &pef);
			if (in->has_expected)
				fmt_double(xs, sizeof xs, s->excess_pct, &pxs);
			fmt_double(pr, sizeof pr, s->cmp.practical_pct, &ppr);
			fmt_double(nf, sizeof nf, s->cmp.noise_floor_pct, &pnf);
			fmt_double(th, sizeof th, s->cmp.threshold_pct, &pth);
		}
		bool effect = pw_gate_series_effect_passed(in, s);
		const char *q[] = {r->release_id, ev, sid, r->families[in->family].name,
		                   tier_text(in->tier), m->baseline_version ? bver : NULL, pbmed, pbmad,
		                   bn, pcmed, cn, m->unit, pu, ppv, pwt, pwp, pqv, pdp, ex, mde, pts,
		                   effect ? "t" : "f", direction_text(r, i),
		                   pw_gate_outcome_name(r->series_out[i]), r->series_waiver[i],
		                   r->series_alert[i], pef, pxs, ppr, pnf, pth,
		                   in->required_n ? rn : NULL, tm,
		                   t ? pw_gate_numerics_name(s->numerics.state) : NULL,
		                   s->numerics.baseline ? s->numerics.baseline : "",
		                   s->numerics.candidate ? s->numerics.candidate : "",
		                   s->verdict == PW_GATE_SERIES_NUMERICS_CHANGED
		                       ? PW_GATE_NUMERICS_REASON : ""};
		for (size_t c = 0; c < sizeof q / sizeof q[0]; c++) {
			if (c)
				tb_putc(&copy, '\t');
			tb_copy_field(&copy, q[c]);
		}
		tb_putc(&copy, '\n');
		if (copy.oom) {
			pw_pg_copy_abort(pg, "gate: out of memory");
			st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory storing series results");
			goto fail;
		}
		if (copy.n > 256 * 1024 || i + 1 == r->n_series) {
			st = pw_pg_copy_put(pg, copy.s, copy.n, errbuf, errlen);
			copy.n = 0;
			if (st != PW_OK) {
				pw_pg_copy_abort(pg, "gate: sending series results failed");
				goto fail;
			}
		}
	}
	if (r->n_series > 0) {
		st = pw_pg_copy_end(pg, NULL, errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}

	for (size_t k = 0; k < n_alerts; k++) {
		st = insert_alert(pg, alerts[k], errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}

	st = store_p1(pg, r, errbuf, errlen);
	if (st != PW_OK)
		goto fail;

	char ref[PW_GATE_OUTBOX_REF_LEN];
	pw_gate_outbox_ref(ref, sizeof ref, r->release_id, r->evaluation);
	for (size_t k = 0; k < n; k++) {
		st = pw_outbox_add(pg, PW_GATE_SERVICE, ref, msgs[k].topic, msgs[k].key,
		                   msgs[k].payload, msgs[k].len, errbuf, errlen);
		if (st != PW_OK)
			goto fail;
	}

	st = pw_pg_commit(pg, errbuf, errlen);
	free(copy.s);
	if (st != PW_OK)
		return st;
	*stored = true;
	return PW_OK;

fail:
	PQclear(res);
	free(copy.s);
	pw_pg_rollback(pg, NULL, 0);
	return st;
}

/* ----------------------------------------------------------------- outbox */

void pw_gate_outbox_ref(char *buf, size_t len, const char *release_id, uint32_t evaluation)
{
	snprintf(buf, len, "%s/%" PRIu32, release_id, evaluation);
}
