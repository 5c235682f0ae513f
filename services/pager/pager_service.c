/*
 * pager_service.c: what pw-pager does (seed §8: one page per real event);
 * main.c holds only its pw_service_def table (pager_service.h).
 *
 * Consumes perf.alerts.v1, perf.gate.verdicts.v1, perf.changepoints.v1,
 * perf.bisections.v1, perf.attributions.v1 and the canary's decisions on
 * perf.rollouts.v1 (a ROLLBACK is a page of its own: on_rollout) with one
 * worker per replica.
 * The open incidents are the deployment's (kafka.group.id), in PostgreSQL:
 * each message is one transaction that locks the deployment's pager_state
 * row and brings the worker's copy of them up to date first (0042), so the
 * replicas of a deployment handle messages one at a time, each on the state
 * the last one left. Each consumed message becomes a finding
 * (pager_msg.c) that joins an open incident or, for an alert, opens one
 * (incident.c); the incident is routed (route.c), charged against the
 * false-page budget when it would page, and stored — incident, its parts
 * (0031 pager_parts), members, the decision, the page or ticket, and the Page
 * message in the outbox — in ONE transaction. A restarted pager rebuilds its
 * open incidents by replaying their stored parts, so a late correlated
 * finding joins the open incident and pages nothing new; a redelivered
 * message finds its part key and changes nothing.
 *
 * Delivery runs in the tick on the main thread from what the transaction
 * stored (pages.am_body, pages.webhook_body): Alertmanager's v2 API (one
 * alert per incident, re-posted before its resolve_timeout while active,
 * endsAt once the incident is resolved) and a generic webhook (once per page
 * version), each retried with backoff; every attempt is a pager_deliveries
 * row. One replica posts a page, ticket or notice at a time (claimed_until).
 * A new page or ticket with gate alerts waits for the rest of its event
 * (holds_release). At least once: a pager killed after a post and before recording it
 * posts again; Alertmanager's dedup by labels and the webhook's
 * Idempotency-Key (page_id/version) make it page once.
 *
 * The triage page (triage.c) is served on the HTTP thread with its own
 * PostgreSQL connection. Bad input is dead-lettered with the reason.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_post.h"
#include "pager.h"
#include "pager_msg.h"
#include "perfwatch/v1/gate.pb-c.h"
#include "perfwatch/v1/page.pb-c.h"
#include "pw_backoff.h"
#include "pw_service.h"
#include "pw_time.h"
#include "pw_topics.h"
#include "pager_service.h"
#include "triage.h"

typedef struct app {
	pw_service *svc;
	const pw_log *lg;
	pw_pager_params prm;
	pager_triage triage; /* key, base URL, link lifetime, the HTTP thread's connection */
	char am_url[512], webhook_url[512], ticket_url[512];
	/* the deployment (kafka.group.id): its incidents, pages, tickets and notices are its own;
	 * a pager never rebuilds nor delivers another deployment's */
	char group[256];
	int64_t hold_max_ms; /* a new page waits at most this long for the rest of its event (pager.page.hold_max) */
	int64_t backoff_ms, backoff_max_ms, resend_ms, post_timeout_ms;
	int64_t notice_ttl_ms; /* an info notice stays active in Alertmanager this long */
	int64_t review_every_ms, review_next_us; /* the threshold-review check: how often, when next */
	char route_detector[PW_PAGER_STR]; /* the detector team: owns the false-page KPI and its review */
	pw_metric *m_pages;      /* pages delivered {severity} */
	pw_metric *m_findings;   /* findings consumed {topic, outcome} */
	pw_metric *m_deliveries; /* delivery attempts {target, result} */
	pw_metric *m_open;       /* open incidents (gauge) */
	pw_metric *m_to_page;    /* seconds from the paging finding's creation to the page's first delivery */
} app;

/*
 * A consumer worker. Its open incidents mirror the deployment's in
 * PostgreSQL: every message is handled in one transaction that first locks
 * the deployment's pager_state row (so the replicas of a deployment handle
 * messages one at a time, each on the state the other left) and brings the
 * memory up to date with the incidents another replica wrote since this one
 * last looked (pager_incidents.gen > seen_gen).
 */
typedef struct worker {
	app *a;
	pw_service_worker *w;
	pw_incident *incs; /* open incidents, by (opened_us, incident_id) */
	size_t n, cap;
	bool loaded;       /* incs mirror PostgreSQL as of seen_gen; false after a failed transaction */
	int64_t seen_gen;  /* the deployment's generation incs reflect */
	int64_t gen;       /* the generation the open transaction writes (seen + 1 once locked) */
} worker;

/* ---- configuration -------------------------------------------------------------------- */

static const pw_conf_key own_keys[] = {
	{.name = "pager.triage_key", .type = PW_CONF_STRING, .def = "",
	 .help = "HMAC-SHA256 key signing triage links (PW_PAGER_TRIAGE_KEY; at least 16 bytes; required)"},
	{.name = "pager.triage.base_url", .type = PW_CONF_STRING, .def = "",
	 .help = "URL on-call opens triage links under, e.g. https://pager.example; empty: http://<http.listen>:<port>"},
	{.name = "pager.triage.link_ttl", .type = PW_CONF_DURATION_MS, .def = "168h", .min = 60000,
	 .max = 7776000000.0, .help = "how long a triage link stays valid"},
	{.name = "pager.alertmanager.url", .type = PW_CONF_STRING, .def = "",
	 .help = "Alertmanager base URL (alerts are POSTed to <url>/api/v2/alerts); empty: not delivered there"},
	{.name = "pager.webhook.url", .type = PW_CONF_STRING, .def = "",
	 .help = "generic webhook receiving each page version as JSON; empty: none"},
	{.name = "pager.ticket.url", .type = PW_CONF_STRING, .def = "",
	 .help = "webhook filing P1 tickets (the auto-filed bug); empty: tickets stay in perfwatch.pager_tickets"},
	{.name = "pager.deliver.backoff", .type = PW_CONF_DURATION_MS, .def = "1s", .min = 10,
	 .max = 3600000, .help = "first wait after a failed delivery (doubles per attempt)"},
	{.name = "pager.deliver.backoff_max", .type = PW_CONF_DURATION_MS, .def = "5m", .min = 10,
	 .max = 86400000, .help = "longest wait between delivery attempts"},
	{.name = "pager.deliver.timeout", .type = PW_CONF_DURATION_MS, .def = "5s", .min = 100,
	 .max = 120000, .help = "deadline of one delivery POST"},
	{.name = "pager.alertmanager.resend", .type = PW_CONF_DURATION_MS, .def = "1m", .min = 1000,
	 .max = 3600000,
	 .help = "an active page is posted to Alertmanager again this often (below its resolve_timeout, 5m by default)"},
	{.name = "pager.notice.ttl", .type = PW_CONF_DURATION_MS, .def = "24h", .min = 60000,
	 .max = 2592000000.0,
	 .help = "an info notice (validated win, infra health, threshold review) is posted once and stays active this long"},
	{.name = "pager.review.interval", .type = PW_CONF_DURATION_MS, .def = "1h", .min = 100, .max = 86400000,
	 .help = "how often the report card is checked for a threshold review (false pages over budget two months running)"},
	{.name = "pager.route.detector", .type = PW_CONF_STRING, .def = "perfwatch-detector",
	 .help = "the detector team, owner of the false-page KPI: receives the threshold-review notice"},
	{.name = "pager.page.hold_max", .type = PW_CONF_DURATION_MS, .def = "2m", .min = 0, .max = 3600000,
	 .help = "a new page with gate alerts is first delivered when the gate verdicts naming them and every alert "
	         "those verdicts name are in (its headline is then the event's), at the latest this long after it was raised"},
	{.name = "pager.tick", .type = PW_CONF_DURATION_MS, .def = "1s", .min = 10, .max = 600000,
	 .help = "how often the delivery tick runs"},
};

#define MAX_KEYS 40

/* ---- helpers ---------------------------------------------------------------------------- */

static bool retriable(pw_status st)
{
	return st == PW_ERR_UNAVAILABLE || st == PW_ERR_TIMEOUT || st == PW_ERR_NOMEM ||
	       st == PW_ERR_KAFKA || st == PW_ERR_SHUTDOWN;
}

static pw_status exec(pw_pg *pg, const char *sql, const pw_pg_params *p, PGresult **res,
                      char *errbuf, size_t errlen)
{
	pw_pg_params none;
	if (!p) {
		pw_pg_params_init(&none);
		p = &none;
	}
	return pw_pg_exec_params(pg, sql, p, 0, res, errbuf, errlen);
}

static char *mem_text(void (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fn(f, arg);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- messages into findings -------------------------------------------------------------- */

static const char *type_of(pw_pager_in k)
{
	const ProtobufCMessageDescriptor *d = pw_pager_in_desc(k);
	return d ? d->name : "unknown";
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* ---- the store -------------------------------------------------------------------------- */

/* Spend impact (percent of fleet) and tier of f's model family from spend_weights. */
static pw_status spend_of(pw_pg *pg, pw_finding *f, char *errbuf, size_t errlen)
{
	pw_pg_params p;
	PGresult *r = NULL;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, f->model);
	pw_status st = exec(pg, "SELECT spend_share, tier = 'top' FROM perfwatch.spend_weights WHERE model = $1",
	                    &p, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(r) == 1) {
		double share = strtod(PQgetvalue(r, 0, 0), NULL);
		f->top_tier = PQgetvalue(r, 0, 1)[0] == 't';
		/* §8: the share of fleet spend times the regression, in percent of fleet */
		f->spend_pct = share * fabs(f->delta_pct);
	}
	PQclear(r);
	return PW_OK;
}

/*
 * A gate alert names no changepoint; its CL range is the release's: (the
 * baseline release's CL, the candidate's CL], from the runs of its builds
 * (as the bisector bounds its search; without a release build, the newest
 * build measured before the candidate). Two families regressed by one RC
 * share it, so their alerts are one event. Leaves f alone when unknown.
 */
static pw_status gate_range(pw_pg *pg, pw_finding *f, char *errbuf, size_t errlen)
{
	if (!f->from_gate || f->cl_lo[0] || !f->obs_release[0])
		return PW_OK;
	pw_pg_params p;
	PGresult *r = NULL;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, f->model);
	pw_pg_params_text(&p, f->platform);
	pw_pg_params_text(&p, f->config);
	pw_pg_params_text(&p, f->obs_release);
	pw_pg_params_text(&p, f->base_window);
	pw_status st = exec(pg,
	                    "WITH hi AS (SELECT max(compiler_cl_number) AS n FROM perfwatch.runs WHERE model = $1"
	                    "  AND platform = $2 AND config = $3 AND build_id = $4)"
	                    " SELECT coalesce((SELECT max(compiler_cl_number) FROM perfwatch.runs, hi WHERE model = $1"
	                    "   AND platform = $2 AND config = $3 AND build_id = $5 AND compiler_cl_number < hi.n),"
	                    "  (SELECT max(compiler_cl_number) FROM perfwatch.runs, hi WHERE model = $1 AND platform = $2"
	                    "   AND config = $3 AND build_kind = 'release' AND compiler_cl_number < hi.n),"
	                    "  (SELECT max(compiler_cl_number) FROM perfwatch.runs, hi WHERE model = $1 AND platform = $2"
	                    "   AND config = $3 AND bisect_job_id = '' AND compiler_cl_number < hi.n)), hi.n FROM hi",
	                    &p, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0) && !PQgetisnull(r, 0, 1)) {
		snprintf(f->cl_lo, sizeof f->cl_lo, "cl/%s", PQgetvalue(r, 0, 0));
		snprintf(f->cl_hi, sizeof f->cl_hi, "cl/%s", PQgetvalue(r, 0, 1));
	}
	PQclear(r);
	return PW_OK;
}

static pw_status worker_grow(worker *k)
{
	if (k->n < k->cap)
		return PW_OK;
	size_t cap = k->cap ? k->cap * 2 : 16;
	pw_incident *n = realloc(k->incs, cap * sizeof *n);
	if (!n)
		return PW_ERR_NOMEM;
	k->incs = n;
	k->cap = cap;
	return PW_OK;
}

/* Whether a is before b in the workers' order of incidents: opened, then id (the order pw_incident_find tries). */
static bool inc_before(const pw_incident *a, const pw_incident *b)
{
	return a->opened_us != b->opened_us ? a->opened_us < b->opened_us : strcmp(a->incident_id, b->incident_id) < 0;
}

/* Moves incs[i] to its place in the order (after its opened_us changed, or appended). Returns its index. */
static size_t inc_place(worker *k, size_t i)
{
	pw_incident *tmp = malloc(sizeof *tmp);
	if (!tmp)
		return i; /* out of order is still correct, only another first match */
	*tmp = k->incs[i];
	memmove(&k->incs[i], &k->incs[i + 1], (k->n - i - 1) * sizeof *tmp);
	size_t j = 0;
	while (j < k->n - 1 && inc_before(&k->incs[j], tmp))
		j++;
	memmove(&k->incs[j + 1], &k->incs[j], (k->n - 1 - j) * sizeof *tmp);
	k->incs[j] = *tmp;
	free(tmp);
	return j;
}

