/*
 * attribute.h: the attributor's decisions — per-op diff, op family, HLO
 * diff, roofline prediction against the measurement, selectivity and owner
 * hint — as pure functions of two sides' runs (seed §6.2–6.3, artifacts 5
 * and 6, the "consistency check").
 *
 * The service (main.c) reads the runs of an alert's before side (baseline
 * window, or culprit−1) and after side (the observed build, or the culprit)
 * from PostgreSQL, fills pw_attr_side and calls pw_attr_compute; the result
 * is stored and published as attribution.proto's Attribution. Unit tests
 * (tests/unit/test_attribute.c) and the benchmark call the same functions
 * with tables they build. Nothing here touches a broker or a database.
 *
 * A side is one set of compiler decisions: runs whose post-optimisation HLO
 * differs from the side's representative (the repeat nearest the median
 * wall) are left out and counted (a baseline window that reaches past the
 * change, a bisection step mixing builds).
 *
 * Ownership: inputs are borrowed for the duration of the call; the result's
 * before_run/after_run copy the inputs' runs and still point at the inputs'
 * strings and ops, so those must outlive the result. A pw_attr_result owns every string and array it holds; pw_attr_result_release
 * frees them (it accepts a zeroed or already released result).
 */
#ifndef PW_ATTRIBUTE_H
#define PW_ATTRIBUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_roofline.h"
#include "pw_status.h"

/* One op of one run (run.proto OpTiming). */
typedef struct pw_attr_op {
	const char *name;      /* "fusion.1423a" */
	const char *category;  /* "qk_scores"; may be "" */
	const char *unit;      /* "VPU"; may be "" */
	uint32_t calls;
	double us_per_step;
	double hbm_bytes_per_step; /* 0 when unknown */
} pw_attr_op;

/* One run (a repeat) of one side. */
typedef struct pw_attr_run {
	const char *run_id;
	uint32_t repeat_index;
	const char *build_id;
	const char *fingerprint;   /* HLO fingerprint of the run's key */
	const char *harness;       /* harness version; may be "" */
	const pw_attr_op *ops;
	size_t nops;
	double wall_step_us;       /* measured wall time of one step */
	double achieved_bw_tb_s;   /* 0 when unknown */
	double mfu;                /* ratio; NaN when not reported */
	double hbm_bw_util;        /* ratio; NaN when not reported */
	const char *hlo_text;      /* post-optimisation HLO; may be "" */
} pw_attr_run;

typedef struct pw_attr_side {
	const pw_attr_run *runs;
	size_t nruns;
} pw_attr_side;

/* Platform facts and config names are the shared cost model's (common/pw_roofline.h). */
typedef pw_roofline_platform pw_attr_platform;
typedef pw_roofline_config pw_attr_config;

/* A related series that did not move (alert scope's clean series), with what is known of it. */
typedef struct pw_attr_clean {
	const char *label;               /* "chat-8b/v5e-8/decode.B64.s2048.int8" */
	const pw_attr_platform *platform;/* NULL when unknown */
	const char *config;              /* config name */
	double mfu, hbm_bw_util;         /* medians of its recent runs; NaN when unknown */
	bool moved;                      /* the data says it moved after all (then nothing to explain) */
} pw_attr_clean;

/* Context the owner hint needs beyond the runs. */
typedef struct pw_attr_context {
	const pw_attr_platform *platform;  /* the alerting series' platform; NULL when unknown */
	const char *config;                /* the alerting series' config name */
	const char *fleet_change;          /* a fleet change overlapping the window ("fc-recable-0042 recabling ..."), or NULL */
	const pw_attr_clean *clean;
	size_t nclean;
} pw_attr_context;

typedef enum pw_attr_change {
	PW_ATTR_UNCHANGED = 1, /* = attribution.proto OpChange */
	PW_ATTR_CHANGED = 2,
	PW_ATTR_REMOVED = 3,
	PW_ATTR_NEW = 4,
} pw_attr_change;

/* Lower-case name of a change: "unchanged", "changed", "removed", "new". */
const char *pw_attr_change_name(pw_attr_change c);

typedef struct pw_attr_row {
	char *name, *category, *unit;
	uint32_t calls;
	double before_us, after_us, delta_us; /* medians over the side's repeats */
	double noise_us;       /* the op's own noise: SE of the difference from its repeats; 0 when unknown */
	double before_bytes, after_bytes;
	pw_attr_change change;
	char *note;            /* "REMOVED", "NEW (VPU)", "unchanged", "CHANGED +3.1σ" */
	char *family;          /* the op family it belongs to */
} pw_attr_row;

