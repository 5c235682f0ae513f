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
	if (p->max_points < 2 * p->cp.min_segment)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "watcher.max_points (%zu) must hold two segments of watcher.min_segment (%zu)",
		               p->max_points, p->cp.min_segment);
	if (pw_cp_params_check(&p->cp, errbuf, errlen) != PW_OK)
		return PW_ERR_CONFIG;
	return PW_OK;
}