static void inc_drop(worker *k, size_t i)
{
	memmove(&k->incs[i], &k->incs[i + 1], (k->n - i - 1) * sizeof k->incs[0]);
	k->n--;
}

/*
 * Rebuilds incident id (opened at opened_us, spend impact spend) from its
 * stored parts, in the order they were consumed, into the next free slot;
 * *parts counts them. Leaves k->n alone: the caller keeps the slot or not.
 * *opened false when no part decodes.
 */
static pw_status incident_rebuild(worker *k, const char *id, int64_t opened_us, double spend, bool *opened,
                                  size_t *parts, char *errbuf, size_t errlen)
{
	pw_pg *pg = k->w->pg;
	PGresult *rp = NULL;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, id);
	*opened = false;
	pw_status st = pw_pg_exec_params(pg,
	                                 "SELECT topic, payload, spend_pct, top_tier, range_lo, range_hi"
	                                 " FROM perfwatch.pager_parts WHERE incident_id = $1 ORDER BY id",
	                                 &p, 1, &rp, errbuf, errlen);
	if (st != PW_OK || (st = worker_grow(k)) != PW_OK)
		goto out;
	pw_incident *inc = &k->incs[k->n];
	for (int j = 0; j < PQntuples(rp); j++) {
		pw_pager_part pt;
		Perfwatch__V1__DlqReason why;
		char whybuf[256];
		pw_pager_in kind = pw_pager_in_of(PQgetvalue(rp, j, 0));
		if (pw_pager_part_decode(kind, PQgetvalue(rp, j, 1), (size_t)PQgetlength(rp, j, 1), &pt, &why, whybuf,
		                         sizeof whybuf) != PW_OK) {
			pw_log_warn(k->a->lg, "incident \"%s\": stored part %d does not decode: %s", id, j, whybuf);
			continue;
		}
		/* binary result: float8 and bool in network order */
		uint64_t bits = 0;
		memcpy(&bits, PQgetvalue(rp, j, 2), 8);
		bits = __builtin_bswap64(bits);
		memcpy(&pt.f.spend_pct, &bits, 8);
		pt.f.top_tier = PQgetvalue(rp, j, 3)[0] != 0;
		/* the release's CL range as computed when consumed (0042); parts stored before, computed again */
		if (!pt.f.cl_lo[0] && PQgetvalue(rp, j, 4)[0]) {
			copy(pt.f.cl_lo, sizeof pt.f.cl_lo, PQgetvalue(rp, j, 4));
			copy(pt.f.cl_hi, sizeof pt.f.cl_hi, PQgetvalue(rp, j, 5));
		} else if ((st = gate_range(pg, &pt.f, errbuf, errlen)) != PW_OK)
			goto out;
		if (!*opened) {
			pw_incident_open(inc, id, &pt.f);
			*opened = true;
		} else
			pw_incident_add(inc, &pt.f);
		(*parts)++;
	}
	if (*opened) {
		inc->opened_us = opened_us;
		if (spend > inc->spend_pct)
			inc->spend_pct = spend;
	}
out:
	PQclear(rp);
	return st;
}

/*
 * Brings the memory up to the deployment's state. full: every open incident
 * of the deployment is rebuilt from its stored parts (at start, after a
 * failed transaction); else only those another replica wrote since seen_gen
 * (pager_incidents.gen), rebuilt or dropped once closed or folded. Inside
 * the caller's transaction, under the lock.
 */