typedef struct pw_attr_selectivity {
	char *label;
	bool explained;
	char *reason;          /* "128·2048·4 B = 1,048,576 B ≤ cap 1,572,864 B → stays fused" or "unexplained: ..." */
} pw_attr_selectivity;

typedef enum pw_attr_status {
	PW_ATTR_OK = 0,          /* both sides carry op tables */
	PW_ATTR_NO_OP_TABLE,     /* a side's runs carry no op table: no per-op diff, said so */
	PW_ATTR_NO_RUNS,         /* a side has no runs at all */
} pw_attr_status;

/* "ok", "no_op_table", "no_runs". */
const char *pw_attr_status_name(pw_attr_status s);

typedef struct pw_attr_result {
	pw_attr_status status;
	char *status_detail;           /* human text; "" when ok */
	/* representative runs: the repeat whose wall time is nearest its side's median */
	const pw_attr_run *before_run, *after_run; /* borrowed from the inputs */
	size_t nbefore, nafter;        /* repeats per side, after leaving out other decisions */
	size_t before_dropped, after_dropped; /* runs left out: their HLO text differs from the side's representative */
	pw_attr_run *owned_runs[2];    /* the kept runs' copies (internal; before_run/after_run point here) */

	pw_attr_row *rows;             /* sorted by |delta_us| descending, then name */
	size_t nrows;
	double kernel_before_us, kernel_after_us; /* sums of the rows' medians */
	double wall_before_us, wall_after_us;     /* medians of the sides' wall step */
	bool kernel_wall_differ;       /* kernel Δ and wall Δ differ by more than the noise of the walls */
	char *kernel_wall_note;

	char *top_family;              /* "fusion.1423" */
	char *top_family_members;      /* "fusion.1423 → fusion.1423a, softmax.88, fusion.1423b" */
	double top_family_delta_us;
	double top_family_share;       /* |family Δ| / Σ over families of |family Δ|, 0..1 */

	bool hlo_known;                /* both sides carry HLO text */
	bool hlo_changed;
	char *hlo_diff;                /* unified diff of the changed computations, "" when none */
	char *hlo_cap_note;            /* "fusion declined: projected vmem ... > cap ..." found in the after text, or "" */
	double vmem_cap_bytes;         /* the cap named there, 0 when none */

	/* roofline (NaN when not computable) */
	double added_bytes;
	double bw_tb_s;
	char bw_source[32];            /* "before runs" or "platform table" */
	double predicted_us, predicted_pct;
	double measured_us, measured_pct;
	double residual_us;
	double intensity, ridge;       /* FLOP/B of the config (from MFU and HBM utilisation) and of the platform */
	bool memory_bound;
	bool bound_known;
	char *roofline_explanation;

	pw_attr_selectivity *selectivity;
	size_t nselectivity;

	char owner_hint[16];           /* "compiler", "model", "infra" */
	char *owner_reason;
} pw_attr_result;

/*
 * Computes the attribution of before → after. ctx may be NULL. On PW_OK *out
 * is filled (release it with pw_attr_result_release) — also when a side has
 * no op table or no runs: status says so and the parts that could be
 * computed are. PW_ERR_NOMEM (then *out holds nothing to release).
 */
pw_status pw_attr_compute(const pw_attr_side *before, const pw_attr_side *after,
                          const pw_attr_context *ctx, pw_attr_result *out);

void pw_attr_result_release(pw_attr_result *r);

/*
 * Unified line diff of two HLO texts limited to the computations that
 * differ (a computation is "%name {" … "}"; lines outside any computation
 * form the module header). Labels name the sides ("prod hlo:9f31c2ab").
 * Returns a new string the caller frees ("" when equal) or NULL on NOMEM.
 * context: unchanged lines kept around each change.
 */
char *pw_attr_hlo_diff(const char *before, const char *after, const char *before_label,
                       const char *after_label, int context);

/*
 * Myers' O((N+M)·D) line diff of a[0..na) and b[0..nb): fills ops with
 * '=', '-', '+' per output line in order (capacity na+nb) and returns their
 * count, or -1 on NOMEM.
 */
long pw_attr_line_diff(const char *const *a, size_t na, const char *const *b, size_t nb,
                       char *ops);

/* Prints the report of artifact 6, artifact 5 and the consistency check into a new string (caller frees); NULL on NOMEM. */
char *pw_attr_render(const pw_attr_result *r);

#endif
