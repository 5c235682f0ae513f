/*
 * main.c: pw-sim, the fleet simulator on the real topics.
 *
 * Wiring only: the command line, the configuration (pw_config.h common keys,
 * so PW_KAFKA_BOOTSTRAP_SERVERS and kafka.* pass-through work as for every
 * service), the project's idempotent producer and consumer loop (pw_kafka.h),
 * and a signal flag. The model is sim_model.h; the messages sim_proto.h.
 *
 *   pw-sim replay  SCENARIO [options]   publish the scenario's CL history
 *                  (CompilerCl on perf.compiler-cls.v1, key cl; skipped with
 *                  --since) and its timeline:
 *                  RunResults on perf.runs.v1 (key: the series group,
 *                  pw_runs_key, so one series' runs keep their order;
 *                  --runs-key run_id: the run id, as producers before did),
 *                  fleet changes on
 *                  perf.fleet-changes.v1 (key event_id), gate requests on
 *                  perf.gate.requests.v1 (key release_id); prints a JSON summary
 *   pw-sim answer  SCENARIO [options]   consume perf.bisect.jobs.v1 and answer
 *                  each job with runs at the build asked, carrying its job id;
 *                  their noise is drawn from the job id without --namespace's
 *                  tag and --run-prefix, as the replay's from the bare run id
 *   pw-sim execute SCENARIO [options]   the fleet executing the planner's plans
 *                  instead of the scenario's fixed matrix: consume
 *                  perf.plans.v1 and publish, for each plan, repeats runs of
 *                  every item (model × platform × config) on the plan's
 *                  release at its CL head, with the item's HLO fingerprint;
 *                  the numbers come from the scenario's world (its effects,
 *                  pins, noise), a series it does not hold is built from the
 *                  simulated catalogue's model (--catalogue N,
 *                  --catalogue-seed N: as pw-sim planner's --models and
 *                  --seed); run ids "pl-<sweep>-<item>" (repeat index = the
 *                  repeat), so an executed plan delivered again publishes the
 *                  same runs; --sweep ID (repeatable) executes those sweeps'
 *                  plans only and exits when each was executed; --skip GLOB
 *                  (repeatable) leaves the items whose model/platform/config
 *                  matches unrun, as a fleet that failed them (the gate then
 *                  sees planned runs missing)
 *   pw-sim count   SCENARIO [options]   what replay would publish, as JSON
 *   pw-sim history SCENARIO [--from CL --to CL]  the compiler history as TSV
 *   pw-sim dump    SCENARIO [--limit N]  runs as JSON lines, no broker
 *   pw-sim planner [--models N] [--from YYYY-MM-DD] [--days N] [--seed N]
 *                  [--capacity CHIP_H] [--readopt MODEL@YYYY-MM-DD]
 *                  the planner's inputs (docs/planner.md): each platform's
 *                  capacity on perf.capacity.v1, the simulated catalogue of N
 *                  models (sim_catalogue.h) on perf.catalogue.v1, then day by
 *                  day the CLs with the ops they touch on perf.compiler-cls.v1
 *                  and the sweeps on perf.sweeps.v1 (a nightly each day, an RC
 *                  each Monday); --readopt republishes MODEL with a new program
 *                  (fingerprint) on that day, before its sweeps
 *   pw-sim canary  [--rollout ID] [--hours H] [--seed N] [--start YYYY-MM-DDTHH:MM:SSZ] [--release N] [--previous N-1]
 *                  [--family-suffix SFX]
 *                  the production canary's live windows (docs/canary.md, "The
 *                  canary service"): three families from sim_canary (diurnal
 *                  load, prefix-cache changes, a noisy neighbour) — chat-8b on
 *                  TPU with a +1% TPOT regression injected on the canary arm,
 *                  summarize-13b on TPU and chat-70b-gpu on GPU without one —
 *                  every 5-minute window for H hours (12), each family's TPOT,
 *                  TTFT and goodput window medians of both arms as a
 *                  CanaryWindow on perf.canary.v1 (key rollout/family), window
 *                  by window; family i's draws use seed·1000 + i
 * options: --seed N --models N --platforms N --configs N --days N --repeats N
 *          (scale overrides), --limit N (runs), --rate N (runs/s, 0 = as fast
 *          as possible), --dup-every K (also re-send every K-th run verbatim),
 *          --bad-every K (also send a broken copy of every K-th run: its first
 *          metric NaN), --answer (replay, then answer bisection jobs),
 *          --run-prefix P (prefix every run id: tests isolate their runs),
 *          --namespace TAG (append ".TAG" to model, fingerprint, release, fleet
 *          event and waiver names: the replay starts its own series, releases
 *          and families; see sim_proto.h), --since T / --until T (replay only
 *          the events at or after / before simulated time T, YYYY-MM-DD or
 *          YYYY-MM-DDTHH:MM[:SS]Z: a test can let its consumers catch up at
 *          a point of the timeline, e.g. before a fleet change).
 * Exit status: 0 done, 1 failure, 2 usage.
 */
#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfwatch/v1/bisect.pb-c.h"
#include "perfwatch/v1/plan.pb-c.h"
#include "perfwatch/v1/run.pb-c.h"
#include "pw_time.h"
#include "pw_config.h"
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_topics.h"
#include "sim_canary.h"
#include "sim_catalogue.h"
#include "sim_model.h"
#include "sim_proto.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

typedef struct opts {
	const char *cmd, *scenario;
	pw_sim_overrides ov;
	uint64_t limit;
	double rate;
	uint64_t dup_every, bad_every;
	bool answer;
	int64_t from, to;
	const char *run_prefix;
	bool key_by_run_id; /* --runs-key run_id: the key of producers before pw_runs_key */
	const char *ns;
	int64_t since_us, until_us; /* 0: unbounded */
	/* execute */
	size_t catalogue;              /* models of the simulated catalogue (300) */
	uint64_t catalogue_seed;       /* its seed (pw-sim planner's default) */
	const char *sweeps[16];        /* --sweep: only these plans; exit when all executed */
	size_t nsweeps;
	const char *skips[16];         /* --skip: fnmatch globs of model/platform/config left unrun */
	size_t nskips;
} opts;

typedef struct app {
	pw_log log;
	pw_config *cfg;
	pw_sim *w;
	pw_producer *prod;
	pw_consumer *cons;
	opts o;
	uint64_t jobs, job_runs;
	/* execute */
	pw_sim_catalogue *cat;
	bool swept[16];                /* sweeps[i]'s plan executed */
	uint64_t plans, plan_items, plan_runs, plan_unknown, plan_skipped;
} app;

static int usage(void)
{
	fprintf(stderr,
	        "usage: pw-sim replay|answer|execute|count|history|dump SCENARIO [--seed N] [--models N]\n"
	        "       [--platforms N] [--configs N] [--days N] [--repeats N] [--limit N] [--rate N]\n"
	        "       [--dup-every K] [--bad-every K] [--answer] [--from CL] [--to CL]\n"
	        "       [--run-prefix P] [--namespace TAG] [--since TIME] [--until TIME]\n"
	        "       [--runs-key series|run_id] [--catalogue N] [--catalogue-seed N] [--sweep ID]...\n"
	        "       [--skip MODEL/PLATFORM/CONFIG-GLOB]...\n");
	return 2;
}

static bool num_arg(int argc, char **argv, int *i, const char *name, unsigned long long *out)
{
	if (strcmp(argv[*i], name) != 0)
		return false;
	if (*i + 1 >= argc) {
		fprintf(stderr, "pw-sim: %s needs a value\n", name);
		exit(2);
	}
	char *end;
	const char *v = argv[++*i];
	if (strncmp(v, "cl/", 3) == 0)
		v += 3;
	/* digits only: strtoull would take "-5" as 2^64 - 5 */
	errno = 0;
	*out = (*v >= '0' && *v <= '9') ? strtoull(v, &end, 10) : 0;
	if (*v < '0' || *v > '9' || *end || end == v || errno == ERANGE) {
		fprintf(stderr, "pw-sim: %s \"%s\" is not a number\n", name, argv[*i]);
		exit(2);
	}
	return true;
}