static pw_status incidents_refresh(worker *k, bool full, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	pw_pg_params g;
	pw_pg_params_init(&g);
	pw_pg_params_text(&g, k->a->group);
	pw_pg_params_int(&g, full ? -1 : k->seen_gen);
	pw_pg_params_bool(&g, full);
	pw_status st = exec(k->w->pg,
	                    "SELECT incident_id, open, spend_pct, (extract(epoch FROM opened_at) * 1e6)::bigint"
	                    " FROM perfwatch.pager_incidents WHERE pager_group = $1 AND gen > $2 AND (open OR NOT $3)"
	                    " ORDER BY opened_at, incident_id",
	                    &g, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (full)
		k->n = 0;
	size_t parts = 0, rebuilt = 0;
	for (int i = 0; st == PW_OK && i < PQntuples(r); i++) {
		const char *id = PQgetvalue(r, i, 0);
		for (size_t j = 0; j < k->n; j++)
			if (strcmp(k->incs[j].incident_id, id) == 0) {
				inc_drop(k, j);
				break;
			}
		if (PQgetvalue(r, i, 1)[0] != 't')
			continue;
		bool opened = false;
		st = incident_rebuild(k, id, strtoll(PQgetvalue(r, i, 3), NULL, 10), strtod(PQgetvalue(r, i, 2), NULL),
		                      &opened, &parts, errbuf, errlen);
		if (st == PW_OK && opened) {
			inc_place(k, k->n++);
			rebuilt++;
		}
	}
	if (st == PW_OK && full) {
		k->loaded = true;
		pw_log_info(k->a->lg, "%zu open incidents rebuilt from %zu stored parts", k->n, parts);
		pw_metric_set(k->a->m_open, NULL, (double)k->n);
	} else if (st == PW_OK && PQntuples(r) > 0)
		pw_log_debug(k->a->lg, "%d incidents another replica changed: %zu open ones rebuilt from %zu parts",
		             PQntuples(r), rebuilt, parts);
	PQclear(r);
	return st;
}

/*
 * Opens the transaction of one message (or of the expiry) on the
 * deployment's state: locks its pager_state row (the other replicas wait
 * here), then brings the memory up to date (a full rebuild after a failure,
 * else the incidents changed since seen_gen). k->gen is then the generation
 * this transaction writes (incidents it stores carry it).
 */
static pw_status state_begin(worker *k, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	pw_status st = pw_pg_begin(k->w->pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	pw_pg_params g;
	pw_pg_params_init(&g);
	pw_pg_params_text(&g, k->a->group);
	st = exec(k->w->pg,
	          "INSERT INTO perfwatch.pager_state (pager_group) VALUES ($1) ON CONFLICT (pager_group)"
	          " DO UPDATE SET generation = pager_state.generation RETURNING generation",
	          &g, &r, errbuf, errlen);
	if (st == PW_OK) {
		int64_t gen = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		if (!k->loaded || gen != k->seen_gen)
			st = incidents_refresh(k, !k->loaded, errbuf, errlen);
		k->seen_gen = gen;
		k->gen = gen + 1;
	}
	PQclear(r);
	if (st != PW_OK) {
		pw_pg_rollback(k->w->pg, NULL, 0);
		k->loaded = false;
	}
	return st;
}

/* Commits the transaction state_begin opened, the deployment's state one generation on. */
static pw_status state_commit(worker *k, char *errbuf, size_t errlen)
{
	pw_pg_params g;
	pw_pg_params_init(&g);
	pw_pg_params_text(&g, k->a->group);
	pw_pg_params_int(&g, k->gen);
	pw_status st = exec(k->w->pg, "UPDATE perfwatch.pager_state SET generation = $2 WHERE pager_group = $1", &g, NULL,
	                    errbuf, errlen);
	if (st == PW_OK)
		st = pw_pg_commit(k->w->pg, errbuf, errlen);
	if (st == PW_OK)
		k->seen_gen = k->gen;
	return st;
}

typedef struct page_row {
	bool exists, resolved;
	char page_id[PW_PAGER_STR + 8];
	char triage_url[1024];
	char summary[512];
	bool pressure;
	int64_t created_us;
} page_row;

static pw_status page_get(pw_pg *pg, const char *incident_id, page_row *out, char *errbuf, size_t errlen)
{
	pw_pg_params p;
	PGresult *r = NULL;
	memset(out, 0, sizeof *out);
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, incident_id);
	pw_status st = exec(pg,
	                    "SELECT page_id, triage_url, summary, budget_pressure, resolved_at IS NOT NULL,"
	                    " (extract(epoch FROM created_at) * 1e6)::bigint"
	                    " FROM perfwatch.pages WHERE incident_id = $1",
	                    &p, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(r) == 1) {
		out->exists = true;
		copy(out->page_id, sizeof out->page_id, PQgetvalue(r, 0, 0));
		copy(out->triage_url, sizeof out->triage_url, PQgetvalue(r, 0, 1));
		copy(out->summary, sizeof out->summary, PQgetvalue(r, 0, 2));
		out->pressure = PQgetvalue(r, 0, 3)[0] == 't';
		out->resolved = PQgetvalue(r, 0, 4)[0] == 't';
		out->created_us = strtoll(PQgetvalue(r, 0, 5), NULL, 10);
	}
	PQclear(r);
	return PW_OK;
}

/* The rolling week's pages of this deployment and their verdicts (the
 * false-page budget's usage): another deployment's pages on the same database
 * (a test's, an earlier demo's) are paged to another rotation and charge its
 * budget, not this one's. */
static pw_status budget_usage(pw_pg *pg, const char *group, pw_budget_usage *u, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	pw_pg_params g;
	pw_pg_params_init(&g);
	pw_pg_params_text(&g, group);
	pw_status st = exec(pg,
	                    "SELECT count(*), count(*) FILTER (WHERE t.outcome = 'true_regression'),"
	                    "       count(*) FILTER (WHERE t.outcome = 'false_regression')"
	                    "  FROM perfwatch.pages p LEFT JOIN perfwatch.triage_verdicts t USING (page_id)"
	                    " WHERE p.incident_id IS NOT NULL AND p.pager_group = $1"
	                    "   AND p.created_at > now() - interval '7 days'",
	                    &g, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	u->delivered = (uint32_t)strtoul(PQgetvalue(r, 0, 0), NULL, 10);
	u->true_pages = (uint32_t)strtoul(PQgetvalue(r, 0, 1), NULL, 10);
	u->false_pages = (uint32_t)strtoul(PQgetvalue(r, 0, 2), NULL, 10);
	PQclear(r);
	return PW_OK;
}

static Perfwatch__V1__Verdict page_verdict(pw_find_verdict v)
{
	return (Perfwatch__V1__Verdict)v;
}

/* pages.verdict allows no "unspecified": an unverdicted watcher shift pages as "investigate". */
static const char *page_verdict_text(pw_find_verdict v)
{
	return v == PW_FV_NONE ? "investigate" : pw_find_verdict_name(v);
}

static Perfwatch__V1__PageSeverity page_severity(pw_severity s)
{
	switch (s) {
	case PW_SEV_CRITICAL: return PERFWATCH__V1__PAGE_SEVERITY__PAGE_SEVERITY_CRITICAL;
	case PW_SEV_HIGH: return PERFWATCH__V1__PAGE_SEVERITY__PAGE_SEVERITY_HIGH;
	case PW_SEV_INFO: break;
	}
	return PERFWATCH__V1__PAGE_SEVERITY__PAGE_SEVERITY_INFO;
}

typedef struct page_text {
	const pw_incident *inc;
	const pw_route *route;
	const char *page_id, *triage_url, *receiver;
	bool pressure, resolved;
	int version;
	int64_t now_us;
} page_text;

static void write_am(FILE *f, void *arg)
{
	page_text *t = arg;
	pw_alertmanager_write(f, t->inc, t->route, t->page_id, t->triage_url, t->pressure, t->resolved,
	                      t->now_us);
}

/* The generic webhook's body: the page and its artifact-3 payload. */
static void write_webhook(FILE *f, void *arg)
{
	page_text *t = arg;
	char summary[512];
	pw_incident_summary(t->inc, summary, sizeof summary);
	fputs("{\"page_id\":\"", f);
	pw_json_escape(f, t->page_id);
	fprintf(f, "\",\"version\":%d,\"incident\":\"", t->version);
	pw_json_escape(f, t->inc->incident_id);
	fputs("\",\"summary\":\"", f);
	pw_json_escape(f, summary);
	fprintf(f, "\",\"severity\":\"%s\",\"route\":\"", pw_severity_name(t->route->severity));
	pw_json_escape(f, t->route->route);
	fprintf(f, "\",\"owner\":\"%s\",\"resolved\":%s,\"budget_pressure\":%s,\"triage_url\":\"",
	        pw_owner_name(t->route->owner), t->resolved ? "true" : "false", t->pressure ? "true" : "false");
	pw_json_escape(f, t->triage_url);
	fputs("\",\"payload\":", f);
	pw_payload_write(f, t->inc, t->route, t->pressure);
	fputs("}", f);
}

/* One string of a JSON array being written ("[" before the first, the caller closes it). */
static void json_item(FILE *f, const char *s, bool *first)
{
	fputs(*first ? "[\"" : ",\"", f);
	pw_json_escape(f, s);
	fputc('"', f);
	*first = false;
}

/* The ids of inc's gate alerts as a JSON array (what a new page waits for: the verdicts naming them). */
static void write_gate_members(FILE *f, void *arg)
{
	const pw_incident *inc = arg;
	bool first = true;
	for (size_t i = 0; i < inc->n_members; i++)
		if (inc->gate_members >> i & 1)
			json_item(f, inc->members[i], &first);
	fputs(first ? "[]" : "]", f);
}

/* Writes the Page message of a page row to the outbox (Kafka key page_id). */
static pw_status page_publish(worker *k, const pw_incident *inc, const pw_route *route, const char *page_id,
                              const char *triage_url, int64_t created_us, char *errbuf, size_t errlen)
{
	Perfwatch__V1__Page pg = PERFWATCH__V1__PAGE__INIT;
	char dedup[2 * PW_PAGER_STR + 16], summary[512];
	char *ids[PW_PAGER_MAX_MEMBERS];
	pw_incident_dedup_key(inc, dedup, sizeof dedup);
	pw_incident_summary(inc, summary, sizeof summary);
	for (size_t i = 0; i < inc->n_members; i++)
		ids[i] = (char *)inc->members[i];
	pg.page_id = (char *)page_id;
	pg.n_alert_ids = inc->n_members;
	pg.alert_ids = ids;
	pg.dedup_key = dedup;
	pg.route = (char *)route->route;
	pg.receiver = (char *)(k->a->am_url[0] ? "alertmanager" : k->a->webhook_url[0] ? "webhook" : "");
	pg.severity = page_severity(route->severity);
	pg.verdict = page_verdict(inc->primary.verdict);
	pg.summary = summary;
	pg.owner_hint = (char *)inc->primary.owner_hint;
	pg.release_id = (char *)inc->release_id;
	pg.triage_url = (char *)triage_url;
	pg.created_unix_us = created_us;
	size_t len = perfwatch__v1__page__get_packed_size(&pg);
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return PW_ERR_NOMEM;
	perfwatch__v1__page__pack(&pg, buf);
	pw_status st = pw_outbox_add(k->w->pg, "pager", page_id, PW_TOPIC_PAGES, page_id, buf, len, errbuf, errlen);
	free(buf);
	return st;
}

/*
 * Creates the page of inc (page_id "pg-" + incident id) or writes its new
 * version, with the Alertmanager and webhook bodies the tick will post, and
 * the Page message. Inside the caller's transaction.
 */
static pw_status page_write(worker *k, const pw_incident *inc, const pw_route *route, const page_row *old,
                            bool pressure, bool resolved, int64_t now, char *errbuf, size_t errlen)
{
	app *a = k->a;
	char page_id[PW_PAGER_STR + 8], url[1024], summary[512], dedup[2 * PW_PAGER_STR + 16];
	pw_status st;
	if (old->exists) {
		copy(page_id, sizeof page_id, old->page_id);
		copy(url, sizeof url, old->triage_url);
	} else {
		snprintf(page_id, sizeof page_id, "pg-%s",
		         strncmp(inc->incident_id, "inc-", 4) == 0 ? inc->incident_id + 4 : inc->incident_id);
		/* a page id travels in URLs and labels: [A-Za-z0-9._-] ("watch-169@xla-nightly-..." -> "watch-169-xla-...") */
		for (char *c = page_id; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
			      *c == '_' || *c == '-'))
				*c = '-';
		if ((st = pager_triage_url(&a->triage, page_id, "view", now / 1000000, url, sizeof url, errbuf,
		                           errlen)) != PW_OK)
			return st;
	}
	pw_incident_summary(inc, summary, sizeof summary);
	pw_incident_dedup_key(inc, dedup, sizeof dedup);
	page_text t = {inc, route, page_id, url, "", pressure, resolved, 0, now};
	char *payload = pw_payload_json(inc, route, pressure);
	char *am = mem_text(write_am, &t);
	char *hold = mem_text(write_gate_members, (void *)inc);
	char *wh = NULL;
	PGresult *r = NULL;
	int version = 1;
	if (!payload || !am || !hold) {
		st = PW_ERR_NOMEM;
		goto out;
	}
	if (old->exists) {
		pw_pg_params p;
		pw_pg_params_init(&p);
		pw_pg_params_text(&p, page_id);
		if ((st = exec(k->w->pg, "SELECT version + 1 FROM perfwatch.pages WHERE page_id = $1", &p, &r, errbuf,
		               errlen)) != PW_OK)
			goto out;
		version = PQntuples(r) == 1 ? atoi(PQgetvalue(r, 0, 0)) : 1;
		PQclear(r);
		r = NULL;
	}
	t.version = version;
	if (!(wh = mem_text(write_webhook, &t))) {
		st = PW_ERR_NOMEM;
		goto out;
	}
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, page_id);
	pw_pg_params_text(&p, dedup);
	pw_pg_params_text(&p, route->route);
	pw_pg_params_text(&p, a->am_url[0] ? (a->webhook_url[0] ? "alertmanager,webhook" : "alertmanager")
	                                    : a->webhook_url[0] ? "webhook" : "");
	pw_pg_params_text(&p, pw_severity_name(route->severity));
	pw_pg_params_text(&p, page_verdict_text(inc->primary.verdict));
	pw_pg_params_text(&p, summary);
	pw_pg_params_text(&p, inc->primary.owner_hint);
	pw_pg_params_text(&p, inc->release_id);
	pw_pg_params_text(&p, url);
	pw_pg_params_int(&p, now);
	pw_pg_params_text(&p, inc->incident_id);
	pw_pg_params_text(&p, payload);
	pw_pg_params_bool(&p, pressure);
	pw_pg_params_bool(&p, resolved);
	pw_pg_params_text(&p, am);
	pw_pg_params_text(&p, wh);
	pw_pg_params_int(&p, version);
	pw_pg_params_text(&p, a->group);
	pw_pg_params_text(&p, hold);
	pw_pg_params_int(&p, a->hold_max_ms);
	/* a new page with gate alerts is held (hold_until) until the verdicts naming them and all their
	 * alerts are in (holds_release), so that its first delivery has the event's headline; until
	 * then each version updates what it waits for */
	st = exec(k->w->pg,
	          "INSERT INTO perfwatch.pages (page_id, dedup_key, route, receiver, severity, verdict, summary,"
	          " owner_hint, release_id, triage_url, created_at, incident_id, payload, budget_pressure,"
	          " resolved_at, am_body, webhook_body, version, next_attempt_at, pager_group, hold_alerts, hold_until)"
	          " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, to_timestamp($11::double precision / 1e6), $12,"
	          "  $13::jsonb, $14, CASE WHEN $15 THEN now() END, $16, $17, $18, now(), $19,"
	          "  ARRAY(SELECT jsonb_array_elements_text($20::jsonb)),"
	          "  CASE WHEN $20::jsonb <> '[]' AND $21 > 0 THEN now() + $21 * interval '1 millisecond' END)"
	          " ON CONFLICT (page_id) DO UPDATE SET dedup_key = EXCLUDED.dedup_key, route = EXCLUDED.route,"
	          "  severity = EXCLUDED.severity, verdict = EXCLUDED.verdict, summary = EXCLUDED.summary,"
	          "  owner_hint = EXCLUDED.owner_hint, release_id = EXCLUDED.release_id, payload = EXCLUDED.payload,"
	          "  budget_pressure = EXCLUDED.budget_pressure,"
	          "  resolved_at = coalesce(pages.resolved_at, EXCLUDED.resolved_at),"
	          "  am_body = EXCLUDED.am_body, webhook_body = EXCLUDED.webhook_body, version = EXCLUDED.version,"
	          "  hold_alerts = CASE WHEN pages.hold_until IS NOT NULL THEN EXCLUDED.hold_alerts ELSE pages.hold_alerts END,"
	          "  delivery_status = 'pending', next_attempt_at = now()",
	          &p, NULL, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	/* the page's alerts (page.proto's alert_ids) */
	for (size_t i = 0; i < inc->n_members && st == PW_OK; i++) {
		pw_pg_params q;
		pw_pg_params_init(&q);
		pw_pg_params_text(&q, page_id);
		pw_pg_params_text(&q, inc->members[i]);
		st = exec(k->w->pg, "INSERT INTO perfwatch.page_alerts (page_id, alert_id) VALUES ($1, $2)"
		                    " ON CONFLICT DO NOTHING", &q, NULL, errbuf, errlen);
	}
	if (st == PW_OK)
		st = page_publish(k, inc, route, page_id, url, old->exists ? old->created_us : now, errbuf, errlen);
	if (st == PW_OK)
		pw_log_info(a->lg, "page %s v%d for incident %s: %s%s%s", page_id, version, inc->incident_id, summary,
		            pressure ? " [budget under pressure]" : "", resolved ? " (resolved)" : "");
out:
	PQclear(r);
	free(payload);
	free(am);
	free(hold);
	free(wh);
	return st;
}

/*
 * Releases the held pages whose event is complete: every gate alert a page
 * waits for is named by a gate verdict this deployment consumed, and every
 * alert those verdicts name is in one of its incidents. The headline of the
 * first delivery is then the largest spend-weighted finding of all of them,
 * whatever order they arrived in. Inside the caller's transaction.
 */
/*
 * The condition of a held row (pages or tickets, alias x, the deployment $1)
 * whose event is complete: every gate alert it waits for is named by a gate
 * verdict the deployment consumed, and every alert those verdicts name is in
 * one of its incidents. (Static SQL: the two statements share the text.)
 */
#define HOLD_COMPLETE                                                                                  \
	" x.pager_group = $1 AND x.hold_until IS NOT NULL AND NOT EXISTS ("                            \
	"  SELECT 1 FROM unnest(x.hold_alerts) h (alert_id) WHERE NOT EXISTS ("                        \
	"   SELECT 1 FROM perfwatch.pager_gate_evaluations e"                                           \
	"    WHERE e.pager_group = $1 AND h.alert_id = ANY (e.alert_ids) AND NOT EXISTS ("              \
	"     SELECT 1 FROM unnest(e.alert_ids) a (alert_id) WHERE NOT EXISTS ("                        \
	"      SELECT 1 FROM perfwatch.pager_incident_alerts ia JOIN perfwatch.pager_incidents i"       \
	"       USING (incident_id) WHERE ia.alert_id = a.alert_id AND i.pager_group = $1))))"

/*
 * Releases the held pages and tickets whose event is complete (HOLD_COMPLETE):
 * the headline of a page's first delivery is then the largest
 * spend-weighted finding of all of the event's findings, whatever order they
 * arrived in, and a ticket filed before a BLOCKING finding of its event made
 * it a page was superseded by the page meanwhile. Inside the caller's
 * transaction.
 */
static pw_status holds_release(worker *k, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_text(&q, k->a->group);
	pw_status st = exec(k->w->pg,
	                    "UPDATE perfwatch.pages x SET hold_until = NULL, next_attempt_at = now() WHERE" HOLD_COMPLETE
	                    " RETURNING page_id, cardinality(hold_alerts), summary",
	                    &q, &r, errbuf, errlen);
	for (int i = 0; st == PW_OK && i < PQntuples(r); i++)
		pw_log_info(k->a->lg, "page %s: its event is complete (the gate verdicts naming its %s gate alerts and "
		                      "every alert they name are in): delivered from now as \"%s\"",
		            PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2));
	PQclear(r);
	r = NULL;
	if (st == PW_OK)
		st = exec(k->w->pg,
		          "UPDATE perfwatch.pager_tickets x SET hold_until = NULL, next_attempt_at = now() WHERE" HOLD_COMPLETE
		          " RETURNING ticket_id, summary",
		          &q, &r, errbuf, errlen);
	for (int i = 0; st == PW_OK && i < PQntuples(r); i++)
		pw_log_info(k->a->lg, "ticket %s: its event is complete: filed from now as \"%s\"", PQgetvalue(r, i, 0),
		            PQgetvalue(r, i, 1));
	PQclear(r);
	return st;
}

/* The ids of the alerts a gate verdict names, as a JSON array. */
static void write_verdict_alerts(FILE *f, void *arg)
{
	const Perfwatch__V1__GateVerdict *v = arg;
	bool first = true;
	for (size_t i = 0; i < v->n_series; i++)
		if (v->series[i]->alert_id && v->series[i]->alert_id[0])
			json_item(f, v->series[i]->alert_id, &first);
	fputs(first ? "[]" : "]", f);
}

/* Records which alerts one gate evaluation raised (a held page waits for all of them). */
static pw_status evaluation_store(worker *k, const Perfwatch__V1__GateVerdict *v, char *errbuf, size_t errlen)
{
	char *ids = mem_text(write_verdict_alerts, (void *)v);
	if (!ids)
		return PW_ERR_NOMEM;
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_text(&q, k->a->group);
	pw_pg_params_text(&q, v->release_id);
	pw_pg_params_int(&q, v->evaluation);
	pw_pg_params_text(&q, ids);
	pw_status st = exec(k->w->pg,
	                    "INSERT INTO perfwatch.pager_gate_evaluations (pager_group, release_id, evaluation, alert_ids)"
	                    " VALUES ($1, $2, $3, ARRAY(SELECT jsonb_array_elements_text($4::jsonb))) ON CONFLICT DO NOTHING",
	                    &q, NULL, errbuf, errlen);
	free(ids);
	return st;
}

/* One finding of an incident (its alert and the newest revision seen). */
static pw_status member_store(worker *k, const char *incident_id, const char *alert_id, int64_t revision,
                              char *errbuf, size_t errlen)
{
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_text(&q, incident_id);
	pw_pg_params_text(&q, alert_id);
	pw_pg_params_int(&q, revision);
	return exec(k->w->pg,
	            "INSERT INTO perfwatch.pager_incident_alerts (incident_id, alert_id, revision) VALUES ($1, $2, $3)"
	            " ON CONFLICT (incident_id, alert_id) DO UPDATE SET revision ="
	            "  greatest(pager_incident_alerts.revision, EXCLUDED.revision)",
	            &q, NULL, errbuf, errlen);
}

