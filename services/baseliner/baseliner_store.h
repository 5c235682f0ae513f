/*
 * baseliner_store.h: the baseliner's PostgreSQL and Redis side: records of its
 * series, the cache writes, the load of one series on first sight, and the
 * write of one batch's effects.
 *
 * PostgreSQL is the truth (perfwatch.baselines, freezes, fleet_changes,
 * alerts, and perfwatch.baseliner_series of migration 0012, which holds each
 * series' state, resume mark and latest environment); Redis holds the latest
 * baseline of each series as `baseline:{series_key}`, a versioned hash
 * (pw_redis_set_versioned) whose payload is a packed perfwatch.v1.Baseline.
 * The record, its cache version and the one cache-aside reader every
 * consumer uses (pw_baseline_get) are common/pw_baseline.h's and
 * pw_baseline_cache.h's; this module
 * writes the cache. main.c and baseliner.c call the rest; series_table.h
 * holds the in-memory side.
 */
#ifndef PW_BASELINER_STORE_H
#define PW_BASELINER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_baseline_cache.h"
#include "pw_pg.h"
#include "pw_redis.h"
#include "pw_status.h"
#include "first_signal.h"
#include "accept.h"
#include "series_table.h"
#include "noise_floor.h"

/*
 * Sets r's power per tier from its sigma_pct and gpu_class: the MDEs the
 * gate certifies (PW_POWER_MDE_TOP_PCT / _TAIL_PCT, PW_POWER_MDE_GPU_PCT
 * for both on a GPU-class platform) and pw_stats_required_n for each at
 * PW_POWER_ALPHA, PW_POWER_TARGET, floor PW_POWER_FLOOR_N; zeros for a
 * record without a baseline (version 0) or a sigma that gives no n. Pure.
 */
void pw_baseline_record_power(pw_baseline_record *r);

/*
 * Fills r from entry e's current baseline (e->bs.current), with state st and
 * computed_us. Pure.
 */
void pw_baseline_record_from_entry(pw_baseline_record *r, const pw_series_entry *e,
                                   pw_baseline_state st, int64_t computed_us);

/*
 * The cache writes of one batch in one Redis pipeline, in two halves so that
 * Redis works while the baseliner goes on with its next batch: recs[i] is put
 * (versioned, as pw_baseline_cache_put) when it is a baseline to gate
 * against (a version, active or quarantined); otherwise (frozen, baselining)
 * its key baseline:{key} is deleted. pw_baseline_cache_send
 * writes the commands and returns *out, which pw_baseline_cache_collect
 * reads: done(arg, series_key, status) once per record, status
 * PW_ERR_UNAVAILABLE for all when Redis went away; it frees the batch.
 * Nothing else may use rd in between. PW_ERR_UNAVAILABLE (Redis down: *out
 * NULL, nothing sent), PW_ERR_NOMEM.
 */
typedef struct pw_baseline_cache_batch pw_baseline_cache_batch;
pw_status pw_baseline_cache_send(pw_redis *rd, const pw_baseline_record *const *recs, size_t n,
                                 pw_baseline_cache_batch **out, char *errbuf, size_t errlen);
pw_status pw_baseline_cache_collect(pw_redis *rd, pw_baseline_cache_batch *cb,
                                    void (*done)(void *arg, const char *series_key, pw_status st),
                                    void *arg, char *errbuf, size_t errlen);

/*
 * Loads e (found in the table, not yet loaded) from PostgreSQL: its latest
 * stored baseline (version, values, state), its latest freeze (open:
 * FROZEN with reason, event and the event's time), its resume mark and
 * environment from perfwatch.baseliner_series, and its window re-filled
 * from perfwatch.samples — points of the baseline build line (build kinds
 * nightly and release), measured at or after the latest freeze's event,
 * at or before the mark's newest measurement, not raised as outliers, the
 * newest max_window of them; their ids become e's re-filled set, so that a
 * redelivery of one is not added twice. upto, when not NULL, replaces the stored mark (and the stored
 * environment is not read): for a series reloaded in the middle of a batch,
 * whose newest points are not committed yet but are in perfwatch.samples.
 * Sets e->loaded. Returns pw_pg's errors.
 */
