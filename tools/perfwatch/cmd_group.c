/*
 * cmd_group.c: consumer groups, as an operator sees them.
 *
 *   perfwatch group to-end GROUP TOPIC...   commit GROUP's offsets at the
 *       topics' current ends (pw_kafka_group_commit_ends), so that a service
 *       joining as GROUP starts with what is published next: a deployment
 *       beside topics whose history it must not replay, the demo on a stack
 *       that tests used, tests on a shared broker.
 *   perfwatch group lag GROUP [--wait SECONDS] TOPIC...   messages published
 *       but not yet committed by GROUP (pw_kafka_group_lag); with --wait,
 *       polls until it is 0 (exit 1 when the time runs out).
 *
 * PW_KAFKA_BOOTSTRAP_SERVERS names the brokers. Each prints one JSON line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "pw_kafka.h"

static int group_lag(const char *brokers, int argc, char **argv)
{
	const char *group = argv[2];
	int first = 3;
	long wait_s = 0;
	if (argc > 5 && strcmp(argv[3], "--wait") == 0) {
		char *end;
		wait_s = strtol(argv[4], &end, 10);
		if (*end || wait_s < 0) {
			fprintf(stderr, "perfwatch: --wait takes whole seconds, not \"%s\"\n", argv[4]);
			return PW_CLI_EXIT_USAGE;
		}
		first = 5;
	}
	char err[512];
	int64_t lag = 0;
	time_t deadline = time(NULL) + wait_s;
	for (;;) {
		pw_status st = pw_kafka_group_lag(brokers, group, (const char *const *)argv + first,
		                                  (size_t)(argc - first), &lag, err, sizeof err);
		if (st != PW_OK) {
			fprintf(stderr, "perfwatch: group \"%s\": %s\n", group, err);
			return st == PW_ERR_INVALID ? PW_CLI_EXIT_USAGE : PW_CLI_EXIT_FAIL;
		}
		if (lag == 0 || time(NULL) >= deadline)
			break;
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 200000000};
		nanosleep(&ts, NULL);
	}
	printf("{\"group\":\"%s\",\"lag\":%lld}\n", group, (long long)lag);
	return wait_s > 0 && lag > 0 ? PW_CLI_EXIT_FAIL : PW_CLI_EXIT_OK;
}

int pw_cmd_group(int argc, char **argv)
{
	bool to_end = argc >= 4 && strcmp(argv[1], "to-end") == 0;
	bool lag = argc >= 4 && strcmp(argv[1], "lag") == 0;
	if (!to_end && !lag) {
		fprintf(stderr, "usage: perfwatch group to-end GROUP TOPIC... | "
		                "lag GROUP [--wait SECONDS] TOPIC...\n");
		return PW_CLI_EXIT_USAGE;
	}
	const char *brokers = getenv("PW_KAFKA_BOOTSTRAP_SERVERS");
	if (!brokers || !*brokers) {
		pw_cli_missing_env("PW_KAFKA_BOOTSTRAP_SERVERS");
		return PW_CLI_EXIT_USAGE;
	}
	if (lag)
		return group_lag(brokers, argc, argv);
	char err[512];
	size_t n = 0;
	pw_status st = pw_kafka_group_commit_ends(brokers, argv[2], (const char *const *)argv + 3,
	                                          (size_t)argc - 3, &n, err, sizeof err);
	if (st != PW_OK) {
		fprintf(stderr, "perfwatch: group \"%s\": %s\n", argv[2], err);
		return st == PW_ERR_INVALID ? PW_CLI_EXIT_USAGE : PW_CLI_EXIT_FAIL;
	}
	printf("{\"group\":\"%s\",\"partitions_at_end\":%zu}\n", argv[2], n);
	return PW_CLI_EXIT_OK;
}
