/*
 * store.c: the ingester's batch against PostgreSQL and Kafka (contract and
 * the order of steps in store.h).
 *
 * A batch is a table of items, one per message; a transaction covers a
 * subset of them (normally all). When the transaction fails on the data
 * itself (PW_ERR_PG, which validation should have prevented), the batch is
 * redone one run per transaction so that the one bad run is dead-lettered as
 * processing_failed and the others still go in. Retriable failures (server
 * gone, timeouts) are returned to the consumer loop, which backs off and
 * hands the same batch again.
 */
#include "store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pw_dlq.h"
#include "pw_time.h"
#include "pw_topics.h"
#include "rows.h"

#define COPY_MAX (512u << 20) /* a batch's COPY data, at most */

/* ---- a small string → int64 map (open addressing, owned keys) --------------- */

typedef struct smap {
	char **keys;
	int64_t *vals;
	size_t cap, n;
} smap;

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static void smap_release(smap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

static bool smap_get(const smap *m, const char *k, int64_t *v)
{
	if (!m->cap)
		return false;
	for (size_t i = hash_str(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i])
			return false;
		if (strcmp(m->keys[i], k) == 0) {
			if (v)
				*v = m->vals[i];
			return true;
		}
	}
}

static pw_status smap_put(smap *m, const char *k, int64_t v)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 256;
		char **nk = calloc(nc, sizeof *nk);
		int64_t *nv = calloc(nc, sizeof *nv);
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return PW_ERR_NOMEM;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->keys[i])
				continue;
			size_t j = hash_str(m->keys[i]) & (nc - 1);
			while (nk[j])
				j = (j + 1) & (nc - 1);
			nk[j] = m->keys[i];
			nv[j] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = nk;
		m->vals = nv;
		m->cap = nc;
	}
	size_t i = hash_str(k) & (m->cap - 1);
	while (m->keys[i] && strcmp(m->keys[i], k) != 0)
		i = (i + 1) & (m->cap - 1);
	if (m->keys[i]) {
		m->vals[i] = v;
		return PW_OK;
	}
	m->keys[i] = strdup(k);
	if (!m->keys[i])
		return PW_ERR_NOMEM;
	m->vals[i] = v;
	m->n++;
	return PW_OK;
}

/* ---- the series-id cache shared by a process's workers ------------------------- */

struct pw_series_cache {
	pthread_rwlock_t lock; /* readers: a batch's lookups; writer: its committed new ids */
	smap map;
	size_t max;
};

pw_status pw_series_cache_new(pw_series_cache **out, size_t max)
{
	*out = NULL;
	pw_series_cache *c = calloc(1, sizeof *c);
	if (!c)
		return PW_ERR_NOMEM;
	if (pthread_rwlock_init(&c->lock, NULL) != 0) {
		free(c);
		return PW_ERR_NOMEM;
	}
	c->max = max ? max : 1000000;
	*out = c;
	return PW_OK;
}

void pw_series_cache_free(pw_series_cache *c)
{
	if (!c)
		return;
	smap_release(&c->map);
	pthread_rwlock_destroy(&c->lock);
	free(c);
}

/* Adds the committed ids of m; the cache is only an optimisation, so a full or failed map is emptied. */
static void series_cache_add(pw_series_cache *c, const smap *m)
{
	if (!m->n)
		return;
	pthread_rwlock_wrlock(&c->lock);
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i]) {
			if (c->map.n >= c->max)
				smap_release(&c->map);
			if (smap_put(&c->map, m->keys[i], m->vals[i]) != PW_OK)
				smap_release(&c->map);
		}
	pthread_rwlock_unlock(&c->lock);
}

/* ---- the ingester -------------------------------------------------------------- */

enum { ST_NEW = 0, ST_DUP, ST_DLQ };

typedef struct item {
	rd_kafka_message_t *msg;
	Perfwatch__V1__RunResult *run; /* NULL when dead-lettered before decoding completed */
	pw_dlq_reason reason;
	char detail[256];
	uint8_t sha[32];
	int state;
	int64_t *sids;                 /* series id per metric */
	char **keys;                   /* series key per metric, built once (one allocation) */
} item;

