/*
 * it_baseline_cache.c: the cache-aside baseline reader (common/
 * pw_baseline_cache.h) against the dev stack's PostgreSQL and Redis.
 *
 * Run by tests/integration/test_baseline_cache.sh with PW_PG_DSN and
 * PW_REDIS_ADDR from run/stack.env. Writes three series of its own (keys
 * carry the process id) and checks that
 *   - an entry older than PostgreSQL's latest version is never served: a new
 *     version stored behind the cache's back, a version frozen in place, a
 *     version the caller names; each read returns PostgreSQL's record
 *     (outcome stale) and puts it back, so that the next read is a hit;
 *   - an entry of the encoding before the record carried the required n
 *     (cache version version·4 + 1) is stale, never served with n 0;
 *   - an entry that is not a baseline (bytes that do not decode under a huge
 *     version, a key of another type) is read past and replaced;
 *   - with Redis stopped (a client whose server is gone: a port nothing
 *     listens on) and with no Redis at all, every read, single or batched,
 *     returns the same records as PostgreSQL, and says fallback / uncached.
 * Exit 0 = pass.
 */
#include "pw_baseline_cache.h"
#include "pw_log.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int failures;

static void check(bool ok, const char *what, const char *err)
{
	printf("%s: %s%s%s\n", ok ? "ok" : "FAIL", what, ok ? "" : ": ", ok ? "" : err);
	if (!ok)
		failures++;
}

static void sql(pw_pg *pg, const char *q, const char *a, const char *b)
{
	char err[512];
	const char *p[2] = {a, b};
	if (pw_pg_exec(pg, q, b ? 2 : a ? 1 : 0, p, NULL, err, sizeof err) != PW_OK) {
		fprintf(stderr, "it_baseline_cache: %s\n", err);
		exit(1);
	}
}

/* A stored baseline version of key (median 10 + version and a published
 * required_n_top of 20 + version, so each is told apart). */
static void store_version(pw_pg *pg, const char *key, int version)
{
	char v[16];
	snprintf(v, sizeof v, "%d", version);
	sql(pg,
	    "INSERT INTO perfwatch.baselines (series_id, version, state, hlo_fingerprint, median, "
	    "mad_n, band_lo, band_hi, sigma, sigma_pct, n, unit, build_id, window_start, window_end, "
	    "computed_at, required_n_top, required_n_tail, mde_top_pct, mde_tail_pct, gpu_class) "
	    "SELECT series_id, $2::integer, 'active', hlo_fingerprint, 10 + $2::integer, "
	    "0.04, 9.88, 10.12, 0.04, 0.4, 30, 'ms', 'b' || $2, now() - interval '30 days', now(), "
	    "now(), 20 + $2::integer, 5, 1, 3, false "
	    "FROM perfwatch.series WHERE series_key = $1",
	    key, v);
}

static int closed_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return -1;
	close(fd);
	return ntohs(a.sin_port);
}

/* One read through br: its record's version, state and median, its outcome. */
static bool read_is(pw_baseline_reader *br, const char *key, uint64_t current, uint32_t version,
                    pw_baseline_state state, pw_baseline_outcome want, const char *what)
{
	char err[512] = "", msg[256];
	pw_baseline_record r;
	pw_baseline_outcome o = PW_BASELINE_OUTCOMES;
	pw_baseline_source src;
	pw_status st = pw_baseline_get(br, key, current, &r, &src, &o, err, sizeof err);
	bool ok = st == PW_OK && r.version == version && r.state == state &&
	          r.median == 10.0 + version && r.required_n_top == 20 + version &&
	          r.required_n_tail == 5 && r.mde_top_pct == 1.0 && o == want &&
	          (src == PW_BASELINE_FROM_REDIS) == (want == PW_BASELINE_HIT);
	if (!ok && st == PW_OK)
		snprintf(err, sizeof err,
		         "got v%u %s median %g required n %u/%u outcome %s, want v%u %s required n "
		         "%u/5 outcome %s",
		         r.version, pw_baseline_state_name(r.state), r.median, r.required_n_top,
		         r.required_n_tail, pw_baseline_outcome_name(o), version,
		         pw_baseline_state_name(state), 20 + version, pw_baseline_outcome_name(want));
	snprintf(msg, sizeof msg, "%s (%s)", what, pw_baseline_outcome_name(want));
	check(ok, msg, err);
	return ok;
}

