/*
 * pager.h: the pager's decisions, as plain functions of their inputs (§8).
 *
 * The pager turns the detectors' findings (perf.alerts.v1, with the gate's,
 * the watcher's, the bisector's and the attributor's later parts) into
 * incidents: everything that belongs to one event is one incident, and one
 * incident is at most one page. This header holds what main.c decides with:
 *
 *   - grouping (pw_incident_*): which open incident a finding joins;
 *   - routing (pw_route_decide): page, ticket, queue or info, and to whom;
 *   - the false-page budget (pw_budget_decide): page or queue when the week's
 *     budget is spent, with the reason recorded;
 *   - the artifact-3 payload (pw_payload_json) of a page;
 *   - signed, expiring triage links (pw_link_sign / pw_link_verify).
 *
 * Nothing here touches Kafka, PostgreSQL or the network; main.c maps the
 * proto messages onto pw_finding and stores what these functions decide.
 * Strings inside the structs are fixed-size copies: a pw_finding owns no heap
 * memory, so incidents can be copied and freed with the struct.
 */
#ifndef PW_PAGER_H
#define PW_PAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pw_config.h"
#include "pw_status.h"

#define PW_PAGER_STR 128
#define PW_PAGER_MAX_SCOPE 16
#define PW_PAGER_MAX_MEMBERS 64

/* What a finding is (Alert.kind). */
typedef enum {
	PW_FIND_REGRESSION = 0,
	PW_FIND_IMPROVEMENT,
	PW_FIND_INFRA_HEALTH,
	PW_FIND_ROLLBACK, /* the production canary rolled a family back (RolloutDecision ROLLBACK) */
} pw_find_kind;

/*
 * The canary's evidence of a rollback (canary.proto RolloutDecision): the
 * deciding metric's effect and its confidence-sequence interval at the
 * decision, its windows, and the N−1 artifact the family was rolled back to.
 */
typedef struct pw_rollback {
	char decision[16];               /* "ROLLBACK", "PROMOTE", "HOLD" (only ROLLBACK is kind PW_FIND_ROLLBACK) */
	bool inconclusive;               /* HOLD after the canary's horizon */
	char rollout_id[2 * PW_PAGER_STR];
	char family[2 * PW_PAGER_STR];   /* in full (model keeps what fits) */
	char previous_release[PW_PAGER_STR];
	char artifact[2 * PW_PAGER_STR]; /* rollback_artifact */
	double lo_pct, hi_pct;           /* the interval of effect (delta_pct) at the decision */
	uint32_t windows;                /* windows of the deciding metric, pilot included */
	uint32_t family_windows;
	int64_t decided_window_start_us;
	double alpha, tolerance_pct;     /* mde_pct is the finding's */
} pw_rollback;

/* The verdict a detector gave (Verdict in common.proto, same meaning). */
typedef enum {
	PW_FV_NONE = 0,
	PW_FV_BLOCKING,
	PW_FV_P1,
	PW_FV_PASS,
	PW_FV_VALIDATED_WIN,
	PW_FV_FROZEN,
	PW_FV_QUARANTINED,
	PW_FV_INSUFFICIENT_DATA,
	PW_FV_INVESTIGATE,
	PW_FV_TREND,
	PW_FV_WAIVED,
} pw_find_verdict;

/* Lower-case text of v as perfwatch.pages.verdict stores it ("blocking", ...). */
const char *pw_find_verdict_name(pw_find_verdict v);

