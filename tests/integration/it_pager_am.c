/*
 * it_pager_am.c: prints the worked example's incident as Alertmanager v2
 * alerts (services/pager/pager_msg.h), for test_pager_alertmanager.sh to
 * post to a real Alertmanager.
 *
 *   it_pager_am open|resolved|escalated-high
 *
 * "open" is the BLOCKING page with its culprit; "resolved" the same alert
 * with endsAt; "escalated-high" the same incident's earlier high-severity
 * form (a watcher shift), which the critical one inhibits.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pager_msg.h"

static void cp(char *d, size_t n, const char *s) { snprintf(d, n, "%s", s); }

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: it_pager_am open|resolved|escalated-high\n");
		return 2;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t now_us = (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
	pw_finding f;
	memset(&f, 0, sizeof f);
	cp(f.alert_id, sizeof f.alert_id, "perfreg-it-00412");
	f.revision = 1;
	f.from_gate = true;
	f.created_us = now_us - 60 * 1000000LL;
	cp(f.series_key, sizeof f.series_key, "chat-8b|hlo:9f31c2|v6e-4|decode.B64.s2048.int8|tpot_p50_ms");
	cp(f.model, sizeof f.model, "chat-8b");
	cp(f.platform, sizeof f.platform, "v6e-4");
	cp(f.config, sizeof f.config, "decode.B64.s2048.int8");
	cp(f.metric, sizeof f.metric, "tpot_p50_ms");
	f.base_median = 3.90;
	f.obs_median = 4.22;
	f.delta_pct = 8.2;
	f.passed_min_effect = true;
	f.top_tier = true;
	f.verdict = PW_FV_BLOCKING;
	cp(f.release_id, sizeof f.release_id, "xla-rc-2026-06-17");
	cp(f.culprit, sizeof f.culprit, "cl/7841917");
	cp(f.bisect_status, sizeof f.bisect_status, "done");

	pw_pager_params p;
	pw_pager_params_default(&p);
	pw_incident inc;
	pw_route r;
	pw_incident_open(&inc, "inc-it-00412", &f);
	pw_route_decide(&p, &inc.primary, &r);
	if (strcmp(argv[1], "escalated-high") == 0)
		r.severity = PW_SEV_HIGH;
	else if (strcmp(argv[1], "open") != 0 && strcmp(argv[1], "resolved") != 0) {
		fprintf(stderr, "it_pager_am: unknown form \"%s\"\n", argv[1]);
		return 2;
	}
	pw_status st = pw_alertmanager_write(stdout, &inc, &r, "pg-it-00412",
	                                     "http://127.0.0.1:1/triage/pg-it-00412", false,
	                                     strcmp(argv[1], "resolved") == 0, now_us);
	putchar('\n');
	return st == PW_OK ? 0 : 1;
}
