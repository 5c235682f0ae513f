/*
 * watch_config.c: the "watcher.*" keys and their mapping onto
 * pw_watch_params / pw_cp_params. See watch_config.h.
 */
#include "watch_config.h"

static const pw_conf_key keys[] = {
	{.name = "watcher.max_points", .type = PW_CONF_INT, .def = "400", .min = 20, .max = 100000,
	 .help = "nightly points kept and reloaded per series (400: more than a year)"},
	{.name = "watcher.min_segment", .type = PW_CONF_INT, .def = "5", .min = 2, .max = 1000,
	 .help = "fewest nightlies on either side of a shift"},
	{.name = "watcher.penalty", .type = PW_CONF_DOUBLE, .def = "15", .min = 0.1, .max = 1000,
	 .help = "PELT cost per changepoint, in units of the noise variance"},
	{.name = "watcher.alpha", .type = PW_CONF_DOUBLE, .def = "1e-5", .min = 1e-12, .max = 0.5,
	 .help = "largest Mann-Whitney p of a reported shift"},
	{.name = "watcher.min_effect", .type = PW_CONF_DOUBLE, .def = "0.005", .min = 0, .max = 1,
	 .help = "smallest relative level change reported (0.005 = 0.5%)"},
	{.name = "watcher.early_k", .type = PW_CONF_INT, .def = "3", .min = 0, .max = 256,
	 .help = "the early rule: this many newest nightlies all shifted report a provisional shift (0: off)"},
	{.name = "watcher.early_noise_k", .type = PW_CONF_DOUBLE, .def = "4", .min = 0, .max = 1000,
	 .help = "the early rule: each of them beyond this many MAD_n of the current level (and min_effect)"},
	{.name = "watcher.early_alpha", .type = PW_CONF_DOUBLE, .def = "1e-6", .min = 1e-300, .max = 0.5,
	 .help = "the early rule: largest one-sided prediction-t p of their mean"},
	{.name = "watcher.early_min_ref", .type = PW_CONF_INT, .def = "20", .min = 2, .max = 256,
	 .help = "the early rule: fewest points of the current level to compare against"},
	{.name = "watcher.early_confirm_within", .type = PW_CONF_INT, .def = "20", .min = 1,
	 .max = 99999, .help = "a provisional shift PELT has not found this many points after it is withdrawn"},
	{.name = "watcher.registered_n", .type = PW_CONF_INT, .def = "5", .min = 3, .max = 256,
	 .help = "a registered change is judged on this many nightlies from its CL on (observed - expected)"},
	{.name = "watcher.registered_alpha", .type = PW_CONF_DOUBLE, .def = "0.05", .min = 1e-12,
	 .max = 0.5, .help = "observed - expected of a registered change is significant below this p"},
	{.name = "watcher.page_route", .type = PW_CONF_STRING, .def = "ml-perf-triage",
	 .help = "receiver named in Alert.page when a shift pages"},
	{.name = "watcher.series_hint", .type = PW_CONF_INT, .def = "4096", .min = 1,
	 .max = 10000000, .help = "series expected; sizes the series table"},
};

const pw_conf_key *pw_watch_config_keys(size_t *n)
{
	*n = sizeof keys / sizeof keys[0];
	return keys;
}

pw_status pw_watch_params_from_config(const pw_config *cfg, pw_watch_params *p, char *errbuf,
                                      size_t errlen)
{
	pw_watch_params_default(p);
	p->max_points = (size_t)pw_config_get_int(cfg, "watcher.max_points");
	p->cp.min_segment = (size_t)pw_config_get_int(cfg, "watcher.min_segment");
	p->cp.penalty = pw_config_get_double(cfg, "watcher.penalty");
	p->cp.alpha = pw_config_get_double(cfg, "watcher.alpha");
	p->cp.min_effect = pw_config_get_double(cfg, "watcher.min_effect");
	p->early.k = (size_t)pw_config_get_int(cfg, "watcher.early_k");
	p->early.noise_k = pw_config_get_double(cfg, "watcher.early_noise_k");
	p->early.alpha = pw_config_get_double(cfg, "watcher.early_alpha");
	p->early.min_ref = (size_t)pw_config_get_int(cfg, "watcher.early_min_ref");
	p->early.min_effect = p->cp.min_effect;
	p->early_confirm_within = (size_t)pw_config_get_int(cfg, "watcher.early_confirm_within");
	p->registered_n = (size_t)pw_config_get_int(cfg, "watcher.registered_n");
	p->registered_alpha = pw_config_get_double(cfg, "watcher.registered_alpha");
	if (p->early.k > 0 && p->early_confirm_within >= p->max_points)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "watcher.early_confirm_within (%zu) must be below watcher.max_points (%zu)",
		               p->early_confirm_within, p->max_points);
	if (p->max_points < 2 * p->cp.min_segment)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "watcher.max_points (%zu) must hold two segments of watcher.min_segment (%zu)",
		               p->max_points, p->cp.min_segment);
	if (pw_cp_params_check(&p->cp, errbuf, errlen) != PW_OK)
		return PW_ERR_CONFIG;
	return PW_OK;
}
