/*
 * pw_config.h: the configuration table every perfwatch service is built from.
 *
 * As librdkafka does with its properties, each key is declared once in a
 * table (name, type, default, range, help); the table is checked at start-up
 * and is also what docs/config.md is generated from. A service's
 * configuration is the common keys of pw_config_common_keys() (logging, HTTP,
 * PostgreSQL, Redis, Kafka, batching) plus the service's own table. Values
 * come, later ones winning, from the defaults, an optional file of
 * `key = value` lines, and the environment (PW_ + the key upper-cased with
 * '.' turned into '_', e.g. PW_PG_DSN for pg.dsn). Any key "kafka.<prop>" is
 * a librdkafka property passed through verbatim; pw_config_kafka_props()
 * hands the list to the Kafka helpers (pw_kafka.h). A service reads its
 * values with the typed getters; pw_http.h reads http.listen / http.port.
 *
 * A pw_config is read-only after loading and may then be read from any
 * thread; loading and setting are for one thread at start-up.
 */
#ifndef PW_CONFIG_H
#define PW_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pw_status.h"

/* One (name, value) pair; used for the librdkafka pass-through properties. */
typedef struct pw_kv {
	const char *key;
	const char *value;
} pw_kv;

typedef enum pw_conf_type {
	PW_CONF_STRING = 0,
	PW_CONF_INT,         /* signed 64-bit decimal integer */
	PW_CONF_DOUBLE,      /* finite floating-point number */
	PW_CONF_BOOL,        /* true/false, yes/no, on/off, 1/0 (any case) */
	PW_CONF_DURATION_MS, /* milliseconds: "250", "250ms", "2s", "5m", "1h" */
} pw_conf_type;

/*
 * One declared key. Tables are usually static const arrays in the service:
 *
 *   static const pw_conf_key gate_keys[] = {
 *       {.name = "gate.alpha", .type = PW_CONF_DOUBLE, .def = "0.05",
 *        .min = 0, .max = 1, .help = "family-wise false discovery rate"},
 *   };
 *
 * name:    lower-case words of [a-z0-9_] separated by '.'; must be unique
 *          (also after mapping to its environment variable name). A
 *          declared "kafka.<prop>" key is a librdkafka property too and is
 *          passed through like any other (declare one to give a property a
 *          service default); keep a service's own settings out of "kafka.".
 * def:     the default as text, parsed like any other value; NULL means no
 *          value at all (the getters then return NULL / 0 / false and
 *          pw_config_is_set() false). The text "{service}" inside a default
 *          is replaced by the service name given to pw_config_new().
 * min/max: for INT, DOUBLE and DURATION_MS, the inclusive range, checked
 *          only when min < max (so leave both 0 for "any value").
 * choices: for STRING, NULL or the allowed values separated by '|'.
 * help:    one line for the reference.
 */
typedef struct pw_conf_key {
	const char *name;
	pw_conf_type type;
	const char *def;
	double min, max;
	const char *choices;
	const char *help;
} pw_conf_key;

typedef struct pw_config pw_config;

/*
 * The keys every service has (log.level, service.name, http.listen,
 * http.port, pg.dsn, redis.addr, kafka.bootstrap.servers, kafka.group.id,
 * batch.max.messages, batch.max.ms, ...). Returns a static table and stores
 * its length in *n.
 */
const pw_conf_key *pw_config_common_keys(size_t *n);

/*
 * Builds a configuration of the common keys plus the nkeys keys of own (own
 * may be NULL when nkeys is 0), every key at its default. service (e.g.
 * "gate") is copied. The tables are borrowed and must outlive the handle
 * (static tables do). Returns NULL when allocation fails or a table is
 * malformed (bad or duplicate name, default not valid for its own type or
 * range), with the reason in errbuf; that is a programming error, which each
 * service's unit test should catch by building its configuration once.
 */
pw_config *pw_config_new(const char *service, const pw_conf_key *own, size_t nkeys,
                         char *errbuf, size_t errlen);

/* Frees the handle and every string it returned; NULL is allowed. */
void pw_config_free(pw_config *cfg);

/*
 * Replaces the default of a declared key (e.g. a service's own http.port)
 * and resets the key to it. Call before loading. Returns PW_ERR_CONFIG for
 * an undeclared key or an invalid value, PW_ERR_NOMEM.
 */
pw_status pw_config_set_default(pw_config *cfg, const char *key, const char *value,
                                char *errbuf, size_t errlen);