/* "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM[:SS]Z" (UTC) to unix µs; false when malformed. */
static bool parse_when(const char *v, int64_t *out)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;
	if (sscanf(v, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3)
		return false;
	const char *rest = v + n;
	if (*rest) {
		int k = 0;
		if (sscanf(rest, "T%2d:%2d%n", &h, &mi, &k) != 2)
			return false;
		rest += k;
		if (*rest == ':') {
			k = 0;
			if (sscanf(rest, ":%2d%n", &sec, &k) != 1)
				return false;
			rest += k;
		}
		if (strcmp(rest, "Z") != 0)
			return false;
	}
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return false;
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
	                .tm_min = mi, .tm_sec = sec};
	*out = (int64_t)timegm(&tm) * 1000000LL;
	return true;
}

/* A namespace tag: 1..16 of [A-Za-z0-9_-], so that names stay key-safe and short. */
static bool ns_ok(const char *v)
{
	size_t n = strlen(v);
	if (n == 0 || n > 16)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && v[i] != '-' && v[i] != '_')
			return false;
	return true;
}

static int parse_args(int argc, char **argv, opts *o)
{
	memset(o, 0, sizeof *o);
	if (argc < 3)
		return usage();
	o->cmd = argv[1];
	o->scenario = argv[2];
	o->catalogue = 300;
	o->catalogue_seed = 20260504; /* pw-sim planner's */
	for (int i = 3; i < argc; i++) {
		unsigned long long v;
		if (num_arg(argc, argv, &i, "--seed", &v)) {
			o->ov.seed = v;
			o->ov.has_seed = true;
		} else if (num_arg(argc, argv, &i, "--models", &v))
			o->ov.models = v;
		else if (num_arg(argc, argv, &i, "--platforms", &v))
			o->ov.platforms = v;
		else if (num_arg(argc, argv, &i, "--configs", &v))
			o->ov.configs = v;
		else if (num_arg(argc, argv, &i, "--days", &v)) {
			if (v < 1 || v > 36600) {
				fprintf(stderr, "pw-sim: --days %llu is outside 1..36600\n", v);
				return 2;
			}
			o->ov.days = (int)v;
		} else if (num_arg(argc, argv, &i, "--repeats", &v)) {
			if (v < 1 || v > 1000) { /* the ingester's repeat_index cap */
				fprintf(stderr, "pw-sim: --repeats %llu is outside 1..1000\n", v);
				return 2;
			}
			o->ov.nightly_repeats = (uint32_t)v;
		}
		else if (num_arg(argc, argv, &i, "--limit", &v))
			o->limit = v;
		else if (num_arg(argc, argv, &i, "--rate", &v))
			o->rate = (double)v;
		else if (num_arg(argc, argv, &i, "--dup-every", &v))
			o->dup_every = v;
		else if (num_arg(argc, argv, &i, "--bad-every", &v))
			o->bad_every = v;
		else if (num_arg(argc, argv, &i, "--from", &v))
			o->from = (int64_t)v;
		else if (num_arg(argc, argv, &i, "--to", &v))
			o->to = (int64_t)v;
		else if (num_arg(argc, argv, &i, "--catalogue", &v)) {
			if (v < 20 || v > 100000) { /* pw-sim planner's bounds */
				fprintf(stderr, "pw-sim: --catalogue %llu is outside 20..100000\n", v);
				return 2;
			}
			o->catalogue = (size_t)v;
		} else if (num_arg(argc, argv, &i, "--catalogue-seed", &v))
			o->catalogue_seed = v;
		else if (strcmp(argv[i], "--sweep") == 0 && i + 1 < argc) {
			if (o->nsweeps == sizeof o->sweeps / sizeof o->sweeps[0]) {
				fprintf(stderr, "pw-sim: at most %zu --sweep\n", sizeof o->sweeps / sizeof o->sweeps[0]);
				return 2;
			}
			o->sweeps[o->nsweeps++] = argv[++i];
		} else if (strcmp(argv[i], "--skip") == 0 && i + 1 < argc) {
			if (o->nskips == sizeof o->skips / sizeof o->skips[0]) {
				fprintf(stderr, "pw-sim: at most %zu --skip\n", sizeof o->skips / sizeof o->skips[0]);
				return 2;
			}
			o->skips[o->nskips++] = argv[++i];
		}
		else if (strcmp(argv[i], "--answer") == 0)
			o->answer = true;
		else if (strcmp(argv[i], "--run-prefix") == 0 && i + 1 < argc)
			o->run_prefix = argv[++i];
		else if (strcmp(argv[i], "--runs-key") == 0 && i + 1 < argc) {
			const char *k = argv[++i];
			if (strcmp(k, "series") != 0 && strcmp(k, "run_id") != 0) {
				fprintf(stderr, "pw-sim: --runs-key \"%s\" is not series or run_id\n", k);
				return 2;
			}
			o->key_by_run_id = strcmp(k, "run_id") == 0;
		}
		else if (strcmp(argv[i], "--namespace") == 0 && i + 1 < argc) {
			o->ns = argv[++i];
			if (!ns_ok(o->ns)) {
				fprintf(stderr, "pw-sim: --namespace \"%s\" is not 1 to 16 of A-Z a-z 0-9 - _\n",
				        o->ns);
				return 2;
			}
		} else if ((strcmp(argv[i], "--since") == 0 || strcmp(argv[i], "--until") == 0) &&
		           i + 1 < argc) {
			bool since = strcmp(argv[i], "--since") == 0;
			if (!parse_when(argv[i + 1], since ? &o->since_us : &o->until_us)) {
				fprintf(stderr, "pw-sim: %s \"%s\" is not YYYY-MM-DD[THH:MM[:SS]Z]\n",
				        argv[i], argv[i + 1]);
				return 2;
			}
			i++;
		}
		else {
			fprintf(stderr, "pw-sim: unknown option \"%s\"\n", argv[i]);
			return usage();
		}
	}
	return 0;
}

static pw_status produce(app *a, const char *topic, const char *key, const uint8_t *buf,
                         size_t len, char *err, size_t errlen)
{
	return pw_producer_produce(a->prod, topic, key, strlen(key), buf, len, 60000, err, errlen);
}

/* A packed run on perf.runs.v1, keyed by its series group (pw_runs_key): one
 * series' runs share a partition and keep the order they are sent in. */
static pw_status produce_run(app *a, const pw_sim_run *run, const uint8_t *buf, size_t len,
                             char *err, size_t errlen)
{
	char key[4 * PW_SIM_NAME_MAX];
	if (a->o.key_by_run_id)
		return produce(a, PW_TOPIC_RUNS, run->run_id, buf, len, err, errlen);
	if (!pw_runs_key(key, sizeof key, run->model, run->fingerprint, run->platform->name,
	                 run->config.name))
		return pw_fail(PW_ERR_INVALID, err, errlen, "run \"%s\": its series key is too long",
		               run->run_id);
	return produce(a, PW_TOPIC_RUNS, key, buf, len, err, errlen);
}

/* A run made in answer to a job or a plan: namespaced (--namespace), packed and produced. */
static pw_status publish_run(app *a, pw_sim_run *run, char *errbuf, size_t errlen)
{
	uint8_t *buf;
	size_t len;
	if (pw_sim_run_namespace(run, a->o.ns) != PW_OK)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "namespace \"%s\" makes a name too long",
		               a->o.ns);
	pw_status st = pw_sim_proto_run(a->w, run, &buf, &len);
	if (st != PW_OK)
		return pw_fail(st, errbuf, errlen, "packing a run failed");
	st = produce_run(a, run, buf, len, errbuf, errlen);
	free(buf);
	return st;
}

