/*
 * test_metrics.c: unit tests of the Prometheus registry (common/pw_metrics.c).
 *
 * Checks the exact exposition text of a small registry, label and help
 * escaping, histogram buckets (cumulative, inclusive upper bounds, +Inf),
 * the series limit, misuse answered with PW_ERR_INVALID, concurrent updates
 * from several threads while another renders, and (when /usr/bin/promtool
 * is installed) that `promtool check metrics` finds no problem.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pw_metrics.h"

#define DROPPED_HEAD                                                                        \
	"# HELP perfwatch_metrics_series_dropped_total Updates dropped because their metric " \
	"family had reached its series limit.\n"                                              \
	"# TYPE perfwatch_metrics_series_dropped_total counter\n"

static char *render(pw_metrics *reg)
{
	char *text = NULL;
	size_t len = 0;
	cr_assert_eq(pw_metrics_render(reg, &text, &len), PW_OK);
	cr_assert_eq(strlen(text), len);
	return text;
}

Test(metrics, exact_text)
{
	pw_metrics *reg = pw_metrics_new();
	char err[256] = "";
	pw_metric *runs, *lag, *lat;
	cr_assert_eq(pw_metrics_counter(reg, "pw_test_runs_total", "Runs seen.",
	                                (const char *[]){"topic", "result", NULL}, &runs, err,
	                                sizeof err),
	             PW_OK, "%s", err);
	cr_assert_eq(pw_metrics_gauge(reg, "pw_test_lag", "Consumer lag.", NULL, &lag, err,
	                              sizeof err),
	             PW_OK, "%s", err);
	static const double b[] = {0.1, 1};
	cr_assert_eq(pw_metrics_histogram(reg, "pw_test_latency_seconds", "Handling time.", NULL,
	                                  b, 2, &lat, err, sizeof err),
	             PW_OK, "%s", err);

	cr_assert_eq(pw_metric_inc(runs, (const char *[]){"perf.runs.v1", "ok"}), PW_OK);
	cr_assert_eq(pw_metric_inc(runs, (const char *[]){"perf.runs.v1", "ok"}), PW_OK);
	cr_assert_eq(pw_metric_add(runs, (const char *[]){"perf.runs.v1", "bad"}, 3), PW_OK);
	cr_assert_eq(pw_metric_set(lag, NULL, 42.5), PW_OK);
	cr_assert_eq(pw_metric_observe(lat, NULL, 0.0625), PW_OK);
	cr_assert_eq(pw_metric_observe(lat, NULL, 1.0), PW_OK); /* upper bounds are inclusive */
	cr_assert_eq(pw_metric_observe(lat, NULL, 4), PW_OK);

	char *text = render(reg);
	cr_assert_str_eq(text, "# HELP pw_test_runs_total Runs seen.\n"
	                       "# TYPE pw_test_runs_total counter\n"
	                       "pw_test_runs_total{topic=\"perf.runs.v1\",result=\"ok\"} 2\n"
	                       "pw_test_runs_total{topic=\"perf.runs.v1\",result=\"bad\"} 3\n"
	                       "# HELP pw_test_lag Consumer lag.\n"
	                       "# TYPE pw_test_lag gauge\n"
	                       "pw_test_lag 42.5\n"
	                       "# HELP pw_test_latency_seconds Handling time.\n"
	                       "# TYPE pw_test_latency_seconds histogram\n"
	                       "pw_test_latency_seconds_bucket{le=\"0.1\"} 1\n"
	                       "pw_test_latency_seconds_bucket{le=\"1\"} 2\n"
	                       "pw_test_latency_seconds_bucket{le=\"+Inf\"} 3\n"
	                       "pw_test_latency_seconds_sum 5.0625\n"
	                       "pw_test_latency_seconds_count 3\n" DROPPED_HEAD
	                       "perfwatch_metrics_series_dropped_total 0\n");
	free(text);
	pw_metrics_free(reg);
	pw_metrics_free(NULL);
}