/* One finding: an Alert revision, with the parts later services added. */
typedef struct {
	char alert_id[PW_PAGER_STR];
	uint32_t revision; /* Alert.revision (1, 2, ...); 0 for a part of another service (bisection, attribution) */
	pw_find_kind kind;
	bool from_gate; /* the gate raised it (a release verdict); else the watcher/baseliner */
	/* an early, unconfirmed first signal (ALERT_KIND_UNCONFIRMED, needs_confirmation; the
	 * watcher's trend finding with no CL range): joins its family's open incident, never
	 * heads one with a confirmed finding, is queued for confirmation, never a ticket each */
	bool first_signal;
	int64_t created_us;

	char series_key[2 * PW_PAGER_STR];
	char model[PW_PAGER_STR], hlo_fingerprint[PW_PAGER_STR], platform[PW_PAGER_STR];
	char config[PW_PAGER_STR], metric[PW_PAGER_STR];
	bool top_tier; /* top-20 by spend (Tier TIER_TOP) */
	double spend_pct; /* spend-weighted impact, percent of fleet spend (0 when unknown) */

	double base_median, base_mad;
	uint32_t base_n;
	char base_window[PW_PAGER_STR];
	double obs_median;
	uint32_t obs_n;
	char obs_release[PW_PAGER_STR];
	double delta_abs, delta_pct, z_robust, fdr_q;
	char abs_unit[16];
	double mde_pct;
	bool passed_min_effect;

	char correlated[PW_PAGER_MAX_SCOPE][PW_PAGER_STR];
	size_t n_correlated;
	char clean[PW_PAGER_MAX_SCOPE][PW_PAGER_STR];
	size_t n_clean;

	char nightly[16];
	char cl_lo[PW_PAGER_STR], cl_hi[PW_PAGER_STR];
	uint32_t n_cls;

	char bisect_status[32];
	char culprit[PW_PAGER_STR];
	bool verified_adjacent_clean, cherry_pick_reproduced;

	char op_diff[PW_PAGER_STR], hlo_diff[PW_PAGER_STR];
	char trace_before[PW_PAGER_STR], trace_after[PW_PAGER_STR];

	pw_find_verdict verdict;
	char owner_hint[PW_PAGER_STR];
	/* owner_hint is the bisection's culprit owner (the CL's author), which an
	 * attribution's or the alert's own hint replaces whatever the order of arrival */
	bool owner_from_bisection;
	char release_id[PW_PAGER_STR];
	char fleet_event_id[PW_PAGER_STR];
	pw_rollback rollback; /* kind PW_FIND_ROLLBACK only: model is the family, metric the deciding one */
} pw_finding;

/* Parses a CL name such as "cl/7841917" into its number; -1 when not one. */
int64_t pw_cl_number(const char *cl);

/* ---- routing -------------------------------------------------------- */

typedef enum {
	PW_ACT_QUEUE = 0, /* trend queue: pages nobody */
	PW_ACT_PAGE,      /* page the on-call rotation (critical or high) */
	PW_ACT_TICKET,    /* P1 bug filed with its artifacts (table + webhook) */
	PW_ACT_INFO,      /* info to a team (validated win, infra-health notice) */
} pw_action;

typedef enum { PW_OWNER_UNSPECIFIED = 0, PW_OWNER_COMPILER, PW_OWNER_MODEL, PW_OWNER_INFRA } pw_owner;

typedef enum { PW_SEV_CRITICAL = 1, PW_SEV_HIGH, PW_SEV_INFO } pw_severity;

const char *pw_action_name(pw_action a);   /* "queue", "page", "ticket", "info" */
const char *pw_owner_name(pw_owner o);     /* "unspecified", "compiler", "model", "infra" */
const char *pw_severity_name(pw_severity s); /* "critical", "high", "info" */

/* Every threshold and route of §8, from the "pager.*" keys. */
typedef struct {
	double page_min_pct;   /* watcher shifts on top-tier series: >= this pages (3) */
	double ticket_min_pct; /* >= this (and passed the MDE) files a P1 ticket (1) */
	double budget_per_week; /* pages per rolling week fleet-wide (5) */
	double budget_pressure; /* fraction of the budget from which pages say "under pressure" (0.6) */
	double budget_override_spend_pct; /* over budget, still pages at >= this spend impact (1.0) */
	int64_t incident_window_us; /* a finding joins an open incident at most this long after its last part */
	int64_t rollout_max_age_us; /* a canary rollback consumed later than this after its decision is not paged (24h) */
	char route_triage[PW_PAGER_STR];   /* perf-triage rotation: first touch on every page */
	char route_compiler[PW_PAGER_STR]; /* compiler team: validated wins, compiler-owned tickets */
	char route_model[PW_PAGER_STR];
	char route_infra[PW_PAGER_STR];
	char compiler_owner_prefixes[PW_PAGER_STR]; /* owner hints meaning compiler, comma-separated ("xla") */
	char model_owner_prefixes[PW_PAGER_STR];    /* owner hints meaning a model team ("model") */
	char infra_owner_prefixes[PW_PAGER_STR];    /* owner hints meaning infra ("infra") */
} pw_pager_params;

/* The defaults the key table documents. */
void pw_pager_params_default(pw_pager_params *p);

/* The "pager.*" keys; a static table and its length. */
const pw_conf_key *pw_pager_config_keys(size_t *n);