/* A copy of a packed run with its first metric set to NaN (a bad run for the DLQ path). */
static pw_status break_run(const uint8_t *buf, size_t len, uint8_t **out, size_t *outlen)
{
	Perfwatch__V1__RunResult *r = perfwatch__v1__run_result__unpack(NULL, len, buf);
	if (!r)
		return PW_ERR_INVALID;
	pw_status st = PW_OK;
	if (r->n_metrics)
		r->metrics[0]->value = NAN;
	size_t n = perfwatch__v1__run_result__get_packed_size(r);
	*out = malloc(n ? n : 1);
	if (!*out)
		st = PW_ERR_NOMEM;
	else
		*outlen = perfwatch__v1__run_result__pack(r, *out);
	perfwatch__v1__run_result__free_unpacked(r, NULL);
	return st;
}

/* The scenario's CL history on perf.compiler-cls.v1 (compacted, keyed by CL), before any run. */
static pw_status publish_cls(app *a, uint64_t *ncls, char *err, size_t errlen)
{
	int64_t from, to;
	pw_sim_cl_span(a->w, &from, &to);
	for (int64_t cl = from; cl <= to && !stop_flag; cl++) {
		uint8_t *buf;
		size_t len;
		pw_status st = pw_sim_proto_cl(a->w, cl, &buf, &len);
		if (st != PW_OK) {
			snprintf(err, errlen, "packing cl/%lld: %s", (long long)cl, pw_strerror(st));
			return st;
		}
		char key[32];
		snprintf(key, sizeof key, "cl/%lld", (long long)cl);
		st = produce(a, PW_TOPIC_COMPILER_CLS, key, buf, len, err, errlen);
		free(buf);
		if (st != PW_OK)
			return st;
		(*ncls)++;
		if ((*ncls & 255) == 0)
			pw_producer_poll(a->prod, 0);
	}
	return PW_OK;
}

static int cmd_replay(app *a)
{
	char err[1024];
	pw_sim_cursor c;
	pw_sim_cursor_init(&c, a->w);
	pw_sim_event ev;
	uint64_t runs = 0, samples = 0, fleet = 0, gates = 0, dups = 0, bad = 0, ncls = 0;
	double t0 = pw_mono_s();
	pw_status st;
	if (!a->o.since_us && (st = publish_cls(a, &ncls, err, sizeof err)) != PW_OK) {
		pw_log_error(&a->log, "compiler cls: %s", err);
		return 1;
	}
	while (!stop_flag && (st = pw_sim_cursor_next(&c, &ev)) == PW_OK) {
		uint8_t *buf = NULL;
		size_t len = 0;
		/* a segment of the timeline: the cursor is in time order */
		if (a->o.until_us && ev.t_unix_us >= a->o.until_us)
			break;
		if (a->o.since_us && ev.t_unix_us < a->o.since_us)
			continue;
		if (ev.kind == PW_SIM_EV_RUN) {
			if (a->o.limit && runs >= a->o.limit)
				break;
			if (a->o.run_prefix) {
				/* renamed after generation: the values stay those of the scenario */
				char id[PW_SIM_NAME_MAX * 2];
				snprintf(id, sizeof id, "%s%s", a->o.run_prefix, ev.run.run_id);
				size_t n = strlen(id);
				if (n >= sizeof ev.run.run_id)
					n = sizeof ev.run.run_id - 1;
				memcpy(ev.run.run_id, id, n);
				ev.run.run_id[n] = '\0';
			}
			if (pw_sim_run_namespace(&ev.run, a->o.ns) != PW_OK)
				goto fail_long;
			if ((st = pw_sim_proto_run(a->w, &ev.run, &buf, &len)) != PW_OK)
				goto fail_nomem;
			st = produce_run(a, &ev.run, buf, len, err, sizeof err);
			if (st == PW_OK && a->o.dup_every && (runs + 1) % a->o.dup_every == 0) {
				st = produce_run(a, &ev.run, buf, len, err, sizeof err);
				dups++;
			}
			if (st == PW_OK && a->o.bad_every && (runs + 1) % a->o.bad_every == 0) {
				uint8_t *bb;
				size_t bl;
				if (break_run(buf, len, &bb, &bl) == PW_OK) {
					st = produce_run(a, &ev.run, bb, bl, err, sizeof err);
					free(bb);
					bad++;
				}
			}
			runs++;
			samples += pw_sim_run_metric_count(&ev.run);
			if (a->o.rate > 0) {
				double due = t0 + runs / a->o.rate;
				while (!stop_flag && pw_mono_s() < due) {
					pw_producer_poll(a->prod, 0);
					struct timespec ts = {0, 2000000};
					nanosleep(&ts, NULL);
				}
			}
		} else if (ev.kind == PW_SIM_EV_FLEET_CHANGE) {
			char id[PW_SIM_NAME_MAX];
			snprintf(id, sizeof id, "%s", ev.fleet->id);
			if (pw_sim_ns_append(id, sizeof id, a->o.ns) != PW_OK)
				goto fail_long;
			if ((st = pw_sim_proto_fleet_ns(ev.fleet, a->o.ns, &buf, &len)) != PW_OK)
				goto fail_nomem;
			st = produce(a, PW_TOPIC_FLEET_CHANGES, id, buf, len, err, sizeof err);
			fleet++;
		} else {
			char id[PW_SIM_NAME_MAX];
			snprintf(id, sizeof id, "%s", ev.release->id);
			if (pw_sim_ns_append(id, sizeof id, a->o.ns) != PW_OK)
				goto fail_long;
			if ((st = pw_sim_proto_gate_ns(a->w, ev.release, ev.t_unix_us, a->o.ns, pw_now_us(),
			                               &buf, &len)) != PW_OK)
				goto fail_nomem;
			st = produce(a, PW_TOPIC_GATE_REQUESTS, id, buf, len, err, sizeof err);
			gates++;
		}
		free(buf);
		if (st != PW_OK) {
			pw_log_error(&a->log, "produce: %s", err);
			return 1;
		}
		if ((runs & 255) == 0)
			pw_producer_poll(a->prod, 0);
	}
	/* every message must be acknowledged by the broker (acks=all); what was
	 * not is reported beside the counts, and the replay fails */
	pw_status fst = pw_producer_flush(a->prod, 120000, err, sizeof err);
	pw_producer_counts pc;
	pw_producer_counts_get(a->prod, &pc);
	uint64_t unacked = pc.produced - pc.delivered;
	double dt = pw_mono_s() - t0;
	printf("{\"scenario\":\"%s\",\"seed\":%llu,\"series\":%zu,\"runs\":%llu,\"samples\":%llu,"
	       "\"fleet_changes\":%llu,\"gate_requests\":%llu,\"duplicates_sent\":%llu,"
	       "\"bad_sent\":%llu,\"compiler_cls\":%llu,\"messages\":%llu,\"acknowledged\":%llu,"
	       "\"not_acknowledged\":%llu,\"seconds\":%.3f}\n",
	       pw_sim_name(a->w), (unsigned long long)pw_sim_seed(a->w), pw_sim_series_count(a->w),
	       (unsigned long long)runs, (unsigned long long)samples, (unsigned long long)fleet,
	       (unsigned long long)gates, (unsigned long long)dups, (unsigned long long)bad,
	       (unsigned long long)ncls, (unsigned long long)pc.produced,
	       (unsigned long long)pc.delivered, (unsigned long long)unacked, dt);
	fflush(stdout);
	if (fst != PW_OK || unacked > 0) {
		pw_log_error(&a->log, "%llu of %llu messages not acknowledged by the broker: %s",
		             (unsigned long long)unacked, (unsigned long long)pc.produced,
		             fst != PW_OK ? err : "reports missing");
		return 1;
	}
	return 0;
fail_nomem:
	pw_log_error(&a->log, "packing a message failed: %s", pw_strerror(st));
	return 1;
fail_long:
	pw_log_error(&a->log, "namespace \"%s\" makes a name longer than %d characters", a->o.ns,
	             PW_SIM_NAME_MAX - 1);
	return 1;
}

