/*
 * sim_proto.h: the simulator's model (sim_model.h) in and out of the
 * perfwatch.v1 protobuf messages.
 *
 * main.c publishes what these functions pack: RunResult on perf.runs.v1,
 * FleetChangeEvent on perf.fleet-changes.v1, GateRequest on
 * perf.gate.requests.v1; and turns each BisectJob it consumes into a build
 * and a series with pw_sim_bisect_plan. The unit tests use the same
 * functions to feed the ingester's validation with simulator runs.
 * Packed buffers are malloc'd and owned by the caller (free()).
 */
#ifndef PW_SIM_PROTO_H
#define PW_SIM_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/bisect.pb-c.h"
#include "pw_status.h"
#include "sim_canary.h"
#include "sim_model.h"

/*
 * Namespaces (--namespace TAG): a replay that must not meet an earlier replay
 * of the same scenario on one stack appends ".TAG" to every name that
 * identifies a series, a release or an event — model (family) names, HLO
 * fingerprints, release and RC ids (build and release ids), fleet-change
 * event ids and waiver ids. Values are untouched: they stay those of the
 * scenario. A new fingerprint starts new series (§3); a new model name keeps
 * the gate's families apart too, since the gate scopes a release by family
 * and by the (simulated) time of the request, which two replays share.
 * An empty or NULL ns leaves the name as it is.
 */
/* Appends ".ns" to the string in buf (capacity len); PW_ERR_INVALID when it does not fit. */
pw_status pw_sim_ns_append(char *buf, size_t len, const char *ns);
/* Removes a trailing ".ns" from buf; false when buf does not end in it. */
bool pw_sim_ns_strip(char *buf, const char *ns);
/* Namespaces the names a published run carries (model, fingerprint, release build and release ids). */
pw_status pw_sim_run_namespace(pw_sim_run *r, const char *ns);

/* Packs run r (of world w) as a perfwatch.v1.RunResult. PW_ERR_NOMEM. */
pw_status pw_sim_proto_run(const pw_sim *w, const pw_sim_run *r, uint8_t **out, size_t *len);

/*
 * Packs metric m (0 TPOT, 1 TTFT, 2 goodput) of window win of the canary
 * scenario's family i (sim_canary.h) as a perfwatch.v1.CanaryWindow of
 * rollout_id, starting at start_us: both arms' medians, two replicas on
 * each of 64 (canary fraction 1/32), the artifacts
 * "serving/FAMILY/RELEASE.aot". PW_ERR_NOMEM.
 */
pw_status pw_sim_proto_canary_window(const char *rollout_id, size_t i, const pw_sim_canary_window *win, int m,
                                     int64_t start_us, uint8_t **out, size_t *len);

/*
 * The same with the canary arm on release and the baseline arm on
 * previous_release (the scenario's are PW_SIM_CANARY_RELEASE and
 * PW_SIM_CANARY_PREVIOUS) and family_suffix after each family's name (""
 * or NULL: none): a test names its own release and families, so that its
 * gate waiver pins its family only (docs/canary.md "Pins").
 */
pw_status pw_sim_proto_canary_window_of(const char *rollout_id, const char *release, const char *previous_release,
                                        const char *family_suffix, size_t i, const pw_sim_canary_window *win, int m,
                                        int64_t start_us, uint8_t **out, size_t *len);

/* Packs a fleet change as a perfwatch.v1.FleetChangeEvent. PW_ERR_NOMEM. */
pw_status pw_sim_proto_fleet(const pw_sim_fleet_change *fc, uint8_t **out, size_t *len);
/* The same, with the event id namespaced; PW_ERR_INVALID when it does not fit. */
pw_status pw_sim_proto_fleet_ns(const pw_sim_fleet_change *fc, const char *ns, uint8_t **out,
                                size_t *len);

/*
 * Packs the gate request of an RC at time t_unix_us: the candidate build, the
 * release it is gated against, the families the scenario measures (its
 * models: the release tooling gates what it ran, whatever else the spend
 * table holds), every registered expected win expanded to the series keys it
 * matches, the RC's waivers, tiers (top: n 5, MDE 1%; tail: n 3, MDE 3%),
 * FDR 0.05 and the 24 h deadline. Relative waiver expiries count from
 * t_unix_us. PW_ERR_NOMEM.
 */
pw_status pw_sim_proto_gate(const pw_sim *w, const pw_sim_release *rel, int64_t t_unix_us,
                            uint8_t **out, size_t *len);
/*
 * The same with names namespaced by ns (NULL: none) and relative waiver
 * expiries counted from wall_unix_us (the gate checks them at its own
 * clock). PW_ERR_INVALID when a namespaced name does not fit.
 */
pw_status pw_sim_proto_gate_ns(const pw_sim *w, const pw_sim_release *rel, int64_t t_unix_us,
                               const char *ns, int64_t wall_unix_us, uint8_t **out, size_t *len);

/*
 * The CLs the scenario's history holds, for perf.compiler-cls.v1: from one
 * history day before the first nightly's head (the base of the first day) to
 * the last nightly's head, and down to every release the scenario declares.
 */
void pw_sim_cl_span(const pw_sim *w, int64_t *from, int64_t *to);

/*
 * Packs what the simulator knows of CL `cl` as a perfwatch.v1.CompilerCl
 * (compiler.proto): title, author, the cost model's flag (the simulator's
 * cost model is not per benchmark: a flagged CL lists "*"), roll membership
 * (upstream commits named by index) and the submit time its day gives.
 * PW_ERR_NOMEM.
 */
pw_status pw_sim_proto_cl(const pw_sim *w, int64_t cl, uint8_t **out, size_t *len);

/* What a BisectJob asks the simulator to run. */
typedef struct pw_sim_bisect_plan {
	size_t series;                       /* index in the world */
	char fingerprint[PW_SIM_NAME_MAX];   /* the model revision to build */
	pw_sim_build build;
	uint32_t repeats;
	char job_id[PW_SIM_NAME_MAX];
} pw_sim_bisect_plan;

/*
 * Reads a job: the series from key (or series), the build from cl (or base_cl
 * plus cherry_picks), repeats (0 = 3). A cl of the form "cl/N@K" builds roll
 * CL N with its upstream commits 0..K-1 only (the inner bisection lane of
 * §6's roll follow-up). PW_ERR_INVALID naming what is missing or malformed;
 * PW_ERR_NOT_FOUND when the series is not one the scenario runs.
 */
pw_status pw_sim_bisect_plan_make(const pw_sim *w, const Perfwatch__V1__BisectJob *job,
                                  pw_sim_bisect_plan *plan, char *errbuf, size_t errlen);

#endif
