/*
 * cli.h: the perfwatch command-line tool's command table and the helpers its
 * commands share (reading number files, writing JSON).
 *
 * Each command lives in its own cmd_*.c file and is listed in main.c. A
 * command returns the process exit code: 0 on success whatever the verdict,
 * 2 on bad usage or bad input (with one line on stderr), 1 on other failure.
 */
#ifndef PW_CLI_H
#define PW_CLI_H

#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>

#include <libpq-fe.h>

#define PW_CLI_EXIT_OK 0
#define PW_CLI_EXIT_FAIL 1
#define PW_CLI_EXIT_USAGE 2

/* Input bounds of the number and run files: bytes of a line, lines, numbers in all. */
#define PW_CLI_LINE_MAX 65536
#define PW_CLI_LINES_MAX 10000000
#define PW_CLI_VALUES_MAX 5000000
/* Points `perfwatch changepoints` takes: PELT without a changepoint to prune on is O(n^2). */
#define PW_CLI_CHANGEPOINTS_MAX 200000

typedef struct pw_cli_command {
	const char *name;   /* first word, e.g. "compare" */
	const char *usage;  /* one line: arguments */
	const char *help;   /* one line: what it does */
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	bool servers;       /* reads the dev stack's servers: pw_cli_stack_env_load first */
} pw_cli_command;

int pw_cmd_compare(int argc, char **argv);
int pw_cmd_changepoints(int argc, char **argv);
int pw_cmd_classify(int argc, char **argv);
int pw_cmd_gate(int argc, char **argv);
int pw_cmd_series(int argc, char **argv);
int pw_cmd_group(int argc, char **argv);
int pw_cmd_attribution(int argc, char **argv);
/* `bisect show ID|ALERT [--json]` (cmd_bisect.c): a bisection's log (artifact 4). */
int pw_cmd_bisect(int argc, char **argv);
/* `report card [--month YYYY-MM] [--text]` (cmd_report.c): the detector's report card. */
int pw_cmd_report(int argc, char **argv);
/* `coverage [--week YYYY-MM-DD] [--text]` (cmd_coverage.c): the planner's chip-hours and coverage for a week. */
int pw_cmd_coverage(int argc, char **argv);
/* `noise-floors [--since YYYY-MM-DD] [--text]` (cmd_noise_floors.c): the baseliner's noise-floor derivations, previous against new. */
int pw_cmd_noise_floors(int argc, char **argv);
/* `p1 list [--open] [--json] | resolve ID --by WHO --note TEXT [--waive]` (cmd_p1.c): the gate's P1 tickets. */
int pw_cmd_p1(int argc, char **argv);
/* `canary show [--rollout ID] [--json]` (cmd_canary.c): the production canary's decisions per family. */
int pw_cmd_canary(int argc, char **argv);
/* `series plot SERIES [-o FILE.svg]` (cmd_plot.c); argv[0] is "plot", dispatched by cmd_series.c. */
int pw_cmd_series_plot(int argc, char **argv);

/* An array of doubles that grows; owned by the caller, freed with pw_cli_vec_release. */
typedef struct pw_cli_vec {
	double *v;
	size_t n, cap;
} pw_cli_vec;

void pw_cli_vec_release(pw_cli_vec *vec);

/*
 * Reads a file of one number a line ("-" for stdin). Blank lines and lines
 * starting with '#' are skipped. On a non-number, NaN, ±inf, an empty file,
 * a directory, a NUL byte, a line over PW_CLI_LINE_MAX bytes, more than
 * PW_CLI_LINES_MAX lines or PW_CLI_VALUES_MAX numbers, prints
 * "perfwatch: FILE:LINE: reason" to stderr (a bad token quoted to 40 bytes)
 * and returns -1; else 0.
 */
int pw_cli_read_numbers(const char *path, pw_cli_vec *out);

/*
 * Reads a file of one run a line, its samples separated by spaces or tabs.
 * runs receives one pw_cli_vec per run (caller frees each and the array).
 * Errors as for pw_cli_read_numbers.
 */
int pw_cli_read_runs(const char *path, pw_cli_vec **runs, size_t *nruns);

/* Prints a double as JSON: a number, or null when not finite. */
void pw_cli_json_number(FILE *out, double x);

