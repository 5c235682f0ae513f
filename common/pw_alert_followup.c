/*
 * pw_alert_followup.c: follow-up revisions of alerts (pw_alert_followup.h).
 *
 * The stored row (migration 0028) is the merge point of the bisector's and
 * the attributor's blocks: each locks it with UPDATE ... RETURNING, so two
 * services never publish the same revision and each follow-up carries the
 * latest of both blocks.
 */
#include "pw_alert_followup.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pw_input.h"
#include "pw_outbox.h"
#include "pw_topics.h"

bool pw_alert_is_follow_up(const Perfwatch__V1__Alert *al)
{
	return al && al->follow_up;
}

static char *nz(const char *s)
{
	return (char *)(s ? s : "");
}

bool pw_alert_within_bounds(const Perfwatch__V1__Alert *al, size_t len, char *detail, size_t dlen)
{
	const char *id = al && al->alert_id ? al->alert_id : "";
	if (len > PW_ALERT_MAX_BYTES) {
		snprintf(detail, dlen, "alert \"%.100s\" of %zu bytes (at most %u)", id, len, PW_ALERT_MAX_BYTES);
		return false;
	}
	char why[512];
	if (al && pw_input_check_bounds(&al->base, PW_ALERT_STRING_MAX, PW_ALERT_LIST_MAX, why, sizeof why) != PW_OK) {
		snprintf(detail, dlen, "alert \"%.100s\": %s", id, why);
		return false;
	}
	return true;
}

/* Strings a follow-up cuts: at most this many per follow-up, freed after packing. */
#define CUT_MAX 32

typedef struct cuts {
	char *owned[CUT_MAX];
	size_t n;
	bool nomem;
} cuts;

/* s, or its first PW_ALERT_STRING_MAX bytes ending on a character boundary (owned by c). */
static char *cut(cuts *c, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n <= PW_ALERT_STRING_MAX)
		return nz(s);
	n = PW_ALERT_STRING_MAX;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	char *o = c->n < CUT_MAX ? malloc(n + 1) : NULL;
	if (!o) {
		c->nomem = true;
		return "";
	}
	memcpy(o, s, n);
	o[n] = 0;
	c->owned[c->n++] = o;
	return o;
}

pw_status pw_alert_followup_pack(const void *payload, size_t len, uint32_t revision, const char *by,
                                 const pw_alert_blocks *b, uint8_t **out, size_t *outlen)
{
	*out = NULL;
	*outlen = 0;
	Perfwatch__V1__Alert *al = perfwatch__v1__alert__unpack(NULL, len, payload);
	if (!al)
		return PW_ERR_INVALID;
	pw_status st = PW_OK;
	cuts c = {.n = 0};
	if (revision <= al->revision || revision == 0) {
		st = PW_ERR_INVALID;
		goto out;
	}
	char why[16];
	bool whole = pw_alert_within_bounds(al, len, why, sizeof why);
	/*
	 * What is packed: the original itself, or (beyond the bounds) an Alert of
	 * its identity; either way the blocks below live on this stack until packed.
	 */
	Perfwatch__V1__Alert id = PERFWATCH__V1__ALERT__INIT;
	Perfwatch__V1__SeriesKey sk = PERFWATCH__V1__SERIES_KEY__INIT;
	Perfwatch__V1__Alert *f = al;
	if (!whole) {
		f = &id;
		id.alert_id = cut(&c, al->alert_id);
		id.revision = al->revision;
		id.kind = al->kind;
		id.source = al->source;
		id.created_unix_us = al->created_unix_us;
		id.series_id = al->series_id;
		id.series_key = cut(&c, al->series_key);
		if (al->series) {
			sk.model = cut(&c, al->series->model);
			sk.hlo_fingerprint = cut(&c, al->series->hlo_fingerprint);
			sk.platform = cut(&c, al->series->platform);
			sk.config = cut(&c, al->series->config);
			sk.metric = cut(&c, al->series->metric);
			id.series = &sk;
		}
		id.config_hash = cut(&c, al->config_hash);
		id.verdict = al->verdict;
		id.owner_hint = cut(&c, al->owner_hint);
		id.page = cut(&c, al->page);
		id.release_id = cut(&c, al->release_id);
		id.summary = cut(&c, al->summary);
		id.bisection = al->bisection;
		id.artifacts = al->artifacts;
	}
	Perfwatch__V1__AlertBisection *own_bis = f->bisection;
	Perfwatch__V1__AlertArtifacts *own_art = f->artifacts;
	Perfwatch__V1__AlertBisection bis;
	Perfwatch__V1__AlertArtifacts art;
	char *own_by = f->follow_up_by;
	f->revision = revision;
	f->follow_up = true;
	f->follow_up_by = cut(&c, by);
	if (!whole)
		f->bisection = NULL, f->artifacts = NULL; /* the original's own blocks are not copied either */
	if (b && b->has_bisection) {
		perfwatch__v1__alert_bisection__init(&bis);
		bis.bisection_id = cut(&c, b->bisection_id);
		bis.status = cut(&c, b->bisection_status);
		bis.culprit = cut(&c, b->culprit);
		bis.verified_adjacent_clean = b->verified_adjacent_clean;
		bis.cherry_pick_reproduced = b->cherry_pick_reproduced;
		bis.confidence = cut(&c, b->confidence);
		bis.reason = cut(&c, b->reason);
		f->bisection = &bis;
	}
	if (b && b->has_attribution) {
		perfwatch__v1__alert_artifacts__init(&art);
		if (own_art) {
			/* the traces are the detector's; keep them */
			art.trace_before = cut(&c, own_art->trace_before);
			art.trace_after = cut(&c, own_art->trace_after);
		}
		art.attribution_id = cut(&c, b->attribution_id);
		art.op_diff = cut(&c, b->op_diff);
		art.hlo_diff = cut(&c, b->hlo_diff);
		f->artifacts = &art;
	}
	if (c.nomem) {
		st = PW_ERR_NOMEM;
	} else {
		size_t n = perfwatch__v1__alert__get_packed_size(f);
		*out = malloc(n ? n : 1);
		if (!*out)
			st = PW_ERR_NOMEM;
		else
			*outlen = perfwatch__v1__alert__pack(f, *out);
	}
	f->bisection = own_bis;
	f->artifacts = own_art;
	f->follow_up_by = own_by;
out:
	for (size_t i = 0; i < c.n; i++)
		free(c.owned[i]);
	perfwatch__v1__alert__free_unpacked(al, NULL);
	return st;
}