int main(void)
{
	char err[512];
	const char *dsn = getenv("PW_PG_DSN"), *addr = getenv("PW_REDIS_ADDR");
	if (!dsn || !addr) {
		fprintf(stderr, "it_baseline_cache: PW_PG_DSN and PW_REDIS_ADDR must be set\n");
		return 1;
	}
	pw_log lg;
	pw_log_init(&lg, "it_baseline_cache", PW_LOG_ERROR);
	pw_pg *pg = NULL;
	pw_redis *rd = NULL, *gone = NULL;
	char gone_addr[32];
	snprintf(gone_addr, sizeof gone_addr, "127.0.0.1:%d", closed_port());
	if (pw_pg_new(&pg, dsn, NULL, &lg, err, sizeof err) != PW_OK ||
	    pw_redis_new(&rd, addr, NULL, &lg, err, sizeof err) != PW_OK ||
	    pw_redis_new(&gone, gone_addr, NULL, &lg, err, sizeof err) != PW_OK) {
		fprintf(stderr, "it_baseline_cache: %s\n", err);
		return 1;
	}
	char tag[32], fp[48], keys[3][PW_SERIES_KEY_MAX];
	snprintf(tag, sizeof tag, "bc%ld", (long)getpid());
	snprintf(fp, sizeof fp, "hlo:%s", tag);
	sql(pg,
	    "INSERT INTO perfwatch.series (model, hlo_fingerprint, platform, config, metric, unit, "
	    "direction) SELECT $1, 'hlo:' || $1, 'v6e-4', 'decode.B64', 'metric' || m, 'ms', "
	    "'lower_is_better' FROM generate_series(0, 2) m",
	    tag, NULL);
	for (int m = 0; m < 3; m++)
		snprintf(keys[m], sizeof keys[m], "%s/%s/v6e-4/decode.B64/metric%d", tag, fp, m);
	const char *k = keys[0];
	pw_baseline_reader br, down, none;
	pw_baseline_reader_init(&br, rd, pg, NULL);
	pw_baseline_reader_init(&down, gone, pg, NULL);
	pw_baseline_reader_init(&none, NULL, pg, NULL);

	/* no baseline yet: not found, and nothing is cached */
	pw_baseline_record r;
	check(pw_baseline_get(&br, k, PW_BASELINE_ASK, &r, NULL, NULL, err, sizeof err) ==
	          PW_ERR_NOT_FOUND,
	      "a series without a baseline is not found", err);

	/* v1: a miss fills the cache, the next read hits */
	store_version(pg, k, 1);
	read_is(&br, k, PW_BASELINE_ASK, 1, PW_BASELINE_ACTIVE, PW_BASELINE_MISS, "v1, first read");
	read_is(&br, k, PW_BASELINE_ASK, 1, PW_BASELINE_ACTIVE, PW_BASELINE_HIT, "v1, second read");

	/* v2 stored while Redis still holds v1 (a baseliner that died between its
	 * commit and its cache write): v1 is never served */
	store_version(pg, k, 2);
	uint64_t cv = 0;
	char *val = NULL;
	size_t len = 0;
	char ck[PW_BASELINE_CACHE_KEY_MAX];
	pw_baseline_cache_key(ck, sizeof ck, k);
	check(pw_redis_get_versioned(rd, ck, &cv, &val, &len, err, sizeof err) == PW_OK &&
	          cv == pw_baseline_cache_version_of(1, PW_BASELINE_ACTIVE),
	      "Redis holds v1 while PostgreSQL holds v2", err);
	free(val);
	read_is(&br, k, PW_BASELINE_ASK, 2, PW_BASELINE_ACTIVE, PW_BASELINE_STALE,
	        "v2 behind the cache's back: PostgreSQL's v2, not the cached v1");
	read_is(&br, k, PW_BASELINE_ASK, 2, PW_BASELINE_ACTIVE, PW_BASELINE_HIT,
	        "v2 put back: the next read hits");

	/* v2 frozen in place (a fleet change): the cached active v2 is stale */
	sql(pg,
	    "UPDATE perfwatch.baselines SET state = 'frozen', freeze_event_id = 'fc-' || $2 "
	    "WHERE series_id = (SELECT series_id FROM perfwatch.series WHERE series_key = $1) "
	    "AND version = 2",
	    k, tag);
	read_is(&br, k, PW_BASELINE_ASK, 2, PW_BASELINE_FROZEN, PW_BASELINE_STALE,
	        "v2 frozen in place: the frozen record, not the cached active one");
	read_is(&br, k, PW_BASELINE_ASK, 2, PW_BASELINE_FROZEN, PW_BASELINE_HIT,
	        "frozen v2 put back: the next read hits");

	/* the caller names the current version (the gate's series query read it) */
	store_version(pg, k, 3);
	uint64_t v3 = pw_baseline_cache_version_of(3, PW_BASELINE_ACTIVE);
	read_is(&br, k, v3, 3, PW_BASELINE_ACTIVE, PW_BASELINE_STALE,
	        "the caller names v3, Redis holds v2: v3 from PostgreSQL");
	read_is(&br, k, v3, 3, PW_BASELINE_ACTIVE, PW_BASELINE_HIT, "v3 named and cached: a hit");

	/* v3 as cached before the record carried the power of migration 0044 (the
	 * old encoding: cache version 3·4 + 1, no required n): never served as if
	 * the series needed 0 runs; read from PostgreSQL and replaced */
	pw_baseline_record old;
	check(pw_baseline_read_pg(pg, k, &old, err, sizeof err) == PW_OK, "v3 read", err);
	old.required_n_top = old.required_n_tail = 0;
	old.mde_top_pct = old.mde_tail_pct = 0.0;
	uint8_t *packed = NULL;
	size_t plen = 0;
	bool put_old = false;
	check(pw_baseline_record_pack(&old, &packed, &plen) == PW_OK &&
	          pw_redis_del(rd, ck, err, sizeof err) == PW_OK &&
	          pw_redis_set_versioned(rd, ck, 3u * 4u + 1u, packed, plen, 0, &put_old, err,
	                                 sizeof err) == PW_OK &&
	          put_old,
	      "v3 without its required n put at the old encoding's version", err);
	free(packed);
	read_is(&br, k, PW_BASELINE_ASK, 3, PW_BASELINE_ACTIVE, PW_BASELINE_STALE,
	        "an entry of the old encoding: PostgreSQL's v3 with its required n");
	read_is(&br, k, v3, 3, PW_BASELINE_ACTIVE, PW_BASELINE_HIT,
	        "replaced by the put-back: the next read hits, with the required n");

	/* an entry that is not a baseline, under a version above any real one */
	bool stored = false;
	check(pw_redis_set_versioned(rd, ck, UINT64_C(1) << 50, "garbage", 7, 0, &stored, err,
	                             sizeof err) == PW_OK && stored,
	      "garbage put under version 2^50", err);
	read_is(&br, k, PW_BASELINE_ASK, 3, PW_BASELINE_ACTIVE, PW_BASELINE_FALLBACK,
	        "garbage in Redis: PostgreSQL's v3");
	read_is(&br, k, PW_BASELINE_ASK, 3, PW_BASELINE_ACTIVE, PW_BASELINE_HIT,
	        "the garbage was replaced: the next read hits");
	check(pw_redis_set(rd, ck, "a string", 8, 0, err, sizeof err) == PW_OK,
	      "a plain string put at the key", err);
	read_is(&br, k, PW_BASELINE_ASK, 3, PW_BASELINE_ACTIVE, PW_BASELINE_FALLBACK,
	        "a key of another type: PostgreSQL's v3");
	read_is(&br, k, PW_BASELINE_ASK, 3, PW_BASELINE_ACTIVE, PW_BASELINE_HIT,
	        "the key was replaced: the next read hits");

	/* Redis stopped, and no Redis: the same records, from PostgreSQL */
	store_version(pg, keys[1], 1);
	store_version(pg, keys[1], 2);
	read_is(&down, k, PW_BASELINE_ASK, 3, PW_BASELINE_ACTIVE, PW_BASELINE_FALLBACK,
	        "Redis stopped: v3 from PostgreSQL");
	read_is(&down, k, v3, 3, PW_BASELINE_ACTIVE, PW_BASELINE_FALLBACK,
	        "Redis stopped, the version named: v3 from PostgreSQL");
	read_is(&none, k, PW_BASELINE_ASK, 3, PW_BASELINE_ACTIVE, PW_BASELINE_UNCACHED,
	        "no Redis: v3 from PostgreSQL");
	const char *kk[3] = {keys[0], keys[1], keys[2]};
	pw_baseline_record a[3], b[3], c[3];
	bool fa[3], fb[3], fc[3];
	pw_baseline_outcome ob[3];
	pw_status sa = pw_baseline_get_many(&br, kk, NULL, 3, a, fa, NULL, NULL, err, sizeof err);
	pw_status sb = pw_baseline_get_many(&down, kk, NULL, 3, b, fb, NULL, ob, err, sizeof err);
	pw_status sc = pw_baseline_get_many(&none, kk, NULL, 3, c, fc, NULL, NULL, err, sizeof err);
	bool same = sa == PW_OK && sb == PW_OK && sc == PW_OK;
	for (int m = 0; same && m < 3; m++) {
		same = fa[m] == fb[m] && fa[m] == fc[m] && fa[m] == (m < 2);
		if (same && fa[m])
			same = memcmp(&a[m], &b[m], sizeof a[m]) == 0 &&
			       memcmp(&a[m], &c[m], sizeof a[m]) == 0 && ob[m] == PW_BASELINE_FALLBACK;
	}
	check(same && a[0].version == 3 && a[1].version == 2,
	      "three series at once: Redis up, Redis stopped and no Redis give the same records "
	      "(v3, v2, none)",
	      err);
	printf("reader counts: redis hit=%llu miss=%llu stale=%llu fallback=%llu; stopped "
	       "fallback=%llu; none uncached=%llu\n",
	       (unsigned long long)br.n[PW_BASELINE_HIT], (unsigned long long)br.n[PW_BASELINE_MISS],
	       (unsigned long long)br.n[PW_BASELINE_STALE],
	       (unsigned long long)br.n[PW_BASELINE_FALLBACK],
	       (unsigned long long)down.n[PW_BASELINE_FALLBACK],
	       (unsigned long long)none.n[PW_BASELINE_UNCACHED]);
	for (int m = 0; m < 3; m++) {
		pw_baseline_cache_key(ck, sizeof ck, keys[m]);
		pw_redis_del(rd, ck, err, sizeof err);
	}
	pw_redis_free(rd);
	pw_redis_free(gone);
	pw_pg_free(pg);
	printf("it_baseline_cache: %s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
