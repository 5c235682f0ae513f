/*
 * pw_baseline.c: baseline records — states, pack, unpack, cache versions and
 * keys. See pw_baseline.h.
 */
#include "pw_baseline.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfwatch/v1/baseline.pb-c.h"

/* ------------------------------------------------------------- states */

const char *pw_baseline_state_name(pw_baseline_state st)
{
	switch (st) {
	case PW_BASELINE_BASELINING: return "baselining";
	case PW_BASELINE_ACTIVE: return "active";
	case PW_BASELINE_FROZEN: return "frozen";
	case PW_BASELINE_QUARANTINED: return "quarantined";
	}
	return "unknown";
}

pw_baseline_state pw_baseline_state_parse(const char *s)
{
	if (strcmp(s, "active") == 0)
		return PW_BASELINE_ACTIVE;
	if (strcmp(s, "frozen") == 0)
		return PW_BASELINE_FROZEN;
	if (strcmp(s, "quarantined") == 0)
		return PW_BASELINE_QUARANTINED;
	return PW_BASELINE_BASELINING;
}

static Perfwatch__V1__BaselineState state_proto(pw_baseline_state st)
{
	switch (st) {
	case PW_BASELINE_BASELINING: return PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_BASELINING;
	case PW_BASELINE_ACTIVE: return PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_ACTIVE;
	case PW_BASELINE_FROZEN: return PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_FROZEN;
	case PW_BASELINE_QUARANTINED: return PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_QUARANTINED;
	}
	return PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_UNSPECIFIED;
}

static pw_baseline_state state_from_proto(Perfwatch__V1__BaselineState st)
{
	switch (st) {
	case PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_ACTIVE: return PW_BASELINE_ACTIVE;
	case PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_FROZEN: return PW_BASELINE_FROZEN;
	case PERFWATCH__V1__BASELINE_STATE__BASELINE_STATE_QUARANTINED: return PW_BASELINE_QUARANTINED;
	default: return PW_BASELINE_BASELINING;
	}
}

/* ------------------------------------------------------------- records */

static void copy_str(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

int pw_series_key_split(const char *key, char *buf, size_t buflen, char *parts[5])
{
	snprintf(buf, buflen, "%s", key);
	int n = 0;
	char *p = buf;
	while (n < 5) {
		parts[n++] = p;
		char *slash = strchr(p, '/');
		if (!slash)
			break;
		*slash = '\0';
		p = slash + 1;
	}
	for (int i = n; i < 5; i++)
		parts[i] = buf + strlen(buf); /* empty */
	return n;
}

Perfwatch__V1__SeriesKey pw_series_key_of(const char *key, char *buf, size_t buflen)
{
	char *parts[5];
	pw_series_key_split(key, buf, buflen, parts);
	Perfwatch__V1__SeriesKey k = PERFWATCH__V1__SERIES_KEY__INIT;
	k.model = parts[0];
	k.hlo_fingerprint = parts[1];
	k.platform = parts[2];
	k.config = parts[3];
	k.metric = parts[4];
	return k;
}

pw_status pw_baseline_record_pack(const pw_baseline_record *r, uint8_t **buf, size_t *len)
{
	char kb[PW_SERIES_KEY_MAX];
	Perfwatch__V1__SeriesKey key = pw_series_key_of(r->series_key, kb, sizeof kb);
	Perfwatch__V1__Baseline b = PERFWATCH__V1__BASELINE__INIT;
	b.series_id = r->series_id;
	b.series_key = (char *)r->series_key;
	b.key = &key;
	b.version = r->version;
	b.state = state_proto(r->state);
	b.median = r->median;
	b.mad_n = r->mad_n;
	b.band_lo = r->band_lo;
	b.band_hi = r->band_hi;
	b.sigma = r->sigma;
	b.sigma_pct = r->sigma_pct;
	b.platform_norm_sigma_pct = r->platform_norm_sigma_pct;
	b.n = r->n;
	b.days = r->days;
	b.chip_sets = r->chip_sets;
	b.window_start_unix_us = r->window_start_us;
	b.window_end_unix_us = r->window_end_us;
	b.unit = (char *)r->unit;
	b.build_id = (char *)r->build_id;
	b.freeze_reason = (char *)r->freeze_reason;
	b.freeze_event_id = (char *)r->freeze_event_id;
	b.computed_unix_us = r->computed_us;
	b.required_n_top = r->required_n_top;
	b.required_n_tail = r->required_n_tail;
	b.mde_top_pct = r->mde_top_pct;
	b.mde_tail_pct = r->mde_tail_pct;
	b.gpu_class = r->gpu_class;
	size_t n = perfwatch__v1__baseline__get_packed_size(&b);
	uint8_t *out = malloc(n ? n : 1);
	if (!out)
		return PW_ERR_NOMEM;
	perfwatch__v1__baseline__pack(&b, out);
	*buf = out;
	*len = n;
	return PW_OK;
}

pw_status pw_baseline_record_unpack(const uint8_t *buf, size_t len, pw_baseline_record *r)
{
	Perfwatch__V1__Baseline *b = perfwatch__v1__baseline__unpack(NULL, len, buf);
	if (!b)
		return PW_ERR_INVALID;
	memset(r, 0, sizeof *r);
	r->series_id = b->series_id;
	copy_str(r->series_key, sizeof r->series_key, b->series_key);
	r->version = b->version;
	r->state = state_from_proto(b->state);
	r->median = b->median;
	r->mad_n = b->mad_n;
	r->band_lo = b->band_lo;
	r->band_hi = b->band_hi;
	r->sigma = b->sigma;
	r->sigma_pct = b->sigma_pct;
	r->platform_norm_sigma_pct = b->platform_norm_sigma_pct;
	r->n = b->n;
	r->days = b->days;
	r->chip_sets = b->chip_sets;
	r->window_start_us = b->window_start_unix_us;
	r->window_end_us = b->window_end_unix_us;
	copy_str(r->unit, sizeof r->unit, b->unit);
	copy_str(r->build_id, sizeof r->build_id, b->build_id);
	copy_str(r->freeze_reason, sizeof r->freeze_reason, b->freeze_reason);
	copy_str(r->freeze_event_id, sizeof r->freeze_event_id, b->freeze_event_id);
	r->computed_us = b->computed_unix_us;
	r->required_n_top = b->required_n_top;
	r->required_n_tail = b->required_n_tail;
	r->mde_top_pct = b->mde_top_pct;
	r->mde_tail_pct = b->mde_tail_pct;
	r->gpu_class = b->gpu_class;
	perfwatch__v1__baseline__free_unpacked(b, NULL);
	return PW_OK;
}

uint64_t pw_baseline_cache_version_of(uint32_t version, pw_baseline_state state)
{
	if (version == 0)
		return 0;
	/* a frozen version replaces the same version's active or quarantined state;
	 * version·4 + 2 < 2^34, below the encoding's bits */
	return ((uint64_t)PW_BASELINE_CACHE_ENCODING << PW_BASELINE_CACHE_ENCODING_SHIFT) +
	       (uint64_t)version * 4u + (state == PW_BASELINE_FROZEN ? 2u : 1u);
}

uint64_t pw_baseline_cache_version(const pw_baseline_record *r)
{
	return pw_baseline_cache_version_of(r->version, r->state);
}

void pw_baseline_cache_key(char *buf, size_t len, const char *series_key)
{
	snprintf(buf, len, PW_BASELINE_CACHE_PREFIX "%s", series_key);
}