/* Takes the namespace off the names a job asks for (in place: it only shortens
 * them); false when a named model or fingerprint is not of namespace ns. */
static bool job_strip_ns(Perfwatch__V1__BisectJob *job, const char *ns)
{
	char *names[4] = {NULL};
	if (job->key) {
		names[0] = job->key->model;
		names[1] = job->key->hlo_fingerprint;
	}
	if (job->series) {
		names[2] = job->series->model;
		names[3] = job->series->hlo_fingerprint;
	}
	bool any = false;
	for (size_t i = 0; i < 4; i++) {
		if (!names[i] || !*names[i])
			continue;
		if (!pw_sim_ns_strip(names[i], ns))
			return false;
		any = true;
	}
	return any;
}

/*
 * The id a job's runs draw their noise from: the job id with the namespace
 * (".TAG") and the run prefix taken off, so that a namespaced replay's jobs
 * are answered with the plain replay's numbers, as its own runs are (tests
 * compare two namespaced rounds of one scenario). Without either, the job id.
 */
static void answer_seed_id(const char *job_id, const char *ns, const char *prefix, char *out, size_t len)
{
	char tag[PW_SIM_NAME_MAX + 2] = "";
	if (ns && *ns)
		snprintf(tag, sizeof tag, ".%s", ns);
	size_t tl = strlen(tag), pl = prefix ? strlen(prefix) : 0, o = 0;
	bool prefix_done = pl == 0;
	for (const char *c = job_id; *c && o + 1 < len;) {
		if (tl && strncmp(c, tag, tl) == 0) {
			c += tl;
			continue;
		}
		if (!prefix_done && strncmp(c, prefix, pl) == 0) {
			c += pl;
			prefix_done = true;
			continue;
		}
		out[o++] = *c++;
	}
	out[o] = '\0';
}

/*
 * A re-baseline job (purpose REBASELINE, issue 17): `repeats` runs of the
 * job's nightly build on the series' changed fleet, spread round-robin over
 * max(min_chip_sets, 1) sets of the series' rotation group (at most 4, all in
 * its cell), stamped in data time: each set runs its share one after the
 * other, 15 minutes a run, starting SIM_REBASELINE_QUEUE after the request
 * (the change's time), so 30 runs on 3 sets end 3 h after it. The runs are
 * nightly-kind and carry rebaseline_job_id; run ids "rx-JOB", repeats 0..n-1.
 */
#define SIM_REBASELINE_QUEUE_US (30LL * 60 * 1000000)
#define SIM_RUN_US (15LL * 60 * 1000000)

static pw_status answer_rebaseline(app *a, pw_sim_bisect_plan *plan, const char *build_id,
                                   int64_t requested_us, uint32_t min_chip_sets, char *errbuf,
                                   size_t errlen)
{
	uint32_t nsets = min_chip_sets ? min_chip_sets : 1;
	nsets = nsets > 4 ? 4 : nsets;
	plan->build.kind = PW_SIM_BUILD_NIGHTLY;
	if (build_id && *build_id)
		snprintf(plan->build.build_id, sizeof plan->build.build_id, "%s", build_id);
	char run_id[PW_SIM_NAME_MAX * 2], seed[PW_SIM_NAME_MAX], seed_run[PW_SIM_NAME_MAX * 2];
	snprintf(run_id, sizeof run_id, "rx-%s", plan->job_id);
	answer_seed_id(plan->job_id, a->o.ns, a->o.run_prefix, seed, sizeof seed);
	snprintf(seed_run, sizeof seed_run, "rx-%s", seed);
	for (uint32_t r = 0; r < plan->repeats; r++) {
		int64_t t = requested_us + SIM_REBASELINE_QUEUE_US + (int64_t)(r / nsets) * SIM_RUN_US;
		pw_sim_run run;
		pw_status st = pw_sim_run_make_rebaseline(a->w, plan->series, plan->fingerprint,
		                                          &plan->build, seed_run, r, r % nsets, t,
		                                          plan->job_id, &run);
		if (st != PW_OK) {
			pw_log_warn(&a->log, "re-baseline job \"%s\": fingerprint \"%s\" unknown; skipped",
			            plan->job_id, plan->fingerprint);
			return PW_OK;
		}
		snprintf(run.run_id, sizeof run.run_id, "%.*s", (int)sizeof run.run_id - 1, run_id);
		uint8_t *buf;
		size_t len;
		if (pw_sim_run_namespace(&run, a->o.ns) != PW_OK)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen,
			               "namespace \"%s\" makes a name too long", a->o.ns);
		if ((st = pw_sim_proto_run(a->w, &run, &buf, &len)) != PW_OK)
			return pw_fail(st, errbuf, errlen, "packing a run failed");
		st = produce(a, PW_TOPIC_RUNS, run.run_id, buf, len, errbuf, errlen);
		free(buf);
		if (st != PW_OK)
			return st;
		a->job_runs++;
	}
	a->jobs++;
	pw_log_info(&a->log, "answered re-baseline job %s: %u runs at %s on %u chip-sets", plan->job_id,
	            plan->repeats, plan->build.build_id, nsets);
	return PW_OK;
}

/* One BisectJob: build, run, publish; malformed jobs are logged and skipped. */
static pw_status answer_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                              size_t errlen)
{
	app *a = ctx;
	for (size_t i = 0; i < n; i++) {
		Perfwatch__V1__BisectJob *job =
			perfwatch__v1__bisect_job__unpack(NULL, msgs[i]->len, msgs[i]->payload);
		if (!job) {
			pw_log_warn(&a->log, "bisect job at offset %lld does not decode; skipped",
			            (long long)msgs[i]->offset);
			continue;
		}
		pw_sim_bisect_plan plan;
		char err[512];
		pw_status st = PW_OK;
		if (a->o.ns && !job_strip_ns(job, a->o.ns)) {
			pw_log_info(&a->log, "bisect job \"%s\" is not of namespace \"%s\"; skipped",
			            job->job_id ? job->job_id : "", a->o.ns);
			perfwatch__v1__bisect_job__free_unpacked(job, NULL);
			continue;
		}
		st = pw_sim_bisect_plan_make(a->w, job, &plan, err, sizeof err);
		/* a CONFIRM job is stamped in data time (the outlier's time + its modelled build and run) */
		bool confirm = job->purpose == PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_CONFIRM &&
		               job->data_unix_us > 0;
		int64_t data_us = job->data_unix_us;
		bool rebaseline = job->purpose == PERFWATCH__V1__BISECT_PURPOSE__BISECT_PURPOSE_REBASELINE;
		char rb_build[PW_SIM_NAME_MAX] = "";
		int64_t rb_at = job->requested_unix_us;
		uint32_t rb_sets = job->min_chip_sets;
		if (rebaseline && job->key && job->key->compiler && job->key->compiler->build_id)
			snprintf(rb_build, sizeof rb_build, "%s", job->key->compiler->build_id);
		perfwatch__v1__bisect_job__free_unpacked(job, NULL);
		if (st != PW_OK) {
			pw_log_warn(&a->log, "%s; skipped", err);
			continue;
		}
		if (rebaseline) {
			if ((st = answer_rebaseline(a, &plan, rb_build, rb_at, rb_sets, errbuf, errlen)) != PW_OK)
				return st;
			continue;
		}
		int64_t t = confirm ? data_us : pw_now_us() - 16LL * 60 * 1000000;
		char run_id[PW_SIM_NAME_MAX * 2], seed[PW_SIM_NAME_MAX], seed_run[PW_SIM_NAME_MAX * 2];
		snprintf(run_id, sizeof run_id, "bx-%s", plan.job_id);
		answer_seed_id(plan.job_id, a->o.ns, a->o.run_prefix, seed, sizeof seed);
		snprintf(seed_run, sizeof seed_run, "bx-%s", seed);
		for (uint32_t r = 0; r < plan.repeats; r++) {
			pw_sim_run run;
			st = pw_sim_run_make_fingerprint(a->w, plan.series, plan.fingerprint, &plan.build,
			                                 seed_run, r, t, plan.job_id, &run);
			if (st != PW_OK) {
				pw_log_warn(&a->log, "bisect job \"%s\": fingerprint \"%s\" unknown; skipped",
				            plan.job_id, plan.fingerprint);
				break;
			}
			snprintf(run.run_id, sizeof run.run_id, "%.*s", (int)sizeof run.run_id - 1, run_id);
			if ((st = publish_run(a, &run, errbuf, errlen)) != PW_OK)
				return st;
			a->job_runs++;
		}
		a->jobs++;
		pw_log_info(&a->log, "answered bisect job %s: %u runs at %s", plan.job_id, plan.repeats,
		            plan.build.build_id);
	}
	return pw_producer_flush(a->prod, 60000, errbuf, errlen);
}