Test(metrics, empty_families)
{
	pw_metrics *reg = pw_metrics_new();
	pw_metric *a, *b, *h;
	cr_assert_eq(pw_metrics_counter(reg, "a_total", "A.", NULL, &a, NULL, 0), PW_OK);
	cr_assert_eq(pw_metrics_counter(reg, "b_total", "B.", (const char *[]){"x", NULL}, &b,
	                                NULL, 0),
	             PW_OK);
	cr_assert_eq(pw_metrics_histogram(reg, "h_seconds", "H.", NULL, NULL, 0, &h, NULL, 0),
	             PW_OK);
	char *text = render(reg);
	/* unlabelled families show 0; labelled ones no sample; default buckets */
	cr_assert_str_eq(text, "# HELP a_total A.\n# TYPE a_total counter\na_total 0\n"
	                       "# HELP b_total B.\n# TYPE b_total counter\n"
	                       "# HELP h_seconds H.\n# TYPE h_seconds histogram\n"
	                       "h_seconds_bucket{le=\"0.005\"} 0\n"
	                       "h_seconds_bucket{le=\"0.01\"} 0\n"
	                       "h_seconds_bucket{le=\"0.025\"} 0\n"
	                       "h_seconds_bucket{le=\"0.05\"} 0\n"
	                       "h_seconds_bucket{le=\"0.1\"} 0\n"
	                       "h_seconds_bucket{le=\"0.25\"} 0\n"
	                       "h_seconds_bucket{le=\"0.5\"} 0\n"
	                       "h_seconds_bucket{le=\"1\"} 0\n"
	                       "h_seconds_bucket{le=\"2.5\"} 0\n"
	                       "h_seconds_bucket{le=\"5\"} 0\n"
	                       "h_seconds_bucket{le=\"10\"} 0\n"
	                       "h_seconds_bucket{le=\"+Inf\"} 0\n"
	                       "h_seconds_sum 0\nh_seconds_count 0\n" DROPPED_HEAD
	                       "perfwatch_metrics_series_dropped_total 0\n");
	free(text);
	pw_metrics_free(reg);
}

Test(metrics, escaping)
{
	pw_metrics *reg = pw_metrics_new();
	pw_metric *c;
	cr_assert_eq(pw_metrics_counter(reg, "esc_total", "Back\\slash and\nnewline \"quoted\".",
	                                (const char *[]){"v", NULL}, &c, NULL, 0),
	             PW_OK);
	pw_metric_inc(c, (const char *[]){"a\"b\\c\nd"});
	pw_metric_inc(c, (const char *[]){"caf\xc3\xa9"});
	pw_metric_inc(c, (const char *[]){"bad\xff"});
	pw_metric_inc(c, (const char *[]){"bad\xff"}); /* the same normalised series */
	char *text = render(reg);
	cr_assert_str_eq(text, "# HELP esc_total Back\\\\slash and\\nnewline \"quoted\".\n"
	                       "# TYPE esc_total counter\n"
	                       "esc_total{v=\"a\\\"b\\\\c\\nd\"} 1\n"
	                       "esc_total{v=\"caf\xc3\xa9\"} 1\n"
	                       "esc_total{v=\"bad\xef\xbf\xbd\"} 2\n" DROPPED_HEAD
	                       "perfwatch_metrics_series_dropped_total 0\n");
	free(text);
	pw_metrics_free(reg);
}

Test(metrics, long_values_are_cut)
{
	pw_metrics *reg = pw_metrics_new();
	pw_metric *g;
	cr_assert_eq(pw_metrics_gauge(reg, "long_values", "L.", (const char *[]){"v", NULL}, &g,
	                              NULL, 0),
	             PW_OK);
	char *big = malloc(3000);
	memset(big, 'a', 2999);
	big[2999] = '\0';
	big[PW_METRICS_MAX_VALUE - 1] = '\xc3'; /* a 2-byte character across the cut */
	big[PW_METRICS_MAX_VALUE] = '\xa9';
	cr_assert_eq(pw_metric_set(g, (const char *[]){big}, 1), PW_OK);
	cr_assert_eq(pw_metric_set(g, (const char *[]){big}, 2), PW_OK);
	char *text = render(reg);
	const char *open = strstr(text, "long_values{v=\"");
	cr_assert_not_null(open);
	const char *close = strstr(open, "\"} 2\n");
	cr_assert_not_null(close);
	cr_assert_eq(close - (open + strlen("long_values{v=\"")), PW_METRICS_MAX_VALUE - 1);
	cr_assert_null(strstr(close + 1, "long_values{"), "one series only");
	free(text);
	free(big);
	pw_metrics_free(reg);
}