/* Upserts the incident row, its members and the part that changed it. */
static pw_status incident_store(worker *k, const pw_incident *inc, const pw_route *route, const pw_pager_part *pt,
                                int64_t now, char *errbuf, size_t errlen)
{
	char dedup[2 * PW_PAGER_STR + 16];
	pw_incident_dedup_key(inc, dedup, sizeof dedup);
	char *payload = pw_payload_json(inc, route, false);
	if (!payload)
		return PW_ERR_NOMEM;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, inc->incident_id);
	pw_pg_params_text(&p, dedup);
	pw_pg_params_bool(&p, inc->open);
	pw_pg_params_text(&p, inc->release_id);
	pw_pg_params_text(&p, inc->family);
	pw_pg_params_text(&p, inc->culprit);
	pw_pg_params_text(&p, inc->fleet_event_id);
	pw_pg_params_opt_int(&p, inc->cl_lo >= 0, inc->cl_lo);
	pw_pg_params_opt_int(&p, inc->cl_hi >= 0, inc->cl_hi);
	pw_pg_params_text(&p, pw_action_name(route->action));
	pw_pg_params_text(&p, pw_owner_name(route->owner));
	pw_pg_params_text(&p, route->route);
	pw_pg_params_double(&p, inc->spend_pct);
	pw_pg_params_text(&p, payload);
	pw_pg_params_int(&p, inc->opened_us > 0 ? inc->opened_us : now);
	pw_pg_params_int(&p, now);
	pw_pg_params_text(&p, k->a->group);
	pw_pg_params_int(&p, k->gen);
	pw_status st = exec(k->w->pg,
	                    "INSERT INTO perfwatch.pager_incidents (incident_id, dedup_key, open, release_id, family,"
	                    " culprit, fleet_event_id, cl_lo, cl_hi, action, owner, route, spend_pct, payload,"
	                    " opened_at, updated_at, pager_group, gen) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
	                    " $12, $13, $14::jsonb, to_timestamp($15::double precision / 1e6),"
	                    " to_timestamp($16::double precision / 1e6), $17, $18)"
	                    " ON CONFLICT (incident_id) DO UPDATE SET dedup_key = EXCLUDED.dedup_key,"
	                    "  open = EXCLUDED.open, release_id = EXCLUDED.release_id, family = EXCLUDED.family,"
	                    "  culprit = EXCLUDED.culprit, fleet_event_id = EXCLUDED.fleet_event_id,"
	                    "  cl_lo = EXCLUDED.cl_lo, cl_hi = EXCLUDED.cl_hi, action = EXCLUDED.action,"
	                    "  owner = EXCLUDED.owner, route = EXCLUDED.route,"
	                    "  spend_pct = greatest(pager_incidents.spend_pct, EXCLUDED.spend_pct),"
	                    "  payload = EXCLUDED.payload, updated_at = EXCLUDED.updated_at, gen = EXCLUDED.gen",
	                    &p, NULL, errbuf, errlen);
	free(payload);
	bool part_member = !pt || !pt->f.alert_id[0];
	for (size_t i = 0; i < inc->n_members && st == PW_OK; i++) {
		bool is_part = pt && strcmp(inc->members[i], pt->f.alert_id) == 0;
		part_member |= is_part;
		st = member_store(k, inc->incident_id, inc->members[i], is_part && pt->f.revision ? pt->f.revision : 1,
		                  errbuf, errlen);
	}
	/* An incident holds PW_PAGER_MAX_MEMBERS alerts in memory; a later alert of
	 * its event is still one of its findings here, or a held page would wait
	 * for it (HOLD_COMPLETE) until pager.page.hold_max. */
	if (!part_member && st == PW_OK)
		st = member_store(k, inc->incident_id, pt->f.alert_id, pt->f.revision ? pt->f.revision : 1, errbuf, errlen);
	return st;
}

static pw_status part_store(worker *k, const char *incident_id, const pw_pager_part *pt, const char *topic,
                            const void *raw, size_t rawlen, char *errbuf, size_t errlen)
{
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_text(&q, pt->key);
	pw_pg_params_text(&q, incident_id);
	pw_pg_params_text(&q, topic);
	pw_pg_params_bin(&q, raw, rawlen);
	pw_pg_params_double(&q, pt->f.spend_pct);
	pw_pg_params_bool(&q, pt->f.top_tier);
	pw_pg_params_text(&q, pt->f.cl_lo);
	pw_pg_params_text(&q, pt->f.cl_hi);
	/* (with the CL range as computed now: a gate alert's is its release's, from perfwatch.runs) */
	return exec(k->w->pg,
	            "INSERT INTO perfwatch.pager_parts (part_key, incident_id, topic, payload, spend_pct, top_tier, range_lo,"
	            " range_hi) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (part_key) DO NOTHING",
	            &q, NULL, errbuf, errlen);
}

static pw_status decision_store(worker *k, const char *incident_id, const char *alert_id, uint32_t revision,
                                const char *action, const char *budget, const char *reason, char *errbuf,
                                size_t errlen)
{
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_text(&q, incident_id);
	pw_pg_params_text(&q, alert_id);
	pw_pg_params_int(&q, revision);
	pw_pg_params_text(&q, action);
	pw_pg_params_text(&q, budget);
	pw_pg_params_text(&q, reason);
	return exec(k->w->pg,
	            "INSERT INTO perfwatch.pager_decisions (incident_id, alert_id, revision, action, budget, reason)"
	            " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
	            &q, NULL, errbuf, errlen);
}

static pw_status ticket_store(worker *k, const pw_incident *inc, const pw_route *route, int64_t now,
                              char *errbuf, size_t errlen)
{
	char id[PW_PAGER_STR + 8], summary[512];
	snprintf(id, sizeof id, "tk-%s",
	         strncmp(inc->incident_id, "inc-", 4) == 0 ? inc->incident_id + 4 : inc->incident_id);
	pw_incident_summary(inc, summary, sizeof summary);
	char *payload = pw_payload_json(inc, route, false);
	if (!payload)
		return PW_ERR_NOMEM;
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_text(&q, id);
	pw_pg_params_text(&q, inc->incident_id);
	pw_pg_params_text(&q, route->route);
	pw_pg_params_text(&q, summary);
	pw_pg_params_text(&q, payload);
	pw_pg_params_int(&q, now);
	pw_pg_params_text(&q, k->a->group);
	char *hold = mem_text(write_gate_members, (void *)inc);
	if (!hold) {
		free(payload);
		return PW_ERR_NOMEM;
	}
	pw_pg_params_text(&q, hold);
	pw_pg_params_int(&q, k->a->hold_max_ms);
	/* held as a page is (holds_release): a BLOCKING finding of its event may yet make it a page */
	pw_status st = exec(k->w->pg,
	                    "INSERT INTO perfwatch.pager_tickets (ticket_id, incident_id, route, summary, payload,"
	                    " created_at, next_attempt_at, pager_group, hold_alerts, hold_until) VALUES ($1, $2, $3, $4,"
	                    " $5::jsonb, to_timestamp($6::double precision / 1e6), now(), $7,"
	                    " ARRAY(SELECT jsonb_array_elements_text($8::jsonb)),"
	                    " CASE WHEN $8::jsonb <> '[]' AND $9 > 0 THEN now() + $9 * interval '1 millisecond' END)"
	                    " ON CONFLICT (incident_id) DO UPDATE SET summary = EXCLUDED.summary,"
	                    "  payload = EXCLUDED.payload, route = EXCLUDED.route,"
	                    "  hold_alerts = CASE WHEN pager_tickets.hold_until IS NOT NULL THEN EXCLUDED.hold_alerts"
	                    "   ELSE pager_tickets.hold_alerts END",
	                    &q, NULL, errbuf, errlen);
	free(hold);
	free(payload);
	return st;
}


/* ---- info notices ------------------------------------------------------------------------ */

static void write_notice_am(FILE *f, void *arg)
{
	pw_notice_am_write(f, arg);
}

static void write_notice_webhook(FILE *f, void *arg)
{
	pw_notice_webhook_write(f, arg);
}

/*
 * Stores notice n with its Alertmanager and webhook bodies, once: a second
 * notice for the same incident (or id) changes nothing. Inside the caller's
 * transaction.
 */
static pw_status notice_put(pw_pg *pg, const app *a, pw_notice *n, int64_t now, char *errbuf, size_t errlen)
{
	n->starts_us = now;
	n->ends_us = now + a->notice_ttl_ms * 1000;
	char *am = mem_text(write_notice_am, n), *wh = mem_text(write_notice_webhook, n);
	pw_status st = PW_ERR_NOMEM;
	if (am && wh) {
		pw_pg_params q;
		pw_pg_params_init(&q);
		pw_pg_params_text(&q, n->notice_id);
		pw_pg_params_text(&q, n->incident_id);
		pw_pg_params_text(&q, n->kind);
		pw_pg_params_text(&q, n->route);
		pw_pg_params_text(&q, n->owner);
		pw_pg_params_text(&q, n->summary);
		pw_pg_params_text(&q, n->payload);
		pw_pg_params_text(&q, am);
		pw_pg_params_text(&q, wh);
		pw_pg_params_int(&q, now);
		pw_pg_params_text(&q, a->group);
		st = exec(pg,
		          "INSERT INTO perfwatch.pager_notices (notice_id, incident_id, kind, route, owner, summary, payload,"
		          " am_body, webhook_body, created_at, pager_group) VALUES ($1, nullif($2, ''), $3, $4, $5, $6, $7::jsonb,"
		          " $8, $9, to_timestamp($10::double precision / 1e6), $11) ON CONFLICT DO NOTHING",
		          &q, NULL, errbuf, errlen);
	}
	free(am);
	free(wh);
	return st;
}

/* The info notice of an incident routed to "info" (§8): a validated win to the compiler team, infra health to infra. */
static pw_status notice_store(worker *k, const pw_incident *inc, const pw_route *route, int64_t now, char *errbuf,
                              size_t errlen)
{
	char id[PW_PAGER_STR + 8], summary[512], line[700];
	bool win = inc->primary.verdict == PW_FV_VALIDATED_WIN;
	snprintf(id, sizeof id, "nt-%s",
	         strncmp(inc->incident_id, "inc-", 4) == 0 ? inc->incident_id + 4 : inc->incident_id);
	pw_incident_summary(inc, summary, sizeof summary);
	if (win)
		snprintf(line, sizeof line, "validated win: %s", summary);
	else
		snprintf(line, sizeof line, "infra notice: %s%s%s", summary, inc->fleet_event_id[0] ? ", fleet change " : "",
		         inc->fleet_event_id);
	char *payload = pw_payload_json(inc, route, false);
	if (!payload)
		return PW_ERR_NOMEM;
	pw_notice n = {.notice_id = id, .incident_id = inc->incident_id, .kind = win ? "validated_win" : "infra_health",
	               .route = route->route, .owner = pw_owner_name(route->owner), .summary = line, .payload = payload};
	pw_status st = notice_put(k->w->pg, k->a, &n, now, errbuf, errlen);
	free(payload);
	if (st == PW_OK)
		pw_log_info(k->a->lg, "notice %s (info to %s): %s", id, route->route, line);
	return st;
}

/*
 * The incident pages now: a ticket it filed before (a P1 of the event came
 * first) and not yet delivered is superseded by the page, never delivered.
 */
static pw_status ticket_supersede(worker *k, const pw_incident *inc, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_text(&q, inc->incident_id);
	pw_status st = exec(k->w->pg,
	                    "UPDATE perfwatch.pager_tickets SET delivery_status = 'superseded', hold_until = NULL"
	                    " WHERE incident_id = $1 AND delivery_status IN ('pending', 'failed') RETURNING ticket_id",
	                    &q, &r, errbuf, errlen);
	if (st == PW_OK && PQntuples(r) == 1)
		pw_log_info(k->a->lg, "ticket %s superseded by the page of its incident %s", PQgetvalue(r, 0, 0),
		            inc->incident_id);
	PQclear(r);
	return st;
}

/*
 * After inc changed because of pt: routes it, pages (within the budget) or
 * files its ticket, stores the incident and records the decision. Inside the
 * caller's transaction.
 */
