/*
 * pw_enums.c: the text names of protobuf enums. See pw_enums.h.
 */
#include "pw_enums.h"

const char *pw_dlq_reason_name(Perfwatch__V1__DlqReason r)
{
	switch (r) {
	case PERFWATCH__V1__DLQ_REASON__DLQ_REASON_DECODE_FAILED: return "decode_failed";
	case PERFWATCH__V1__DLQ_REASON__DLQ_REASON_MISSING_FIELD: return "missing_field";
	case PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INVALID_VALUE: return "invalid_value";
	case PERFWATCH__V1__DLQ_REASON__DLQ_REASON_INCONSISTENT: return "inconsistent";
	case PERFWATCH__V1__DLQ_REASON__DLQ_REASON_CONFLICT: return "conflict";
	case PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNKNOWN_REFERENCE: return "unknown_reference";
	case PERFWATCH__V1__DLQ_REASON__DLQ_REASON_OVERSIZE: return "oversize";
	case PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED: return "processing_failed";
	default: return "unspecified";
	}
}

const char *pw_fleet_kind_name(Perfwatch__V1__FleetChangeKind k)
{
	switch (k) {
	case PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_RECABLING: return "recabling";
	case PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_FIRMWARE: return "firmware";
	case PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_HARNESS: return "harness";
	case PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_CHIP_SET: return "chip_set";
	case PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_HOST: return "host";
	case PERFWATCH__V1__FLEET_CHANGE_KIND__FLEET_CHANGE_KIND_RUNTIME: return "runtime";
	default: return "other";
	}
}
