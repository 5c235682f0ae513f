/*
 * plan_door.h: the planner's door (pw_planner_door): every message it
 * consumes — catalogue entries (perf.catalogue.v1), capacity
 * (perf.capacity.v1), sweeps (perf.sweeps.v1) and CLs with their op costs
 * (perf.compiler-cls.v1) — decoded and checked before anything is stored.
 * A plain function of the topic and the payload: tests/unit/test_planner_door.c
 * runs a table of hostile payloads through it, bench/fuzz drives it.
 *
 * What it refuses, with the DlqReason and a detail naming the field:
 * undecodable (DECODE_FAILED); a NUL byte or invalid UTF-8 in any string
 * (INVALID_VALUE, pw_input_decode); a missing key field (MISSING_FIELD);
 * values out of range — a spend share outside 0..1 or not finite, a config
 * name that does not parse, an op whose config is not the model's, calls 0,
 * negative or non-finite bytes or FLOPs, capacity ≤ 0 or not finite, a
 * factor ≤ 0, an unknown phase or sweep kind, a day that is not a date, a
 * CL name that is not cl/N — and more than the caps below (INVALID_VALUE);
 * a CL whose name and number disagree (INCONSISTENT).
 *
 * Ownership: on ACCEPT and IGNORE *out holds the message, freed by the
 * caller with protobuf_c_message_free_unpacked; on DEAD *out is NULL.
 */
#ifndef PW_PLAN_DOOR_H
#define PW_PLAN_DOOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/dlq.pb-c.h"
#include <protobuf-c/protobuf-c.h>

#define PW_PLANNER_NAME_MAX 200   /* bytes of a model, platform, config, sweep id */
#define PW_PLANNER_OPS_MAX 4096   /* ops of one catalogue entry */
#define PW_PLANNER_LIST_MAX 64    /* platforms or configs of one entry */
#define PW_PLANNER_COSTS_MAX 256  /* op costs of one CL */

typedef enum pw_planner_input {
	PW_PLANNER_ACCEPT = 0,
	PW_PLANNER_IGNORE,   /* a CL the planner itself published (perf_checked_by "planner") */
	PW_PLANNER_DEAD,
} pw_planner_input;

typedef enum pw_planner_kind {
	PW_PLANNER_CATALOGUE = 1,
	PW_PLANNER_CAPACITY,
	PW_PLANNER_SWEEP,
	PW_PLANNER_CL,
} pw_planner_kind;

/* The kind of a topic's messages; 0 for a topic the planner does not read. */
pw_planner_kind pw_planner_topic_kind(const char *topic);

/* The protobuf type name of a kind's messages, for dead letters. */
const char *pw_planner_kind_type(pw_planner_kind k);

pw_planner_input pw_planner_door(pw_planner_kind kind, const void *payload, size_t len,
                                 ProtobufCMessage **out, Perfwatch__V1__DlqReason *reason,
                                 char *detail, size_t dlen);

/* "cl/7841917" -> 7841917; 0 when malformed. */
int64_t pw_planner_cl_number(const char *cl);

/* "2026-06-17" -> days since the epoch; false when not a valid date in 1970..2200. */
bool pw_planner_day_parse(const char *s, int32_t *day);

#endif
