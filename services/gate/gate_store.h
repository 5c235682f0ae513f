/*
 * gate_store.h: the release gate's PostgreSQL side — storing GateRequests,
 * loading what one evaluation needs, writing its results and its outbox.
 *
 * gate_service.c's consumer workers call pw_gate_store_request for every
 * GateRequest (one transaction per Kafka batch, committed before the
 * offsets); its tick on the main thread calls pw_gate_store_pending,
 * pw_gate_store_load and pw_gate_store_finish for every pending evaluation,
 * which writes the evaluation's messages into the one outbox (pw_outbox.h)
 * that the runtime publishes. The decisions themselves are gate_eval.h's and
 * gate_policy.h's; the protobuf messages are built by gate_messages.h. The
 * schema is migrations/0004_gate.sql, 0013_gate_outbox.sql and 0019_outbox.sql.
 *
 * A pw_gate_release holds everything about one evaluation in one arena: it is
 * built by pw_gate_store_load, read by the evaluator and freed at once with
 * pw_gate_release_free.
 */
#ifndef PW_GATE_STORE_H
#define PW_GATE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate_eval.h"
#include "gate_policy.h"
#include "pw_baseline_cache.h"
#include "pw_outbox.h"
#include "pw_pg.h"
#include "pw_status.h"

#include "perfwatch/v1/alert.pb-c.h"
#include "perfwatch/v1/gate.pb-c.h"

/* What the gate knows of one gated series beyond pw_gate_series_input. */
typedef struct pw_gate_series_meta {
	int64_t series_id;
	const char *key, *model, *platform, *config, *metric, *unit;
	int baseline_version;           /* 0 when the series has no baseline row */
	int64_t window_start_us, window_end_us; /* 0 when unknown */
	const char *cl_note;            /* the registration's CL, "" when none */
	bool baseline_from_window;      /* baseline side is the latest baseline's window, not
	                                 * the baseline release (too few runs on it) */
} pw_gate_series_meta;

/* One evaluation with its inputs (and, once evaluated, its results). */
typedef struct pw_gate_release {
	const char *release_id;
	uint32_t evaluation;
	const char *candidate_build_id, *candidate_cl, *baseline_release;
	int64_t requested_us, received_us;
	int64_t deadline_us;            /* effective: max(request's, received + min_wait); a
	                                 * re-decision on late data keeps the request's */
	pw_gate_policy policy;          /* fdr_q, MDEs and n per tier of this request */
	bool families_named;            /* the request named its families */
	uint32_t late_of;               /* the evaluation this one re-decides on late data, or 0 */
	size_t lacking;                 /* set by the evaluator: late-clock missing when decided */
	int64_t seen;                   /* set by the evaluator: the data decided on */
	char waiting[256];              /* set by the evaluator: what the release lacked */

	size_t planned_unmeasured;      /* Σ families[].planned_unmeasured (the waiting rule's) */

	pw_gate_family_input *families; /* n_families */
	pw_gate_tier *family_tier;      /* n_families */
	size_t n_families;

	pw_gate_series_input *series;   /* n_series, in series_key order */
	pw_gate_series_meta *meta;         /* n_series */
	size_t n_series;

	pw_gate_waiver *waivers;        /* live or not: the evaluator decides */
	size_t n_waivers;

	/* results, filled by the evaluator (arrays allocated by pw_gate_store_load) */
	pw_gate_series_result *sr;
	pw_gate_family_result *fr;
	pw_gate_outcome *series_out;    /* n_series */
	const char **series_waiver;     /* n_series: the waiver applied, "" when none */
	const char **series_alert;      /* n_series: the alert raised, "" when none */
	const char **family_waiver;     /* n_families */
	pw_gate_release_result rr;
	const char *page_route;         /* set by the evaluator: the owner a top-tier P1 ticket is
	                                 * filed to (gate.page_route), a tail one to "queue" */
	pw_gate_p1_ticket *drift;       /* set by pw_gate_store_drift: open P1 tickets of earlier
	                                 * releases on the release's series (compounding drift) */
	const char **drift_line;        /* n_drift: pw_gate_drift_line of each */
	size_t n_drift;
	char summary[2048];
	int64_t evaluated_us;

	struct pw_gate_arena *arena;
} pw_gate_release;

