/*
 * main.c: the perfwatch command-line tool. Dispatches the first word to a
 * command of the table below; every command runs exactly the library code the
 * services run, so that what an operator sees here is what the services decide.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const pw_cli_command commands[] = {
	{"compare", "[--direction lower|higher] [--mde PCT] BASE CAND",
	 "two-sample verdict of CAND against BASE (one number a line each)", pw_cmd_compare, false},
	{"changepoints", "[--direction lower|higher] SERIES",
	 "level shifts of a series (one number a line, oldest first)", pw_cmd_changepoints, false},
	{"classify", "[--direction lower|higher] RUNS",
	 "is the newest run regressed against its history (one run a line)", pw_cmd_classify, false},
	{"gate", "show RELEASE [--json] | request --release ID --candidate BUILD --baseline REL ...",
	 "the release gate's console report from PostgreSQL, or publish a GateRequest", pw_cmd_gate, true},
	{"series", "show [--text] [--no-redis] SERIES | plot SERIES [-o FILE.svg]",
	 "a series' baseline, band, state and why; or an SVG of it with its band, changepoints and "
	 "fleet changes (PostgreSQL PW_PG_DSN, Redis PW_REDIS_ADDR)",
	 pw_cmd_series, true},
	{"attribution", "show ALERT [--json]",
	 "an alert's attribution: per-op diff, HLO diff, roofline check, owner hint (PostgreSQL PW_PG_DSN)",
	 pw_cmd_attribution, true},
	{"bisect", "show ID|ALERT [--json]",
	 "a bisection's log (artifact 4) from PostgreSQL: steps, culprit, confidence", pw_cmd_bisect, true},
	{"group", "to-end GROUP TOPIC... | lag GROUP [--wait SECONDS] TOPIC...",
	 "commit a consumer group's offsets at the topics' ends, so that its members start with "
	 "what is published next; or its lag (PW_KAFKA_BOOTSTRAP_SERVERS)",
	 pw_cmd_group, true},
	{"report", "card [--month YYYY-MM] [--text]",
	 "the detector's report card: pages, true/false pages, caught/missed, validated wins, "
	 "median time to verdict, spend-weighted coverage, threshold review (PW_PG_DSN)",
	 pw_cmd_report, true},
	{"coverage", "[--week YYYY-MM-DD] [--text]",
	 "the planner's week: spend gated by the RC, models measured within 28 days, chip-hours by "
	 "tier reconciling to the total against the naive matrix (PW_PG_DSN)",
	 pw_cmd_coverage, true},
	{"noise-floors", "[--since YYYY-MM-DD] [--text|--json]",
	 "the noise floors the baseliner re-derived (section 4.2): per series the previous floor, the "
	 "new one, the change and the runs behind each (PW_PG_DSN)",
	 pw_cmd_noise_floors, true},
	{"p1", "list [--open] [--json] | resolve ID --by WHO --note TEXT [--waive]",
	 "the P1 tickets the gate filed (section 8) with their artifacts and due RC; or resolve or "
	 "waive one, so that the next RC's gate no longer reports it as compounding drift (PW_PG_DSN)",
	 pw_cmd_p1, true},
	{"canary", "show [--rollout ID] [--json]",
	 "the production canary's decision per family of a rollout (the latest without --rollout): "
	 "PROMOTE, HOLD or ROLLBACK, effect and confidence sequence interval, windows, when (PW_PG_DSN)",
	 pw_cmd_canary, true},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: perfwatch COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %s %s\n      %s\n", commands[i].name, commands[i].usage,
		        commands[i].help);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return PW_CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return PW_CLI_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			if (commands[i].servers)
				pw_cli_stack_env_load();
			return commands[i].run(argc - 1, argv + 1);
		}
	fprintf(stderr, "perfwatch: unknown command \"%s\"\n", argv[1]);
	usage(stderr);
	return PW_CLI_EXIT_USAGE;
}