/*
 * Consumes one topic in the configured group (kafka.group.id, from the
 * earliest offset when it has none) with batches of up to batch_msgs,
 * calling fn until the stop flag is set (a signal, or fn itself). 0 when
 * the loop ended cleanly, 1 on a broker or callback failure (logged).
 */
static int consume(app *a, const char *topic, size_t batch_msgs, pw_batch_fn fn)
{
	char err[1024];
	size_t nprops = 0;
	const pw_kv *props = pw_config_kafka_props(a->cfg, &nprops);
	const char *topics[] = {topic};
	pw_consumer_opts co = {
		.brokers = pw_config_get_str(a->cfg, "kafka.bootstrap.servers"),
		.group_id = pw_config_get_str(a->cfg, "kafka.group.id"),
		.topics = topics,
		.ntopics = 1,
		.props = props,
		.nprops = nprops,
		.batch_max_msgs = batch_msgs,
		.batch_max_ms = 100,
	};
	if (pw_consumer_new(&a->cons, &co, &a->log, err, sizeof err) != PW_OK) {
		pw_log_error(&a->log, "kafka consumer: %s", err);
		return 1;
	}
	if (pw_consumer_run(a->cons, fn, a, &stop_flag, err, sizeof err) != PW_OK) {
		pw_log_error(&a->log, "consumer loop: %s", err);
		return 1;
	}
	return 0;
}

static int cmd_answer(app *a)
{
	if (consume(a, PW_TOPIC_BISECT_JOBS, 50, answer_batch) != 0)
		return 1;
	pw_log_info(&a->log, "stopped after %llu bisect jobs, %llu runs",
	            (unsigned long long)a->jobs, (unsigned long long)a->job_runs);
	return 0;
}

/* ---- pw-sim execute: the fleet running the planner's plans --------------------------------- */

/* The index of the --sweep a plan is for, -1 when none names it; with no --sweep, 0. */
static long sweep_wanted(const app *a, const char *sweep_id)
{
	if (a->o.nsweeps == 0)
		return 0;
	for (size_t i = 0; i < a->o.nsweeps; i++)
		if (strcmp(a->o.sweeps[i], sweep_id) == 0)
			return (long)i;
	return -1;
}

/* Whether --skip leaves item it unrun. */
static bool item_skipped(const app *a, const Perfwatch__V1__PlanItem *it)
{
	char key[3 * PW_SIM_NAME_MAX + 3];
	snprintf(key, sizeof key, "%s/%s/%s", it->model, it->platform, it->config);
	for (size_t i = 0; i < a->o.nskips; i++)
		if (fnmatch(a->o.skips[i], key, 0) == 0)
			return true;
	return false;
}

/*
 * The series an item runs on: the scenario's when it holds the model (its
 * pins and effects apply as to its own matrix), else one built from the
 * catalogue's model; PW_ERR_NOT_FOUND when neither knows the model.
 */
static pw_status item_series(app *a, const Perfwatch__V1__PlanItem *it, size_t *si, char *err,
                             size_t errlen)
{
	pw_sim_model_spec spec;
	long ci = pw_sim_catalogue_find(a->cat, it->model);
	if (ci >= 0)
		pw_sim_catalogue_spec(a->cat, (size_t)ci, &spec);
	else if (!pw_sim_model_builtin(it->model, &spec)) {
		if (pw_sim_series_find(a->w, it->model, it->platform, it->config, si) == PW_OK)
			return PW_OK;
		return pw_fail(PW_ERR_NOT_FOUND, err, errlen,
		               "model \"%s\" is in neither the scenario nor the catalogue", it->model);
	}
	return pw_sim_series_ensure(a->w, &spec, it->platform, it->config, si, err, errlen);
}

/*
 * Publishes one plan's runs: item k's repeats as runs "pl-<sweep>-<k>" with
 * repeat index 0..repeats-1, built at the plan's CL head (a nightly build,
 * or the RC with its release id), spread over the sweep's hours of the
 * plan's day (nightly 01:00–13:00, RC 14:00–20:00, as the replay's sweeps).
 * An item whose model or config the simulator cannot build is logged and
 * counted (plan_unknown), never replaced by another.
 */
static pw_status execute_plan(app *a, const Perfwatch__V1__Plan *pl, char *errbuf, size_t errlen)
{
	int64_t day0;
	const char *head = pl->cl_head && strncmp(pl->cl_head, "cl/", 3) == 0 ? pl->cl_head + 3 : "";
	char *end;
	errno = 0;
	long long cl = strtoll(head, &end, 10);
	if (!pl->day || !parse_when(pl->day, &day0) || strlen(pl->day) != 10 || !*head || *end ||
	    errno || cl <= 0 || !pl->release || !*pl->release || !pl->sweep_id) {
		pw_log_warn(&a->log, "plan \"%s\": day \"%s\", CL head \"%s\" or release unusable; skipped",
		            pl->plan_id ? pl->plan_id : "", pl->day ? pl->day : "",
		            pl->cl_head ? pl->cl_head : "");
		return PW_OK;
	}
	bool rc = pl->kind == PERFWATCH__V1__SWEEP_KIND__SWEEP_KIND_RC;
	pw_sim_build b;
	pw_sim_build_at(&b, rc ? PW_SIM_BUILD_RC : PW_SIM_BUILD_NIGHTLY, pl->release, cl);
	if (rc)
		snprintf(b.release_id, sizeof b.release_id, "%s", pl->release);
	uint64_t total = 0;
	for (size_t k = 0; k < pl->n_items; k++)
		total += pl->items[k]->repeats;
	int64_t from = day0 + (rc ? 14 : 1) * 3600LL * 1000000, span = (rc ? 6 : 12) * 3600LL * 1000000;
	uint64_t pos = 0, runs = 0, unknown = 0, skipped = 0;
	for (size_t k = 0; k < pl->n_items && !stop_flag; k++) {
		const Perfwatch__V1__PlanItem *it = pl->items[k];
		size_t si;
		char err[512];
		if (item_skipped(a, it)) {
			skipped++;
			pos += it->repeats;
			continue;
		}
		if (item_series(a, it, &si, err, sizeof err) != PW_OK) {
			pw_log_warn(&a->log, "plan \"%s\" item %zu (%s/%s/%s): %s; not run", pl->plan_id, k,
			            it->model, it->platform, it->config, err);
			unknown++;
			pos += it->repeats;
			continue;
		}
		char id[PW_SIM_NAME_MAX];
		snprintf(id, sizeof id, "pl-%s-%05zu", pl->sweep_id, k);
		for (uint32_t r = 0; r < it->repeats; r++, pos++) {
			int64_t t = from + (int64_t)((double)pos * (double)span / (double)(total ? total : 1));
			pw_sim_run run;
			pw_status st = pw_sim_run_make(a->w, si, &b, id, r, t, NULL, &run);
			if (st != PW_OK)
				return pw_fail(st, errbuf, errlen, "plan \"%s\" item %zu: making a run failed",
				               pl->plan_id, k);
			/* the planned program: the catalogue's fingerprint, as the plan names it */
			if (it->hlo_fingerprint && *it->hlo_fingerprint)
				snprintf(run.fingerprint, sizeof run.fingerprint, "%s", it->hlo_fingerprint);
			if (a->o.run_prefix) {
				char pid[PW_SIM_NAME_MAX * 2];
				snprintf(pid, sizeof pid, "%s%s", a->o.run_prefix, run.run_id);
				snprintf(run.run_id, sizeof run.run_id, "%.*s", (int)sizeof run.run_id - 1, pid);
			}
			if ((st = publish_run(a, &run, errbuf, errlen)) != PW_OK)
				return st;
			runs++;
			if ((runs & 255) == 0)
				pw_producer_poll(a->prod, 0);
		}
	}
	a->plans++;
	a->plan_items += pl->n_items - unknown - skipped;
	a->plan_runs += runs;
	a->plan_unknown += unknown;
	a->plan_skipped += skipped;
	pw_log_info(&a->log, "executed plan %s: %zu items, %llu runs on %s at cl/%lld; %llu skipped%s",
	            pl->plan_id, (size_t)(pl->n_items - unknown - skipped), (unsigned long long)runs,
	            pl->release, cl, (unsigned long long)skipped,
	            unknown ? " (some items not runnable: see above)" : "");
	return PW_OK;
}

