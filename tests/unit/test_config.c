/*
 * test_config.c: unit tests of the configuration table (common/pw_config.c).
 *
 * Covers the precedence of defaults, file and environment, type and range
 * errors and the messages that name key and source, unknown keys, the
 * librdkafka pass-through list, and that docs/config.md is exactly what
 * pw_config_write_reference() generates from the common keys (run this test
 * with PW_REGEN_DOCS=1 to rewrite the file after changing the table).
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pw_config.h"

static const pw_conf_key own_keys[] = {
	{.name = "gate.alpha", .type = PW_CONF_DOUBLE, .def = "0.05", .min = 0, .max = 1,
	 .help = "false discovery rate"},
	{.name = "gate.strict", .type = PW_CONF_BOOL, .def = "false", .help = "strict mode"},
	{.name = "gate.window", .type = PW_CONF_DURATION_MS, .def = "5m", .help = "window"},
	{.name = "gate.min_runs", .type = PW_CONF_INT, .def = "30", .min = 2, .max = 1000,
	 .help = "runs"},
	{.name = "gate.label", .type = PW_CONF_STRING, .help = "no default"},
};
#define NOWN (sizeof own_keys / sizeof own_keys[0])

static char *const no_env[] = {NULL};

static pw_config *make(void)
{
	char err[256] = "";
	pw_config *cfg = pw_config_new("gate", own_keys, NOWN, err, sizeof err);
	cr_assert_not_null(cfg, "pw_config_new: %s", err);
	return cfg;
}

/* Writes text to a fresh temporary file; returns its malloc'd path. */
static char *write_file(const char *text)
{
	char *path = strdup("/tmp/pw_test_config_XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	size_t n = strlen(text);
	cr_assert_eq(write(fd, text, n), (ssize_t)n);
	close(fd);
	return path;
}

static void drop_file(char *path)
{
	unlink(path);
	free(path);
}

Test(config, defaults)
{
	pw_config *cfg = make();
	cr_assert_str_eq(pw_config_service(cfg), "gate");
	cr_assert_str_eq(pw_config_get_str(cfg, "service.name"), "gate");
	cr_assert_str_eq(pw_config_get_str(cfg, "kafka.group.id"), "perfwatch-gate");
	cr_assert_str_eq(pw_config_get_str(cfg, "log.level"), "info");
	cr_assert_str_eq(pw_config_get_str(cfg, "http.listen"), "127.0.0.1");
	cr_assert_str_eq(pw_config_get_str(cfg, "redis.addr"), "127.0.0.1:26379");
	cr_assert_eq(pw_config_get_int(cfg, "http.port"), 0);
	cr_assert_eq(pw_config_get_int(cfg, "batch.max.messages"), 500);
	cr_assert_eq(pw_config_get_duration_ms(cfg, "batch.max.ms"), 200);
	cr_assert_float_eq(pw_config_get_double(cfg, "gate.alpha"), 0.05, 1e-12);
	cr_assert_eq(pw_config_get_bool(cfg, "gate.strict"), false);
	cr_assert_eq(pw_config_get_duration_ms(cfg, "gate.window"), 300000);
	cr_assert_eq(pw_config_get_int(cfg, "gate.min_runs"), 30);
	cr_assert_null(pw_config_get_str(cfg, "gate.label"));
	cr_assert_not(pw_config_is_set(cfg, "gate.label"));
	cr_assert(pw_config_is_set(cfg, "gate.alpha"));
	cr_assert_str_eq(pw_config_source(cfg, "gate.alpha"), "default");
	cr_assert_null(pw_config_source(cfg, "no.such.key"));
	/* wrong type or unknown key: programming errors answered with zero values */
	cr_assert_null(pw_config_get_str(cfg, "http.port"));
	cr_assert_eq(pw_config_get_int(cfg, "gate.alpha"), 0);
	cr_assert_eq(pw_config_get_int(cfg, "no.such.key"), 0);
	pw_config_free(cfg);
	pw_config_free(NULL);
}

Test(config, file_then_env)
{
	pw_config *cfg = make();
	char *path = write_file("# a comment\n"
	                        "\n"
	                        "  gate.alpha = 0.01  \n"
	                        "gate.strict=yes\n"
	                        "gate.window = 2s\n"
	                        "gate.label = \"  spaced  \"\n"
	                        "pg.dsn = host=db port=5432 dbname=pw\n"
	                        "http.port = 9107\n");
	char *env[] = {"PW_GATE_ALPHA=0.2", "PW_BUILD=/tmp/x", "HOME=/root",
	               "PW_HTTP_LISTEN=0.0.0.0", NULL};
	char err[256] = "";
	cr_assert_eq(pw_config_load(cfg, path, env, err, sizeof err), PW_OK, "%s", err);
	cr_assert_float_eq(pw_config_get_double(cfg, "gate.alpha"), 0.2, 1e-12);
	cr_assert_str_eq(pw_config_source(cfg, "gate.alpha"), "env PW_GATE_ALPHA");
	cr_assert_eq(pw_config_get_bool(cfg, "gate.strict"), true);
	char want[128];
	snprintf(want, sizeof want, "%s:4", path);
	cr_assert_str_eq(pw_config_source(cfg, "gate.strict"), want);
	cr_assert_eq(pw_config_get_duration_ms(cfg, "gate.window"), 2000);
	cr_assert_str_eq(pw_config_get_str(cfg, "gate.label"), "  spaced  ");
	cr_assert_str_eq(pw_config_get_str(cfg, "pg.dsn"), "host=db port=5432 dbname=pw");
	cr_assert_eq(pw_config_get_int(cfg, "http.port"), 9107);
	cr_assert_str_eq(pw_config_get_str(cfg, "http.listen"), "0.0.0.0");
	cr_assert_str_eq(pw_config_get_str(cfg, "log.level"), "info");
	drop_file(path);
	pw_config_free(cfg);
}

Test(config, set_default_then_override)
{
	pw_config *cfg = make();
	char err[256] = "";
	cr_assert_eq(pw_config_set_default(cfg, "http.port", "9103", err, sizeof err), PW_OK);
	cr_assert_eq(pw_config_get_int(cfg, "http.port"), 9103);
	cr_assert_eq(pw_config_set_default(cfg, "http.port", "99999", err, sizeof err),
	             PW_ERR_CONFIG);
	cr_assert_str_eq(err, "invalid default for configuration key \"http.port\": "
	                      "99999 is out of range [0, 65535]");
	cr_assert_eq(pw_config_set_default(cfg, "nope", "1", err, sizeof err), PW_ERR_CONFIG);
	char *env[] = {"PW_HTTP_PORT=9200", NULL};
	cr_assert_eq(pw_config_load_env(cfg, env, err, sizeof err), PW_OK, "%s", err);
	cr_assert_eq(pw_config_get_int(cfg, "http.port"), 9200);
	pw_config_free(cfg);
}

Test(config, typed_values)
{
	pw_config *cfg = make();
	char err[256];
	static const struct {
		const char *key, *value;
		pw_status want;
	} cases[] = {
		{"gate.strict", "ON", PW_OK},          {"gate.strict", "0", PW_OK},
		{"gate.strict", "maybe", PW_ERR_CONFIG}, {"gate.window", "250ms", PW_OK},
		{"gate.window", "1h", PW_OK},          {"gate.window", "-5", PW_ERR_CONFIG},
		{"gate.window", "5 s", PW_ERR_CONFIG}, {"gate.window", "3d", PW_ERR_CONFIG},
		{"gate.alpha", "1e-3", PW_OK},         {"gate.alpha", "nan", PW_ERR_CONFIG},
		{"gate.alpha", "1.5", PW_ERR_CONFIG},  {"gate.alpha", "", PW_ERR_CONFIG},
		{"gate.min_runs", "2", PW_OK},         {"gate.min_runs", "1", PW_ERR_CONFIG},
		{"gate.min_runs", "12x", PW_ERR_CONFIG}, {"gate.min_runs", " 5", PW_ERR_CONFIG},
		{"log.level", "debug", PW_OK},         {"log.level", "DEBUG", PW_ERR_CONFIG},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_expect_eq(pw_config_set(cfg, cases[i].key, cases[i].value, "test", err, sizeof err),
		             cases[i].want, "%s = \"%s\"", cases[i].key, cases[i].value);
	cr_assert_eq(pw_config_get_duration_ms(cfg, "gate.window"), 3600000);
	cr_assert_eq(pw_config_get_bool(cfg, "gate.strict"), false);
	cr_assert_float_eq(pw_config_get_double(cfg, "gate.alpha"), 1e-3, 1e-15);
	cr_assert_eq(pw_config_get_int(cfg, "gate.min_runs"), 2);
	cr_assert_str_eq(pw_config_get_str(cfg, "log.level"), "debug");
	pw_config_free(cfg);
}

Test(config, error_messages_name_key_and_source)
{
	pw_config *cfg = make();
	char err[512], want[512];

	char *path = write_file("gate.alpha = 0.1\n# fine\nno.such.key = 1\n");
	cr_assert_eq(pw_config_load_file(cfg, path, err, sizeof err), PW_ERR_CONFIG);
	snprintf(want, sizeof want, "unknown configuration key \"no.such.key\" (%s:3)", path);
	cr_assert_str_eq(err, want);
	drop_file(path);

	path = write_file("http.port = 70000\n");
	cr_assert_eq(pw_config_load_file(cfg, path, err, sizeof err), PW_ERR_CONFIG);
	snprintf(want, sizeof want,
	         "invalid value for configuration key \"http.port\" (%s:1): 70000 is out of range "
	         "[0, 65535]",
	         path);
	cr_assert_str_eq(err, want);
	cr_assert_eq(pw_config_get_int(cfg, "http.port"), 0, "a rejected value leaves the old one");
	drop_file(path);

	path = write_file("just words\n");
	cr_assert_eq(pw_config_load_file(cfg, path, err, sizeof err), PW_ERR_CONFIG);
	snprintf(want, sizeof want,
	         "malformed configuration line (%s:1): expected \"key = value\"", path);
	cr_assert_str_eq(err, want);
	drop_file(path);

	char *env[] = {"PW_BATCH_MAX_MESSAGES=lots", NULL};
	cr_assert_eq(pw_config_load_env(cfg, env, err, sizeof err), PW_ERR_CONFIG);
	cr_assert_str_eq(err, "invalid value for configuration key \"batch.max.messages\" "
	                      "(env PW_BATCH_MAX_MESSAGES): \"lots\" is not an integer");

	char *env2[] = {"PW_LOG_LEVEL=loud", NULL};
	cr_assert_eq(pw_config_load_env(cfg, env2, err, sizeof err), PW_ERR_CONFIG);
	cr_assert_str_eq(err, "invalid value for configuration key \"log.level\" "
	                      "(env PW_LOG_LEVEL): \"loud\" is not one of debug|info|warn|error");

	cr_assert_eq(pw_config_load_file(cfg, "/nonexistent/pw.conf", err, sizeof err), PW_ERR_IO);
	cr_assert_str_eq(err, "could not open configuration file \"/nonexistent/pw.conf\": "
	                      "No such file or directory");
	pw_config_free(cfg);
}

Test(config, long_line_is_an_error)
{
	pw_config *cfg = make();
	char *text = malloc(6000);
	memcpy(text, "pg.dsn = ", 9);
	memset(text + 9, 'x', 5000);
	strcpy(text + 5009, "\n");
	char *path = write_file(text);
	free(text);
	char err[512];
	cr_assert_eq(pw_config_load_file(cfg, path, err, sizeof err), PW_ERR_CONFIG);
	cr_assert(strstr(err, "configuration line too long") != NULL, "%s", err);
	drop_file(path);
	pw_config_free(cfg);
}

Test(config, kafka_passthrough)
{
	pw_config *cfg = make();
	char *path = write_file("kafka.linger.ms = 5\n"
	                        "kafka.bootstrap.servers = b1:9092,b2:9092\n"
	                        "kafka.enable.idempotence = true\n"
	                        "kafka.client.id =\n");
	char *env[] = {"PW_KAFKA_LINGER_MS=7", "PW_KAFKA_ACKS=all", "PW_KAFKA_GROUP_ID=g1", NULL};
	char err[256] = "";
	cr_assert_eq(pw_config_load(cfg, path, env, err, sizeof err), PW_OK, "%s", err);
	size_t n;
	const pw_kv *kv = pw_config_kafka_props(cfg, &n);
	static const char *const want[][2] = {
		{"bootstrap.servers", "b1:9092,b2:9092"},
		{"group.id", "g1"},
		{"linger.ms", "7"},
		{"enable.idempotence", "true"},
		{"acks", "all"},
	};
	cr_assert_eq(n, 5, "got %zu properties", n);
	for (size_t i = 0; i < n; i++) {
		cr_expect_str_eq(kv[i].key, want[i][0]);
		cr_expect_str_eq(kv[i].value, want[i][1]);
	}
	cr_assert_str_eq(pw_config_get_str(cfg, "kafka.linger.ms"), "7");
	cr_assert_str_eq(pw_config_source(cfg, "kafka.linger.ms"), "env PW_KAFKA_LINGER_MS");
	cr_assert_eq(pw_config_set(cfg, "kafka.Bad Name", "1", "test", err, sizeof err),
	             PW_ERR_CONFIG);
	drop_file(path);
	pw_config_free(cfg);
}

Test(config, kafka_props_of_defaults)
{
	pw_config *cfg = make();
	size_t n;
	const pw_kv *kv = pw_config_kafka_props(cfg, &n);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(kv[0].key, "bootstrap.servers");
	cr_assert_str_eq(kv[0].value, "127.0.0.1:9092");
	cr_assert_str_eq(kv[1].key, "group.id");
	cr_assert_str_eq(kv[1].value, "perfwatch-gate");
	cr_assert_eq(pw_config_load_env(cfg, no_env, NULL, 0), PW_OK);
	pw_config_free(cfg);
}

Test(config, malformed_tables)
{
	char err[256];
	static const pw_conf_key dup[] = {{.name = "pg.dsn", .type = PW_CONF_STRING}};
	cr_assert_null(pw_config_new("x", dup, 1, err, sizeof err));
	cr_assert_str_eq(err, "configuration table: duplicate key \"pg.dsn\"");

	static const pw_conf_key clash[] = {{.name = "a.b_c", .type = PW_CONF_INT},
	                                    {.name = "a_b.c", .type = PW_CONF_INT}};
	cr_assert_null(pw_config_new("x", clash, 2, err, sizeof err));
	cr_assert_str_eq(err, "configuration keys \"a.b_c\" and \"a_b.c\" share the environment "
	                      "variable PW_A_B_C");

	static const pw_conf_key bad_def[] = {
		{.name = "x.n", .type = PW_CONF_INT, .def = "7", .min = 10, .max = 20}};
	cr_assert_null(pw_config_new("x", bad_def, 1, err, sizeof err));
	cr_assert_str_eq(err, "configuration table: default of \"x.n\": 7 is out of range [10, 20]");

	static const pw_conf_key bad_name[] = {{.name = "X..y", .type = PW_CONF_INT}};
	cr_assert_null(pw_config_new("x", bad_name, 1, err, sizeof err));
	cr_assert_str_eq(err, "configuration table: invalid key name \"X..y\"");
}

Test(config, env_name)
{
	char buf[64];
	cr_assert_eq(pw_config_env_name("kafka.bootstrap.servers", buf, sizeof buf), PW_OK);
	cr_assert_str_eq(buf, "PW_KAFKA_BOOTSTRAP_SERVERS");
	cr_assert_eq(pw_config_env_name("redis.addr", buf, 8), PW_ERR_INVALID);
}

Test(config, reference_doc_is_current)
{
	size_t n;
	const pw_conf_key *keys = pw_config_common_keys(&n);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	cr_assert_eq(pw_config_write_reference(f, "Configuration reference", keys, n), PW_OK);
	fputs("\nThis file is generated from the table of common keys in `common/pw_config.c`;\n"
	      "`tests/unit/test_config.c` fails when the two differ. Run that test with\n"
	      "`PW_REGEN_DOCS=1` to rewrite this file. Each service adds its own keys to\n"
	      "these.\n",
	      f);
	fclose(f);
	cr_assert(strstr(text, "| `http.port` | int | `0` | 0 … 65535 | `PW_HTTP_PORT` |") != NULL);
	cr_assert(strstr(text, "one of `debug`, `info`, `warn`, `error`") != NULL);

	const char *data = getenv("PW_TEST_DATA");
	cr_assert_not_null(data, "PW_TEST_DATA must name tests/data (ctest sets it)");
	char path[1024];
	snprintf(path, sizeof path, "%s/../../docs/config.md", data);
	/*
	 * The generated part ends at the marker; what follows it (the services'
	 * own keys, checked against each service's --config-reference by
	 * tests/cli/test_config_reference.sh) is kept by a regeneration.
	 */
	static const char marker[] = "<!-- service keys";
	FILE *r = fopen(path, "r");
	cr_assert_not_null(r, "cannot read %s; run with PW_REGEN_DOCS=1 to create it", path);
	char *have = NULL;
	size_t hlen = 0;
	FILE *hm = open_memstream(&have, &hlen);
	cr_assert_not_null(hm);
	char chunk[4096];
	size_t got;
	while ((got = fread(chunk, 1, sizeof chunk, r)) > 0)
		fwrite(chunk, 1, got, hm);
	fclose(r);
	fclose(hm);
	const char *tail = strstr(have, marker);
	size_t gen = tail ? (size_t)(tail - have) : hlen;
	/* the generated text, then one blank line before the marker */
	bool same = tail ? gen == len + 1 && memcmp(have, text, len) == 0 && have[len] == '\n'
	                 : gen == len && memcmp(have, text, len) == 0;
	if (getenv("PW_REGEN_DOCS") && !same) {
		FILE *w = fopen(path, "w");
		cr_assert_not_null(w, "cannot write %s", path);
		fwrite(text, 1, len, w);
		if (tail) {
			fputc('\n', w);
			fputs(tail, w);
		}
		fclose(w);
		same = true;
	}
	cr_expect(same, "%s is stale: run test_config with PW_REGEN_DOCS=1 to regenerate it", path);
	free(have);
	free(text);
}
