/*
 * attr_store.h: the attributor's PostgreSQL side — reading the runs, op
 * tables, HLO texts, platform facts, related series and fleet changes an
 * attribution needs, and writing the attribution (0008 + 0021) with its
 * Attribution message in the outbox, in one transaction.
 *
 * main.c decodes the input messages and calls these; attribute.c decides.
 * Every read borrows the caller's connection; strings in a loaded side point
 * into PGresults the side owns (attr_side_release frees them).
 */
#ifndef PW_ATTR_STORE_H
#define PW_ATTR_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "pw_pg.h"
#include "pw_status.h"

/* Which runs a side is: one of the three selections, tried in this order. */
typedef struct attr_select {
	int64_t window_start_us, window_end_us; /* both > 0: samples measured in the window */
	const char *build_id;                   /* non-empty: that build */
	int64_t max_cl;                         /* > 0: nightlies at or below that CL number (latest 30) */
	const char *const *job_ids;             /* non-NULL: the runs of these bisect jobs */
	size_t njobs;
} attr_select;

typedef struct attr_side {
	pw_attr_side side;
	pw_attr_run *runs;
	pw_attr_op *ops;
	void *res_runs, *res_ops;   /* PGresult *, owned */
	int64_t first_us, last_us;  /* earliest and latest measured_at of the side's runs */
} attr_side;

void attr_side_release(attr_side *s);

/*
 * Loads the runs of series series_id selected by sel, with their op tables,
 * MFU and HBM utilisation samples and HLO texts. An empty result is PW_OK
 * with no runs.
 */
pw_status attr_side_load(pw_pg *pg, int64_t series_id, const attr_select *sel, attr_side *out,
                         char *errbuf, size_t errlen);

/* series_id of a canonical series key; PW_ERR_NOT_FOUND. */
pw_status attr_series_id(pw_pg *pg, const char *series_key, int64_t *id, char *errbuf,
                         size_t errlen);

/* Every platform row (0020); the strings are owned by *out (attr_platforms_release). */
typedef struct attr_platforms {
	pw_attr_platform *p;
	size_t n;
	void *res;
} attr_platforms;

pw_status attr_platforms_load(pw_pg *pg, attr_platforms *out, char *errbuf, size_t errlen);
const pw_attr_platform *attr_platform_find(const attr_platforms *ps, const char *name);
void attr_platforms_release(attr_platforms *ps);

/*
 * The related series of the same model (other platform or config) that have
 * runs on the after side's build: their wall medians before (sel_before)
 * and after, MFU and HBM utilisation on the after build; `moved` when the
 * wall moved by 1% or more. Strings owned by *out.
 */
typedef struct attr_related {
	pw_attr_clean *c;
	size_t n;
	char **labels;
	void *res;
} attr_related;

pw_status attr_related_load(pw_pg *pg, const char *model, const char *platform, const char *config,
                            const attr_select *before, const char *after_build,
                            const attr_platforms *ps, attr_related *out, char *errbuf,
                            size_t errlen);
void attr_related_release(attr_related *r);

/*
 * A fleet change on platform between from_us and to_us, as one line
 * ("fc-recable-0042 recabling: ..."), written to buf; buf[0] = 0 when none.
 */
pw_status attr_fleet_overlap(pw_pg *pg, const char *platform, int64_t from_us, int64_t to_us,
                             char *buf, size_t len, char *errbuf, size_t errlen);

/* What the write is about. */
typedef struct attr_write {
	const char *alert_id;
	int64_t series_id;              /* 0: NULL */
	const char *series_key;
	const char *model, *fingerprint, *platform, *config, *metric;
	const char *source;             /* "alert" or "bisection" */
	const char *bisection_id;
	const char *input_key;          /* "alert:ID:rREV" / "bisection:ID:CULPRIT" */
	int64_t received_us;            /* when the input was taken off its topic */
} attr_write;

typedef enum attr_write_outcome {
	ATTR_WRITTEN = 0,
	ATTR_SAME_INPUT,    /* already computed from this input: nothing written or published */
	ATTR_SUPERSEDED,    /* a bisection's attribution stands; an alert's does not replace it */
} attr_write_outcome;

/*
 * Writes the attribution and its ops (replacing the alert's earlier one) and
 * adds the packed Attribution to the outbox, in one transaction. *outcome
 * says whether it did. PW_OK, or pw_pg's error (the transaction is rolled
 * back).
 */
pw_status attr_store_write(pw_pg *pg, const attr_write *w, const pw_attr_result *r,
                           attr_write_outcome *outcome, char *errbuf, size_t errlen);

/* Packs the Attribution message of r (attribution.proto); caller frees *out. */
pw_status attr_pack(const attr_write *w, const pw_attr_result *r, int64_t created_us,
                    uint8_t **out, size_t *len);

#endif