static pw_status settle(worker *k, pw_incident *inc, const pw_pager_part *pt, const char *topic, const void *raw,
                        size_t rawlen, bool changed, int64_t now, char *errbuf, size_t errlen)
{
	app *a = k->a;
	pw_route route;
	page_row old;
	pw_status st;
	pw_route_decide(&a->prm, &inc->primary, &route);
	if ((st = page_get(k->w->pg, inc->incident_id, &old, errbuf, errlen)) != PW_OK)
		return st;
	if ((st = incident_store(k, inc, &route, pt, now, errbuf, errlen)) != PW_OK)
		return st;
	if (pt && (st = part_store(k, inc->incident_id, pt, topic, raw, rawlen, errbuf, errlen)) != PW_OK)
		return st;
	const char *action = pw_action_name(route.action), *budget = "";
	char reason[4 * PW_PAGER_STR];
	snprintf(reason, sizeof reason, "%s", route.reason);
	if (old.exists) {
		char summary[512];
		pw_incident_summary(inc, summary, sizeof summary);
		if (changed || strcmp(summary, old.summary) != 0)
			st = page_write(k, inc, &route, &old, old.pressure, !inc->open, now, errbuf, errlen);
		action = "join";
		snprintf(reason, sizeof reason, "joins paged incident %.120s (page %.128s)", inc->incident_id, old.page_id);
	} else if (route.action == PW_ACT_PAGE) {
		pw_budget_usage u = {0};
		pw_budget_decision bd;
		if ((st = budget_usage(k->w->pg, k->a->group, &u, errbuf, errlen)) != PW_OK)
			return st;
		/* the budget's override weighs the event's spend impact, not only its headline's */
		pw_finding *bf = malloc(sizeof *bf);
		if (!bf)
			return PW_ERR_NOMEM;
		*bf = inc->primary;
		bf->spend_pct = inc->spend_pct;
		pw_budget_decide(&a->prm, &u, bf, &bd);
		free(bf);
		snprintf(reason, sizeof reason, "%s; %s", route.reason, bd.reason);
		if (bd.page) {
			budget = bd.used + 1 > a->prm.budget_per_week ? "override" : bd.pressure ? "pressure" : "within";
			st = page_write(k, inc, &route, &old, bd.pressure, false, now, errbuf, errlen);
			if (st == PW_OK)
				st = ticket_supersede(k, inc, errbuf, errlen);
		} else {
			budget = "queued";
			action = "queue";
		}
	} else if (route.action == PW_ACT_TICKET) {
		st = ticket_store(k, inc, &route, now, errbuf, errlen);
	} else if (route.action == PW_ACT_INFO) {
		st = notice_store(k, inc, &route, now, errbuf, errlen);
	}
	if (st != PW_OK)
		return st;
	char who[PW_PAGER_PART_KEY_MAX];
	snprintf(who, sizeof who, "%s", pt && pt->f.alert_id[0] && pt->f.revision ? pt->f.alert_id : pt ? pt->key : "-");
	st = decision_store(k, inc->incident_id, who, pt ? pt->f.revision : 0, action, budget, reason, errbuf,
	                    errlen);
	if (st == PW_OK)
		pw_log_debug(a->lg, "incident %s: %s (%s) %s", inc->incident_id, action, budget, reason);
	return st;
}

/* Folds every other open incident that turned out to be the same event into one; the paged one survives. */
static pw_status merge_events(worker *k, size_t *idx, int64_t now, char *errbuf, size_t errlen)
{
	for (size_t j = 0; j < k->n; j++) {
		if (j == *idx || !pw_incident_same_event(&k->incs[*idx], &k->incs[j]))
			continue;
		page_row pi, pj;
		pw_status st;
		if ((st = page_get(k->w->pg, k->incs[*idx].incident_id, &pi, errbuf, errlen)) != PW_OK ||
		    (st = page_get(k->w->pg, k->incs[j].incident_id, &pj, errbuf, errlen)) != PW_OK)
			return st;
		/* the survivor: the paged one; else a confirmed one over first signals; else the older one */
		bool fi = k->incs[*idx].primary.first_signal, fj = k->incs[j].primary.first_signal;
		size_t dst = pj.exists && !pi.exists ? j
		             : pi.exists              ? *idx
		             : fi != fj               ? (fi ? j : *idx)
		             : *idx < j               ? *idx
		                                      : j;
		size_t src = dst == *idx ? j : *idx;
		page_row *ps = src == j ? &pj : &pi;
		pw_incident *d = &k->incs[dst], *s = &k->incs[src];
		pw_log_info(k->a->lg, "incident %s is the same event as %s: folded into it", s->incident_id,
		            d->incident_id);
		bool changed = pw_incident_absorb(d, s); /* closes s */
		pw_pg_params q;
		pw_pg_params_init(&q);
		pw_pg_params_text(&q, s->incident_id);
		pw_pg_params_text(&q, d->incident_id);
		pw_pg_params qg;
		pw_pg_params_init(&qg);
		pw_pg_params_text(&qg, s->incident_id);
		pw_pg_params_text(&qg, d->incident_id);
		pw_pg_params_int(&qg, k->gen);
		if ((st = exec(k->w->pg, "UPDATE perfwatch.pager_incidents SET open = false, merged_into = $2,"
		                         " updated_at = now(), gen = $3 WHERE incident_id = $1", &qg, NULL, errbuf, errlen)) != PW_OK ||
		    (st = exec(k->w->pg, "UPDATE perfwatch.pager_parts SET incident_id = $2 WHERE incident_id = $1",
		               &q, NULL, errbuf, errlen)) != PW_OK)
			return st;
		if (ps->exists) { /* both paged: the folded one's page is resolved, the survivor's stays */
			pw_route r;
			pw_route_decide(&k->a->prm, &s->primary, &r);
			if ((st = page_write(k, s, &r, ps, ps->pressure, true, now, errbuf, errlen)) != PW_OK)
				return st;
		}
		if ((st = settle(k, d, NULL, NULL, NULL, 0, changed, now, errbuf, errlen)) != PW_OK)
			return st;
		inc_drop(k, src);
		*idx = inc_place(k, dst > src ? dst - 1 : dst); /* (absorbing may have made it older) */
		j = (size_t)-1; /* the survivor may now match others */
	}
	return PW_OK;
}

/*
 * Closes incidents nothing joined for pager.incident_window of wall-clock
 * time (updated_at; the findings' own times may be a replay's): a later
 * finding opens a new incident.
 */
