/*
 * bench_watch_latency.c: the watcher's detection latency and false reports
 * on the simulator's scenarios (issue 17), offline: the runs `pw-sim dump`
 * prints go, nightly builds only, one series per (model, platform, config,
 * metric), through services/watcher/watch.c exactly as pw-watcher feeds them
 * (pw_watch_series_append per point, every series top tier).
 *
 *   pw-sim dump SCENARIO [...] | bench_watch_latency EARLY_K [SERIES_KEY|- [MIN_REF [NOISE_K]]]
 *
 * EARLY_K 0 is PELT alone (before issue 17), 3 the default early rule. It
 * prints every event (series, stage, first shifted build, the nightly at
 * which it came, the points of the new level seen then) and a summary line:
 * series, points, events by stage. With SERIES_KEY (model/platform/config/
 * metric) only that series' events are printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "watch.h"

#define MAX_LINE 8192

static const struct {
	const char *name;
	bool lower_is_better;
} METRICS[] = {
	{"ttft_p50_ms", true},  {"ttft_p99_ms", true},        {"tpot_p50_ms", true},
	{"tpot_p99_ms", true},  {"prefill_compute_ms", true}, {"goodput_tok_s_chip", false},
	{"mfu", false},         {"hbm_bw_util", false},       {"cost_per_mtok_usd", true},
};
#define NMETRICS (sizeof METRICS / sizeof METRICS[0])

typedef struct entry {
	char key[256];
	pw_watch_series *s;
	size_t points;
} entry;

static entry *table;
static size_t cap = 1 << 16, used;

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static entry *find(const char *key, bool lower, const pw_watch_params *p)
{
	for (uint64_t i = hash(key) & (cap - 1);; i = (i + 1) & (cap - 1)) {
		if (!table[i].key[0]) {
			if (used * 2 >= cap) {
				fprintf(stderr, "too many series\n");
				exit(1);
			}
			snprintf(table[i].key, sizeof table[i].key, "%s", key);
			char err[256];
			table[i].s = pw_watch_series_new(p, lower, true, err, sizeof err);
			if (!table[i].s) {
				fprintf(stderr, "%s\n", err);
				exit(1);
			}
			used++;
			return &table[i];
		}
		if (strcmp(table[i].key, key) == 0)
			return &table[i];
	}
}

/* The text value of "field":"..." or the number of "field":N in line. */
static bool field(const char *line, const char *name, char *out, size_t len)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", name);
	const char *p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	bool str = *p == '"';
	if (str)
		p++;
	size_t n = 0;
	while (p[n] && (str ? p[n] != '"' : (p[n] != ',' && p[n] != '}')))
		n++;
	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	return true;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: pw-sim dump SCENARIO | bench_watch_latency EARLY_K [SERIES_KEY]\n");
		return 2;
	}
	pw_watch_params p;
	pw_watch_params_default(&p);
	p.early.k = (size_t)atoi(argv[1]);
	const char *only = argc > 2 && strcmp(argv[2], "-") != 0 ? argv[2] : NULL;
	if (argc > 3)
		p.early.min_ref = (size_t)atoi(argv[3]);
	if (argc > 4)
		p.early.noise_k = atof(argv[4]);
	table = calloc(cap, sizeof *table);
	char *line = malloc(MAX_LINE);
	if (!table || !line)
		return 1;
	size_t points = 0, by_stage[5] = {0};
	while (fgets(line, MAX_LINE, stdin)) {
		char build[64], model[64], platform[64], config[96], cl[32], ts[32];
		if (!field(line, "build", build, sizeof build) || strncmp(build, "xla-nightly-", 12) != 0)
			continue;
		if (!field(line, "model", model, sizeof model) ||
		    !field(line, "platform", platform, sizeof platform) ||
		    !field(line, "config", config, sizeof config) || !field(line, "cl", cl, sizeof cl) ||
		    !field(line, "started_us", ts, sizeof ts))
			continue;
		pw_watch_build b;
		memset(&b, 0, sizeof b);
		snprintf(b.build_id, sizeof b.build_id, "%s", build);
		b.cl_number = atoll(cl);
		snprintf(b.cl, sizeof b.cl, "cl/%s", cl);
		b.ts_us = atoll(ts);
		for (size_t m = 0; m < NMETRICS; m++) {
			char v[64], key[256];
			if (!field(line, METRICS[m].name, v, sizeof v))
				continue;
			snprintf(key, sizeof key, "%s/%s/%s/%s", model, platform, config, METRICS[m].name);
			entry *e = find(key, METRICS[m].lower_is_better, &p);
			pw_watch_event ev[16];
			size_t nev = 0;
			char err[256];
			if (pw_watch_series_append(e->s, strtod(v, NULL), &b, ev, 16, &nev, err, sizeof err) !=
			    PW_OK) {
				fprintf(stderr, "%s: %s\n", key, err);
				return 1;
			}
			e->points++;
			points++;
			for (size_t i = 0; i < nev; i++) {
				by_stage[ev[i].stage]++;
				if (only && strcmp(only, key) != 0)
					continue;
				printf("event %s %s first_shifted %s at %s points_after %zu delta %+.2f%% "
				       "annotation %s routing %s\n",
				       key, pw_watch_stage_name(ev[i].stage) /* CONFIRMING prints confirmed */,
				       ev[i].first_shifted.build_id, build, ev[i].reported_after,
				       100.0 * ev[i].cp.rel_change, pw_watch_annotation_name(ev[i].annotation),
				       pw_watch_routing_name(ev[i].routing));
			}
		}
	}
	printf("summary early_k %zu series %zu points %zu confirmed_at_once %zu provisional %zu "
	       "confirming %zu withdrawn %zu trend %zu\n",
	       p.early.k, used, points, by_stage[PW_WATCH_STAGE_CONFIRMED],
	       by_stage[PW_WATCH_STAGE_PROVISIONAL], by_stage[PW_WATCH_STAGE_CONFIRMING],
	       by_stage[PW_WATCH_STAGE_WITHDRAWN], by_stage[PW_WATCH_STAGE_TREND]);
	for (size_t i = 0; i < cap; i++)
		pw_watch_series_free(table[i].s);
	free(table);
	free(line);
	return 0;
}
