/*
 * fuzz_config.c: the configuration parser (common/pw_config.h) on
 * arbitrary text, as a --config file and as PW_* environment variables.
 *
 * The input up to the first "\n--env--\n" (or all of it) is written to a
 * file and loaded with pw_config_load_file; what follows is split into lines
 * and applied with pw_config_load_env. The configuration has the common keys
 * plus one key of every type (with a range and a choice list), and every key
 * is read back with its typed getter, plus the Kafka pass-through list, so
 * that a value the parser stored but a getter cannot read shows up too.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pw_config.h"

static const pw_conf_key own[] = {
	{.name = "fuzz.str", .type = PW_CONF_STRING, .def = "x", .help = "a string"},
	{.name = "fuzz.choice", .type = PW_CONF_STRING, .def = "a", .choices = "a|b|c", .help = "a choice"},
	{.name = "fuzz.int", .type = PW_CONF_INT, .def = "3", .min = -5, .max = 1000, .help = "an int"},
	{.name = "fuzz.double", .type = PW_CONF_DOUBLE, .def = "0.5", .min = 0, .max = 1, .help = "a double"},
	{.name = "fuzz.bool", .type = PW_CONF_BOOL, .def = "false", .help = "a bool"},
	{.name = "fuzz.duration", .type = PW_CONF_DURATION_MS, .def = "1s", .min = 0, .max = 86400000,
	 .help = "a duration"},
};
#define NOWN (sizeof own / sizeof own[0])

static void read_back(const pw_config *cfg, const pw_conf_key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (keys[i].type) {
		case PW_CONF_STRING:
			(void)pw_config_get_str(cfg, keys[i].name);
			break;
		case PW_CONF_INT:
			(void)pw_config_get_int(cfg, keys[i].name);
			break;
		case PW_CONF_DOUBLE:
			(void)pw_config_get_double(cfg, keys[i].name);
			break;
		case PW_CONF_BOOL:
			(void)pw_config_get_bool(cfg, keys[i].name);
			break;
		case PW_CONF_DURATION_MS:
			(void)pw_config_get_duration_ms(cfg, keys[i].name);
			break;
		}
		(void)pw_config_source(cfg, keys[i].name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char sep[] = "\n--env--\n";
	char err[512];
	pw_config *cfg = pw_config_new("fuzz", own, NOWN, err, sizeof err);
	if (!cfg)
		abort(); /* the table above is valid: this is the parser's bug */
	size_t file_len = size;
	const uint8_t *env = NULL;
	for (size_t i = 0; i + sizeof sep - 1 <= size; i++)
		if (memcmp(data + i, sep, sizeof sep - 1) == 0) {
			file_len = i;
			env = data + i + sizeof sep - 1;
			break;
		}
	const char *path = pw_fuzz_file(data, file_len);
	if (path)
		(void)pw_config_load_file(cfg, path, err, sizeof err);
	if (env) {
		size_t env_len = size - (size_t)(env - data);
		char *text = malloc(env_len + 1);
		char **envp = calloc(env_len + 2, sizeof *envp);
		if (text && envp) {
			memcpy(text, env, env_len);
			text[env_len] = '\0';
			size_t n = 0;
			for (char *save = NULL, *t = strtok_r(text, "\n", &save); t; t = strtok_r(NULL, "\n", &save))
				envp[n++] = t;
			envp[n] = NULL;
			(void)pw_config_load_env(cfg, envp, err, sizeof err);
		}
		free(envp);
		free(text);
	}
	size_t ncommon = 0;
	const pw_conf_key *common = pw_config_common_keys(&ncommon);
	read_back(cfg, common, ncommon);
	read_back(cfg, own, NOWN);
	size_t nprops = 0;
	const pw_kv *props = pw_config_kafka_props(cfg, &nprops);
	for (size_t i = 0; i < nprops; i++)
		if (!props[i].key || !props[i].value)
			abort();
	pw_config_free(cfg);
	return 0;
}