pw_status pw_bstore_load_series(pw_pg *pg, pw_series_entry *e, const pw_point_mark *upto,
                                char *errbuf, size_t errlen);

/*
 * Adds an unloaded entry for every row of perfwatch.baseliner_series (series
 * seen before the restart), with its environment, so that a fleet change
 * right after a restart still selects them. gpu_prefixes as in
 * pw_series_platform_is_gpu. Returns the count in *n.
 */
pw_status pw_bstore_load_known(pw_pg *pg, pw_series_table *t, const char *gpu_prefixes,
                               size_t *n, char *errbuf, size_t errlen);

/*
 * Adds every stored fleet change (perfwatch.fleet_changes) to l, with the
 * reason text the freezes carry ("kind: reason"). Returns the count in *n.
 */
pw_status pw_bstore_load_fleet(pw_pg *pg, pw_fleet_log *l, size_t *n, char *errbuf,
                               size_t errlen);

/* ------------------------------------------------------------ batch writes */

/* A freeze to record (one per series and event). */
typedef struct pw_bstore_freeze {
	int64_t series_id;
	char event_id[64];
	char reason[128];
	uint32_t frozen_version; /* 0: none */
	/* the re-baseline the fleet is asked for (perfwatch.rebaseline_requests, 0030) */
	int64_t since_us;        /* when the change took effect */
	uint32_t runs_needed;    /* the window rule's min_runs */
	uint32_t chip_sets_needed; /* its min_chipsets */
	double days_needed;      /* its rebaseline_min_days */
	/* the executor job that asks for the runs (issue 17); "" when none is asked */
	char job_id[160];        /* pw_bstore_rebaseline_job_id */
	uint32_t job_runs;       /* repeats it asks for */
	bool accepted_shift;     /* event_id is an accepted shift's accept_id, not a fleet change */
} pw_bstore_freeze;

/*
 * The job id of the re-baseline job for series_key after event_id:
 * "rb-<event_id>-<16 hex digits>", the digits a hash of the run
 * configuration (the key without its metric), so that the metrics of one
 * run share the job and a redelivered event makes the same id.
 * PW_ERR_INVALID when it does not fit len.
 */
pw_status pw_bstore_rebaseline_job_id(const char *event_id, const char *series_key, char *buf,
                                      size_t len);

/* What a re-baseline job asks (a REBASELINE BisectJob, bisect.proto). */
typedef struct pw_bstore_rebaseline_job {
	const char *job_id;
	const char *event_id;
	int64_t series_id;
	const char *series_key;
	int64_t requested_us;    /* data time: when the change took effect */
	uint32_t runs;
	uint32_t min_chip_sets;
} pw_bstore_rebaseline_job;

/*
 * Inside the caller's transaction: reads the series' latest nightly run
 * (model revision, build, firmware) and puts the job into the outbox
 * (service "baseliner", ref event_id, perf.bisect.jobs.v1, key job_id).
 * *queued says whether it did: false when the series has no nightly run
 * stored (nothing to measure). PW_ERR_NOMEM, pw_pg's errors.
 */
pw_status pw_bstore_queue_rebaseline_job(pw_pg *pg, const pw_bstore_rebaseline_job *j,
                                         bool *queued, char *errbuf, size_t errlen);

/* An unfreeze: closes every open freeze of the series. */
typedef struct pw_bstore_unfreeze {
	int64_t series_id;
	uint32_t unfrozen_version;
	double new_level;         /* its median: an accepted shift's new level */
} pw_bstore_unfreeze;

/* An infra-health alert (alert.proto): quarantine or outlier. */
typedef struct pw_bstore_alert {
	char alert_id[192];
	bool outlier;             /* false: quarantine */
	int64_t created_us;
	int64_t series_id;
	char series_key[PW_ST_KEY_MAX];
	double value;             /* outlier: the point; quarantine: the window median */
	double z;                 /* outlier: robust z */
	pw_baseline_record base;  /* the baseline it was measured against / the quarantined one */
	char run_id[96];          /* outlier: the run */
	char summary[640];
	/* outlier: what owns it (first_signal.h); NONE_FOUND makes it "unconfirmed" */
	int cause;                /* pw_signal_cause */
	char evidence[256];
	char fleet_event_id[64];  /* cause FLEET_CHANGE: the change */
	uint32_t revision;        /* 1; 2 when a fleet-wide group reclassifies it */
	uint64_t tag;             /* outlier: its handle in the fleet-wide tracker (not stored) */
	int64_t measured_us;      /* outlier: when the point was measured (not stored) */
	pw_point_env env;         /* outlier: where it ran (not stored) */
} pw_bstore_alert;