/* Frees the release and everything in its arena. Accepts NULL. */
void pw_gate_release_free(pw_gate_release *r);

/* Allocates len bytes (zeroed) in the release's arena; NULL when out of memory. */
void *pw_gate_release_alloc(pw_gate_release *r, size_t len);

/* Copies s into the release's arena; NULL when out of memory. */
char *pw_gate_release_strdup(pw_gate_release *r, const char *s);

/* Defaults of the gate's configuration the store applies to each request. */
typedef struct pw_gate_store_defaults {
	pw_gate_policy policy;     /* thresholds from the gate.* keys */
	int64_t default_wait_us;   /* deadline when a request names none */
	int64_t min_wait_us;       /* a deadline counts from at least this long after arrival */
	int64_t baseline_wait_us;  /* a series whose baseline is behind is waited for this long
	                            * after arrival at most */
	int64_t active_window_us;  /* a series measured (nightly/release) this long before the
	                            * request is part of the release even before its first
	                            * candidate run */
} pw_gate_store_defaults;

/*
 * Stores one GateRequest inside the caller's open transaction: the
 * gate_evaluations row (pending; ON CONFLICT DO NOTHING), its tier repeats,
 * waivers and expected wins. When the (release_id, evaluation) is already
 * done, its outbox is marked unpublished so that the stored verdict is sent
 * again instead of re-deciding; *duplicate (may be NULL) says whether the
 * row existed. Waivers are keyed by (release_id, waiver_id): the same id on
 * another release is another waiver; the same id already stored for this
 * release with other content is PW_ERR_CONFLICT naming it. PW_ERR_INVALID
 * (with the reason) for a request that cannot be stored; the caller
 * dead-letters both; PW_ERR_PG / retriable codes from pw_pg.
 */
pw_status pw_gate_store_request(pw_pg *pg, const Perfwatch__V1__GateRequest *req,
                             const pw_gate_store_defaults *d, bool *duplicate, char *errbuf,
                             size_t errlen);

/* The key of one pending evaluation. */
typedef struct pw_gate_pending {
	char release_id[256];
	uint32_t evaluation;
} pw_gate_pending;

/*
 * Lists up to cap pending evaluations, oldest request first, into out;
 * *n receives the count.
 */
pw_status pw_gate_store_pending(pw_pg *pg, pw_gate_pending *out, size_t cap, size_t *n, char *errbuf,
                             size_t errlen);

/*
 * Loads one evaluation: request, families (spend weights and tiers), gated
 * series (of the families, measured on the baseline release or the
 * candidate, or by a nightly/release run within d->active_window_us before
 * the request, or listed by the plan of the candidate's sweep: a plan whose
 * release is the request's release or candidate build, docs/planner.md)
 * with their state, candidate counts and planned flag, the planned
 * benchmarks of each family that have no series yet, waivers, expected
 * wins; the effective deadline is max(request's, received + d->min_wait_us),
 * the request's own for a re-decision on late data (late_of).
 * With with_samples the samples are loaded too: the candidate's, and as
 * baseline the baseline release's when it has min_baseline_n of them, else
 * the nightly/release samples inside the latest baseline's window (else
 * series[i].base is NULL and n_base 0, n_cand is the count); that window is
 * read through br (common/pw_baseline_cache.h: Redis when it holds the
 * version the series query read, else PostgreSQL), once, so that the version
 * stored with a result is the one whose window was read. PostgreSQL is
 * br->pg. *out is NULL on failure. PW_ERR_NOT_FOUND when the evaluation does
 * not exist.
 */
