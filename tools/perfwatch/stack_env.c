/*
 * stack_env.c: the dev stack's connection settings for a perfwatch command
 * run from the checkout.
 *
 * The commands that read PostgreSQL, Redis or Kafka take PW_PG_DSN,
 * PW_REDIS_ADDR and PW_KAFKA_BOOTSTRAP_SERVERS from the environment. When one
 * of them is missing, main.c calls pw_cli_stack_env_load first: it looks for
 * the env file deploy/dev/stack.sh writes, $PW_RUN_DIR/stack.env, or
 * run/stack.env in the current directory or the nearest parent that has one,
 * and takes from it the PW_* variables the environment lacks (the
 * environment always wins), saying on stderr which file it read. When there
 * is none, pw_cli_missing_env says so where a command needs a variable.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static char searched_from[PATH_MAX];
static char used[PATH_MAX];

/* Takes the NAME='value' lines of path whose NAME starts with PW_ and is unset. */
static int load(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[4096], names[512] = "";
	while (fgets(line, sizeof line, f)) {
		char *eq = strchr(line, '=');
		if (strncmp(line, "PW_", 3) != 0 || !eq || eq[1] != '\'')
			continue;
		*eq = '\0';
		char *v = eq + 2, *end = strrchr(v, '\'');
		if (!end)
			continue;
		*end = '\0';
		if (getenv(line) && *getenv(line))
			continue;
		if (setenv(line, v, 0) == 0 && strlen(names) + strlen(line) + 3 < sizeof names)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
			         names[0] ? ", " : "", line);
	}
	fclose(f);
	snprintf(used, sizeof used, "%s", path);
	if (names[0])
		fprintf(stderr, "perfwatch: %s from %s\n", names, path);
	return 0;
}

void pw_cli_stack_env_load(void)
{
	const char *need[] = {"PW_PG_DSN", "PW_REDIS_ADDR", "PW_KAFKA_BOOTSTRAP_SERVERS"};
	bool missing = false;
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		missing = missing || !getenv(need[i]) || !*getenv(need[i]);
	if (!missing)
		return;
	char path[PATH_MAX + 32];
	const char *run = getenv("PW_RUN_DIR");
	if (run && *run) {
		snprintf(path, sizeof path, "%s/stack.env", run);
		if (load(path) == 0)
			return;
	}
	char dir[PATH_MAX];
	if (!getcwd(dir, sizeof dir))
		return;
	snprintf(searched_from, sizeof searched_from, "%s", dir);
	for (;;) {
		snprintf(path, sizeof path, "%s/run/stack.env", strcmp(dir, "/") ? dir : "");
		if (load(path) == 0)
			return;
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
}

void pw_cli_missing_env(const char *var)
{
	if (used[0])
		fprintf(stderr, "perfwatch: %s is not set, and %s does not set it\n", var, used);
	else
		fprintf(stderr,
		        "perfwatch: %s is not set, and no run/stack.env was found in %s or above\n"
		        "hint: start the dev stack (make stack-start) and run perfwatch from the "
		        "checkout, or export %s (set -a; . run/stack.env; set +a)\n",
		        var, searched_from[0] ? searched_from : "the current directory", var);
}
