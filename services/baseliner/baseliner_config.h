/*
 * baseliner_config.h: the baseliner's own configuration keys and how they
 * become the window rules of baseline.h.
 *
 * main.c builds its pw_config (pw_config.h) from the common keys plus
 * pw_baseliner_config_keys(); pw_baseliner_params_from_config() turns the
 * loaded values into pw_baseline_params for the series table. The table is
 * here rather than in main.c so that tests/unit/test_series_table.c builds it
 * once (a malformed table is a programming error pw_config_new reports) and
 * checks that docs/baseliner.md names every key.
 */
#ifndef PW_BASELINER_CONFIG_H
#define PW_BASELINER_CONFIG_H

#include <stddef.h>

#include "baseline.h"
#include "pw_config.h"
#include "pw_status.h"

/* The keys (baseliner.*), a static table, and its length in *n. */
const pw_conf_key *pw_baseliner_config_keys(size_t *n);

/*
 * Fills p from cfg: the §4.2 defaults overridden by baseliner.min_runs,
 * min_days, min_chipsets, max_window, platform_sigma_tpu (the params' norm;
 * GPU-class series get platform_sigma_gpu through the series table),
 * quarantine_factor and outlier_k. Returns PW_ERR_CONFIG when max_window is
 * below min_runs.
 */
pw_status pw_baseliner_params_from_config(const pw_config *cfg, pw_baseline_params *p,
                                          char *errbuf, size_t errlen);

#endif