static pw_status incidents_expire(worker *k, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_int(&q, k->a->prm.incident_window_us / 1000);
	pw_pg_params_text(&q, k->a->group);
	pw_pg_params_int(&q, k->gen);
	pw_status st = exec(k->w->pg,
	                    "UPDATE perfwatch.pager_incidents SET open = false, gen = $3 WHERE open AND pager_group = $2"
	                    " AND updated_at < now() - $1 * interval '1 millisecond' RETURNING incident_id",
	                    &q, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	for (int j = 0; j < PQntuples(r); j++)
		for (size_t i = 0; i < k->n; i++)
			if (strcmp(k->incs[i].incident_id, PQgetvalue(r, j, 0)) == 0) {
				pw_log_info(k->a->lg, "incident %s closed: nothing joined it within pager.incident_window",
				            k->incs[i].incident_id);
				inc_drop(k, i);
				break;
			}
	PQclear(r);
	return PW_OK;
}

/* One finding (alert, bisection, attribution, changepoint) inside the open transaction. */
static pw_status on_part(worker *k, pw_pager_part *pt, const char *topic, const void *raw, size_t rawlen, int64_t now,
                         const char **outcome, char *errbuf, size_t errlen)
{
	pw_status st;
	if (pt->opens && ((st = spend_of(k->w->pg, &pt->f, errbuf, errlen)) != PW_OK ||
	                  (st = gate_range(k->w->pg, &pt->f, errbuf, errlen)) != PW_OK))
		return st;
	long idx = pw_incident_find(&k->a->prm, k->incs, k->n, &pt->f);
	bool changed = true;
	if (idx < 0) {
		if (!pt->opens) {
			*outcome = "unmatched"; /* a part of no open incident (its alert was never seen or closed) */
			return PW_OK;
		}
		if ((st = worker_grow(k)) != PW_OK)
			return st;
		char id[PW_PAGER_STR];
		snprintf(id, sizeof id, "inc-%.120s", pt->f.alert_id);
		pw_incident_open(&k->incs[k->n], id, &pt->f);
		if (k->incs[k->n].opened_us <= 0)
			k->incs[k->n].opened_us = k->incs[k->n].last_us = now;
		idx = (long)inc_place(k, k->n++);
		*outcome = "opened";
	} else {
		changed = pw_incident_add(&k->incs[idx], &pt->f);
		*outcome = "joined";
	}
	if ((st = settle(k, &k->incs[idx], pt, topic, raw, rawlen, changed, now, errbuf, errlen)) != PW_OK)
		return st;
	size_t i = (size_t)idx;
	return merge_events(k, &i, now, errbuf, errlen);
}


/* "model/hlo/platform/config/metric" into f's series fields (the model may itself hold a '/'). */
static void series_from_key(pw_finding *f, const char *key)
{
	char buf[2 * PW_PAGER_STR];
	char *cut[4];
	copy(buf, sizeof buf, key);
	copy(f->series_key, sizeof f->series_key, key);
	for (int i = 0; i < 4; i++) {
		cut[i] = strrchr(buf, '/');
		if (!cut[i])
			return;
		*cut[i] = 0;
	}
	const int w = PW_PAGER_STR - 1; /* every part is cut at the field's size */
	snprintf(f->model, sizeof f->model, "%.*s", w, buf);
	snprintf(f->hlo_fingerprint, sizeof f->hlo_fingerprint, "%.*s", w, cut[3] + 1);
	snprintf(f->platform, sizeof f->platform, "%.*s", w, cut[2] + 1);
	snprintf(f->config, sizeof f->config, "%.*s", w, cut[1] + 1);
	snprintf(f->metric, sizeof f->metric, "%.*s", w, cut[0] + 1);
}

/* Which validated series heads the win's notice: median latency first, as a page's headline. */
static int win_rank(const Perfwatch__V1__GateSeriesResult *s)
{
	const char *m = strrchr(s->series_key, '/');
	m = m ? m + 1 : s->series_key;
	return strncmp(m, "tpot_p50", 8) == 0 ? 3 : strncmp(m, "ttft_p50", 8) == 0 ? 2 : strncmp(m, "tpot_", 5) == 0 ? 1 : 0;
}

/*
 * A family the gate validated as a registered win (the gate raises no Alert
 * for it): an info incident of its own, closed at once (nothing joins a
 * win), with its decision and the info notice to the compiler team — once
 * per release and family.
 */
static pw_status win_notice(worker *k, const Perfwatch__V1__GateVerdict *v, const Perfwatch__V1__FamilyVerdict *fv,
                            int64_t now, char *errbuf, size_t errlen)
{
	const Perfwatch__V1__GateSeriesResult *best = NULL;
	for (size_t i = 0; i < v->n_series; i++) {
		const Perfwatch__V1__GateSeriesResult *s = v->series[i];
		if (s->verdict != PERFWATCH__V1__VERDICT__VERDICT_VALIDATED_WIN || !s->series_key || !s->family ||
		    strcmp(s->family, fv->family) != 0)
			continue;
		if (!best || win_rank(s) > win_rank(best))
			best = s;
	}
	pw_incident *inc = calloc(1, sizeof *inc);
	if (!inc)
		return PW_ERR_NOMEM;
	pw_finding f;
	memset(&f, 0, sizeof f);
	snprintf(f.alert_id, sizeof f.alert_id, "gate-win-%.60s-e%" PRIu32 "-%.50s", v->release_id, v->evaluation,
	         fv->family);
	f.revision = 1;
	f.kind = PW_FIND_IMPROVEMENT;
	f.from_gate = true;
	f.created_us = v->evaluated_unix_us ? v->evaluated_unix_us : now;
	copy(f.model, sizeof f.model, fv->family);
	if (best) {
		series_from_key(&f, best->series_key);
		copy(f.model, sizeof f.model, fv->family);
		f.base_median = best->baseline_median;
		f.base_mad = best->baseline_mad_n;
		f.base_n = best->baseline_n;
		f.obs_median = best->candidate_median;
		f.obs_n = best->candidate_n;
		f.delta_abs = best->candidate_median - best->baseline_median;
		copy(f.abs_unit, sizeof f.abs_unit, best->unit);
		f.delta_pct = best->delta_pct;
		f.z_robust = best->baseline_mad_n > 0 ? f.delta_abs / best->baseline_mad_n : 0;
		f.fdr_q = best->q;
		f.mde_pct = best->mde_pct;
	}
	f.passed_min_effect = true;
	copy(f.obs_release, sizeof f.obs_release, v->candidate_build_id);
	copy(f.base_window, sizeof f.base_window, v->baseline_release);
	copy(f.release_id, sizeof f.release_id, v->release_id);
	f.verdict = PW_FV_VALIDATED_WIN;
	f.top_tier = fv->tier == PERFWATCH__V1__TIER__TIER_TOP;
	char id[PW_PAGER_STR];
	snprintf(id, sizeof id, "inc-win-%.60s-%.50s", v->release_id, fv->family);
	pw_incident_open(inc, id, &f);
	inc->open = false;
	pw_route route;
	pw_route_decide(&k->a->prm, &inc->primary, &route);
	pw_status st = incident_store(k, inc, &route, NULL, now, errbuf, errlen);
	if (st == PW_OK)
		st = decision_store(k, inc->incident_id, f.alert_id, 1, pw_action_name(route.action), "", route.reason,
		                    errbuf, errlen);
	if (st == PW_OK && route.action == PW_ACT_INFO)
		st = notice_store(k, inc, &route, now, errbuf, errlen);
	free(inc);
	return st;
}

/* A gate verdict: spend impact for the release's incidents; a family that now passes resolves its incident. */
static pw_status on_gate(worker *k, const Perfwatch__V1__GateVerdict *v, int64_t now, const char **outcome,
                         char *errbuf, size_t errlen)
{
	*outcome = "unmatched";
	pw_status est = evaluation_store(k, v, errbuf, errlen);
	if (est != PW_OK)
		return est;
	for (size_t fi = 0; fi < v->n_families; fi++) {
		const Perfwatch__V1__FamilyVerdict *fv = v->families[fi];
		if (!fv->family)
			continue;
		if (fv->verdict == PERFWATCH__V1__VERDICT__VERDICT_VALIDATED_WIN) {
			pw_status st = win_notice(k, v, fv, now, errbuf, errlen);
			if (st != PW_OK)
				return st;
			*outcome = "info";
		}
		for (size_t i = 0; i < k->n; i++) {
			pw_incident *inc = &k->incs[i];
			/* the family the page is about is its primary's (the incident's key is its opener's) */
			if (strcmp(inc->release_id, v->release_id) != 0 || strcmp(inc->primary.model, fv->family) != 0)
				continue;
			*outcome = "joined";
			bool changed = false;
			if (fv->spend_weighted_impact_pct > inc->spend_pct) {
				inc->spend_pct = fv->spend_weighted_impact_pct;
				changed = true;
			}
			bool passes = fv->verdict == PERFWATCH__V1__VERDICT__VERDICT_PASS ||
			              fv->verdict == PERFWATCH__V1__VERDICT__VERDICT_WAIVED ||
			              fv->verdict == PERFWATCH__V1__VERDICT__VERDICT_VALIDATED_WIN;
			if (passes && (inc->primary.verdict == PW_FV_BLOCKING || inc->primary.verdict == PW_FV_P1)) {
				inc->open = false;
				changed = true;
				*outcome = "resolved";
				pw_log_info(k->a->lg, "incident %s resolved: %s evaluation %" PRIu32 " gives %s %s",
				            inc->incident_id, v->release_id, v->evaluation, fv->family,
				            pw_find_verdict_name((pw_find_verdict)fv->verdict));
			}
			if (!changed)
				continue;
			pw_status st = settle(k, inc, NULL, NULL, NULL, 0, true, now, errbuf, errlen);
			if (st != PW_OK)
				return st;
			if (!inc->open) {
				pw_pg_params q;
				pw_pg_params_init(&q);
				pw_pg_params_text(&q, inc->incident_id);
				if ((st = exec(k->w->pg, "UPDATE perfwatch.pager_incidents SET resolved_at = now()"
				                         " WHERE incident_id = $1", &q, NULL, errbuf, errlen)) != PW_OK)
					return st;
				inc_drop(k, i);
				i--;
			}
		}
	}
	return PW_OK;
}

/*
 * A decision of the production canary (perf.rollouts.v1). A ROLLBACK is an
 * incident of its own, "inc-" + its alert id (pw_rollback_incident_id: one
 * per rollout and family), closed at once so that nothing joins it, and ONE
 * page: critical to the triage rotation, owner by the routing rules, outside
 * the false-page budget's queue (the serving pointer flipped already: on-call
 * must know; the page still counts in the week's budget and says when it is
 * under pressure). Its part is stored, so a redelivery finds it and pages
 * nothing (on_message checks the key first). PROMOTE, HOLD, PINNED and
 * PIN_EXPIRED page nobody (a pin is a signed-off waiver; its expiry has its
 * own alert, PerfwatchCanaryPinExpired).
 */
static pw_status on_rollout(worker *k, const pw_pager_part *pt, const void *raw, size_t rawlen, int64_t now,
                            const char **outcome, char *errbuf, size_t errlen)
{
	if (pt->f.kind != PW_FIND_ROLLBACK) {
		*outcome = pw_rollout_outcome(pt->f.rollback.decision);
		return PW_OK;
	}
	pw_incident *inc = calloc(1, sizeof *inc);
	if (!inc)
		return PW_ERR_NOMEM;
	char id[PW_PAGER_STR];
	snprintf(id, sizeof id, "inc-%.*s", PW_PAGER_STR - 8, pt->f.alert_id);
	pw_incident_open(inc, id, &pt->f);
	if (inc->opened_us <= 0)
		inc->opened_us = inc->last_us = now;
	inc->open = false;
	pw_route route;
	pw_route_decide(&k->a->prm, &inc->primary, &route);
	page_row old;
	pw_budget_usage u = {0};
	pw_budget_decision bd = {0};
	char reason[4 * PW_PAGER_STR];
	pw_status st = page_get(k->w->pg, inc->incident_id, &old, errbuf, errlen);
	if (st == PW_OK)
		st = budget_usage(k->w->pg, k->a->group, &u, errbuf, errlen);
	bool stale = pw_rollback_stale(&k->a->prm, &inc->primary, now);
	if (st == PW_OK) {
		pw_budget_decide(&k->a->prm, &u, &inc->primary, &bd);
		if (stale)
			snprintf(reason, sizeof reason, "%s; not paged: decided %.1f h before it was consumed (pager.rollout.max_age)",
			         route.reason, (double)(now - inc->primary.created_us) / 3.6e9);
		else
			snprintf(reason, sizeof reason, "%s; pages whatever the budget (%s)", route.reason, bd.reason);
		st = incident_store(k, inc, &route, pt, now, errbuf, errlen);
	}
	if (st == PW_OK)
		st = part_store(k, inc->incident_id, pt, PW_TOPIC_ROLLOUTS, raw, rawlen, errbuf, errlen);
	if (st == PW_OK && !old.exists && !stale)
		st = page_write(k, inc, &route, &old, bd.pressure || !bd.page, false, now, errbuf, errlen);
	if (st == PW_OK)
		st = decision_store(k, inc->incident_id, pt->f.alert_id, 0, stale ? "queue" : pw_action_name(route.action),
		                    stale ? "" : !bd.page ? "override" : bd.pressure ? "pressure" : "within", reason, errbuf,
		                    errlen);
	if (st == PW_OK && stale)
		pw_log_info(k->a->lg, "rollback %s not paged: %s", pt->f.alert_id, reason);
	if (st == PW_OK)
		*outcome = stale ? "stale" : "opened";
	free(inc);
	return st;
}

/* Whether part_key was consumed before (a redelivery). */
static pw_status part_seen(pw_pg *pg, const char *key, bool *seen, char *errbuf, size_t errlen)
{
	pw_pg_params q;
	PGresult *r = NULL;
	pw_pg_params_init(&q);
	pw_pg_params_text(&q, key);
	pw_status st = exec(pg, "SELECT 1 FROM perfwatch.pager_parts WHERE part_key = $1", &q, &r, errbuf, errlen);
	if (st == PW_OK)
		*seen = PQntuples(r) > 0;
	PQclear(r);
	return st;
}

static pw_status dead(worker *k, const rd_kafka_message_t *m, const char *type, Perfwatch__V1__DlqReason reason,
                      const char *detail, char *errbuf, size_t errlen)
{
	pw_log_warn(k->a->lg, "dead-lettered %s at %s[%" PRId32 "]@%" PRId64 ": %s", type, rd_kafka_topic_name(m->rkt),
	            m->partition, m->offset, detail);
	return pw_service_dead_letter(k->w, m, type, reason, detail, errbuf, errlen);
}

static pw_status on_message(worker *k, const rd_kafka_message_t *m, int64_t now, char *errbuf, size_t errlen)
{
	const char *topic = rd_kafka_topic_name(m->rkt);
	pw_pager_in kind = pw_pager_in_of(topic);
	const char *type = type_of(kind);
	char why[512];
	const char *outcome = "ignored";
	pw_pager_part pt;
	Perfwatch__V1__GateVerdict *gv = NULL;
	Perfwatch__V1__DlqReason reason = pw_pager_door(kind, m->payload, m->len, &pt, &gv, why, sizeof why);
	if (reason != PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED)
		return dead(k, m, type, reason, why, errbuf, errlen);

	pw_status st = state_begin(k, errbuf, errlen);
	if (st != PW_OK)
		goto out;
	if (kind == PW_PAGER_IN_GATE)
		st = on_gate(k, gv, now, &outcome, errbuf, errlen);
	else {
		bool seen = false;
		st = part_seen(k->w->pg, pt.key, &seen, errbuf, errlen);
		if (st == PW_OK && seen)
			outcome = "duplicate";
		else if (st == PW_OK && kind == PW_PAGER_IN_ROLLOUT)
			st = on_rollout(k, &pt, m->payload, m->len, now, &outcome, errbuf, errlen);
		else if (st == PW_OK)
			st = on_part(k, &pt, topic, m->payload, m->len, now, &outcome, errbuf, errlen);
	}
	if (st == PW_OK)
		st = holds_release(k, errbuf, errlen);
	if (st == PW_OK)
		st = state_commit(k, errbuf, errlen);
	else
		pw_pg_rollback(k->w->pg, NULL, 0);
	if (st != PW_OK) {
		k->loaded = false; /* memory may be ahead of the database: rebuild before the next message */
		if (!retriable(st)) {
			char detail[768];
			snprintf(detail, sizeof detail, "%s", errbuf);
			st = dead(k, m, type, PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED, detail, errbuf, errlen);
		}
	}
out:
	if (gv)
		perfwatch__v1__gate_verdict__free_unpacked(gv, NULL);
	if (st == PW_OK)
		pw_metric_inc(k->a->m_findings, (const char *const[]){topic, outcome});
	return st;
}

pw_status pw_pager_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf, size_t errlen)
{
	worker *k = ctx;
	int64_t now = pw_now_us();
	pw_status st;
	for (size_t i = 0; i < n; i++)
		if ((st = on_message(k, msgs[i], now, errbuf, errlen)) != PW_OK)
			return st; /* retriable: the batch is redone; consumed parts are skipped by their key */
	if ((st = state_begin(k, errbuf, errlen)) != PW_OK)
		return st;
	if ((st = incidents_expire(k, errbuf, errlen)) == PW_OK)
		st = state_commit(k, errbuf, errlen);
	if (st != PW_OK) {
		pw_pg_rollback(k->w->pg, NULL, 0);
		k->loaded = false;
		return st;
	}
	pw_metric_set(k->a->m_open, NULL, (double)k->n);
	return PW_OK;
}

/* ---- delivery (the tick) ----------------------------------------------------------------- */

static void delivery_record(pw_pg *pg, int subject, const char *id, const char *target, int version, bool ok,
                            int code, const char *err, const pw_log *lg)
{
	/* a page's (page_id, 0), a ticket's (ticket_id, 1) or a notice's (notice_id, 2) delivery attempt */
	static const char *const sql[3] = {
		"INSERT INTO perfwatch.pager_deliveries (page_id, target, version, ok, http_status, error)"
		" VALUES ($1, $2, $3, $4, $5, $6)",
		"INSERT INTO perfwatch.pager_deliveries (ticket_id, target, version, ok, http_status, error)"
		" VALUES ($1, $2, $3, $4, $5, $6)",
		"INSERT INTO perfwatch.pager_deliveries (notice_id, target, version, ok, http_status, error)"
		" VALUES ($1, $2, $3, $4, $5, $6)",
	};
	char e[256];
	pw_pg_params q;
	pw_pg_params_init(&q);
	pw_pg_params_text(&q, id);
	pw_pg_params_text(&q, target);
	pw_pg_params_int(&q, version);
	pw_pg_params_bool(&q, ok);
	pw_pg_params_int(&q, code);
	pw_pg_params_text(&q, err);
	if (exec(pg, sql[subject], &q, NULL, e, sizeof e) != PW_OK)
		pw_log_warn(lg, "recording the delivery of %s to %s: %s", id, target, e);
}