Test(metrics, histogram_with_labels)
{
	pw_metrics *reg = pw_metrics_new();
	pw_metric *h;
	pw_metric_def def = {.name = "step_seconds",
	                     .help = "Step time.",
	                     .labels = (const char *[]){"stage", NULL},
	                     .buckets = (const double[]){0.5, 2, 1e21},
	                     .nbuckets = 3};
	cr_assert_eq(pw_metrics_register(reg, PW_METRIC_HISTOGRAM, &def, &h, NULL, 0), PW_OK);
	pw_metric_observe(h, (const char *[]){"build"}, 3);
	pw_metric_observe(h, (const char *[]){"build"}, -1);
	pw_metric_observe(h, (const char *[]){"run"}, INFINITY);
	char *text = render(reg);
	cr_assert_str_eq(text, "# HELP step_seconds Step time.\n"
	                       "# TYPE step_seconds histogram\n"
	                       "step_seconds_bucket{stage=\"build\",le=\"0.5\"} 1\n"
	                       "step_seconds_bucket{stage=\"build\",le=\"2\"} 1\n"
	                       "step_seconds_bucket{stage=\"build\",le=\"1e+21\"} 2\n"
	                       "step_seconds_bucket{stage=\"build\",le=\"+Inf\"} 2\n"
	                       "step_seconds_sum{stage=\"build\"} 2\n"
	                       "step_seconds_count{stage=\"build\"} 2\n"
	                       "step_seconds_bucket{stage=\"run\",le=\"0.5\"} 0\n"
	                       "step_seconds_bucket{stage=\"run\",le=\"2\"} 0\n"
	                       "step_seconds_bucket{stage=\"run\",le=\"1e+21\"} 0\n"
	                       "step_seconds_bucket{stage=\"run\",le=\"+Inf\"} 1\n"
	                       "step_seconds_sum{stage=\"run\"} +Inf\n"
	                       "step_seconds_count{stage=\"run\"} 1\n" DROPPED_HEAD
	                       "perfwatch_metrics_series_dropped_total 0\n");
	free(text);
	pw_metrics_free(reg);
}

Test(metrics, gauge_values)
{
	pw_metrics *reg = pw_metrics_new();
	pw_metric *g;
	cr_assert_eq(pw_metrics_gauge(reg, "g", "G.", NULL, &g, NULL, 0), PW_OK);
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{0.1, "g 0.1\n"},       {-3, "g -3\n"},         {1e-300, "g 1e-300\n"},
		{-INFINITY, "g -Inf\n"}, {1.0 / 3, "g 0.33333333333333331\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cr_assert_eq(pw_metric_set(g, NULL, cases[i].v), PW_OK);
		char *text = render(reg);
		cr_expect_not_null(strstr(text, cases[i].want), "want %s in %s", cases[i].want, text);
		free(text);
	}
	cr_assert_eq(pw_metric_set(g, NULL, 1), PW_OK);
	cr_assert_eq(pw_metric_add(g, NULL, -0.5), PW_OK);
	cr_assert_eq(pw_metric_inc(g, NULL), PW_OK);
	char *text = render(reg);
	cr_assert_not_null(strstr(text, "\ng 1.5\n"));
	free(text);
	pw_metrics_free(reg);
}

Test(metrics, series_limit)
{
	pw_metrics *reg = pw_metrics_new();
	pw_metric *c;
	pw_metric_def def = {.name = "lim_total", .help = "L.",
	                     .labels = (const char *[]){"id", NULL}, .max_series = 2};
	cr_assert_eq(pw_metrics_register(reg, PW_METRIC_COUNTER, &def, &c, NULL, 0), PW_OK);
	cr_assert_eq(pw_metric_inc(c, (const char *[]){"a"}), PW_OK);
	cr_assert_eq(pw_metric_inc(c, (const char *[]){"b"}), PW_OK);
	cr_assert_eq(pw_metric_inc(c, (const char *[]){"c"}), PW_ERR_INVALID);
	cr_assert_eq(pw_metric_inc(c, (const char *[]){"d"}), PW_ERR_INVALID);
	cr_assert_eq(pw_metric_inc(c, (const char *[]){"a"}), PW_OK, "existing series still count");
	char *text = render(reg);
	cr_assert_not_null(strstr(text, "lim_total{id=\"a\"} 2\nlim_total{id=\"b\"} 1\n#"));
	cr_assert_null(strstr(text, "id=\"c\""));
	cr_assert_not_null(strstr(text, "\nperfwatch_metrics_series_dropped_total 2\n"));
	free(text);
	pw_metrics_free(reg);
}