struct pw_ingester {
	pw_pg *pg;
	pw_producer *prod;
	const pw_log *lg;
	pw_ingest_opts o;
	pw_series_cache *cache;        /* o.series_cache, or own_cache */
	pw_series_cache *own_cache;
	pw_copybuf buf;
	pw_ingest_counts counts;
	pw_ingest_metrics m;           /* all NULL: no metrics */
};

pw_status pw_ingest_metrics_register(pw_metrics *reg, pw_ingest_metrics *m, char *errbuf,
                                     size_t errlen)
{
	static const char *const reason_label[] = {"reason", NULL};
	static const double lat[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
	static const double sizes[] = {1, 10, 50, 100, 250, 500, 1000, 2500, 5000};
	pw_status st;
	memset(m, 0, sizeof *m);
	if ((st = pw_metrics_counter(reg, "perfwatch_ingester_runs_accepted_total",
	                             "runs newly stored", NULL, &m->runs, errbuf, errlen)) ||
	    (st = pw_metrics_counter(reg, "perfwatch_ingester_samples_accepted_total",
	                             "metric samples newly stored (one per series point)", NULL,
	                             &m->samples, errbuf, errlen)) ||
	    (st = pw_metrics_counter(reg, "perfwatch_ingester_duplicates_total",
	                             "runs dropped as duplicates (same run id, repeat and payload)",
	                             NULL, &m->dups, errbuf, errlen)) ||
	    (st = pw_metrics_counter(reg, "perfwatch_ingester_rejected_total",
	                             "runs dead-lettered to perf.dlq.v1, by reason", reason_label,
	                             &m->rejected, errbuf, errlen)) ||
	    (st = pw_metrics_counter(reg, "perfwatch_ingester_points_published_total",
	                             "series points produced on perf.points.v1 (at least once)", NULL,
	                             &m->points, errbuf, errlen)) ||
	    (st = pw_metrics_counter(reg, "perfwatch_ingester_series_created_total",
	                             "new series (model, fingerprint, platform, config, metric)", NULL,
	                             &m->series, errbuf, errlen)) ||
	    (st = pw_metrics_histogram(reg, "perfwatch_ingester_batch_seconds",
	                               "wall time of one batch, decode to its points enqueued", NULL, lat,
	                               sizeof lat / sizeof lat[0], &m->batch_s, errbuf, errlen)) ||
	    (st = pw_metrics_histogram(reg, "perfwatch_ingester_batch_messages", "messages per batch",
	                               NULL, sizes, sizeof sizes / sizeof sizes[0], &m->batch_n, errbuf,
	                               errlen)))
		return st;
	return PW_OK;
}

pw_status pw_ingester_new(pw_ingester **out, pw_pg *pg, pw_producer *producer, const pw_log *lg,
                          const pw_ingest_metrics *m, const pw_ingest_opts *o, char *errbuf,
                          size_t errlen)
{
	*out = NULL;
	pw_ingester *ing = calloc(1, sizeof *ing);
	if (!ing)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	ing->pg = pg;
	ing->prod = producer;
	ing->lg = lg;
	if (m)
		ing->m = *m;
	if (o)
		ing->o = *o;
	if (!ing->o.flush_timeout_ms)
		ing->o.flush_timeout_ms = 30000;
	if (!ing->o.series_cache_max)
		ing->o.series_cache_max = 1000000;
	if (!ing->o.points_topic)
		ing->o.points_topic = PW_TOPIC_POINTS;
	ing->cache = ing->o.series_cache;
	if (!ing->cache) {
		if (pw_series_cache_new(&ing->own_cache, ing->o.series_cache_max) != PW_OK) {
			free(ing);
			return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
		}
		ing->cache = ing->own_cache;
	}
	pw_copybuf_init(&ing->buf, COPY_MAX);
	*out = ing;
	return PW_OK;
}

void pw_ingester_free(pw_ingester *ing)
{
	if (!ing)
		return;
	pw_series_cache_free(ing->own_cache);
	pw_copybuf_release(&ing->buf);
	free(ing);
}

void pw_ingester_counts_get(const pw_ingester *ing, pw_ingest_counts *out)
{
	*out = ing->counts;
}

static void run_key(char *buf, size_t len, const Perfwatch__V1__RunResult *r)
{
	snprintf(buf, len, "%s\x1f%u", r->run_id, r->repeat_index);
}

/* bytea's text output: \x and 64 hex digits */
static void sha_hex(const uint8_t sha[32], char out[67])
{
	static const char digits[] = "0123456789abcdef";
	out[0] = '\\';
	out[1] = 'x';
	for (int i = 0; i < 32; i++) {
		out[2 + 2 * i] = digits[sha[i] >> 4];
		out[3 + 2 * i] = digits[sha[i] & 15];
	}
	out[66] = '\0';
}

static pw_status exec0(pw_ingester *ing, const char *sql, PGresult **res, char *e, size_t el)
{
	return pw_pg_exec(ing->pg, sql, 0, NULL, res, e, el);
}

enum rows_kind { ROWS_RUN, ROWS_SAMPLES, ROWS_OPS };

#define COPY_CHUNK (256u << 10)

/*
 * COPYs the rows of every new item, sending them as they are formatted: the
 * server parses and indexes one chunk while the next is being written, and
 * the buffer never holds more than a chunk and one run's rows.
 */
static pw_status copy_items(pw_ingester *ing, const char *sql, item *const *its, size_t n,
                            enum rows_kind kind, uint64_t *rows, char *e, size_t el)
{
	pw_copybuf *b = &ing->buf;
	pw_status st = pw_pg_copy_begin(ing->pg, sql, e, el);
	if (st != PW_OK)
		return st;
	pw_copybuf_reset(b);
	pw_copybin_header(b);
	for (size_t i = 0; i <= n; i++) {
		if (i < n && its[i]->state == ST_NEW) {
			const item *it = its[i];
			if (kind == ROWS_RUN)
				pw_ingest_row_run(b, it->run, it->sha, it->msg->partition, it->msg->offset);
			else if (kind == ROWS_SAMPLES)
				pw_ingest_rows_samples(b, it->run, it->sids);
			else
				pw_ingest_rows_ops(b, it->run);
		}
		if (i == n)
			pw_copybin_trailer(b);
		if (b->err != PW_OK) {
			st = pw_fail(b->err, e, el, "copy data of one run exceeds %u bytes", COPY_MAX);
			break;
		}
		if (b->len && (b->len >= COPY_CHUNK || i == n)) {
			if ((st = pw_pg_copy_put(ing->pg, b->data, b->len, e, el)) != PW_OK)
				break;
			pw_copybuf_reset(b);
		}
	}
	if (st != PW_OK) {
		pw_pg_copy_abort(ing->pg, "ingester: copy failed");
		return st;
	}
	uint64_t nrows = 0;
	st = pw_pg_copy_end(ing->pg, &nrows, e, el);
	if (st == PW_OK && rows)
		*rows += nrows;
	return st;
}

static const char *const stage_ddl[] = {
	"SET LOCAL client_min_messages = warning",
	"CREATE TEMP TABLE IF NOT EXISTS pw_stage_series (model text, hlo_fingerprint text, "
	"platform text, config text, metric text, unit text, direction text) ON COMMIT DELETE ROWS",
};

/*
 * Resolves the series id of every metric of every valid item: from the
 * shared cache, from pending (committed earlier in this batch), else by a
 * staged insert and read whose ids go to txn, valid only if this
 * transaction commits.
 */
static pw_status resolve_series(pw_ingester *ing, item **its, size_t n, const smap *pending,
                                smap *txn, uint64_t *created, char *e, size_t el)
{
	pw_copybuf_reset(&ing->buf);
	smap staged = {0};
	pw_status st = PW_OK;
	size_t nstaged = 0;
	pthread_rwlock_rdlock(&ing->cache->lock);
	for (size_t i = 0; i < n && st == PW_OK; i++) {
		item *it = its[i];
		if (it->state == ST_DLQ)
			continue;
		for (size_t m = 0; m < it->run->n_metrics; m++) {
			const char *key = it->keys[m];
			it->sids[m] = -1;
			if (smap_get(&ing->cache->map, key, &it->sids[m]) ||
			    smap_get(pending, key, &it->sids[m]) || smap_get(txn, key, &it->sids[m]) ||
			    smap_get(&staged, key, NULL))
				continue;
			if ((st = smap_put(&staged, key, 0)) != PW_OK)
				break;
			const Perfwatch__V1__MetricSample *ms = it->run->metrics[m];
			int mi = pw_ingest_metric_index(ms->name);
			pw_copybuf *b = &ing->buf;
			const Perfwatch__V1__RunKey *k = it->run->key;
			pw_copybuf_text(b, k->model);
			pw_copybuf_sep(b);
			pw_copybuf_text(b, k->hlo_fingerprint);
			pw_copybuf_sep(b);
			pw_copybuf_text(b, k->platform->name);
			pw_copybuf_sep(b);
			pw_copybuf_text(b, k->config->name);
			pw_copybuf_sep(b);
			pw_copybuf_text(b, ms->name);
			pw_copybuf_sep(b);
			pw_copybuf_text(b, pw_ingest_metric_unit(mi));
			pw_copybuf_sep(b);
			pw_copybuf_text(b, pw_ingest_metric_lower_is_better(mi) ? "lower_is_better"
			                                                        : "higher_is_better");
			pw_copybuf_eol(b);
			nstaged++;
		}
	}
	pthread_rwlock_unlock(&ing->cache->lock);
	if (st != PW_OK)
		goto done;
	if (nstaged) {
		PGresult *res = NULL;
		if ((st = pw_copy_send(ing->pg, "COPY pw_stage_series FROM STDIN", &ing->buf, NULL, e,
		                       el)) != PW_OK)
			goto done;
		st = exec0(ing,
		           "INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, "
		           "metric, unit, direction) SELECT model, hlo_fingerprint, platform, config, "
		           "metric, unit, direction FROM pw_stage_series ON CONFLICT DO NOTHING",
		           &res, e, el);
		if (st != PW_OK)
			goto done;
		*created += strtoull(PQcmdTuples(res), NULL, 10);
		PQclear(res);
		/*
		 * One probe of series' natural key per staged row (a LATERAL with
		 * LIMIT stays a nested loop): the staged table has no statistics,
		 * and a plain join got a hash join that read and hashed all of
		 * series for every batch with a new series (26 ms at 28,000 series,
		 * growing with the fleet; 16 ms this way for 2,500 staged rows).
		 */
		st = exec0(ing,
		           "SELECT s.series_key, s.series_id FROM pw_stage_series t CROSS JOIN LATERAL "
		           "(SELECT series_key, series_id FROM perfwatch.series x WHERE x.model = t.model "
		           "AND x.hlo_fingerprint = t.hlo_fingerprint AND x.platform = t.platform AND "
		           "x.config = t.config AND x.metric = t.metric LIMIT 1) s",
		           &res, e, el);
		if (st != PW_OK)
			goto done;
		for (int r = 0; r < PQntuples(res) && st == PW_OK; r++)
			st = smap_put(txn, PQgetvalue(res, r, 0),
			              strtoll(PQgetvalue(res, r, 1), NULL, 10));
		PQclear(res);
		if (st != PW_OK)
			goto done;
	}
	for (size_t i = 0; i < n; i++) {
		item *it = its[i];
		if (it->state == ST_DLQ)
			continue;
		for (size_t m = 0; m < it->run->n_metrics; m++)
			if (it->sids[m] < 0 && !smap_get(txn, it->keys[m], &it->sids[m])) {
				st = pw_fail(PW_ERR_PG, e, el, "series \"%s\" has no id after insert",
				             it->keys[m]);
				goto done;
			}
	}
done:
	smap_release(&staged);
	return st;
}

/*
 * One transaction over its[0..n): every write of those items, or none. The
 * series ids it created and its counts reach pending and the counters only
 * when it commits: a rolled-back series id must never be used.
 */
static pw_status write_items(pw_ingester *ing, item **its, size_t n, smap *pending,
                             uint64_t *samples_written, uint64_t *created, char *e, size_t el)
{
	smap txn = {0};
	uint64_t nsamples = 0, ncreated = 0;
	pw_status st = pw_pg_begin(ing->pg, e, el);
	if (st != PW_OK)
		return st;
	for (size_t i = 0; i < sizeof stage_ddl / sizeof stage_ddl[0]; i++)
		if ((st = exec0(ing, stage_ddl[i], NULL, e, el)) != PW_OK)
			goto fail;
	if ((st = resolve_series(ing, its, n, pending, &txn, &ncreated, e, el)) != PW_OK)
		goto fail;

	/*
	 * Runs: the keys of this transaction's runs are looked up in
	 * perfwatch.runs, as two array parameters (unnest of an array is planned
	 * as a few index probes; a staged temp table has no statistics and got a
	 * scan of all of runs). A run already stored is a duplicate (same payload
	 * SHA-256) or a conflict; the others are COPYed straight into the table,
	 * with their samples and op timings after them. A concurrent writer of
	 * the same key (a redelivery across a rebalance) makes that COPY wait on
	 * the unique index and then fail; the caller then redoes the batch one
	 * run per transaction, where the lookup sees the other writer's row.
	 */
	char sql[2048];
	size_t nnew = 0;
	pw_copybuf ids, reps;
	pw_copybuf_init(&ids, COPY_MAX);
	pw_copybuf_init(&reps, COPY_MAX);
	for (size_t i = 0; i < n; i++)
		if (its[i]->state == ST_NEW) {
			pw_copybuf_put(&ids, nnew ? ",\"" : "{\"", 2);
			for (const char *c = its[i]->run->run_id; *c; c++) {
				if (*c == '"' || *c == '\\')
					pw_copybuf_put(&ids, "\\", 1);
				pw_copybuf_put(&ids, c, 1);
			}
			pw_copybuf_put(&ids, "\"", 1);
			pw_copybuf_put(&reps, nnew ? "," : "{", 1);
			pw_copybuf_uint(&reps, its[i]->run->repeat_index);
			nnew++;
		}
	if (nnew) {
		pw_copybuf_put(&ids, "}", 2); /* with the terminating NUL */
		pw_copybuf_put(&reps, "}", 2);
		PGresult *res = NULL;
		if (ids.err != PW_OK || reps.err != PW_OK)
			st = pw_fail(PW_ERR_NOMEM, e, el, "run keys of the batch exceed %u bytes", COPY_MAX);
		/*
		 * The keys are probed in runs' primary key, always: the planner's
		 * estimates lag behind a runs table that grew or shrank since its
		 * last analyze (a new database, a bulk delete), and it then chose a
		 * hash join over a scan of all of runs, 170-200 ms a batch instead
		 * of 7 ms.
		 */
		else if ((st = exec0(ing, "SET LOCAL enable_seqscan = off", NULL, e, el)) == PW_OK &&
		         (st = pw_pg_exec(ing->pg,
		                          "SELECT r.run_id, r.repeat_index, r.payload_sha256 "
		                          "FROM unnest($1::text[], $2::integer[]) AS k (run_id, repeat_index) "
		                          "JOIN perfwatch.runs r USING (run_id, repeat_index)",
		                          2, (const char *[]){ids.data, reps.data}, &res, e, el)) == PW_OK)
			st = exec0(ing, "SET LOCAL enable_seqscan = on", NULL, e, el);
		if (st == PW_OK && PQntuples(res) > 0) {
			smap stored = {0};
			char k[512], hex[67];
			for (int r = 0; r < PQntuples(res) && st == PW_OK; r++) {
				snprintf(k, sizeof k, "%s\x1f%s", PQgetvalue(res, r, 0), PQgetvalue(res, r, 1));
				st = smap_put(&stored, k, r);
			}
			for (size_t i = 0; i < n && st == PW_OK; i++) {
				item *it = its[i];
				int64_t r;
				if (it->state != ST_NEW)
					continue;
				run_key(k, sizeof k, it->run);
				if (!smap_get(&stored, k, &r))
					continue;
				nnew--;
				sha_hex(it->sha, hex);
				if (strcmp(PQgetvalue(res, (int)r, 2), hex) == 0) {
					it->state = ST_DUP;
					continue;
				}
				it->state = ST_DLQ;
				it->reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_CONFLICT;
				snprintf(it->detail, sizeof it->detail,
				         "run \"%.100s\" repeat %u is already stored with a different payload",
				         it->run->run_id, it->run->repeat_index);
			}
			smap_release(&stored);
		}
		PQclear(res);
	}
	pw_copybuf_release(&ids);
	pw_copybuf_release(&reps);
	if (st != PW_OK)
		goto fail;
	if (nnew) {
		/*
		 * the runs, then the samples and op timings of the runs this transaction inserts;
		 * sql-ok: the column lists are identifiers from rows.c's static tables, the values
		 * travel in COPY's binary stream
		 */
		snprintf(sql, sizeof sql, "COPY perfwatch.runs (%s) FROM STDIN (FORMAT binary)",
		         pw_ingest_run_columns);
		if ((st = copy_items(ing, sql, its, n, ROWS_RUN, NULL, e, el)) != PW_OK)
			goto fail;
		/* sql-ok: identifiers (rows.c's sample columns) */
		snprintf(sql, sizeof sql, "COPY perfwatch.samples (%s) FROM STDIN (FORMAT binary)",
		         pw_ingest_sample_columns);
		if ((st = copy_items(ing, sql, its, n, ROWS_SAMPLES, &nsamples, e, el)) != PW_OK)
			goto fail;
		/* sql-ok: identifiers (rows.c's op-timing columns) */
		snprintf(sql, sizeof sql, "COPY perfwatch.op_timings (%s) FROM STDIN (FORMAT binary)",
		         pw_ingest_op_columns);
		if ((st = copy_items(ing, sql, its, n, ROWS_OPS, NULL, e, el)) != PW_OK)
			goto fail;
	}

	if ((st = pw_pg_commit(ing->pg, e, el)) != PW_OK)
		goto fail;
	for (size_t i = 0; i < txn.cap && st == PW_OK; i++)
		if (txn.keys[i])
			st = smap_put(pending, txn.keys[i], txn.vals[i]);
	smap_release(&txn);
	if (st != PW_OK)
		return pw_fail(st, e, el, "out of memory");
	*samples_written += nsamples;
	*created += ncreated;
	return PW_OK;
fail:
	pw_pg_rollback(ing->pg, NULL, 0);
	smap_release(&txn);
	return st;
}

/*
 * The series key of every metric of a run, in one allocation (the pointer
 * array, then the keys): built once, used by the lookups, the resolution and
 * the points' Kafka keys. Validation has bounded the parts' lengths.
 */
static char **series_keys(const Perfwatch__V1__RunResult *run)
{
	const Perfwatch__V1__RunKey *k = run->key;
	size_t nm = run->n_metrics;
	size_t prefix = strlen(k->model) + strlen(k->hlo_fingerprint) + strlen(k->platform->name) +
	                strlen(k->config->name) + 4;
	size_t total = nm * sizeof(char *);
	for (size_t m = 0; m < nm; m++)
		total += prefix + strlen(run->metrics[m]->name) + 1;
	char **keys = malloc(total ? total : 1);
	if (!keys)
		return NULL;
	char *at = (char *)(keys + nm);
	for (size_t m = 0; m < nm; m++) {
		size_t len = prefix + strlen(run->metrics[m]->name) + 1;
		keys[m] = at;
		pw_ingest_series_key(at, len, run, run->metrics[m]->name);
		at += len;
	}
	return keys;
}

static void items_release(item *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (items[i].run)
			perfwatch__v1__run_result__free_unpacked(items[i].run, NULL);
		free(items[i].sids);
		free(items[i].keys);
	}
	free(items);
}