pw_status pw_gate_store_load(pw_baseline_reader *br, const char *release_id, uint32_t evaluation,
                          const pw_gate_store_defaults *d, bool with_samples, pw_gate_release **out,
                          char *errbuf, size_t errlen);

/*
 * Records what a pending evaluation waits for (pw_gate_wait_describe) for
 * `perfwatch gate show`; only while it is pending. The caller writes only
 * when the text changed.
 */
pw_status pw_gate_store_waiting(pw_pg *pg, const char *release_id, uint32_t evaluation,
                                const char *waiting, char *errbuf, size_t errlen);

/*
 * Lists up to cap decided evaluations watched for late data: done, lacking
 * something (lacking > 0), evaluated less than window_us ago, and the newest
 * evaluation of their release (a newer one, the gate's or release
 * tooling's, ends the watch). *n receives the count; lacking[k] and seen[k]
 * (arrays of cap) what each was decided on.
 */
pw_status pw_gate_store_watched(pw_pg *pg, int64_t window_us, pw_gate_pending *out,
                                size_t *lacking, int64_t *seen, size_t cap, size_t *n,
                                char *errbuf, size_t errlen);

/*
 * Creates the re-decision of a watched evaluation: a pending evaluation
 * max(evaluation) + 1 of the release with the same request (candidate,
 * baseline, families, FDR level, tier repeats, deadline; waivers and
 * expected wins are the release's) and late_of = evaluation, in one
 * transaction, only while `evaluation` is still the newest. *created
 * receives the new number, or 0 when a newer evaluation existed already.
 */
pw_status pw_gate_store_redecide(pw_pg *pg, const char *release_id, uint32_t evaluation,
                                 uint32_t *created, char *errbuf, size_t errlen);

/*
 * Loads the open P1 tickets (perfwatch.p1_tickets) of r's series and keeps
 * those pw_gate_drift_select reports as compounding drift for r (filed on an
 * earlier release, requested before r) into r->drift / r->drift_line /
 * r->n_drift (in the release's arena, oldest ticket first). Read outside the
 * finishing transaction: a ticket resolved in between is still reported by
 * this evaluation (what was open when it was decided).
 */
pw_status pw_gate_store_drift(pw_pg *pg, pw_gate_release *r, char *errbuf, size_t errlen);

/* One message of the outbox. */
typedef struct pw_gate_outbox_msg {
	const char *topic;
	const char *key;
	uint8_t *payload;
	size_t len;
} pw_gate_outbox_msg;

/*
 * Writes the evaluated release in one transaction: marks the evaluation done
 * (only while pending) with what it lacked (r->lacking, r->seen, r->waiting),
 * its family and series results, the gate's alerts in
 * perfwatch.alerts, a perfwatch.p1_tickets row for every series
 * pw_gate_p1_files says files (ON CONFLICT (series_id, found_release) DO
 * NOTHING: a re-decision of the release files nothing twice), the
 * compounding drift it reported (perfwatch.gate_compounding_drift; the
 * tickets' due_release set to r's release where empty) and the outbox
 * messages msgs[0..n), in that order, with the evaluation's ref
 * (pw_gate_outbox_ref).
 * *stored is false when the evaluation was no longer pending (another gate
 * finished it): nothing is written then.
 */
pw_status pw_gate_store_finish(pw_pg *pg, const pw_gate_release *r, const pw_gate_outbox_msg *msgs,
                            size_t n, const Perfwatch__V1__Alert *const *alerts,
                            size_t n_alerts, bool *stored, char *errbuf, size_t errlen);

/*
 * The outbox ref of an evaluation's messages, "release_id/evaluation"
 * (pw_outbox.h): a redelivered request marks them unpublished again.
 */
#define PW_GATE_SERVICE "gate"
#define PW_GATE_OUTBOX_REF_LEN 280
void pw_gate_outbox_ref(char *buf, size_t len, const char *release_id, uint32_t evaluation);

#endif