/* Params from cfg; PW_ERR_CONFIG (message in errbuf) when inconsistent. */
pw_status pw_pager_params_from_config(const pw_config *cfg, pw_pager_params *p, char *errbuf,
                                      size_t errlen);

typedef struct {
	pw_action action;
	pw_severity severity;
	pw_owner owner;
	char route[PW_PAGER_STR]; /* the rotation or team that receives it */
	char reason[PW_PAGER_STR]; /* one line: why this action */
} pw_route;

/*
 * Owner from the attribution's owner hint and the fleet-change annotation:
 * infra-health findings and findings behind a fleet change are infra; hints
 * starting with a compiler prefix are compiler, model prefixes model, infra
 * prefixes infra (the attributor's "compiler" / "model" / "infra");
 * otherwise unspecified (the triage rotation routes it).
 */
pw_owner pw_route_owner(const pw_pager_params *p, const pw_finding *f);

/*
 * The §8 action for f: BLOCKING → critical page to the triage rotation; P1
 * (or a watcher shift on a gated series between ticket_min_pct and
 * page_min_pct) → ticket; a watcher shift >= page_min_pct on a top-tier
 * series → high page; tail tier, sub-MDE, trend, pass → queue; validated win
 * → info to the compiler team; infra-health → info to infra (never the
 * compiler rotation); a canary rollback → critical page to the triage
 * rotation, whatever the budget. Writes *out; never fails.
 */
void pw_route_decide(const pw_pager_params *p, const pw_finding *f, pw_route *out);

/*
 * Whether the canary rollback f (kind PW_FIND_ROLLBACK, created_us the
 * canary's wall clock at the decision) is older than rollout_max_age at
 * now_us: it is stored and not paged. A deployment that adds perf.rollouts.v1
 * to its consumer group reads the topic from its start
 * (auto.offset.reset=earliest); the rollbacks of past rollouts were acted on
 * long ago and must not page on-call now. False for any other finding and
 * for a decision without a time.
 */
bool pw_rollback_stale(const pw_pager_params *p, const pw_finding *f, int64_t now_us);

/* ---- false-page budget ---------------------------------------------- */

typedef struct {
	uint32_t delivered;   /* pages delivered in the rolling week */
	uint32_t true_pages;  /* of those, triaged true regressions */
	uint32_t false_pages; /* of those, triaged false regressions */
} pw_budget_usage;

typedef struct {
	bool page;     /* deliver as a page; false: queued */
	bool pressure; /* the page says the budget is under pressure */
	double used;   /* budget charged before this page */
	char reason[PW_PAGER_STR]; /* the decision recorded, e.g. "over budget: 5.0 of 5 used, spend 0.20% < 1.00%" */
} pw_budget_decision;

/*
 * The week's charge: delivered pages not confirmed true (false and
 * untriaged pages count; a triaged true regression is the budget doing its
 * job and is not charged).
 */
double pw_budget_used(const pw_budget_usage *u);

/*
 * Whether a finding routed to a page still pages: under budget it does (with
 * pressure set from budget_pressure); over budget only a finding whose spend
 * impact is >= budget_override_spend_pct does (pressure set), the rest are
 * queued with the reason. Never fails.
 */
void pw_budget_decide(const pw_pager_params *p, const pw_budget_usage *u, const pw_finding *f,
                      pw_budget_decision *out);

/* ---- incidents -------------------------------------------------------- */

typedef struct {
	char incident_id[PW_PAGER_STR];
	bool open;
	int64_t opened_us, last_us;
	/* the finding the page is about, its headline: the event's largest spend-weighted finding
	 * (pw_incident_headline_cmp); its spend_pct is its own, the event's is spend_pct below */
	pw_finding primary;
	char members[PW_PAGER_MAX_MEMBERS][PW_PAGER_STR]; /* alert ids */
	size_t n_members;
	uint64_t gate_members; /* bit i: members[i] is an alert the gate raised (a release verdict names it) */
	double spend_pct;      /* the event's largest spend-weighted impact: its findings' and the gate's family verdicts' */
	/* grouping keys gathered from every member */
	char release_id[PW_PAGER_STR], family[PW_PAGER_STR];
	char culprit[PW_PAGER_STR], fleet_event_id[PW_PAGER_STR];
	int64_t cl_lo, cl_hi; /* CL range (exclusive lo, inclusive hi); -1 when none */
	/* other members' one-line scope entries ("model/platform/config: +x.x%") */
	char scope[PW_PAGER_MAX_SCOPE][PW_PAGER_STR];
	bool scope_headline[PW_PAGER_MAX_SCOPE]; /* the entry is of the primary's metric (it is kept over others) */
	size_t n_scope;
} pw_incident;