Test(metrics, misuse)
{
	pw_metrics *reg = pw_metrics_new();
	pw_metric *c, *g, *h;
	char err[256];
	cr_assert_eq(pw_metrics_counter(reg, "m_total", "M.", (const char *[]){"k", NULL}, &c, err,
	                                sizeof err),
	             PW_OK);
	cr_assert_eq(pw_metrics_gauge(reg, "m_gauge", "M.", NULL, &g, err, sizeof err), PW_OK);
	cr_assert_eq(pw_metrics_histogram(reg, "m_seconds", "M.", NULL, NULL, 0, &h, err,
	                                  sizeof err),
	             PW_OK);
	cr_assert_eq(pw_metric_add(c, (const char *[]){"x"}, -1), PW_ERR_INVALID);
	cr_assert_eq(pw_metric_add(c, (const char *[]){"x"}, NAN), PW_ERR_INVALID);
	cr_assert_eq(pw_metric_set(c, (const char *[]){"x"}, 1), PW_ERR_INVALID);
	cr_assert_eq(pw_metric_inc(c, NULL), PW_ERR_INVALID);
	cr_assert_eq(pw_metric_inc(c, (const char *[]){NULL}), PW_ERR_INVALID);
	cr_assert_eq(pw_metric_observe(g, NULL, 1), PW_ERR_INVALID);
	cr_assert_eq(pw_metric_inc(h, NULL), PW_ERR_INVALID);
	cr_assert_eq(pw_metric_observe(h, NULL, NAN), PW_ERR_INVALID);
	cr_assert_eq(pw_metric_inc(NULL, NULL), PW_ERR_INVALID);

	pw_metric *x = (pw_metric *)&x;
	cr_assert_eq(pw_metrics_counter(reg, "m_total", "again", NULL, &x, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_null(x);
	cr_assert_str_eq(err, "metric \"m_total\" is already registered");
	cr_assert_eq(pw_metrics_gauge(reg, "m_seconds_count", "clash", NULL, &x, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_metrics_gauge(reg, "perfwatch_metrics_series_dropped_total", "own", NULL,
	                              &x, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_metrics_counter(reg, "runs", "no suffix", NULL, &x, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_str_eq(err, "counter name \"runs\" does not end in \"_total\"");
	cr_assert_eq(pw_metrics_gauge(reg, "9lives", "bad", NULL, &x, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_metrics_gauge(reg, "a-b", "bad", NULL, &x, err, sizeof err), PW_ERR_INVALID);
	cr_assert_eq(pw_metrics_gauge(reg, "lbl", "bad", (const char *[]){"a:b", NULL}, &x, err,
	                              sizeof err),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_metrics_gauge(reg, "lbl", "bad", (const char *[]){"__x", NULL}, &x, err,
	                              sizeof err),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_metrics_gauge(reg, "lbl", "dup", (const char *[]){"a", "a", NULL}, &x, err,
	                              sizeof err),
	             PW_ERR_INVALID);
	cr_assert_str_eq(err, "label \"a\" repeated for metric \"lbl\"");
	cr_assert_eq(pw_metrics_histogram(reg, "hl", "le", (const char *[]){"le", NULL}, NULL, 0,
	                                  &x, err, sizeof err),
	             PW_ERR_INVALID);
	cr_assert_eq(pw_metrics_histogram(reg, "hb", "b", NULL, (const double[]){1, 1}, 2, &x, err,
	                                  sizeof err),
	             PW_ERR_INVALID);
	cr_assert_str_eq(err, "histogram \"hb\": buckets must be finite and increasing");
	cr_assert_eq(pw_metrics_histogram(reg, "hb", "b", NULL, (const double[]){INFINITY}, 1, &x,
	                                  err, sizeof err),
	             PW_ERR_INVALID);
	pw_metrics_free(reg);
}

#define NTHREADS 4
#define NITER 20000

typedef struct worker {
	pw_metric *c, *h;
	int id;
} worker;

static void *work(void *arg)
{
	worker *w = arg;
	const char *parity = w->id % 2 ? "odd" : "even";
	for (int i = 0; i < NITER; i++) {
		pw_metric_inc(w->c, (const char *[]){parity});
		pw_metric_observe(w->h, NULL, (i % 4) * 0.5);
	}
	return NULL;
}

typedef struct reader {
	pw_metrics *reg;
	volatile int *stop;
	int renders;
} reader;

static void *read_loop(void *arg)
{
	reader *r = arg;
	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		char *text = NULL;
		if (pw_metrics_render(r->reg, &text, NULL) == PW_OK)
			r->renders++;
		free(text);
	}
	return NULL;
}

Test(metrics, concurrent_updates)
{
	pw_metrics *reg = pw_metrics_new();
	pw_metric *c, *h;
	cr_assert_eq(pw_metrics_counter(reg, "conc_total", "C.", (const char *[]){"parity", NULL},
	                                &c, NULL, 0),
	             PW_OK);
	cr_assert_eq(pw_metrics_histogram(reg, "conc_seconds", "H.", NULL, (const double[]){1}, 1,
	                                  &h, NULL, 0),
	             PW_OK);
	volatile int stop = 0;
	reader r = {.reg = reg, .stop = &stop};
	pthread_t rt, t[NTHREADS];
	worker w[NTHREADS];
	cr_assert_eq(pthread_create(&rt, NULL, read_loop, &r), 0);
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (worker){.c = c, .h = h, .id = i};
		cr_assert_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(rt, NULL);

	char *text = render(reg);
	char want[256];
	/* series appear in first-update order, which the threads race for */
	snprintf(want, sizeof want, "conc_total{parity=\"even\"} %d\n", NTHREADS / 2 * NITER);
	cr_assert_not_null(strstr(text, want), "%s", text);
	snprintf(want, sizeof want, "conc_total{parity=\"odd\"} %d\n", NTHREADS / 2 * NITER);
	cr_assert_not_null(strstr(text, want), "%s", text);
	/* values 0, .5, 1, 1.5 in turn: three of four are <= 1 */
	snprintf(want, sizeof want,
	         "conc_seconds_bucket{le=\"1\"} %d\nconc_seconds_bucket{le=\"+Inf\"} %d\n"
	         "conc_seconds_sum %d\nconc_seconds_count %d\n",
	         NTHREADS * NITER / 4 * 3, NTHREADS * NITER, NTHREADS * NITER / 4 * 3,
	         NTHREADS * NITER);
	cr_assert_not_null(strstr(text, want), "%s", text);
	free(text);
	pw_metrics_free(reg);
}

Test(metrics, promtool_accepts)
{
	if (access("/usr/bin/promtool", X_OK) != 0)
		cr_skip_test("promtool not installed");
	pw_metrics *reg = pw_metrics_new();
	pw_metric *c, *g, *h;
	cr_assert_eq(pw_metrics_counter(reg, "pw_unit_messages_total", "Messages \"handled\".",
	                                (const char *[]){"topic", "result", NULL}, &c, NULL, 0),
	             PW_OK);
	cr_assert_eq(pw_metrics_gauge(reg, "pw_unit_lag_messages", "Lag.\nSecond line.", NULL, &g,
	                              NULL, 0),
	             PW_OK);
	cr_assert_eq(pw_metrics_histogram(reg, "pw_unit_batch_seconds", "Batch time.",
	                                  (const char *[]){"stage", NULL}, NULL, 0, &h, NULL, 0),
	             PW_OK);
	pw_metric_inc(c, (const char *[]){"perf.runs.v1", "a\"b\\c\nd"});
	pw_metric_inc(c, (const char *[]){"perf.runs.v1", "bad\xff"});
	pw_metric_set(g, NULL, -INFINITY);
	pw_metric_observe(h, (const char *[]){"pg"}, 0.02);
	char path[] = "/tmp/pw_test_metrics_XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	FILE *f = fdopen(fd, "w");
	cr_assert_eq(pw_metrics_write(reg, f), PW_OK);
	fclose(f);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "/usr/bin/promtool check metrics < %s 2>&1", path);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	char out[4096];
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	int rc = pclose(p);
	unlink(path);
	cr_assert_eq(rc, 0, "promtool: %s", out);
	cr_assert_eq(n, 0, "promtool: %s", out);
	pw_metrics_free(reg);
}
