/*
 * baseliner_config.c: the baseliner's configuration table and its mapping
 * to window rules. See baseliner_config.h; docs/baseliner.md lists the keys.
 */
#include "baseliner_config.h"

static const pw_conf_key baseliner_keys[] = {
	{.name = "baseliner.min_runs", .type = PW_CONF_INT, .def = "30", .min = 1, .max = 100000,
	 .help = "points a null window needs before it is a baseline (section 4.2: 30)"},
	{.name = "baseliner.min_days", .type = PW_CONF_DOUBLE, .def = "5", .min = 0, .max = 366,
	 .help = "days a null window must span (section 4.2: 5)"},
	{.name = "baseliner.min_chipsets", .type = PW_CONF_INT, .def = "3", .min = 1, .max = 10000,
	 .help = "distinct chip-sets a null window must cover (section 4.2: 3)"},
	{.name = "baseliner.max_window", .type = PW_CONF_INT, .def = "120", .min = 1, .max = 100000,
	 .help = "points kept per series; older ones slide out (>= min_runs)"},
	{.name = "baseliner.platform_sigma_tpu", .type = PW_CONF_DOUBLE, .def = "0.004", .min = 0,
	 .max = 1, .help = "relative sigma norm of TPU-class platforms (section 4.1: 0.4%)"},
	{.name = "baseliner.platform_sigma_gpu", .type = PW_CONF_DOUBLE, .def = "0.02", .min = 0,
	 .max = 1, .help = "relative sigma norm of GPU-class platforms (section 4.1: 2%)"},
	{.name = "baseliner.gpu_platforms", .type = PW_CONF_STRING, .def = "h100,b200,gpu",
	 .help = "comma-separated platform-name prefixes that are GPU-class"},
	{.name = "baseliner.quarantine_factor", .type = PW_CONF_DOUBLE, .def = "2", .min = 1,
	 .max = 100, .help = "quarantine a series whose sigma exceeds this many platform norms"},
	{.name = "baseliner.outlier_k", .type = PW_CONF_DOUBLE, .def = "5", .min = 1, .max = 1000,
	 .help = "a point beyond this many sigma of the baseline is an infra outlier"},
	{.name = "baseliner.signal_overlap", .type = PW_CONF_DURATION_MS, .def = "24h", .min = 0,
	 .max = 30LL * 86400 * 1000,
	 .help = "an outlier is infra when a fleet change selecting its series took effect this long before it"},
	{.name = "baseliner.fleet_wide_models", .type = PW_CONF_INT, .def = "3", .min = 2, .max = 100000,
	 .help = "outliers on this many distinct models on one platform and chip set make a fleet-wide (infra) event"},
	{.name = "baseliner.fleet_wide_window", .type = PW_CONF_DURATION_MS, .def = "6h", .min = 1000,
	 .max = 7LL * 86400 * 1000,
	 .help = "measurement-time window of a fleet-wide outlier group"},
	{.name = "baseliner.rebaseline_min_days", .type = PW_CONF_DOUBLE, .def = "0", .min = 0,
	 .max = 366,
	 .help = "days a frozen series' re-baseline window must span (the requested runs are measured within hours)"},
	{.name = "baseliner.rebaseline_request", .type = PW_CONF_BOOL, .def = "true",
	 .help = "a freeze asks the executor for the re-baseline runs (BisectJob purpose REBASELINE on perf.bisect.jobs.v1)"},
	{.name = "baseliner.accept_after_nightlies", .type = PW_CONF_INT, .def = "7", .min = 0,
	 .max = 366,
	 .help = "a changepoint still shifted this many nightlies on is accepted: the series re-baselines from the shift (0: never)"},
	{.name = "baseliner.max_series", .type = PW_CONF_INT, .def = "200000", .min = 1,
	 .max = 100000000, .help = "series held in memory at most"},
	{.name = "baseliner.noise_floor.every", .type = PW_CONF_DURATION_MS, .def = "2160h", .min = 0,
	 .max = 3660LL * 86400 * 1000,
	 .help = "re-derive every series' noise floor from runs with no software change this long after the previous derivation (section 4.2: quarterly; 0: never)"},
	{.name = "baseliner.noise_floor.lookback", .type = PW_CONF_DURATION_MS, .def = "2160h",
	 .min = 1000, .max = 3660LL * 86400 * 1000,
	 .help = "a derivation uses the samples measured this long before the series' newest one"},
	{.name = "baseliner.noise_floor.min_groups", .type = PW_CONF_INT, .def = "5", .min = 1,
	 .max = 1000000,
	 .help = "groups of repeats (one run, or one re-baseline job) a series needs for a floor; fewer: insufficient_data"},
	{.name = "baseliner.noise_floor.min_samples", .type = PW_CONF_INT, .def = "30", .min = 2,
	 .max = 100000000,
	 .help = "runs in those groups a series needs for a floor (section 4.2: 30); fewer: insufficient_data"},
	{.name = "baseliner.noise_floor.check", .type = PW_CONF_DURATION_MS, .def = "1m", .min = 100,
	 .max = 86400LL * 1000,
	 .help = "how often the baseliner's tick asks whether a noise-floor derivation is due"},
	{.name = "baseliner.flush_timeout", .type = PW_CONF_DURATION_MS, .def = "10s", .min = 100,
	 .max = 600000, .help = "wait for delivery of a batch's messages before its commit"},
};

const pw_conf_key *pw_baseliner_config_keys(size_t *n)
{
	*n = sizeof baseliner_keys / sizeof baseliner_keys[0];
	return baseliner_keys;
}

pw_status pw_baseliner_params_from_config(const pw_config *cfg, pw_baseline_params *p,
                                          char *errbuf, size_t errlen)
{
	pw_baseline_params_default(p, false);
	p->min_runs = (size_t)pw_config_get_int(cfg, "baseliner.min_runs");
	p->min_days = pw_config_get_double(cfg, "baseliner.min_days");
	p->min_chipsets = (size_t)pw_config_get_int(cfg, "baseliner.min_chipsets");
	p->max_window = (size_t)pw_config_get_int(cfg, "baseliner.max_window");
	p->platform_sigma = pw_config_get_double(cfg, "baseliner.platform_sigma_tpu");
	p->quarantine_factor = pw_config_get_double(cfg, "baseliner.quarantine_factor");
	p->outlier_k = pw_config_get_double(cfg, "baseliner.outlier_k");
	p->rebaseline_min_days = pw_config_get_double(cfg, "baseliner.rebaseline_min_days");
	if (p->max_window < p->min_runs)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "baseliner.max_window (%zu) must be at least baseliner.min_runs (%zu)",
		               p->max_window, p->min_runs);
	return PW_OK;
}