pw_status pw_ingester_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                            size_t errlen)
{
	pw_ingester *ing = ctx;
	double t0 = pw_mono_s();
	pw_status st = PW_OK;
	smap pending = {0}, seen = {0};
	item *items = calloc(n ? n : 1, sizeof *items);
	item **its = calloc(n ? n : 1, sizeof *its);
	uint64_t samples_written = 0, created = 0;
	if (!items || !its) {
		st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory for a batch of %zu", n);
		goto done;
	}
	pw_ingest_limits lim;
	pw_ingest_limits_default(&lim, pw_now_us());
	if (ing->o.max_age_us)
		lim.max_age_us = ing->o.max_age_us;
	if (ing->o.max_future_us)
		lim.max_future_us = ing->o.max_future_us;
	if (ing->o.max_payload)
		lim.max_payload = ing->o.max_payload;

	/* decode and validate; tell in-batch duplicates from conflicts */
	for (size_t i = 0; i < n; i++) {
		item *it = &items[i];
		its[i] = it;
		it->msg = msgs[i];
		it->reason = pw_ingest_decode(msgs[i]->payload, msgs[i]->len, &lim, &it->run, it->detail,
		                              sizeof it->detail);
		if (it->reason != PW_DLQ_NONE) {
			it->state = ST_DLQ;
			continue;
		}
		it->sids = calloc(it->run->n_metrics, sizeof *it->sids);
		it->keys = series_keys(it->run);
		if (!it->sids || !it->keys) {
			st = pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
			goto done;
		}
		pw_sha256(msgs[i]->payload, msgs[i]->len, it->sha);
		char k[512];
		run_key(k, sizeof k, it->run);
		int64_t first;
		if (smap_get(&seen, k, &first)) {
			if (memcmp(items[first].sha, it->sha, 32) == 0) {
				it->state = ST_DUP;
			} else {
				it->state = ST_DLQ;
				it->reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_CONFLICT;
				snprintf(it->detail, sizeof it->detail,
				         "run \"%.100s\" repeat %u appears twice in a batch with different payloads",
				         it->run->run_id, it->run->repeat_index);
			}
			continue;
		}
		if ((st = smap_put(&seen, k, (int64_t)i)) != PW_OK) {
			pw_fail(st, errbuf, errlen, "out of memory");
			goto done;
		}
	}

	double t_decoded = pw_mono_s();
	st = write_items(ing, its, n, &pending, &samples_written, &created, errbuf, errlen);
	if (st == PW_ERR_PG) {
		/* the data broke a statement: isolate the run that did it */
		pw_log_warn(ing->lg, "batch of %zu failed on its data, retrying one run at a time: %s", n,
		            errbuf);
		for (size_t i = 0; i < n; i++) {
			item *one = &items[i];
			st = write_items(ing, &one, 1, &pending, &samples_written, &created, errbuf, errlen);
			/*
			 * Once more: when a concurrent writer of the same run key made the
			 * COPY fail, it had committed by then, and the lookup now sees its
			 * row. A run that fails twice is dead-lettered.
			 */
			if (st == PW_ERR_PG)
				st = write_items(ing, &one, 1, &pending, &samples_written, &created, errbuf,
				                 errlen);
			if (st == PW_ERR_PG) {
				one->state = ST_DLQ;
				one->reason = PERFWATCH__V1__DLQ_REASON__DLQ_REASON_PROCESSING_FAILED;
				snprintf(one->detail, sizeof one->detail, "storing the run failed: %.200s",
				         errbuf);
				st = write_items(ing, &one, 1, &pending, &samples_written, &created, errbuf,
				                 errlen);
			}
			if (st != PW_OK)
				goto done;
		}
	}
	if (st != PW_OK)
		goto done;

	double t_stored = pw_mono_s();
	/* committed: remember the new series ids, then publish */
	series_cache_add(ing->cache, &pending);
	uint64_t points = 0, runs_new = 0, dups = 0, rejected[16] = {0};
	int64_t failed_at = pw_now_us();
	for (size_t i = 0; i < n; i++) {
		item *it = &items[i];
		if (it->state == ST_DLQ) {
			/* after the commit, so that a retried transaction sends nothing twice */
			rd_kafka_message_t *m = it->msg;
			pw_dlq_source src;
			pw_dlq_source_from_message(&src, m, "ingester", "perfwatch.v1.RunResult");
			st = pw_dlq_record(ing->pg, ing->prod, &src, it->reason, it->detail, failed_at,
			                   ing->o.flush_timeout_ms, errbuf, errlen);
			if (st != PW_OK)
				goto done;
			rejected[(unsigned)it->reason & 15]++;
			pw_log_warn(ing->lg, "dead-lettered %s[%d]@%lld: %s: %s", rd_kafka_topic_name(m->rkt),
			            (int)m->partition, (long long)m->offset, pw_dlq_reason_name(it->reason),
			            it->detail);
			continue;
		}
		if (it->state == ST_DUP)
			dups++;
		else
			runs_new++;
		for (size_t k = 0; k < it->run->n_metrics; k++) {
			uint8_t *buf;
			size_t len;
			const char *key = it->keys[k];
			if ((st = pw_ingest_point_pack(it->run, k, it->sids[k], key, &buf, &len)) != PW_OK) {
				pw_fail(st, errbuf, errlen, "packing a series point failed");
				goto done;
			}
			st = pw_producer_produce(ing->prod, ing->o.points_topic, key, strlen(key), buf, len,
			                         ing->o.flush_timeout_ms, errbuf, errlen);
			free(buf);
			if (st != PW_OK)
				goto done;
			points++;
		}
		if ((i & 63) == 63)
			pw_producer_poll(ing->prod, 0);
	}
	/* the consumer loop commits the batch once these points are acknowledged
	 * (pw_consumer_opts.outputs), after handing over the next batch */
	double t_produced = pw_mono_s();
	pw_log_debug(ing->lg, "batch of %zu: decode %.1f ms, postgresql %.1f ms, produce %.1f ms, "
	             "%llu points", n, (t_decoded - t0) * 1e3, (t_stored - t_decoded) * 1e3,
	             (t_produced - t_stored) * 1e3, (unsigned long long)points);

	ing->counts.batches++;
	ing->counts.runs_accepted += runs_new;
	ing->counts.samples_accepted += samples_written;
	ing->counts.duplicates += dups;
	ing->counts.points_published += points;
	ing->counts.series_created += created;
	for (int r = 0; r < 16; r++)
		ing->counts.rejected[r] += rejected[r];
	if (ing->m.runs) {
		pw_metric_add(ing->m.runs, NULL, (double)runs_new);
		pw_metric_add(ing->m.samples, NULL, (double)samples_written);
		pw_metric_add(ing->m.dups, NULL, (double)dups);
		pw_metric_add(ing->m.points, NULL, (double)points);
		pw_metric_add(ing->m.series, NULL, (double)created);
		for (int r = 0; r < 16; r++)
			if (rejected[r])
				pw_metric_add(ing->m.rejected,
				              (const char *[]){pw_dlq_reason_name((pw_dlq_reason)r)},
				              (double)rejected[r]);
		pw_metric_observe(ing->m.batch_s, NULL, pw_mono_s() - t0);
		pw_metric_observe(ing->m.batch_n, NULL, (double)n);
	}
done:
	smap_release(&pending);
	smap_release(&seen);
	if (items)
		items_release(items, n);
	free(its);
	return st;
}
