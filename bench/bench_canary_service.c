/*
 * bench_canary_service.c: what one window costs the canary service
 * (services/canary, docs/canary.md §8) against the statistic alone, in one
 * run.
 *
 * The windows are pw-sim canary's scenario (sim_canary: chat-8b on TPU with
 * +1% TPOT, summarize-13b on TPU and chat-70b-gpu on GPU without; HOURS of
 * 5-minute windows, TPOT, TTFT and goodput each), packed as CanaryWindows
 * beforehand. Round after round, two paths take them in publication order:
 *
 *   cs_add    pw_cs_add alone: one sequence per family and metric, the pair
 *             of window medians in (the reference: the statistic);
 *   service   what pw-canary does with each message once the consumer handed
 *             it over: the door (pw_canary_window_decode) and pw_canary_take
 *             — one PostgreSQL transaction locking the family's row, looking
 *             for the window, adding it to the family's sequences and the
 *             rule, storing the window, its metric's and its family's state,
 *             and a decision with its outbox row — on the dev stack's
 *             PostgreSQL, under a rollout id of its own each round.
 *
 * It prints the median per window of each path over the rounds and their
 * ratio, checks that every round of the service decided the same (chat-8b
 * ROLLBACK, the others PROMOTE), and deletes its rows (rollouts
 * "bench-<pid>-<round>", outbox rows of service "canary-bench": never
 * published). Kafka is not in either path (the consumer's cost is the same
 * for any service: bench_kafka.c). Not part of CI (bench/run.sh).
 *
 *   bench_canary_service [HOURS [ROUNDS]]   (12 and 5; PW_PG_DSN from run/stack.env)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "canary.h"
#include "canary_door.h"
#include "canary_service.h"
#include "perfwatch/v1/canary.pb-c.h"
#include "pw_log.h"
#include "pw_pg.h"
#include "pw_stats.h"
#include "sim_canary.h"
#include "sim_proto.h"

#define SERVICE "canary-bench"
#define NFAM PW_SIM_CANARY_FAMILIES

typedef struct win {
	int fam, metric;
	double canary, baseline;
	uint8_t *packed; /* with the rollout id "bench-PID-RRRR" (fixed width: patched per round) */
	size_t len;
} win;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Where needle first occurs in hay[0..n), or NULL. */
static uint8_t *find(uint8_t *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(hay + i, needle, k) == 0)
			return hay + i;
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The rollout id of round r: the same length every round, so that a packed window is patched in place. */
static void rollout_id(char *buf, size_t len, int r)
{
	snprintf(buf, len, "bench-%08d-%04d", (int)getpid() % 100000000, r);
}