/* Whether the alert is an outlier no infra cause explains (kind "unconfirmed"). */
bool pw_bstore_alert_unconfirmed(const pw_bstore_alert *a);

/* Alert.owner_hint: "infra", or "needs-confirmation" for an unconfirmed outlier. */
const char *pw_bstore_alert_owner(const pw_bstore_alert *a);

/* A fleet change to store, borrowed from the decoded message. */
typedef struct pw_bstore_fleet {
	const char *event_id;
	int64_t occurred_us;
	const char *kind;   /* the fleet_changes.kind text */
	const char *reason;
	const char *source;
	pw_fleet_selector sel;
	const char *from_version, *to_version;
} pw_bstore_fleet;

/*
 * Inside the caller's transaction: inserts the fleet change (ON CONFLICT
 * DO NOTHING). Returns pw_pg's errors.
 */
pw_status pw_bstore_put_fleet(pw_pg *pg, const pw_bstore_fleet *f, char *errbuf, size_t errlen);

/*
 * Inside the caller's transaction: stores the records of rec[0..nrec) that
 * have a version (version 0 — a freeze before the first baseline — is only
 * published), natural key (series_id, version); of records with the same key
 * the last one counts.
 * A key with a fresh record (fresh[i]: a version created in this batch) is
 * COPYed straight into perfwatch.baselines, in COPY's binary format; the
 * others are state changes of stored versions (a freeze) and update their row
 * through a staging table. A fresh version that is already stored (another
 * writer got there first) fails the COPY on the primary key: PW_ERR_PG, and
 * the caller redoes the batch from reloaded state. PW_ERR_NOMEM, pw_pg's
 * errors.
 */
pw_status pw_bstore_put_baselines(pw_pg *pg, const pw_baseline_record *rec, const bool *fresh,
                                  size_t nrec, char *errbuf, size_t errlen);

/* Inside the caller's transaction: marks version of series frozen in place. */
pw_status pw_bstore_mark_frozen(pw_pg *pg, const pw_baseline_record *r, char *errbuf,
                                size_t errlen);

/* Inside the caller's transaction: the freezes row and its re-baseline
 * request (both ON CONFLICT DO NOTHING). *job_new (may be NULL) says whether
 * f's job must be published: the request row is new and no earlier request
 * carries the same job id (a sibling metric, or a redelivered event). */
pw_status pw_bstore_put_freeze(pw_pg *pg, const pw_bstore_freeze *f, bool *job_new,
                               char *errbuf, size_t errlen);

/* Inside the caller's transaction: closes the series' open freezes and their
 * re-baseline requests. */
pw_status pw_bstore_put_unfreeze(pw_pg *pg, const pw_bstore_unfreeze *u, char *errbuf,
                                 size_t errlen);

/* Inside the caller's transaction: the alert row (ON CONFLICT (alert_id) DO NOTHING). */
pw_status pw_bstore_put_alert(pw_pg *pg, const pw_bstore_alert *a, char *errbuf,
                              size_t errlen);

/* A point that continued an excursion: kept out of the window, no alert (0018). */
typedef struct pw_bstore_excursion {
	int64_t series_id;
	char run_id[96];
	uint32_t repeat_index;
	int64_t measured_us;
	double value;
	double z;
	uint32_t baseline_version;  /* 0: none */
} pw_bstore_excursion;

/* Inside the caller's transaction: the point's row (ON CONFLICT DO NOTHING). */
pw_status pw_bstore_put_excursion(pw_pg *pg, const pw_bstore_excursion *x, char *errbuf,
                                  size_t errlen);

/*
 * Inside the caller's transaction: upserts perfwatch.baseliner_series for
 * every touched entry of the table (state, mark, environment, window need)
 * through COPY. Does not clear the touched flags (the caller does after
 * the commit).
 */
pw_status pw_bstore_put_progress(pw_pg *pg, pw_series_table *t, char *errbuf, size_t errlen);

