/*
 * pw_enums.h: the text names under which protobuf enums are stored in
 * PostgreSQL and shown in logs and metrics — one spelling for every service
 * (the CHECK lists of migrations/ hold the same words).
 */
#ifndef PW_ENUMS_H
#define PW_ENUMS_H

#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/fleet.pb-c.h"

/* "decode_failed", "missing_field", ..., "processing_failed"; "unspecified" for 0 and unknown values. */
const char *pw_dlq_reason_name(Perfwatch__V1__DlqReason r);

/* "recabling", "firmware", "harness", "chip_set", "host", "runtime"; "other" for anything else. */
const char *pw_fleet_kind_name(Perfwatch__V1__FleetChangeKind k);

#endif