/* The dedup key of an incident: "release/family", the culprit, the CL range or the fleet event. */
void pw_incident_dedup_key(const pw_incident *inc, char *buf, size_t len);

/*
 * Whether f belongs to inc: inc is open, f arrived within the window, and
 * they share the release and family, or the culprit, or overlapping CL
 * ranges, or the fleet change. An alert already a member always belongs. A
 * win never belongs to a regression's incident nor a regression to a win's.
 * A first signal belongs to the open incident of its model family (the event
 * it is the first sign of, or the other first signals of it); a confirmed
 * finding opens its own and pw_incident_same_event folds the first signals in.
 */
bool pw_incident_matches(const pw_pager_params *p, const pw_incident *inc, const pw_finding *f);

/*
 * The headline order of findings: > 0 when a heads a page before b, < 0 when
 * b does, 0 only for the same finding (same alert, series and revision). A
 * regression before a win, a confirmed finding before a first signal, then
 * the verdict (BLOCKING, P1, INVESTIGATE, an unverdicted shift), the gate
 * before the watcher, the metric's headline rank (median latency, then the
 * tails, then throughput and cost, then the rest: the derived metrics move
 * with the latency of the same runs), the spend-weighted impact (spend_pct:
 * the family's share of fleet spend times the change), the size of the
 * change, and last the series key and alert id, so that the headline of an
 * event never depends on the order its findings arrived in.
 */
int pw_incident_headline_cmp(const pw_finding *a, const pw_finding *b);

/* Opens inc from its first finding; the id is given by the caller. */
void pw_incident_open(pw_incident *inc, const char *incident_id, const pw_finding *f);

/*
 * Adds f (a new alert or a later revision of a member) to inc: keys widen,
 * the primary becomes f when f is worse (or is the primary's newer
 * revision), later parts (changepoint, bisection, artifacts, owner hint) fill
 * the primary's empty fields. Returns true when the page's content changed.
 */
bool pw_incident_add(pw_incident *inc, const pw_finding *f);

/*
 * The index among incs[0..n) of the open incident f joins, or -1 when it
 * opens a new one. The first match wins (incidents are kept oldest first).
 */
long pw_incident_find(const pw_pager_params *p, const pw_incident *incs, size_t n,
                      const pw_finding *f);

/*
 * Whether two open incidents turned out to be one event (a later part gave
 * one of them the other's culprit, CL range, release and family, or fleet
 * change): the same rules as pw_incident_matches, applied to their keys.
 */
bool pw_incident_same_event(const pw_incident *a, const pw_incident *b);

/*
 * Folds src into dst (src's primary, members and scope) and closes src; its
 * page, if any, is superseded by dst's. Returns true when dst changed.
 */
bool pw_incident_absorb(pw_incident *dst, pw_incident *src);

/*
 * The incident id of a canary rollback, one per (rollout, family):
 * "inc-rollback-<rollout>-<family>", or, when that would not fit in
 * PW_PAGER_STR with room for a page id, the rollout and family cut and a
 * 64-bit FNV-1a hash of "<rollout>/<family>" (16 hex digits) appended, so two
 * rollouts never share an id by being cut. buf holds PW_PAGER_STR bytes.
 */
void pw_rollback_incident_id(const pw_rollback *rb, char buf[PW_PAGER_STR]);

/* One line: "chat-8b v6e-4 TPOT +8.2% BLOCKING, culprit cl/7841917"; for a canary rollback
 * "canary ROLLBACK chat-8b TPOT +1.11% [+0.50%, +2.23%] after 38 windows, to <artifact>". */
void pw_incident_summary(const pw_incident *inc, char *buf, size_t len);

/* ---- payload ---------------------------------------------------------- */

/*
 * Writes the artifact-3 payload of inc as one JSON object: alert_id, series,
 * baseline, observed, delta, effect_gate, scope (correlated: the primary's
 * and the other members'), changepoint, bisection, artifacts, verdict,
 * owner_hint, page (the route), and budget_pressure. Fields not known yet are
 * written as null. Returns PW_ERR_IO when out fails.
 */
pw_status pw_payload_write(FILE *out, const pw_incident *inc, const pw_route *route,
                           bool budget_pressure);

/* The payload as a malloc'd string (caller frees); NULL on allocation failure. */
char *pw_payload_json(const pw_incident *inc, const pw_route *route, bool budget_pressure);