/*
 * Packs a (perfwatch.v1.Alert) into *buf / *len, malloc'd; the caller frees.
 */
pw_status pw_bstore_alert_pack(const pw_bstore_alert *a, uint8_t **buf, size_t *len);

/* ------------------------------------------------ accepted shifts (0035) */

/* A shift to track until it holds (accept.h). */
typedef struct pw_bstore_shift {
	int64_t series_id;
	const char *reason;      /* "changepoint_held" or "waiver" */
	const char *source_id;   /* the changepoint_id or the waiver_id */
	const char *accept_id;   /* pw_accept_id */
	int64_t shift_us;        /* measured time of the first shifted point */
	double level_before, level_after;
} pw_bstore_shift;

/* Inside the caller's transaction: the row, pending (a redelivery inserts
 * nothing; a pending row takes the message's levels). */
pw_status pw_bstore_put_shift(pw_pg *pg, const pw_bstore_shift *sh, char *errbuf, size_t errlen);

/* Sets e's tracked shift (has_shift, shift_*) from its newest pending
 * changepoint_held row (waivers are decided when they arrive). */
pw_status pw_bstore_load_shift(pw_pg *pg, pw_series_entry *e, char *errbuf, size_t errlen);

/* Ends the series' pending (reason, accept_id) row with status "fixed",
 * "withdrawn" or "superseded". */
pw_status pw_bstore_end_shift(pw_pg *pg, int64_t series_id, const char *reason,
                              const char *accept_id, const char *status, char *errbuf,
                              size_t errlen);

/*
 * What the samples say of a shift: the nightly builds measured in
 * [since_us, upto_us] (requested runs left out) into *nightlies, and the
 * values of their newest PW_ACCEPT_NEWEST points into newest / *nnewest.
 */
pw_status pw_bstore_shift_evidence(pw_pg *pg, int64_t series_id, int64_t since_us,
                                   int64_t upto_us, size_t *nightlies, double *newest,
                                   size_t *nnewest, char *errbuf, size_t errlen);

/* A pending shift accepted (its freeze is pw_bstore_put_freeze's). */
typedef struct pw_bstore_acceptance {
	int64_t series_id;
	const char *reason;       /* the pending row's */
	const char *accept_id;
	int64_t upto_us;          /* newest measurement folded in */
	uint32_t nightlies;       /* held this many */
	uint32_t old_version;     /* 0: the series had no baseline */
	double old_level;         /* its median */
} pw_bstore_acceptance;

/* *accepted: the row was pending (false: accepted before, or not there). */
pw_status pw_bstore_accept_shift(pw_pg *pg, const pw_bstore_acceptance *a, bool *accepted,
                                 char *errbuf, size_t errlen);

/* ---- Noise floors, re-derived (§4.2; noise_floor.h, migration 0050) ---- */

/* What one call of pw_bstore_noise_floor_derive did. */
typedef struct pw_bstore_nf_summary {
	bool derived;             /* a derivation was made and committed */
	int64_t derivation_id;    /* its id (derived), else the latest one's (0: none yet) */
	size_t series;            /* series it wrote a row for */
	size_t series_derived;    /* ... with a new floor */
	size_t series_insufficient, series_invalid;
} pw_bstore_nf_summary;

/*
 * When due (pw_nf_due on the latest perfwatch.noise_floor_derivations row
 * and the server's clock), derives every series' noise floor in one
 * transaction: a noise_floor_derivations row that follows the latest one
 * (unique: a second baseliner due at the same time writes nothing), then one
 * noise_floors row per series of perfwatch.series — pw_nf_derive over the
 * series' samples measured within p->lookback_us of its newest one, grouped
 * by pw_nf_group_key, with previous_derivation_id its newest derived row
 * before — and the derivation's counts. Not due, or another baseliner's
 * derivation won: PW_OK with out->derived false, nothing written. A
 * failure rolls everything back (pw_pg's codes; PW_ERR_NOMEM); the next call
 * derives again. Series are read and written in chunks of 2,000.
 */
pw_status pw_bstore_noise_floor_derive(pw_pg *pg, const pw_nf_params *p,
                                       pw_bstore_nf_summary *out, char *errbuf, size_t errlen);

#endif
