/*
 * gate_request.h: the door of perf.gate.requests.v1 — what the gate checks of
 * a GateRequest before it stores it, as plain functions of the request and a
 * clock (no broker, no database), so that a table of hostile requests can
 * test them (tests/unit/test_gate_door.c).
 *
 * gate_service.c decodes every consumed request with pw_gate_request_decode
 * and dead-letters what it refuses; gate_store.c's pw_gate_store_request
 * checks again with pw_gate_request_check, so that no caller can store what
 * the schema's CHECKs would refuse.
 */
#ifndef PW_GATE_REQUEST_H
#define PW_GATE_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "perfwatch/v1/dlq.pb-c.h"
#include "perfwatch/v1/gate.pb-c.h"
#include "pw_limits.h"
#include "pw_status.h"

/* Bytes of a release id, its NUL included (perfwatch.gate_evaluations and pw_gate_pending). */
#define PW_GATE_RELEASE_ID_MAX (PW_RELEASE_ID_MAX + 1) /* with its NUL (pw_limits.h) */

/*
 * What a GateRequest must hold to be stored: a release_id shorter than
 * PW_GATE_RELEASE_ID_MAX, evaluation >= 1, a candidate build, a baseline
 * release, an FDR level in (0, 1) (0 means default_fdr_q), tier repeats with
 * a tier, n >= 1 and a finite mde_pct > 0, waivers with an id, an owner, a
 * reason, an expiry and a scope (pw_gate_waiver_check, against the later of
 * now_us and the request's time) and no id given twice with different
 * content, a pin only with a named family, an owner, an expiry and a
 * model-team sign-off (pw_gate_pin_check), expected wins with a series key
 * and a finite delta above -100%. PW_OK, or PW_ERR_INVALID with the reason.
 */
pw_status pw_gate_request_check(const Perfwatch__V1__GateRequest *req, double default_fdr_q,
                                int64_t now_us, char *errbuf, size_t errlen);

/*
 * The release a waiver pins its family to: its pin_release, else the
 * request's baseline_release (N−1); "" when it does not pin. Borrowed from
 * req or w.
 */
const char *pw_gate_pin_release(const Perfwatch__V1__GateRequest *req, const Perfwatch__V1__Waiver *w);

/*
 * Decodes one perf.gate.requests.v1 payload: the wire form (no NUL, valid
 * UTF-8 in any string: pw_input_check_wire) -> INVALID_VALUE; the protobuf
 * decode -> DECODE_FAILED; pw_gate_request_check -> INVALID_VALUE. Returns
 * PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED with *out the request (the
 * caller frees it with perfwatch__v1__gate_request__free_unpacked), or the
 * dead letter's reason with *out NULL and the detail in detail.
 */
Perfwatch__V1__DlqReason pw_gate_request_decode(const void *payload, size_t len,
                                                double default_fdr_q, int64_t now_us,
                                                Perfwatch__V1__GateRequest **out, char *detail,
                                                size_t detail_len);

#endif