static pw_status deliver_pages(app *a, pw_service_worker *w, int64_t *next_ms, char *errbuf, size_t errlen)
{
	bool am = a->am_url[0] != 0, wh = a->webhook_url[0] != 0;
	if (!am && !wh)
		return PW_OK;
	PGresult *r = NULL;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_bool(&p, am);
	pw_pg_params_bool(&p, wh);
	pw_pg_params_int(&p, a->resend_ms);
	pw_pg_params_text(&p, a->group);
	pw_pg_params_int(&p, 2 * a->post_timeout_ms + 10000);
	/* one page at a time, claimed for as long as its two posts may take (claimed_until): the
	 * replicas of a deployment never post one page at once, and one that dies mid-post leaves
	 * it to the others when the claim lapses */
	static const char claim_sql[] =
	                    "UPDATE perfwatch.pages SET claimed_until = now() + $5 * interval '1 millisecond'"
	                    " WHERE page_id = (SELECT page_id FROM perfwatch.pages WHERE incident_id IS NOT NULL AND pager_group = $4"
	                    "  AND coalesce(next_attempt_at, '-infinity') <= now() AND coalesce(hold_until, '-infinity') <= now()"
	                    "  AND coalesce(claimed_until, '-infinity') <= now()"
	                    "  AND (($1 AND am_version < version) OR ($2 AND webhook_version < version)"
	                    "       OR ($1 AND resolved_at IS NULL AND am_sent_at < now() - $3 * interval '1 millisecond'))"
	                    "  ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)"
	                    " RETURNING page_id, version, am_version, webhook_version, am_body, webhook_body, severity,"
	                    " delivery_attempts, delivered_at IS NULL, resolved_at IS NULL,"
	                    " coalesce(am_sent_at < now() - $3 * interval '1 millisecond', true),"
	                    " extract(epoch FROM now() - created_at),"
	                    " coalesce((nullif(am_body, '')::jsonb -> 0 -> 'labels')::text, ''), am_labels,"
	                    " am_labels <> '' AND am_labels::jsonb IS DISTINCT FROM nullif(am_body, '')::jsonb -> 0 -> 'labels',"
	                    " coalesce(nullif(am_body, '')::jsonb -> 0 ->> 'startsAt', ''), hold_until IS NOT NULL,"
	                    " coalesce((nullif(am_body, '')::jsonb -> 0 -> 'annotations')::text, ''), am_annotations";
	pw_status st = PW_OK;
	char am_url[600];
	snprintf(am_url, sizeof am_url, "%s/api/v2/alerts", a->am_url);
	for (int n = 0; n < 32 && !pw_service_stopping(a->svc); n++) {
		PQclear(r);
		r = NULL;
		if ((st = exec(w->pg, claim_sql, &p, &r, errbuf, errlen)) != PW_OK)
			goto out;
		if (PQntuples(r) == 0)
			break;
		const int i = 0;
		const char *id = PQgetvalue(r, i, 0);
		int version = atoi(PQgetvalue(r, i, 1)), amv = atoi(PQgetvalue(r, i, 2)), whv = atoi(PQgetvalue(r, i, 3));
		const char *sev = PQgetvalue(r, i, 6);
		int attempts = atoi(PQgetvalue(r, i, 7));
		bool first = PQgetvalue(r, i, 8)[0] == 't', active = PQgetvalue(r, i, 9)[0] == 't';
		bool resend = PQgetvalue(r, i, 10)[0] == 't';
		bool ok_am = true, ok_wh = true;
		if (PQgetvalue(r, i, 16)[0] == 't') {
			/* held for the rest of its event past pager.page.hold_max: delivered as it stands */
			pw_pg_params q;
			pw_pg_params_init(&q);
			pw_pg_params_text(&q, id);
			if ((st = exec(w->pg, "UPDATE perfwatch.pages SET hold_until = NULL WHERE page_id = $1", &q, NULL, errbuf,
			               errlen)) != PW_OK)
				goto out;
			pw_log_warn(a->lg, "page %s: the gate verdicts of its alerts (or alerts they name) did not arrive within "
			                   "pager.page.hold_max: delivered without them", id);
		}
		char err[512] = "";
		int code = 0;
		if (am && (amv < version || (active && resend))) {
			const char *body = PQgetvalue(r, i, 4), *labels = PQgetvalue(r, i, 12);
			char *both = NULL;
			if (PQgetvalue(r, i, 14)[0] == 't' && body[0] == '[') {
				/* the page's labels changed (high -> critical when the gate's verdict joined): the old
				 * label set is another alert to Alertmanager, resolved now with the new one's post */
				char ends[40];
				pw_rfc3339(pw_now_us(), ends, sizeof ends);
				/* (with the annotations on-call saw: its summary, owner and link) */
				const char *starts = PQgetvalue(r, i, 15), *ann = PQgetvalue(r, i, 18);
				size_t n = strlen(body) + strlen(PQgetvalue(r, i, 13)) + strlen(ann) + 180;
				if (!(both = malloc(n))) {
					st = PW_ERR_NOMEM;
					goto out;
				}
				snprintf(both, n, "[{\"labels\":%s,%s%s%s%s%s%s\"endsAt\":\"%s\"},%s", PQgetvalue(r, i, 13),
				         ann[0] ? "\"annotations\":" : "", ann, ann[0] ? "," : "",
				         starts[0] ? "\"startsAt\":\"" : "", starts, starts[0] ? "\"," : "", ends, body + 1);
				pw_log_info(a->lg, "page %s: labels changed, resolving the old label set %s", id, PQgetvalue(r, i, 13));
				body = both;
			}
			ok_am = pager_http_post(am_url, "application/json", body, strlen(body), NULL, (int)a->post_timeout_ms,
			                        &code, err, sizeof err) == PW_OK;
			free(both);
			delivery_record(w->pg, 0, id, "alertmanager", version, ok_am, code, err, a->lg);
			pw_metric_inc(a->m_deliveries, (const char *const[]){"alertmanager", ok_am ? "ok" : "failed"});
			if (ok_am) {
				pw_pg_params q;
				pw_pg_params_init(&q);
				pw_pg_params_text(&q, id);
				pw_pg_params_int(&q, version);
				pw_pg_params_text(&q, labels);
				pw_pg_params_text(&q, PQgetvalue(r, i, 17));
				if ((st = exec(w->pg, "UPDATE perfwatch.pages SET am_version = greatest(am_version, $2),"
				                      " am_sent_at = now(), am_labels = $3, am_annotations = $4 WHERE page_id = $1", &q,
				               NULL, errbuf,
				               errlen)) != PW_OK)
					goto out;
			}
		}
		if (wh && whv < version) {
			const char *body = PQgetvalue(r, i, 5);
			char hdr[300];
			snprintf(hdr, sizeof hdr, "Idempotency-Key: %.200s/v%d", id, version);
			char e2[512] = "";
			ok_wh = pager_http_post(a->webhook_url, "application/json", body, strlen(body), hdr,
			                        (int)a->post_timeout_ms, &code, e2, sizeof e2) == PW_OK;
			if (!ok_wh)
				snprintf(err + strlen(err), sizeof err - strlen(err), "%swebhook: %s", err[0] ? "; " : "", e2);
			delivery_record(w->pg, 0, id, "webhook", version, ok_wh, code, e2, a->lg);
			pw_metric_inc(a->m_deliveries, (const char *const[]){"webhook", ok_wh ? "ok" : "failed"});
			if (ok_wh) {
				pw_pg_params q;
				pw_pg_params_init(&q);
				pw_pg_params_text(&q, id);
				pw_pg_params_int(&q, version);
				if ((st = exec(w->pg, "UPDATE perfwatch.pages SET webhook_version = greatest(webhook_version, $2)"
				                      " WHERE page_id = $1", &q, NULL, errbuf, errlen)) != PW_OK)
					goto out;
			}
		}
		pw_pg_params q;
		pw_pg_params_init(&q);
		pw_pg_params_text(&q, id);
		if (ok_am && ok_wh) {
			PGresult *u = NULL;
			st = exec(w->pg,
			          "UPDATE perfwatch.pages SET delivery_status = 'delivered', delivered_at = coalesce(delivered_at, now()),"
			          " delivery_attempts = delivery_attempts + 1, last_error = '', next_attempt_at = NULL,"
			          " claimed_until = NULL"
			          " WHERE page_id = $1 RETURNING extract(epoch FROM delivered_at - created_at)",
			          &q, &u, errbuf, errlen);
			if (st != PW_OK)
				goto out;
			if (first) {
				pw_metric_inc(a->m_pages, (const char *const[]){sev});
				double s = PQntuples(u) == 1 ? strtod(PQgetvalue(u, 0, 0), NULL) : 0;
				pw_metric_observe(a->m_to_page, NULL, s);
				pw_log_info(a->lg, "page %s delivered (%s), %.3f s after it was raised", id, sev, s);
			}
			PQclear(u);
		} else {
			uint32_t wait = pw_backoff_ceiling((uint32_t)a->backoff_ms, (uint32_t)a->backoff_max_ms,
			                                   (uint32_t)attempts);
			pw_pg_params_int(&q, wait);
			pw_pg_params_text(&q, err);
			st = exec(w->pg,
			          "UPDATE perfwatch.pages SET delivery_attempts = delivery_attempts + 1, claimed_until = NULL,"
			          " next_attempt_at = now() + $2 * interval '1 millisecond', last_error = $3,"
			          " delivery_status = CASE WHEN delivered_at IS NULL THEN 'pending' ELSE delivery_status END"
			          " WHERE page_id = $1",
			          &q, NULL, errbuf, errlen);
			if (st != PW_OK)
				goto out;
			pw_log_warn(a->lg, "page %s: delivery attempt %d failed, next in %" PRIu32 " ms: %s", id, attempts + 1,
			            wait, err);
			if ((int64_t)wait < *next_ms)
				*next_ms = wait;
		}
	}
out:
	PQclear(r);
	return st;
}

/* Info notices: each posted to Alertmanager and the webhook until acknowledged, once. */
static pw_status deliver_notices(app *a, pw_service_worker *w, int64_t *next_ms, char *errbuf, size_t errlen)
{
	bool am = a->am_url[0] != 0, wh = a->webhook_url[0] != 0;
	if (!am && !wh)
		return PW_OK;
	PGresult *r = NULL;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_bool(&p, am);
	pw_pg_params_bool(&p, wh);
	pw_pg_params_text(&p, a->group);
	pw_pg_params_int(&p, 2 * a->post_timeout_ms + 10000);
	static const char claim_sql[] = /* one at a time, claimed: as deliver_pages */
	                    "UPDATE perfwatch.pager_notices SET claimed_until = now() + $4 * interval '1 millisecond'"
	                    " WHERE notice_id = (SELECT notice_id FROM perfwatch.pager_notices"
	                    "  WHERE (($1 AND am_delivered_at IS NULL) OR ($2 AND webhook_delivered_at IS NULL))"
	                    "   AND pager_group = $3 AND coalesce(next_attempt_at, '-infinity') <= now()"
	                    "   AND coalesce(claimed_until, '-infinity') <= now() ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)"
	                    " RETURNING notice_id, am_body, webhook_body, $1 AND am_delivered_at IS NULL,"
	                    " $2 AND webhook_delivered_at IS NULL, delivery_attempts";
	pw_status st = PW_OK;
	char am_url[600];
	snprintf(am_url, sizeof am_url, "%s/api/v2/alerts", a->am_url);
	for (int n = 0; n < 32 && st == PW_OK && !pw_service_stopping(a->svc); n++) {
		PQclear(r);
		r = NULL;
		if ((st = exec(w->pg, claim_sql, &p, &r, errbuf, errlen)) != PW_OK || PQntuples(r) == 0)
			break;
		const int i = 0;
		const char *id = PQgetvalue(r, i, 0);
		bool ok_am = true, ok_wh = true;
		char err[512] = "", e2[512] = "", hdr[300];
		int code = 0;
		if (PQgetvalue(r, i, 3)[0] == 't') {
			const char *body = PQgetvalue(r, i, 1);
			ok_am = pager_http_post(am_url, "application/json", body, strlen(body), NULL, (int)a->post_timeout_ms,
			                        &code, err, sizeof err) == PW_OK;
			delivery_record(w->pg, 2, id, "alertmanager", 1, ok_am, code, err, a->lg);
			pw_metric_inc(a->m_deliveries, (const char *const[]){"alertmanager", ok_am ? "ok" : "failed"});
		}
		if (PQgetvalue(r, i, 4)[0] == 't') {
			const char *body = PQgetvalue(r, i, 2);
			snprintf(hdr, sizeof hdr, "Idempotency-Key: %.200s", id);
			ok_wh = pager_http_post(a->webhook_url, "application/json", body, strlen(body), hdr,
			                        (int)a->post_timeout_ms, &code, e2, sizeof e2) == PW_OK;
			delivery_record(w->pg, 2, id, "webhook", 1, ok_wh, code, e2, a->lg);
			pw_metric_inc(a->m_deliveries, (const char *const[]){"webhook", ok_wh ? "ok" : "failed"});
		}
		uint32_t wait = pw_backoff_ceiling((uint32_t)a->backoff_ms, (uint32_t)a->backoff_max_ms,
		                                   (uint32_t)atoi(PQgetvalue(r, i, 5)));
		pw_pg_params q;
		pw_pg_params_init(&q);
		pw_pg_params_text(&q, id);
		pw_pg_params_bool(&q, ok_am && PQgetvalue(r, i, 3)[0] == 't');
		pw_pg_params_bool(&q, ok_wh && PQgetvalue(r, i, 4)[0] == 't');
		pw_pg_params_bool(&q, ok_am && ok_wh);
		pw_pg_params_int(&q, wait);
		char both[1100];
		snprintf(both, sizeof both, "%s%s%s", err, err[0] && e2[0] ? "; webhook: " : "", e2);
		pw_pg_params_text(&q, both);
		st = exec(w->pg,
		          "UPDATE perfwatch.pager_notices SET delivery_attempts = delivery_attempts + 1, claimed_until = NULL,"
		          " am_delivered_at = CASE WHEN $2 THEN now() ELSE am_delivered_at END,"
		          " webhook_delivered_at = CASE WHEN $3 THEN now() ELSE webhook_delivered_at END,"
		          " next_attempt_at = CASE WHEN $4 THEN NULL ELSE now() + $5 * interval '1 millisecond' END,"
		          " last_error = $6 WHERE notice_id = $1",
		          &q, NULL, errbuf, errlen);
		if (st == PW_OK && ok_am && ok_wh)
			pw_log_info(a->lg, "notice %s delivered (info)", id);
		else if (st == PW_OK) {
			pw_log_warn(a->lg, "notice %s: delivery failed, next in %" PRIu32 " ms: %s", id, wait, both);
			if ((int64_t)wait < *next_ms)
				*next_ms = wait;
		}
	}
	PQclear(r);
	return st;
}

