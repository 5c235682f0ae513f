/*
 * pw_alert_followup.h: follow-up revisions of alerts on perf.alerts.v1.
 *
 * The gate and the watcher raise an Alert (alert.proto); the bisector and
 * the attributor, which start work from it, later publish the same alert
 * again (same alert_id, same Kafka key, a higher revision) with the
 * "bisection" block (artifact 3) or the "artifacts" block (attribution id,
 * op diff, HLO diff) filled in. Such a revision carries follow_up = true so
 * that no consumer starts a second bisection, attribution or page from it.
 *
 * pw_alert_followup_record keeps the original message (migration 0030,
 * perfwatch.alert_followups) when a service takes it in;
 * pw_alert_followup_publish merges a block into the row under its lock and
 * adds the follow-up to the caller's outbox, in the caller's transaction.
 * pw_alert_followup_pack is the pure part (unit-tested): the original
 * message with both blocks, the revision and the follow-up flag set.
 */
#ifndef PW_ALERT_FOLLOWUP_H
#define PW_ALERT_FOLLOWUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/alert.pb-c.h"
#include "pw_pg.h"
#include "pw_status.h"

/* The blocks a follow-up carries; NULL strings are empty. */
typedef struct pw_alert_blocks {
	bool has_bisection;
	const char *bisection_id, *bisection_status, *confidence, *reason, *culprit;
	bool verified_adjacent_clean, cherry_pick_reproduced;
	bool has_attribution;
	const char *attribution_id, *op_diff, *hlo_diff;
} pw_alert_blocks;

/*
 * The limits of an Alert that a service takes in (the bisector's and the
 * attributor's doors refuse one beyond them as oversize): its packed size,
 * any string at any depth, any repeated field. Alerts of the gate and the
 * watcher are a few KiB. Within them a follow-up, which adds two blocks of
 * strings that pw_alert_followup_pack cuts to PW_ALERT_STRING_MAX, is at most
 * about 300 KiB: always under perf.alerts.v1's limit (1,000,000 bytes,
 * pw_topic_publish_limit).
 */
#define PW_ALERT_MAX_BYTES (256u << 10)
#define PW_ALERT_STRING_MAX 4096u
#define PW_ALERT_LIST_MAX 256u

/*
 * True when the alert al, received as len bytes, is within the limits above;
 * otherwise false with detail (lower case, the alert and the field named)
 * saying which: the door dead-letters it as oversize.
 */
bool pw_alert_within_bounds(const Perfwatch__V1__Alert *al, size_t len, char *detail, size_t dlen);

/* True when al is a follow-up revision: do not start work from it. al may be NULL (false). */
bool pw_alert_is_follow_up(const Perfwatch__V1__Alert *al);

/*
 * The follow-up of the original alert (payload, len): the same message with
 * revision `revision`, follow_up = true, follow_up_by = by, and the blocks
 * of b that are present (has_bisection / has_attribution) replacing the
 * message's own. It copies a bounded amount, whatever the original holds:
 * the blocks' strings are cut to PW_ALERT_STRING_MAX bytes (on a character
 * boundary), and an original beyond pw_alert_within_bounds (one stored
 * before the doors refused such alerts) is not copied whole: the follow-up
 * then carries the alert's identity (ids, kind, source, times, series,
 * config hash, verdict, owner, page, release, summary; strings cut likewise)
 * and the blocks, not its other fields. *out is malloc'd (caller frees).
 * PW_ERR_INVALID when payload is not an Alert or revision is not above the
 * original's; PW_ERR_NOMEM.
 */
pw_status pw_alert_followup_pack(const void *payload, size_t len, uint32_t revision, const char *by,
                                 const pw_alert_blocks *b, uint8_t **out, size_t *outlen);

/*
 * Keeps the original alert (not a follow-up) as received, with its Kafka key
 * (NULL: its series_key): inserted, or replaced by a higher revision. In the
 * caller's transaction or alone. PW_OK, or pw_pg's error.
 */
pw_status pw_alert_followup_record(pw_pg *pg, const Perfwatch__V1__Alert *al, const char *key,
                                   const void *payload, size_t len, char *errbuf, size_t errlen);

/*
 * Merges the present blocks of b into the stored row of alert_id and, when
 * that changed a block, adds the follow-up (the next revision above the
 * original, the last follow-up and perfwatch.alerts' row) to the outbox of
 * `service` on perf.alerts.v1 with the original key, and mirrors the blocks
 * and revision into perfwatch.alerts. Must run inside the caller's open
 * transaction. *published (may be NULL): the revision published, 0 when
 * nothing changed or the alert was never recorded (nothing to follow up).
 */
pw_status pw_alert_followup_publish(pw_pg *pg, const char *service, const char *alert_id,
                                    const pw_alert_blocks *b, uint32_t *published, char *errbuf,
                                    size_t errlen);

#endif