/* ---- triage links ----------------------------------------------------- */

#define PW_LINK_SIG_HEX 65

typedef enum {
	PW_LINK_OK = 0,
	PW_LINK_TAMPERED, /* signature does not match */
	PW_LINK_EXPIRED,  /* signature good, past its expiry */
	PW_LINK_MALFORMED,
} pw_link_check;

/* A message for each pw_link_check, for the 403 page. */
const char *pw_link_check_text(pw_link_check c);

/*
 * A triage link signs every parameter that changes what a verdict records:
 * HMAC-SHA256 under key (keylen bytes) over
 *   "perfwatch-triage\n<page_id>\n<action>\n<expires>"
 * followed, when the link carries an owner or a triager, by
 *   "\nowner=<owner>\nby=<by>"
 * (owner and by "" or NULL when absent: the links the pager mints carry
 * neither, and read as before). action is "view", "true" or "false". A
 * link's owner or by added or changed after signing is a tampered link.
 * Writes 64 lower-case hex digits and a NUL into sig; PW_ERR_INVALID on an
 * empty key or page id, or a field holding a newline.
 */
pw_status pw_link_sign_with(const unsigned char *key, size_t keylen, const char *page_id, const char *action,
                            const char *owner, const char *by, int64_t expires_unix, char sig[PW_LINK_SIG_HEX]);

/* pw_link_sign_with without owner and triager. */
pw_status pw_link_sign(const unsigned char *key, size_t keylen, const char *page_id,
                       const char *action, int64_t expires_unix, char sig[PW_LINK_SIG_HEX]);

/* Checks sig in constant time, then the expiry against now_unix. */
pw_link_check pw_link_verify_with(const unsigned char *key, size_t keylen, const char *page_id, const char *action,
                                  const char *owner, const char *by, int64_t expires_unix, const char *sig,
                                  int64_t now_unix);

/* pw_link_verify_with without owner and triager. */
pw_link_check pw_link_verify(const unsigned char *key, size_t keylen, const char *page_id,
                             const char *action, int64_t expires_unix, const char *sig,
                             int64_t now_unix);

/*
 * "/triage?page=<page_id>&action=<a>&exp=<e>&sig=<hex>", the link the
 * triage page serves, into buf; PW_ERR_INVALID when page_id is not
 * [A-Za-z0-9._-]+ or it does not fit.
 */
pw_status pw_link_path(const unsigned char *key, size_t keylen, const char *page_id,
                       const char *action, int64_t expires_unix, char *buf, size_t len);

/*
 * The verdict form's tokens. The triage page (GET) shows a form; the verdict
 * is a POST carrying, for the outcome and owner chosen, the token the page
 * minted for exactly that choice: HMAC-SHA256 over
 *   "perfwatch-triage-verdict\n<page_id>\n<outcome>\n<owner>\n<expires>\n<nonce>"
 * (outcome "true" or "false", owner one of compiler, model, infra,
 * unspecified; nonce the page's, so each showing of the page mints tokens
 * of its own and a token records one verdict once), and the CSRF token bound
 * to it, HMAC-SHA256 over "perfwatch-triage-csrf\n<verdict token>". Same
 * conventions as the links.
 */
pw_status pw_verdict_sign(const unsigned char *key, size_t keylen, const char *page_id, const char *outcome,
                          const char *owner, int64_t expires_unix, const char *nonce, char sig[PW_LINK_SIG_HEX]);
pw_link_check pw_verdict_verify(const unsigned char *key, size_t keylen, const char *page_id, const char *outcome,
                                const char *owner, int64_t expires_unix, const char *nonce, const char *sig,
                                int64_t now_unix);
pw_status pw_csrf_sign(const unsigned char *key, size_t keylen, const char *token, char csrf[PW_LINK_SIG_HEX]);
/* Whether csrf is token's CSRF token (constant time). */
bool pw_csrf_verify(const unsigned char *key, size_t keylen, const char *token, const char *csrf);

/* Whether owner is one a verdict may route to: "compiler", "model", "infra", "unspecified". */
bool pw_triage_owner_ok(const char *owner);

/*
 * Whether by names a triager as the verdict records it: 1 to 64 of
 * [A-Za-z0-9._@+-], starting with a letter or digit (a login or an e-mail
 * address; no spaces, quotes, angle brackets or anything else markup or a
 * log line could take for syntax).
 */
bool pw_triager_ok(const char *by);

#endif