pw_status pw_alert_followup_record(pw_pg *pg, const Perfwatch__V1__Alert *al, const char *key,
                                   const void *payload, size_t len, char *errbuf, size_t errlen)
{
	if (!al || !al->alert_id || !al->alert_id[0] || pw_alert_is_follow_up(al))
		return PW_OK;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, al->alert_id);
	pw_pg_params_text(&p, key && key[0] ? key : nz(al->series_key));
	pw_pg_params_int(&p, al->revision ? al->revision : 1);
	pw_pg_params_bin(&p, payload, len);
	return pw_pg_exec_params(pg,
	                         "INSERT INTO perfwatch.alert_followups (alert_id, topic_key, revision, payload) "
	                         "VALUES ($1, $2, $3, $4) ON CONFLICT (alert_id) DO UPDATE SET "
	                         "topic_key = EXCLUDED.topic_key, revision = EXCLUDED.revision, "
	                         "payload = EXCLUDED.payload, received_at = now() "
	                         "WHERE alert_followups.revision < EXCLUDED.revision",
	                         &p, 0, NULL, errbuf, errlen);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

pw_status pw_alert_followup_publish(pw_pg *pg, const char *service, const char *alert_id,
                                    const pw_alert_blocks *b, uint32_t *published, char *errbuf,
                                    size_t errlen)
{
	if (published)
		*published = 0;
	bool bis = b && b->has_bisection, att = b && b->has_attribution;
	if (!bis && !att)
		return PW_OK;
	pw_pg_params p;
	pw_pg_params_init(&p);
	pw_pg_params_text(&p, alert_id);
	pw_pg_params_bool(&p, bis);
	pw_pg_params_text(&p, bis ? nz(b->bisection_id) : "");
	pw_pg_params_text(&p, bis ? nz(b->bisection_status) : "");
	pw_pg_params_text(&p, bis ? nz(b->confidence) : "");
	pw_pg_params_text(&p, bis ? nz(b->reason) : "");
	pw_pg_params_text(&p, bis ? nz(b->culprit) : "");
	pw_pg_params_bool(&p, bis && b->verified_adjacent_clean);
	pw_pg_params_bool(&p, bis && b->cherry_pick_reproduced);
	pw_pg_params_bool(&p, att);
	pw_pg_params_text(&p, att ? nz(b->attribution_id) : "");
	pw_pg_params_text(&p, att ? nz(b->op_diff) : "");
	pw_pg_params_text(&p, att ? nz(b->hlo_diff) : "");
	/*
	 * Only a changed block moves the revision: the row is locked by the
	 * UPDATE; the next revision is above the original, the last follow-up
	 * and whatever perfwatch.alerts holds for the alert.
	 */
	PGresult *r = NULL;
	pw_status st = pw_pg_exec_params(
	        pg,
	        "UPDATE perfwatch.alert_followups f SET "
	        "bisection_id = CASE WHEN $2 THEN $3 ELSE f.bisection_id END, "
	        "bisection_status = CASE WHEN $2 THEN $4 ELSE f.bisection_status END, "
	        "confidence = CASE WHEN $2 THEN $5 ELSE f.confidence END, "
	        "reason = CASE WHEN $2 THEN $6 ELSE f.reason END, "
	        "culprit = CASE WHEN $2 THEN $7 ELSE f.culprit END, "
	        "verified_adjacent_clean = CASE WHEN $2 THEN $8 ELSE f.verified_adjacent_clean END, "
	        "cherry_pick_reproduced = CASE WHEN $2 THEN $9 ELSE f.cherry_pick_reproduced END, "
	        "attribution_id = CASE WHEN $10 THEN $11 ELSE f.attribution_id END, "
	        "op_diff = CASE WHEN $10 THEN $12 ELSE f.op_diff END, "
	        "hlo_diff = CASE WHEN $10 THEN $13 ELSE f.hlo_diff END, "
	        "published_revision = greatest(f.revision, f.published_revision, "
	        "  coalesce((SELECT a.revision FROM perfwatch.alerts a WHERE a.alert_id = f.alert_id), 0)) + 1, "
	        "published_at = now() "
	        "WHERE f.alert_id = $1 AND ("
	        " ($2 AND (f.bisection_id, f.bisection_status, f.confidence, f.reason, f.culprit, "
	        "  f.verified_adjacent_clean, f.cherry_pick_reproduced) IS DISTINCT FROM "
	        "  ($3, $4, $5, $6, $7, $8::boolean, $9::boolean)) OR "
	        " ($10 AND (f.attribution_id, f.op_diff, f.hlo_diff) IS DISTINCT FROM ($11, $12, $13))) "
	        "RETURNING f.published_revision, f.topic_key, encode(f.payload, 'hex'), f.bisection_id <> '', "
	        "f.bisection_id, f.bisection_status, f.confidence, f.reason, f.culprit, "
	        "f.verified_adjacent_clean, f.cherry_pick_reproduced, f.attribution_id <> '', f.attribution_id, "
	        "f.op_diff, f.hlo_diff",
	        &p, 0, &r, errbuf, errlen);
	if (st != PW_OK)
		return st;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return PW_OK; /* never recorded, or nothing changed */
	}
	uint32_t rev = (uint32_t)strtoul(PQgetvalue(r, 0, 0), NULL, 10);
	const char *hex = PQgetvalue(r, 0, 2);
	size_t hl = strlen(hex);
	uint8_t *orig = malloc(hl / 2 + 1);
	if (!orig) {
		PQclear(r);
		return PW_ERR_NOMEM;
	}
	size_t ol = 0;
	for (size_t i = 0; i + 1 < hl; i += 2) {
		int h = hexval(hex[i]), l = hexval(hex[i + 1]);
		if (h < 0 || l < 0)
			break;
		orig[ol++] = (uint8_t)(h << 4 | l);
	}
	pw_alert_blocks m = {
		.has_bisection = strcmp(PQgetvalue(r, 0, 3), "t") == 0,
		.bisection_id = PQgetvalue(r, 0, 4), .bisection_status = PQgetvalue(r, 0, 5),
		.confidence = PQgetvalue(r, 0, 6), .reason = PQgetvalue(r, 0, 7), .culprit = PQgetvalue(r, 0, 8),
		.verified_adjacent_clean = strcmp(PQgetvalue(r, 0, 9), "t") == 0,
		.cherry_pick_reproduced = strcmp(PQgetvalue(r, 0, 10), "t") == 0,
		.has_attribution = strcmp(PQgetvalue(r, 0, 11), "t") == 0,
		.attribution_id = PQgetvalue(r, 0, 12), .op_diff = PQgetvalue(r, 0, 13),
		.hlo_diff = PQgetvalue(r, 0, 14),
	};
	uint8_t *msg = NULL;
	size_t msglen = 0;
	st = pw_alert_followup_pack(orig, ol, rev, service, &m, &msg, &msglen);
	free(orig);
	if (st != PW_OK) {
		PQclear(r);
		return pw_fail(st, errbuf, errlen, "follow-up of alert \"%s\": the stored alert does not pack (%s)",
		               alert_id, pw_strerror(st));
	}
	char ref[256];
	snprintf(ref, sizeof ref, "alert:%.200s:r%" PRIu32, alert_id, rev);
	st = pw_outbox_add(pg, service, ref, PW_TOPIC_ALERTS, PQgetvalue(r, 0, 1), msg, msglen, errbuf, errlen);
	free(msg);
	if (st == PW_OK) {
		/* the alerts table shows the blocks too (its upsert keeps the higher revision) */
		pw_pg_params q;
		pw_pg_params_init(&q);
		pw_pg_params_text(&q, alert_id);
		pw_pg_params_int(&q, rev);
		pw_pg_params_text(&q, m.bisection_id);
		pw_pg_params_text(&q, m.bisection_status);
		pw_pg_params_text(&q, m.culprit);
		pw_pg_params_bool(&q, m.verified_adjacent_clean);
		pw_pg_params_bool(&q, m.cherry_pick_reproduced);
		pw_pg_params_text(&q, m.op_diff);
		pw_pg_params_text(&q, m.hlo_diff);
		st = pw_pg_exec_params(pg,
		                       "UPDATE perfwatch.alerts SET revision = $2, bisection_id = $3, "
		                       "bisection_status = $4, culprit = $5, verified_adjacent_clean = $6, "
		                       "cherry_pick_reproduced = $7, op_diff_uri = $8, hlo_diff_uri = $9, "
		                       "updated_at = now() WHERE alert_id = $1 AND revision < $2",
		                       &q, 0, NULL, errbuf, errlen);
	}
	PQclear(r);
	if (st == PW_OK && published)
		*published = rev;
	return st;
}