/* A batch of plans: each wanted one executed; the runs acknowledged before the offsets move. */
static pw_status execute_batch(void *ctx, rd_kafka_message_t *const *msgs, size_t n, char *errbuf,
                               size_t errlen)
{
	app *a = ctx;
	for (size_t i = 0; i < n && !stop_flag; i++) {
		Perfwatch__V1__Plan *pl = perfwatch__v1__plan__unpack(NULL, msgs[i]->len, msgs[i]->payload);
		if (!pl) {
			pw_log_warn(&a->log, "plan at offset %lld does not decode; skipped",
			            (long long)msgs[i]->offset);
			continue;
		}
		long w = sweep_wanted(a, pl->sweep_id ? pl->sweep_id : "");
		pw_status st = w < 0 ? PW_OK : execute_plan(a, pl, errbuf, errlen);
		if (st == PW_OK && w >= 0 && a->o.nsweeps)
			a->swept[w] = true;
		perfwatch__v1__plan__free_unpacked(pl, NULL);
		if (st != PW_OK)
			return st;
	}
	pw_status st = pw_producer_flush(a->prod, 60000, errbuf, errlen);
	if (st == PW_OK && a->o.nsweeps) {
		bool all = true;
		for (size_t i = 0; i < a->o.nsweeps; i++)
			all = all && a->swept[i];
		if (all)
			stop_flag = 1; /* every sweep asked for was executed */
	}
	return st;
}

static int cmd_execute(app *a)
{
	if (pw_sim_catalogue_new(a->o.catalogue, a->o.catalogue_seed, &a->cat) != PW_OK) {
		pw_log_error(&a->log, "building the simulated catalogue of %zu models failed", a->o.catalogue);
		return 1;
	}
	if (consume(a, PW_TOPIC_PLANS, 8, execute_batch) != 0)
		return 1;
	printf("{\"scenario\":\"%s\",\"plans\":%llu,\"items\":%llu,\"runs\":%llu,\"items_not_run\":%llu,"
	       "\"items_skipped\":%llu}\n",
	       pw_sim_name(a->w), (unsigned long long)a->plans, (unsigned long long)a->plan_items,
	       (unsigned long long)a->plan_runs, (unsigned long long)a->plan_unknown,
	       (unsigned long long)a->plan_skipped);
	fflush(stdout);
	bool all = true;
	for (size_t i = 0; i < a->o.nsweeps; i++)
		if (!a->swept[i]) {
			pw_log_error(&a->log, "stopped before the plan of sweep \"%s\" was executed", a->o.sweeps[i]);
			all = false;
		}
	return all ? 0 : 1;
}

static int cmd_count(app *a)
{
	uint64_t runs, samples, fleet, gates;
	pw_sim_timeline_size(a->w, &runs, &samples, &fleet, &gates);
	uint64_t lim_runs = a->o.limit && a->o.limit < runs ? a->o.limit : runs;
	if (lim_runs != runs) {
		/* samples of the first `limit` runs: walk them */
		pw_sim_cursor c;
		pw_sim_cursor_init(&c, a->w);
		pw_sim_event ev;
		uint64_t r = 0;
		samples = 0;
		while (r < lim_runs && pw_sim_cursor_next(&c, &ev) == PW_OK)
			if (ev.kind == PW_SIM_EV_RUN) {
				samples += pw_sim_run_metric_count(&ev.run);
				r++;
			}
	}
	printf("{\"scenario\":\"%s\",\"series\":%zu,\"runs\":%llu,\"samples\":%llu,"
	       "\"fleet_changes\":%llu,\"gate_requests\":%llu}\n",
	       pw_sim_name(a->w), pw_sim_series_count(a->w), (unsigned long long)lim_runs,
	       (unsigned long long)samples, (unsigned long long)fleet, (unsigned long long)gates);
	return 0;
}

static int cmd_history(app *a)
{
	int64_t from = a->o.from ? a->o.from : pw_sim_nightly_cl(a->w, 0);
	int64_t to = a->o.to ? a->o.to : pw_sim_nightly_cl(a->w, pw_sim_days(a->w) - 1);
	printf("# cl\tperf_relevant\tupstream_commits\tauthor\ttitle\n");
	for (int d = 0; d < pw_sim_days(a->w); d++) {
		int64_t cl = pw_sim_nightly_cl(a->w, d);
		if (cl >= from && cl <= to) {
			time_t t = (time_t)((pw_sim_start_us(a->w) + d * 86400000000LL) / 1000000);
			struct tm tm;
			gmtime_r(&t, &tm);
			printf("# nightly xla-nightly-%04d-%02d-%02d at cl/%lld\n", tm.tm_year + 1900,
			       tm.tm_mon + 1, tm.tm_mday, (long long)cl);
		}
	}
	for (int64_t cl = from; cl <= to; cl++) {
		pw_sim_cl_info ci;
		pw_sim_cl_describe(a->w, cl, &ci);
		printf("cl/%lld\t%s\t%u\t%s\t%s\n", (long long)cl, ci.perf_relevant ? "yes" : "no",
		       ci.upstream, ci.author, ci.title);
	}
	return 0;
}

