/*
 * watch_config.h: the watcher's configuration keys and how they become
 * pw_watch_params.
 *
 * The keys join pw_config's common ones (pw_config.h) in main.c; the table is
 * here, beside the logic, so that the unit test builds the configuration once
 * and docs/watcher.md lists the same keys.
 */
#ifndef PW_WATCH_CONFIG_H
#define PW_WATCH_CONFIG_H

#include <stddef.h>

#include "pw_config.h"
#include "pw_status.h"
#include "watch.h"

/* The watcher's own keys ("watcher.*"); a static table and its length. */
const pw_conf_key *pw_watch_config_keys(size_t *n);

/* The detector and window parameters from cfg; PW_ERR_CONFIG when inconsistent. */
pw_status pw_watch_params_from_config(const pw_config *cfg, pw_watch_params *p, char *errbuf,
                                      size_t errlen);

#endif
