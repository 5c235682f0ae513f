/*
 * pw_input.h: checks every service makes on input strings before anything
 * else sees them — at the door, in one place.
 *
 * protobuf-c hands strings to C as NUL-terminated char *, so a string that
 * holds a NUL byte on the wire ("chat-8b\0evil") would silently become
 * "chat-8b", and two ids that differ after the NUL would collide; and it does
 * not check UTF-8, so invalid bytes would reach PostgreSQL, which refuses
 * them on every retry. pw_input_check_wire walks the wire form of a message
 * with its descriptor and refuses both before the message is unpacked.
 * The lengths of keys and ids are pw_limits.h's (PW_SERIES_KEY_MAX: the one
 * limit on a series key; the ingester enforces each part's).
 */
#ifndef PW_INPUT_H
#define PW_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "perfwatch/v1/common.pb-c.h"
#include "perfwatch/v1/dlq.pb-c.h"
#include "pw_limits.h"
#include "pw_status.h"


/* True when s[0..n) is well-formed UTF-8 (no overlongs, no surrogates) without a NUL byte. */
bool pw_input_utf8_ok(const char *s, size_t n);

/*
 * Walks buf[0..len), the wire form of a message of type desc, and checks
 * every string field at any depth (sub-messages included): no NUL byte,
 * well-formed UTF-8. PW_OK when all are clean or when the bytes are not a
 * well-formed message (the caller's unpack reports that); PW_ERR_INVALID with
 * errbuf naming the field ("field \"key.model\" contains a NUL byte") otherwise.
 */
pw_status pw_input_check_wire(const ProtobufCMessageDescriptor *desc, const void *buf, size_t len,
                              char *errbuf, size_t errlen);

/*
 * The first two steps of every service's door: pw_input_check_wire on
 * buf[0..len), then the protobuf-c unpack with desc. Returns
 * PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED with *out the message (the
 * caller frees it with protobuf_c_message_free_unpacked or its type's
 * free_unpacked); INVALID_VALUE (a NUL or invalid UTF-8, the field named in
 * detail) or DECODE_FAILED ("payload is not a perfwatch.v1.X") with *out NULL.
 */
Perfwatch__V1__DlqReason pw_input_decode(const ProtobufCMessageDescriptor *desc, const void *buf,
                                         size_t len, ProtobufCMessage **out, char *detail,
                                         size_t detail_len);

/*
 * Checks an unpacked message m at any depth against two caps: every string
 * and bytes field at most string_max bytes, every repeated field at most
 * list_max items. PW_OK, or PW_ERR_TOO_LARGE with errbuf naming the first
 * field beyond its cap ("field \"scope.correlated_series\" has 300 items (at
 * most 256)"). A door uses it so that what it accepts, and whatever a service
 * copies from it, stays bounded.
 */
pw_status pw_input_check_bounds(const ProtobufCMessage *m, size_t string_max, size_t list_max,
                                char *errbuf, size_t errlen);

/*
 * True when key is the canonical series key of k (the series table's
 * generated column): model/hlo_fingerprint/platform/config/metric. A message
 * whose series_key and series disagree names two series; the door refuses it
 * (DLQ_REASON_INCONSISTENT) rather than act on one of them.
 */
bool pw_input_series_key_matches(const char *key, const Perfwatch__V1__SeriesKey *k);

#endif
