/*
 * gate_config.c: the gate.* configuration keys and the policy they give.
 * See gate_config.h.
 */
#include "gate_config.h"

static const pw_conf_key gate_keys[] = {
	{.name = "gate.fdr_q", .type = PW_CONF_DOUBLE, .def = "0.05", .min = 0.0001, .max = 0.5,
	 .help = "Benjamini-Hochberg level over every test of a release (a request's fdr_q wins)"},
	{.name = "gate.mde_top_pct", .type = PW_CONF_DOUBLE, .def = "1.0", .min = 0.01, .max = 100,
	 .help = "minimum effect, percent, of a top-tier series (a request's TierRepeats wins)"},
	{.name = "gate.mde_tail_pct", .type = PW_CONF_DOUBLE, .def = "3.0", .min = 0.01, .max = 100,
	 .help = "minimum effect, percent, of a tail-tier series (a request's TierRepeats wins)"},
	{.name = "gate.mde_gpu_pct", .type = PW_CONF_DOUBLE, .def = "4.0", .min = 0.01, .max = 100,
	 .help = "minimum effect, percent, a series on a GPU-class platform is certified at whatever its "
	         "tier (section 4.5: the band below it is the production canary's)"},
	{.name = "gate.practical_frac", .type = PW_CONF_DOUBLE, .def = "0.7", .min = 0.0, .max = 10,
	 .help = "practical-significance threshold as a fraction of the tier's MDE (the effect "
	         "filter; docs/statistics.md §6)"},
	{.name = "gate.noise_k", .type = PW_CONF_DOUBLE, .def = "2.0", .min = 0.0, .max = 100,
	 .help = "noise floor of the effect filter, in standard errors of the difference"},
	{.name = "gate.blocking_top_pct", .type = PW_CONF_DOUBLE, .def = "3.0", .min = 0.01,
	 .max = 100, .help = "a top-tier regression this large, percent, blocks its family"},
	{.name = "gate.blocking_aggregate_pct", .type = PW_CONF_DOUBLE, .def = "1.0", .min = 0.01,
	 .max = 100, .help = "spend-weighted fleet impact, percent, that blocks"},
	{.name = "gate.min_candidate_n", .type = PW_CONF_INT, .def = "5", .min = 1, .max = 1000,
	 .help = "candidate runs a top-tier series needs to be tested, and the floor of its required n "
	         "(a request's TierRepeats wins)"},
	{.name = "gate.min_candidate_tail_n", .type = PW_CONF_INT, .def = "5", .min = 1, .max = 1000,
	 .help = "candidate runs a tail-tier series needs to be tested, and the floor of its required "
	         "n (a request's TierRepeats wins)"},
	{.name = "gate.min_baseline_n", .type = PW_CONF_INT, .def = "5", .min = 1, .max = 100000,
	 .help = "baseline-release runs a series needs to be tested"},
	{.name = "gate.default_wait", .type = PW_CONF_DURATION_MS, .def = "24h", .min = 1,
	 .max = 604800000, .help = "deadline after the request when the request names none"},
	{.name = "gate.min_wait", .type = PW_CONF_DURATION_MS, .def = "30s", .min = 0,
	 .max = 86400000,
	 .help = "a request waits at least this long after it arrived before its deadline counts"},
	{.name = "gate.baseline_wait", .type = PW_CONF_DURATION_MS, .def = "10m", .min = 0,
	 .max = 86400000,
	 .help = "after a request arrived, how long a series whose baseline has not folded the points "
	         "measured before the request (the baseliner behind or restarting) is waited for"},
	{.name = "gate.late_window", .type = PW_CONF_DURATION_MS, .def = "24h", .min = 0,
	 .max = 604800000,
	 .help = "how long a release decided while its data was incomplete is watched for late data "
	         "(re-decided as a new evaluation when it arrives)"},
	{.name = "gate.poll_interval", .type = PW_CONF_DURATION_MS, .def = "250ms", .min = 10,
	 .max = 60000, .help = "how often pending evaluations are checked for arrived runs"},
	{.name = "gate.poll_max_interval", .type = PW_CONF_DURATION_MS, .def = "1s", .min = 10,
	 .max = 60000,
	 .help = "longest wait between looks at a release whose runs stopped arriving (backoff cap)"},
	{.name = "gate.active_window", .type = PW_CONF_DURATION_MS, .def = "336h", .min = 3600000,
	 .max = 31536000000.0,
	 .help = "a series with a nightly or release run this long before the request is gated"},
	{.name = "gate.page_route", .type = PW_CONF_STRING, .def = "ml-perf-triage",
	 .help = "receiver that BLOCKING and P1 top-tier alerts page"},
};

const pw_conf_key *pw_gate_config_keys(size_t *n)
{
	*n = sizeof gate_keys / sizeof gate_keys[0];
	return gate_keys;
}

void pw_gate_policy_from_config(const pw_config *cfg, pw_gate_policy *p)
{
	pw_gate_policy_default(p);
	p->fdr_q = pw_config_get_double(cfg, "gate.fdr_q");
	p->mde_top_pct = pw_config_get_double(cfg, "gate.mde_top_pct");
	p->mde_tail_pct = pw_config_get_double(cfg, "gate.mde_tail_pct");
	p->mde_gpu_pct = pw_config_get_double(cfg, "gate.mde_gpu_pct");
	p->practical_frac = pw_config_get_double(cfg, "gate.practical_frac");
	p->noise_k = pw_config_get_double(cfg, "gate.noise_k");
	p->blocking_top_pct = pw_config_get_double(cfg, "gate.blocking_top_pct");
	p->blocking_aggregate_pct = pw_config_get_double(cfg, "gate.blocking_aggregate_pct");
	p->min_candidate_n = (size_t)pw_config_get_int(cfg, "gate.min_candidate_n");
	p->min_candidate_tail_n = (size_t)pw_config_get_int(cfg, "gate.min_candidate_tail_n");
	p->min_baseline_n = (size_t)pw_config_get_int(cfg, "gate.min_baseline_n");
}