static pw_status deliver_tickets(app *a, pw_service_worker *w, char *errbuf, size_t errlen)
{
	if (!a->ticket_url[0])
		return PW_OK;
	PGresult *r = NULL;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, a->group);
	pw_pg_params_int(&p, a->post_timeout_ms + 10000);
	static const char claim_sql[] = /* one at a time, claimed: as deliver_pages */
	                    "UPDATE perfwatch.pager_tickets SET claimed_until = now() + $2 * interval '1 millisecond'"
	                    " WHERE ticket_id = (SELECT ticket_id FROM perfwatch.pager_tickets"
	                    "  WHERE delivery_status IN ('pending', 'failed') AND pager_group = $1"
	                    "   AND coalesce(next_attempt_at, '-infinity') <= now() AND coalesce(claimed_until, '-infinity') <= now()"
	                    "   AND coalesce(hold_until, '-infinity') <= now()"
	                    "  ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)"
	                    " RETURNING ticket_id, json_build_object('ticket_id', ticket_id, 'incident', incident_id,"
	                    " 'route', route, 'summary', summary, 'payload', payload)::text, delivery_attempts";
	pw_status st = PW_OK;
	for (int n = 0; n < 16 && st == PW_OK && !pw_service_stopping(a->svc); n++) {
		PQclear(r);
		r = NULL;
		if ((st = exec(w->pg, claim_sql, &p, &r, errbuf, errlen)) != PW_OK || PQntuples(r) == 0)
			break;
		const int i = 0;
		const char *id = PQgetvalue(r, i, 0), *body = PQgetvalue(r, i, 1);
		char err[512] = "", hdr[300];
		int code = 0;
		snprintf(hdr, sizeof hdr, "Idempotency-Key: %.200s", id);
		bool ok = pager_http_post(a->ticket_url, "application/json", body, strlen(body), hdr, (int)a->post_timeout_ms,
		                          &code, err, sizeof err) == PW_OK;
		delivery_record(w->pg, 1, id, "ticket", 1, ok, code, err, a->lg);
		pw_metric_inc(a->m_deliveries, (const char *const[]){"ticket", ok ? "ok" : "failed"});
		pw_pg_params q;
		pw_pg_params_init(&q);
		pw_pg_params_text(&q, id);
		pw_pg_params_int(&q, pw_backoff_ceiling((uint32_t)a->backoff_ms, (uint32_t)a->backoff_max_ms,
		                                        (uint32_t)atoi(PQgetvalue(r, i, 2))));
		st = exec(w->pg,
		          ok ? "UPDATE perfwatch.pager_tickets SET delivery_status = 'delivered', delivered_at = now(),"
		               " delivery_attempts = delivery_attempts + 1, claimed_until = NULL WHERE ticket_id = $1 AND $2::int >= 0"
		             : "UPDATE perfwatch.pager_tickets SET delivery_attempts = delivery_attempts + 1, claimed_until = NULL,"
		               " next_attempt_at = now() + $2 * interval '1 millisecond' WHERE ticket_id = $1",
		          &q, NULL, errbuf, errlen);
	}
	PQclear(r);
	return st;
}

/*
 * §8: "false-page rate > budget for two consecutive months forces a
 * threshold/noise-floor review". From the report card (report_card_monthly),
 * with the pager's own budget (pager.budget_per_week x days of the month / 7):
 * a month whose false pages exceeded its budget, as did the previous month's,
 * is recorded once in pager_threshold_reviews and delivered as an info notice
 * to the detector team. One transaction.
 */
static pw_status threshold_review(app *a, pw_service_worker *w, char *errbuf, size_t errlen)
{
	PGresult *r = NULL;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_double(&p, a->prm.budget_per_week);
	pw_status st = pw_pg_begin(w->pg, errbuf, errlen);
	if (st != PW_OK)
		return st;
	st = exec(w->pg,
	          "WITH m AS (SELECT month, false_pages, $1::numeric * extract(day FROM (month + interval '1 month' - month))"
	          "  / 7.0 AS budget FROM perfwatch.report_card_monthly)"
	          " INSERT INTO perfwatch.pager_threshold_reviews (month, false_pages, prev_false_pages, budget, prev_budget,"
	          "  budget_per_week, finding)"
	          " SELECT cur.month::date, cur.false_pages, prev.false_pages, cur.budget, prev.budget, $1,"
	          "  'false pages over budget two months running (' || prev.false_pages || ' then ' || cur.false_pages ||"
	          "  ' against ' || round(cur.budget, 1) || '): review thresholds and noise floors'"
	          "  FROM m cur JOIN m prev ON prev.month = cur.month - interval '1 month'"
	          " WHERE cur.false_pages > cur.budget AND prev.false_pages > prev.budget"
	          " ON CONFLICT (month) DO NOTHING"
	          " RETURNING to_char(month, 'YYYY-MM'), finding, false_pages, prev_false_pages, budget, prev_budget",
	          &p, &r, errbuf, errlen);
	int64_t now = pw_now_us();
	for (int i = 0; st == PW_OK && i < PQntuples(r); i++) {
		const char *month = PQgetvalue(r, i, 0), *finding = PQgetvalue(r, i, 1);
		char id[64], summary[600], payload[600];
		snprintf(id, sizeof id, "nt-review-%s", month);
		snprintf(summary, sizeof summary, "threshold review %s: %s", month, finding);
		snprintf(payload, sizeof payload,
		         "{\"month\":\"%s\",\"false_pages\":%s,\"prev_false_pages\":%s,\"budget\":%s,\"prev_budget\":%s,"
		         "\"budget_per_week\":%g}",
		         month, PQgetvalue(r, i, 2), PQgetvalue(r, i, 3), PQgetvalue(r, i, 4), PQgetvalue(r, i, 5),
		         a->prm.budget_per_week);
		pw_notice n = {.notice_id = id, .incident_id = "", .kind = "threshold_review", .route = a->route_detector,
		               .owner = "detector", .summary = summary, .payload = payload};
		st = notice_put(w->pg, a, &n, now, errbuf, errlen);
		if (st == PW_OK) {
			pw_pg_params q;
			pw_pg_params_init(&q);
			pw_pg_params_text(&q, month);
			pw_pg_params_text(&q, id);
			st = exec(w->pg, "UPDATE perfwatch.pager_threshold_reviews SET notice_id = $2"
			                 " WHERE month = to_date($1, 'YYYY-MM')", &q, NULL, errbuf, errlen);
		}
		if (st == PW_OK)
			pw_log_warn(a->lg, "%s (notice %s to %s)", summary, id, a->route_detector);
	}
	PQclear(r);
	if (st == PW_OK)
		st = pw_pg_commit(w->pg, errbuf, errlen);
	else
		pw_pg_rollback(w->pg, NULL, 0);
	return st;
}

pw_status pw_pager_tick(void *p, pw_service_worker *w, int64_t *next_ms, char *errbuf, size_t errlen)
{
	app *a = p;
	pw_status st = PW_OK;
	if (pw_now_us() >= a->review_next_us) {
		st = threshold_review(a, w, errbuf, errlen);
		if (st == PW_OK)
			a->review_next_us = pw_now_us() + a->review_every_ms * 1000;
	}
	if (st == PW_OK)
		st = deliver_pages(a, w, next_ms, errbuf, errlen);
	if (st == PW_OK)
		st = deliver_notices(a, w, next_ms, errbuf, errlen);
	if (st == PW_OK)
		st = deliver_tickets(a, w, errbuf, errlen);
	return st;
}

/* ---- life cycle ---------------------------------------------------------------------------- */

pw_status pw_pager_init(pw_service *svc, void **out, char *errbuf, size_t errlen)
{
	const pw_config *cfg = pw_service_config(svc);
	app *a = calloc(1, sizeof *a);
	if (!a)
		return PW_ERR_NOMEM;
	a->svc = svc;
	a->lg = pw_service_log(svc);
	pw_status st = pw_pager_params_from_config(cfg, &a->prm, errbuf, errlen);
	if (st != PW_OK)
		goto fail;
	copy(a->am_url, sizeof a->am_url, pw_config_get_str(cfg, "pager.alertmanager.url"));
	size_t n = strlen(a->am_url);
	while (n > 0 && a->am_url[n - 1] == '/')
		a->am_url[--n] = 0;
	copy(a->webhook_url, sizeof a->webhook_url, pw_config_get_str(cfg, "pager.webhook.url"));
	copy(a->ticket_url, sizeof a->ticket_url, pw_config_get_str(cfg, "pager.ticket.url"));
	const char *urls[] = {a->am_url, a->webhook_url, a->ticket_url};
	const char *names[] = {"pager.alertmanager.url", "pager.webhook.url", "pager.ticket.url"};
	for (int i = 0; i < 3; i++)
		if (urls[i][0] && strncmp(urls[i], "http://", 7) != 0) {
			st = pw_fail(PW_ERR_CONFIG, errbuf, errlen, "%s \"%s\" is not an http:// URL", names[i], urls[i]);
			goto fail;
		}
	a->backoff_ms = pw_config_get_duration_ms(cfg, "pager.deliver.backoff");
	a->backoff_max_ms = pw_config_get_duration_ms(cfg, "pager.deliver.backoff_max");
	a->post_timeout_ms = pw_config_get_duration_ms(cfg, "pager.deliver.timeout");
	a->resend_ms = pw_config_get_duration_ms(cfg, "pager.alertmanager.resend");
	a->notice_ttl_ms = pw_config_get_duration_ms(cfg, "pager.notice.ttl");
	a->review_every_ms = pw_config_get_duration_ms(cfg, "pager.review.interval");
	a->hold_max_ms = pw_config_get_duration_ms(cfg, "pager.page.hold_max");
	copy(a->group, sizeof a->group, pw_config_get_str(cfg, "kafka.group.id"));
	copy(a->route_detector, sizeof a->route_detector, pw_config_get_str(cfg, "pager.route.detector"));
	if ((st = pager_triage_init(&a->triage, svc, errbuf, errlen)) != PW_OK)
		goto fail;
	pw_metrics *reg = pw_service_metrics(svc);
	static const double buckets[] = {0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800};
	if ((st = pw_metrics_counter(reg, "perfwatch_pager_pages_total", "pages delivered, by severity",
	                             (const char *const[]){"severity", NULL}, &a->m_pages, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_counter(reg, "perfwatch_pager_findings_total",
	                             "consumed messages by topic and outcome (opened, joined, resolved, unmatched, duplicate)",
	                             (const char *const[]){"topic", "outcome", NULL}, &a->m_findings, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_counter(reg, "perfwatch_pager_deliveries_total", "delivery attempts by target and result",
	                             (const char *const[]){"target", "result", NULL}, &a->m_deliveries, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_gauge(reg, "perfwatch_pager_open_incidents", "open incidents in the pager's memory", NULL,
	                           &a->m_open, errbuf, errlen)) != PW_OK ||
	    (st = pw_metrics_histogram(reg, "perfwatch_pager_raise_to_delivery_seconds",
	                               "seconds from a page being raised to its first delivery", NULL, buckets,
	                               sizeof buckets / sizeof buckets[0], &a->m_to_page, errbuf, errlen)) != PW_OK ||
	    (st = pager_triage_register(&a->triage, reg, pw_service_http(svc), errbuf, errlen)) != PW_OK)
		goto fail;
	if (!a->am_url[0] && !a->webhook_url[0])
		pw_log_warn(a->lg, "neither pager.alertmanager.url nor pager.webhook.url is set: pages are stored and "
		                   "published on %s but delivered to nobody", PW_TOPIC_PAGES);
	*out = a;
	return PW_OK;
fail:
	pager_triage_release(&a->triage);
	free(a);
	return st;
}

void pw_pager_release(void *p)
{
	app *a = p;
	if (!a)
		return;
	pager_triage_release(&a->triage);
	free(a);
}

pw_status pw_pager_worker_init(void *p, pw_service_worker *w, char *errbuf, size_t errlen)
{
	(void)errbuf;
	(void)errlen;
	if (w->input < 0) {
		w->ctx = p; /* the tick's thread uses the app */
		return PW_OK;
	}
	worker *k = calloc(1, sizeof *k);
	if (!k)
		return PW_ERR_NOMEM;
	k->a = p;
	k->w = w;
	w->ctx = k;
	return PW_OK;
}

void pw_pager_worker_release(void *p, pw_service_worker *w)
{
	(void)p;
	if (w->input < 0) {
		w->ctx = NULL;
		return;
	}
	worker *k = w->ctx;
	if (k)
		free(k->incs);
	free(k);
	w->ctx = NULL;
}

const pw_conf_key *pw_pager_service_keys(size_t *n)
{
	static pw_conf_key keys[MAX_KEYS];
	static size_t nkeys;
	if (!nkeys) {
		size_t npk;
		const pw_conf_key *pk = pw_pager_config_keys(&npk);
		for (size_t i = 0; i < npk && nkeys < MAX_KEYS; i++)
			keys[nkeys++] = pk[i];
		for (size_t i = 0; i < sizeof own_keys / sizeof own_keys[0] && nkeys < MAX_KEYS; i++)
			keys[nkeys++] = own_keys[i];
	}
	*n = nkeys;
	return keys;
}