static int cmd_dump(app *a)
{
	pw_sim_cursor c;
	pw_sim_cursor_init(&c, a->w);
	pw_sim_event ev;
	uint64_t runs = 0;
	while (pw_sim_cursor_next(&c, &ev) == PW_OK) {
		if (ev.kind == PW_SIM_EV_FLEET_CHANGE) {
			printf("{\"fleet_change\":\"%s%s%s\",\"at_us\":%lld,\"cell\":\"%s\",\"pct\":%g}\n",
			       ev.fleet->id, a->o.ns ? "." : "", a->o.ns ? a->o.ns : "",
			       (long long)ev.t_unix_us, ev.fleet->cell, ev.fleet->pct);
			continue;
		}
		if (ev.kind == PW_SIM_EV_GATE_REQUEST) {
			printf("{\"gate_request\":\"%s%s%s\",\"at_us\":%lld}\n", ev.release->id,
			       a->o.ns ? "." : "", a->o.ns ? a->o.ns : "", (long long)ev.t_unix_us);
			continue;
		}
		if (a->o.limit && runs >= a->o.limit)
			break;
		if (pw_sim_run_namespace(&ev.run, a->o.ns) != PW_OK) {
			fprintf(stderr, "pw-sim: namespace \"%s\" makes a name too long\n", a->o.ns);
			return 1;
		}
		const pw_sim_run *r = &ev.run;
		printf("{\"run_id\":\"%s\",\"repeat\":%u,\"model\":\"%s\",\"platform\":\"%s\","
		       "\"config\":\"%s\",\"build\":\"%s\",\"cl\":%lld,\"chip_set\":\"%s\",\"started_us\":%lld",
		       r->run_id, r->repeat, r->model, r->platform->name, r->config.name,
		       r->build.build_id, (long long)r->build.cl, r->chipset,
		       (long long)r->started_unix_us);
		for (int m = 0; m < PW_SIM_METRIC_COUNT; m++)
			if (r->has[m])
				printf(",\"%s\":%.6g", pw_sim_metric_name(m), r->value[m]);
		printf(",\"ops\":{");
		for (size_t k = 0; k < r->nops; k++)
			printf("%s\"%s\":%.1f", k ? "," : "", r->ops[k].name, r->ops[k].us_per_step);
		printf("},\"wall_us\":%.1f,\"numerics\":\"%s\"}\n", r->wall_us_per_step, r->numerics);
		runs++;
	}
	return 0;
}

/*
 * The configuration (the common keys, PW_* variables) and the project's
 * idempotent producer into a (a->log initialised here). 0, or the exit code
 * after the reason is logged: 2 for a bad configuration, 1 for a producer
 * that cannot be made. The caller frees a->prod and a->cfg either way.
 */
static int publisher_open(app *a)
{
	char err[1024];
	pw_log_init(&a->log, "simulator", PW_LOG_INFO);
	a->cfg = pw_config_new("simulator", NULL, 0, err, sizeof err);
	if (!a->cfg || pw_config_load(a->cfg, NULL, NULL, err, sizeof err) != PW_OK) {
		pw_log_error(&a->log, "configuration: %s", err);
		return 2;
	}
	size_t nprops = 0;
	const pw_kv *props = pw_config_kafka_props(a->cfg, &nprops);
	if (pw_producer_new(&a->prod, pw_config_get_str(a->cfg, "kafka.bootstrap.servers"), props, nprops, &a->log,
	                    err, sizeof err) != PW_OK) {
		pw_log_error(&a->log, "kafka producer: %s", err);
		return 1;
	}
	return 0;
}

/* ---- pw-sim planner: the planner's inputs --------------------------------------------------- */

static bool day_arg(const char *v, int32_t *day)
{
	int y, m, d;
	char tail;
	if (sscanf(v, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3)
		return false;
	struct tm tm = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d};
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return false;
	*day = (int32_t)(t / 86400);
	return true;
}

static int cmd_planner(int argc, char **argv)
{
	unsigned long long models = 300, days = 10, seed = 20260504, capacity = 3000;
	int32_t from = 20612, readopt_day = -1; /* 2026-06-08, a Monday */
	char readopt[128] = "";
	for (int i = 2; i < argc; i++) {
		unsigned long long v;
		if (num_arg(argc, argv, &i, "--models", &v) && v >= 20 && v <= 100000)
			models = v;
		else if (num_arg(argc, argv, &i, "--days", &v) && v >= 1 && v <= 3660)
			days = v;
		else if (num_arg(argc, argv, &i, "--seed", &v))
			seed = v;
		else if (num_arg(argc, argv, &i, "--capacity", &v) && v > 0)
			capacity = v;
		else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc && day_arg(argv[i + 1], &from))
			i++;
		else if (strcmp(argv[i], "--readopt") == 0 && i + 1 < argc && strchr(argv[i + 1], '@') &&
		         strlen(argv[i + 1]) < sizeof readopt && day_arg(strchr(argv[i + 1], '@') + 1, &readopt_day)) {
			snprintf(readopt, sizeof readopt, "%.*s", (int)(strchr(argv[i + 1], '@') - argv[i + 1]), argv[i + 1]);
			i++;
		} else {
			fprintf(stderr, "usage: pw-sim planner [--models N>=20] [--from YYYY-MM-DD] [--days N] [--seed N]\n"
			                "       [--capacity CHIP_H] [--readopt MODEL@YYYY-MM-DD]\n");
			return 2;
		}
	}
	app a;
	memset(&a, 0, sizeof a);
	char err[1024];
	pw_sim_catalogue *c = NULL;
	pw_sim_cl_buf cls = {0};
	uint64_t ncat = 0, ncls = 0, nsweeps = 0;
	int rc = publisher_open(&a);
	if (rc != 0)
		goto out;
	rc = 1;
	if (pw_sim_catalogue_new((size_t)models, seed, &c) != PW_OK)
		goto out;
	long ro = readopt[0] ? pw_sim_catalogue_find(c, readopt) : -1;
	if (readopt[0] && ro < 0) {
		fprintf(stderr, "pw-sim: --readopt: no model \"%s\" in the catalogue\n", readopt);
		rc = 2;
		goto out;
	}
	uint8_t *buf;
	size_t len;
	pw_status st = PW_OK;
	for (size_t p = 0; p < c->nplatforms && st == PW_OK; p++) {
		if ((st = pw_sim_catalogue_pack_capacity(&c->platforms[p], (double)capacity, &buf, &len)) != PW_OK)
			break;
		st = produce(&a, PW_TOPIC_CAPACITY, c->platforms[p].facts.name, buf, len, err, sizeof err);
		free(buf);
	}
	int64_t adopted = (int64_t)from * 86400 * 1000000;
	for (size_t i = 0; i < c->n && st == PW_OK && !stop_flag; i++) {
		if ((st = pw_sim_catalogue_pack_model(c, i, adopted, &buf, &len)) != PW_OK)
			break;
		st = produce(&a, PW_TOPIC_CATALOGUE, c->models[i].model, buf, len, err, sizeof err);
		free(buf);
		ncat++;
	}
	for (int32_t d = from; d < from + (int32_t)days && st == PW_OK && !stop_flag; d++) {
		if (d == readopt_day) {
			pw_sim_catalogue_readopt(c, (size_t)ro);
			if ((st = pw_sim_catalogue_pack_model(c, (size_t)ro, (int64_t)d * 86400 * 1000000, &buf, &len)) != PW_OK)
				break;
			st = produce(&a, PW_TOPIC_CATALOGUE, c->models[ro].model, buf, len, err, sizeof err);
			free(buf);
		}
		int64_t head = pw_sim_catalogue_head(d);
		cls.ncls = cls.ncosts = 0;
		if (st == PW_OK)
			st = pw_sim_catalogue_day_cls(c, pw_sim_catalogue_head(d - 1), PW_SIM_CAT_CLS_PER_DAY, &cls);
		for (size_t k = 0; k < cls.ncls && st == PW_OK; k++) {
			char key[32];
			snprintf(key, sizeof key, "cl/%lld", (long long)cls.cls[k].cl_number);
			if ((st = pw_sim_catalogue_pack_cl(&cls.cls[k], &buf, &len)) != PW_OK)
				break;
			st = produce(&a, PW_TOPIC_COMPILER_CLS, key, buf, len, err, sizeof err);
			free(buf);
			ncls++;
		}
		/* Monday (the epoch was a Thursday): the RC after the day's nightly */
		for (int kind = 1; kind <= 2 && st == PW_OK; kind++) {
			if (kind == 2 && ((d + 3) % 7) != 0)
				continue;
			char id[64];
			if ((st = pw_sim_catalogue_pack_sweep(kind, d, head, id, sizeof id, &buf, &len)) != PW_OK)
				break;
			st = produce(&a, PW_TOPIC_SWEEPS, id, buf, len, err, sizeof err);
			free(buf);
			nsweeps++;
		}
		pw_producer_poll(a.prod, 0);
	}
	if (st == PW_OK)
		st = pw_producer_flush(a.prod, 60000, err, sizeof err);
	if (st != PW_OK) {
		pw_log_error(&a.log, "publishing the planner's inputs: %s", err);
		goto out;
	}
	printf("{\"models\":%llu,\"catalogue\":%llu,\"cls\":%llu,\"sweeps\":%llu,\"days\":%llu}\n", models,
	       (unsigned long long)ncat, (unsigned long long)ncls, (unsigned long long)nsweeps, days);
	rc = stop_flag ? 1 : 0;