/*
 * Parses --direction lower|higher. Returns 1 for higher-is-better, 0 for
 * lower-is-better, -1 (after a message) for anything else.
 */
int pw_cli_parse_direction(const char *s);

/*
 * Parses the arguments of a command of the shape
 * `perfwatch NAME [--direction lower|higher] FILE` (and -h/--help): sets
 * *higher and *path and returns -1 when the command should go on, or else
 * the exit code to return (usage printed). file_word names FILE in messages
 * ("SERIES", "RUNS").
 */
int pw_cli_parse_direction_file(int argc, char **argv, const char *file_word, int *higher,
                                const char **path);

/*
 * Parses the arguments of a report over one period, `perfwatch WHAT [OPT
 * VALUE] [--json|--text]` (and -h/--help): sets *value (NULL when absent)
 * and *text. valid checks VALUE's form, which form names in the refusal
 * ("YYYY-MM"). Returns -1 when the command should go on, or else the exit
 * code to return (usage or a message printed).
 */
int pw_cli_parse_period(int argc, char **argv, const char *what, const char *opt,
                        bool (*valid)(const char *), const char *form, void (*usage)(FILE *),
                        const char **value, bool *text);

/*
 * pw_cli_parse_period, then pw_cli_pg_connect: how every report over one
 * period starts. Returns -1 with *conn set when the command should go on
 * (the caller PQfinish()es it); else the exit code to return.
 */
int pw_cli_period_connect(int argc, char **argv, const char *what, const char *opt,
                          bool (*valid)(const char *), const char *form, void (*usage)(FILE *),
                          const char **value, bool *text, PGconn **conn);

/* A day's form, YYYY-MM-DD (PostgreSQL judges the date itself). */
bool pw_cli_day_ok(const char *s);

/*
 * Connects to PostgreSQL at PW_PG_DSN (pg.c). Returns -1 with *conn set when
 * the command should go on (the caller PQfinish()es it); else the exit code to
 * return after one line on stderr: PW_CLI_EXIT_USAGE when PW_PG_DSN is not
 * set, PW_CLI_EXIT_FAIL when the connection failed (*conn NULL).
 */
int pw_cli_pg_connect(PGconn **conn);

/*
 * The dev stack's env file (stack_env.c): when PW_PG_DSN, PW_REDIS_ADDR or
 * PW_KAFKA_BOOTSTRAP_SERVERS is unset, sets the unset PW_* variables from
 * $PW_RUN_DIR/stack.env or the nearest run/stack.env from the current
 * directory up, and says on stderr which it read. pw_cli_missing_env prints
 * that var is missing, where it looked and what to do.
 */
void pw_cli_stack_env_load(void);
void pw_cli_missing_env(const char *var);

/*
 * Runs sql with nparams text parameters ($1..). Returns the result (the
 * caller PQclear()s it) when the query returned rows, else NULL after
 * "perfwatch: WHAT: the server's message" on stderr.
 */
PGresult *pw_cli_pg_query(PGconn *conn, const char *what, const char *sql, int nparams,
                          const char *const *params);

/*
 * The CLI's door for an id or key typed on the command line, as the
 * services' doors check the same text in a message: not empty, at most max
 * bytes, valid UTF-8 and no control character (a NUL cannot come through
 * argv). True when s passes; else false with why holding the reason, which
 * names the length and quotes at most 40 bytes of s with every byte that is
 * not printable ASCII as \xNN (a 100 KB id is not echoed, an invalid byte
 * never reaches PostgreSQL or the terminal).
 */
bool pw_cli_id_ok(const char *s, size_t max, char *why, size_t whylen);

/*
 * pw_cli_id_ok on s, the command's WHAT ("bisection id or alert id"):
 * -1 when it passes, else PW_CLI_EXIT_USAGE after "perfwatch: WHAT why" on
 * stderr.
 */
int pw_cli_check_id(const char *what, const char *s, size_t max);

/*
 * Reads the arguments of a "show ID [--json]" command (argv[0] is "show";
 * pg.c). Returns -1 with *id and *json set when the command should go on,
 * else the exit code to return after usage() on stdout (-h/--help) or stderr,
 * or after pw_cli_check_id refused the id (what names it, max its bytes).
 */
int pw_cli_show_args(int argc, char **argv, void (*usage)(FILE *out), const char *what, size_t max,
                     const char **id, bool *json);

#endif
