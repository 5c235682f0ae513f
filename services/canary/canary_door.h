/*
 * canary_door.h: the canary's door (pw_canary_window_decode): a CanaryWindow
 * from perf.canary.v1 decoded and checked before anything is stored or
 * counted. A plain function of the payload: tests/unit/test_canary_door.c
 * runs a table of hostile payloads through it.
 *
 * What it refuses, with the DlqReason and a detail naming the field:
 * undecodable (DECODE_FAILED); a NUL byte or invalid UTF-8 in any string
 * (INVALID_VALUE, pw_input_decode); an empty rollout_id, family,
 * family_kind, release, artifact, previous_release or previous_artifact, or
 * metric unspecified (MISSING_FIELD); a rollout id or family over 200 bytes
 * or holding '/' (the Kafka key joins them with '/'), any other name over
 * 200 bytes, a family_kind other than tpu or gpu, a metric this build does
 * not know, a window start outside 1970..9999, a window length of 0 or over
 * a day, a canary or baseline value not finite and > 0, no replica on an
 * arm, a canary fraction not in (0, 1) (INVALID_VALUE); the same release on
 * both arms (INCONSISTENT). What needs the stored windows — a window out of
 * order, a redelivered window with other values — is the service's
 * (canary_service.c), dead-lettered as INCONSISTENT or CONFLICT.
 *
 * Ownership: on success *out is the caller's, to
 * perfwatch__v1__canary_window__free_unpacked; otherwise *out is NULL.
 */
#ifndef PW_CANARY_DOOR_H
#define PW_CANARY_DOOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/canary.pb-c.h"
#include "perfwatch/v1/dlq.pb-c.h"

/* The longest window the canary takes, seconds. */
#define PW_CANARY_WINDOW_S_MAX 86400

Perfwatch__V1__DlqReason pw_canary_window_decode(const uint8_t *buf, size_t len,
                                                 Perfwatch__V1__CanaryWindow **out, char *detail,
                                                 size_t dlen);

/* The Kafka key of a family's windows and decisions: rollout_id "/" family. false when it does not fit. */
bool pw_canary_key(char *buf, size_t len, const char *rollout_id, const char *family);

#endif