out:
	pw_sim_cl_buf_release(&cls);
	pw_sim_catalogue_free(c);
	pw_producer_free(a.prod);
	pw_config_free(a.cfg);
	return rc;
}

/* ---- pw-sim canary: the production canary's live windows ------------------------------------- */

static int cmd_canary(int argc, char **argv)
{
	const char *rollout = "rollout-xla-rc-2026-06-22";
	const char *release = PW_SIM_CANARY_RELEASE, *previous = PW_SIM_CANARY_PREVIOUS, *suffix = "";
	unsigned long long hours = 12, seed = 1;
	int64_t start_us = 1782118800LL * 1000000; /* 2026-06-22T09:00:00Z: sim_canary's start hour */
	for (int i = 2; i < argc; i++) {
		unsigned long long v;
		if (num_arg(argc, argv, &i, "--hours", &v) && v >= 1 && v <= 24 * 30)
			hours = v;
		else if (num_arg(argc, argv, &i, "--seed", &v))
			seed = v;
		else if (strcmp(argv[i], "--rollout") == 0 && i + 1 < argc && argv[i + 1][0] && !strchr(argv[i + 1], '/') &&
		         strlen(argv[i + 1]) <= 200)
			rollout = argv[++i];
		else if (strcmp(argv[i], "--start") == 0 && i + 1 < argc && parse_when(argv[i + 1], &start_us))
			i++;
		else if (strcmp(argv[i], "--release") == 0 && i + 1 < argc && argv[i + 1][0] && strlen(argv[i + 1]) <= 200)
			release = argv[++i];
		else if (strcmp(argv[i], "--previous") == 0 && i + 1 < argc && argv[i + 1][0] && strlen(argv[i + 1]) <= 200)
			previous = argv[++i];
		else if (strcmp(argv[i], "--family-suffix") == 0 && i + 1 < argc && !strchr(argv[i + 1], '/') &&
		         strlen(argv[i + 1]) <= 64)
			suffix = argv[++i];
		else {
			fprintf(stderr, "usage: pw-sim canary [--rollout ID] [--hours H] [--seed N] [--start YYYY-MM-DDTHH:MM:SSZ]\n"
			                "                     [--release N] [--previous N-1] [--family-suffix SFX]\n");
			return 2;
		}
	}
	app a;
	memset(&a, 0, sizeof a);
	char err[1024];
	int rc = publisher_open(&a);
	if (rc != 0)
		goto out;
	rc = 1;
	pw_sim_canary_params params[PW_SIM_CANARY_FAMILIES];
	char key[PW_SIM_CANARY_FAMILIES][512];
	for (size_t f = 0; f < PW_SIM_CANARY_FAMILIES; f++) {
		pw_sim_canary_scenario_params(f, &params[f]);
		snprintf(key[f], sizeof key[f], "%s/%s%s", rollout, pw_sim_canary_scenario[f].family, suffix);
	}
	uint64_t windows = hours * 12, published = 0;
	pw_status st = PW_OK;
	for (uint64_t wi = 0; wi < windows && st == PW_OK && !stop_flag; wi++) {
		for (size_t f = 0; f < PW_SIM_CANARY_FAMILIES && st == PW_OK; f++) {
			pw_sim_canary_window win;
			pw_sim_canary_window_make(&params[f], pw_sim_canary_scenario_seed(seed, f), (uint32_t)wi, &win);
			for (int m = 0; m < 3 && st == PW_OK; m++) {
				uint8_t *buf;
				size_t len;
				if ((st = pw_sim_proto_canary_window_of(rollout, release, previous, suffix, f, &win, m,
				                                     start_us + (int64_t)wi * (int64_t)(params[f].window_s * 1e6), &buf,
				                                     &len)) != PW_OK) {
					pw_fail(st, err, sizeof err, "packing a canary window");
					break;
				}
				st = produce(&a, PW_TOPIC_CANARY, key[f], buf, len, err, sizeof err);
				free(buf);
				published++;
			}
		}
		pw_producer_poll(a.prod, 0);
	}
	if (st == PW_OK)
		st = pw_producer_flush(a.prod, 60000, err, sizeof err);
	if (st != PW_OK) {
		pw_log_error(&a.log, "publishing the canary's windows: %s", err);
		goto out;
	}
	printf("{\"rollout\":\"%s\",\"families\":%d,\"hours\":%llu,\"windows\":%llu,\"published\":%llu}\n", rollout,
	       PW_SIM_CANARY_FAMILIES, hours, (unsigned long long)windows, (unsigned long long)published);
	rc = stop_flag ? 1 : 0;
out:
	pw_producer_free(a.prod);
	pw_config_free(a.cfg);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "canary") == 0) {
		signal(SIGPIPE, SIG_IGN);
		return cmd_canary(argc, argv);
	}
	if (argc >= 2 && strcmp(argv[1], "planner") == 0) {
		signal(SIGPIPE, SIG_IGN);
		return cmd_planner(argc, argv);
	}
	app a;
	memset(&a, 0, sizeof a);
	int rc = parse_args(argc, argv, &a.o);
	if (rc)
		return rc;
	char err[1024];
	rc = 1;
	pw_log_init(&a.log, "simulator", PW_LOG_INFO);
	pw_sim_scenario *sc = NULL;
	if (pw_sim_scenario_load(a.o.scenario, &sc, err, sizeof err) != PW_OK) {
		fprintf(stderr, "pw-sim: %s\n", err);
		return 2;
	}
	pw_status st = pw_sim_new(&a.w, sc, &a.o.ov, err, sizeof err);
	pw_sim_scenario_free(sc);
	if (st != PW_OK) {
		fprintf(stderr, "pw-sim: %s\n", err);
		return 2;
	}
	if (strcmp(a.o.cmd, "count") == 0) {
		rc = cmd_count(&a);
		goto out;
	}
	if (strcmp(a.o.cmd, "history") == 0) {
		rc = cmd_history(&a);
		goto out;
	}
	if (strcmp(a.o.cmd, "dump") == 0) {
		rc = cmd_dump(&a);
		goto out;
	}
	if (strcmp(a.o.cmd, "replay") != 0 && strcmp(a.o.cmd, "answer") != 0 &&
	    strcmp(a.o.cmd, "execute") != 0) {
		rc = usage();
		goto out;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if ((rc = publisher_open(&a)) != 0)
		goto out;
	if (strcmp(a.o.cmd, "replay") == 0) {
		rc = cmd_replay(&a);
		if (rc == 0 && a.o.answer && !stop_flag)
			rc = cmd_answer(&a);
	} else if (strcmp(a.o.cmd, "execute") == 0) {
		rc = cmd_execute(&a);
	} else {
		rc = cmd_answer(&a);
	}
out:
	pw_consumer_free(a.cons);
	pw_producer_free(a.prod);
	pw_config_free(a.cfg);
	pw_sim_catalogue_free(a.cat);
	pw_sim_free(a.w);
	return rc;
}