static int cleanup(pw_pg *pg, char *err, size_t errlen)
{
	char like[64];
	snprintf(like, sizeof like, "bench-%08d-%%", (int)getpid() % 100000000);
	const char *const p[] = {like};
	const char *const s[] = {SERVICE};
	if (pw_pg_exec(pg, "DELETE FROM perfwatch.canary_windows WHERE rollout_id LIKE $1", 1, p, NULL, err, errlen) != PW_OK ||
	    pw_pg_exec(pg, "DELETE FROM perfwatch.canary_metrics WHERE rollout_id LIKE $1", 1, p, NULL, err, errlen) != PW_OK ||
	    pw_pg_exec(pg, "DELETE FROM perfwatch.canary_families WHERE rollout_id LIKE $1", 1, p, NULL, err, errlen) != PW_OK ||
	    pw_pg_exec(pg, "DELETE FROM perfwatch.outbox WHERE service = $1", 1, s, NULL, err, errlen) != PW_OK)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int hours = argc > 1 ? atoi(argv[1]) : 12, rounds = argc > 2 ? atoi(argv[2]) : 5;
	if (hours < 1 || hours > 96 || rounds < 1 || rounds > 100) {
		fprintf(stderr, "usage: bench_canary_service [HOURS 1..96 [ROUNDS 1..100]]\n");
		return 2;
	}
	const char *dsn = getenv("PW_PG_DSN");
	if (!dsn || !*dsn) {
		fprintf(stderr, "bench_canary_service: PW_PG_DSN is not set (bench/run.sh sets it from run/stack.env)\n");
		return 2;
	}
	pw_log lg;
	pw_log_init(&lg, "bench", PW_LOG_WARN);
	char err[1024];
	pw_pg *pg = NULL;
	if (pw_pg_new(&pg, dsn, NULL, &lg, err, sizeof err) != PW_OK ||
	    pw_pg_wait_connected(pg, 30000, NULL, err, sizeof err) != PW_OK) {
		fprintf(stderr, "bench_canary_service: postgresql: %s\n", err);
		return 1;
	}
	/* the windows, packed once, in pw-sim canary's order */
	int nwin = hours * 12 * NFAM * 3;
	win *ws = calloc((size_t)nwin, sizeof *ws);
	char rid[32];
	rollout_id(rid, sizeof rid, 0);
	pw_sim_canary_params sp[NFAM];
	for (int f = 0; f < NFAM; f++)
		pw_sim_canary_scenario_params((size_t)f, &sp[f]);
	int k = 0;
	for (int w = 0; w < hours * 12; w++)
		for (int f = 0; f < NFAM; f++) {
			pw_sim_canary_window sw;
			pw_sim_canary_window_make(&sp[f], pw_sim_canary_scenario_seed(1, (size_t)f), (uint32_t)w, &sw);
			const double *pairs[3] = {sw.tpot_ms, sw.ttft_ms, sw.goodput_tok_s_chip};
			for (int m = 0; m < 3; m++, k++) {
				ws[k] = (win){f, m, pairs[m][PW_SIM_CANARY_CANARY], pairs[m][PW_SIM_CANARY_BASELINE], NULL, 0};
				if (pw_sim_proto_canary_window(rid, (size_t)f, &sw, m, 1782118800000000LL + (int64_t)w * 300000000LL,
				                               &ws[k].packed, &ws[k].len) != PW_OK) {
					fprintf(stderr, "bench_canary_service: out of memory\n");
					return 1;
				}
			}
		}
	double *t_cs = calloc((size_t)rounds, sizeof *t_cs), *t_svc = calloc((size_t)rounds, sizeof *t_svc);
	pw_canary_params params;
	pw_canary_params_default(&params);
	int rc = 0;
	char want[256] = "";
	for (int r = 0; r < rounds && rc == 0; r++) {
		/* cs_add */
		pw_cs *cs[NFAM][3];
		for (int f = 0; f < NFAM; f++)
			for (int m = 0; m < 3; m++) {
				pw_cs_opts o;
				pw_cs_opts_init(&o);
				o.direction = pw_canary_metric_direction((pw_canary_metric)m);
				o.mde_pct = pw_canary_mde_pct(&params, pw_sim_canary_scenario[f].family, pw_sim_canary_scenario[f].gpu);
				pw_cs_new(&o, &cs[f][m]);
			}
		double t0 = now_s();
		for (int i = 0; i < nwin; i++)
			pw_cs_add(cs[ws[i].fam][ws[i].metric], ws[i].canary, ws[i].baseline, NULL);
		t_cs[r] = (now_s() - t0) / nwin;
		for (int f = 0; f < NFAM; f++)
			for (int m = 0; m < 3; m++)
				pw_cs_free(cs[f][m]);
		/* service: the door and pw_canary_take, under this round's rollout id */
		char id[32];
		rollout_id(id, sizeof id, r + 1);
		pw_canary_families *fs = pw_canary_families_new();
		t0 = now_s();
		for (int i = 0; i < nwin && rc == 0; i++) {
			uint8_t *p = find(ws[i].packed, ws[i].len, rid);
			memcpy(p, id, strlen(id));
			Perfwatch__V1__CanaryWindow *w = NULL;
			char detail[512];
			pw_canary_outcome oc;
			if (pw_canary_window_decode(ws[i].packed, ws[i].len, &w, detail, sizeof detail) !=
			            PERFWATCH__V1__DLQ_REASON__DLQ_REASON_UNSPECIFIED ||
			    pw_canary_take(fs, pg, SERVICE, &params, &lg, NULL, NULL, w, &oc, detail, sizeof detail, err,
			                   sizeof err) != PW_OK ||
			    oc != PW_CANARY_TAKEN) {
				fprintf(stderr, "bench_canary_service: window %d: %s %s\n", i, detail, err);
				rc = 1;
			}
			memcpy(p, rid, strlen(rid));
			perfwatch__v1__canary_window__free_unpacked(w, NULL);
		}
		t_svc[r] = (now_s() - t0) / nwin;
		pw_canary_families_free(fs);
		/* what it decided */
		const char *const pr[] = {id};
		PGresult *res = NULL;
		char got[256] = "";
		if (rc == 0 && pw_pg_exec(pg, "SELECT string_agg(family || ' ' || decision, ', ' ORDER BY family) "
		                              "FROM perfwatch.canary_families WHERE rollout_id = $1",
		                          1, pr, &res, err, sizeof err) == PW_OK) {
			snprintf(got, sizeof got, "%s", PQgetvalue(res, 0, 0));
			PQclear(res);
		}
		if (!want[0])
			snprintf(want, sizeof want, "%s", got);
		if (strcmp(got, want) != 0 || strcmp(want, "chat-70b-gpu PROMOTE, chat-8b ROLLBACK, summarize-13b PROMOTE") != 0) {
			fprintf(stderr, "bench_canary_service: round %d decided \"%s\"\n", r + 1, got);
			rc = 1;
		}
	}
	if (rc == 0) {
		double cs_s = median(t_cs, rounds), svc_s = median(t_svc, rounds);
		printf("bench_canary_service: %d windows a round (%d h of 3 families x 3 metrics), %d rounds; every round decided: %s\n",
		       nwin, hours, rounds, want);
		printf("| path | per window (median of rounds) | windows/s |\n|---|---|---|\n");
		printf("| pw_cs_add alone | %.2f µs | %.0f |\n", cs_s * 1e6, 1 / cs_s);
		printf("| the service: door + pw_canary_take (one PostgreSQL transaction) | %.0f µs | %.0f |\n", svc_s * 1e6,
		       1 / svc_s);
		printf("service / pw_cs_add: %.0fx\n", svc_s / cs_s);
	}
	if (cleanup(pg, err, sizeof err) != 0) {
		fprintf(stderr, "bench_canary_service: deleting its rows: %s\n", err);
		rc = 1;
	}
	for (int i = 0; i < nwin; i++)
		free(ws[i].packed);
	free(ws);
	free(t_cs);
	free(t_svc);
	pw_pg_free(pg);
	return rc;
}