/*
 * Sets one key from text. source names where the value came from for error
 * messages and pw_config_source() ("default", "file.conf:3", "env PW_X",
 * "--set"); it is copied. A key "kafka.<prop>" that is not declared is kept
 * as a librdkafka pass-through property (prop must be of [a-z0-9._-]).
 * Returns PW_ERR_CONFIG, with a message naming the key and source, when the
 * key is unknown or the value ill-typed or out of range (the previous value
 * stays); PW_ERR_NOMEM.
 */
pw_status pw_config_set(pw_config *cfg, const char *key, const char *value,
                        const char *source, char *errbuf, size_t errlen);

/*
 * Reads `key = value` lines from path. Blank lines and lines whose first
 * non-blank character is '#' are skipped; key and value are trimmed of
 * blanks, and a value wholly in double quotes loses them (there are no
 * escapes and no comments after a value). Lines longer than 4095 bytes are
 * errors. Stops at the first bad line: PW_ERR_IO when the file cannot be
 * read, PW_ERR_CONFIG naming key and path:line otherwise.
 */
pw_status pw_config_load_file(pw_config *cfg, const char *path, char *errbuf, size_t errlen);

/*
 * Applies environment overrides from envp (a NULL-terminated "NAME=value"
 * array such as main's third argument; NULL means the process environment).
 * For every declared key the variable PW_<KEY> (upper case, '.' → '_') is
 * used when present; any other variable PW_KAFKA_<X> sets the pass-through
 * property kafka.<x> (lower case, '_' → '.', as librdkafka names use dots
 * only). Other PW_ variables are not configuration (PW_BUILD, PW_TEST_DATA)
 * and are ignored. Errors as pw_config_set(), source "env PW_...".
 */
pw_status pw_config_load_env(pw_config *cfg, char *const *envp, char *errbuf, size_t errlen);

/*
 * The usual start-up sequence: pw_config_load_file(path) when path is not
 * NULL, then pw_config_load_env(envp). Same returns.
 */
pw_status pw_config_load(pw_config *cfg, const char *path, char *const *envp,
                         char *errbuf, size_t errlen);

/*
 * Typed getters. key must be declared with that type: an undeclared key or
 * another type is a programming error, answered with NULL / 0 / false (as is
 * a key with no value). Strings are owned by cfg and stay valid until the key
 * is set again or cfg is freed.
 */
const char *pw_config_get_str(const pw_config *cfg, const char *key);
int64_t pw_config_get_int(const pw_config *cfg, const char *key);
double pw_config_get_double(const pw_config *cfg, const char *key);
bool pw_config_get_bool(const pw_config *cfg, const char *key);
int64_t pw_config_get_duration_ms(const pw_config *cfg, const char *key);

/* True when key is declared (or a pass-through property) and has a value. */
bool pw_config_is_set(const pw_config *cfg, const char *key);

/*
 * Where the current value of key came from ("default", "path:line",
 * "env PW_X", or the source given to pw_config_set); NULL when key is
 * unknown. Owned by cfg, valid like the getters' strings.
 */
const char *pw_config_source(const pw_config *cfg, const char *key);

/* The service name given to pw_config_new(); owned by cfg. */
const char *pw_config_service(const pw_config *cfg);

/*
 * The librdkafka properties: every key "kafka.<prop>" that has a non-empty
 * value, as (prop, value) pairs, declared keys first in table order, then
 * pass-through keys in the order they were first set. Stores the count in
 * *n and returns an array owned by cfg, valid until the next set or load
 * or pw_config_free(); NULL when *n is 0.
 */
const pw_kv *pw_config_kafka_props(const pw_config *cfg, size_t *n);

/*
 * Writes the environment variable name of key (e.g. "PW_PG_DSN") into buf.
 * Returns PW_ERR_INVALID when buf is too small.
 */
pw_status pw_config_env_name(const char *key, char *buf, size_t buflen);

/*
 * Writes a markdown reference of the nkeys keys: a "# title" heading, a
 * paragraph on where values come from, and a table of key, type, default,
 * range / allowed values, environment variable and help. The text depends
 * only on the arguments, so a test can compare it with the checked-in
 * docs/config.md. Returns PW_ERR_IO when writing fails.
 */
pw_status pw_config_write_reference(FILE *out, const char *title, const pw_conf_key *keys,
                                    size_t nkeys);

#endif
