/*
 * pw_config.c: the configuration table, its sources and the reference writer.
 *
 * Implements pw_config.h. A pw_config holds one slot per declared key (the
 * common table first, then the service's own) followed by slots for the
 * librdkafka pass-through keys that a file or the environment introduced.
 * Every value is parsed and range-checked when it is set, so that a service
 * fails at start-up with the key and its source named, never later. The
 * Kafka property list is rebuilt after every change so that the getter is a
 * plain read; pw_kafka.c consumes it.
 */
#include "pw_config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PW_CONFIG_LINE_MAX 4096
#define PW_CONFIG_KAFKA_PREFIX "kafka."

extern char **environ;

typedef union conf_parsed {
	int64_t i;
	double d;
	bool b;
} conf_parsed;

typedef struct conf_slot {
	const pw_conf_key *key; /* NULL for a pass-through property */
	char *name;             /* pass-through only: "kafka.<prop>", owned */
	char *def;              /* declared only: expanded default, owned, may be NULL */
	char *text;             /* current value, owned, NULL when unset */
	char *source;           /* owned; NULL when unset */
	conf_parsed v;
} conf_slot;

struct pw_config {
	char *service;
	conf_slot *slots;
	size_t nslots, capslots, ndeclared;
	pw_kv *kafka; /* rebuilt by rebuild_kafka(); points into slots */
	size_t nkafka;
};

static const pw_conf_key common_keys[] = {
	{.name = "service.name", .type = PW_CONF_STRING, .def = "{service}",
	 .help = "name used in log lines and metrics"},
	{.name = "log.level", .type = PW_CONF_STRING, .def = "info",
	 .choices = "debug|info|warn|error",
	 .help = "lowest level of the JSON log lines written to stderr"},
	{.name = "http.listen", .type = PW_CONF_STRING, .def = "127.0.0.1",
	 .help = "address of the /healthz, /readyz and /metrics server: host, host:port or "
	         "[v6addr]:port; a port given here overrides http.port"},
	{.name = "http.port", .type = PW_CONF_INT, .def = "0", .min = 0, .max = 65535,
	 .help = "port of the HTTP server when http.listen names none; 0 picks a free port "
	         "(each service sets its own default)"},
	{.name = "pg.dsn", .type = PW_CONF_STRING,
	 .def = "host=127.0.0.1 port=25432 dbname=perfwatch user=perfwatch",
	 .help = "libpq connection string of PostgreSQL, the source of truth"},
	{.name = "redis.addr", .type = PW_CONF_STRING, .def = "127.0.0.1:26379",
	 .help = "host:port of the Redis cache of hot baselines"},
	{.name = "kafka.bootstrap.servers", .type = PW_CONF_STRING, .def = "127.0.0.1:9092",
	 .help = "Kafka brokers as host:port[,host:port...]; librdkafka's bootstrap.servers"},
	{.name = "kafka.group.id", .type = PW_CONF_STRING, .def = "perfwatch-{service}",
	 .help = "consumer group of the service; librdkafka's group.id"},
	{.name = "batch.max.messages", .type = PW_CONF_INT, .def = "500", .min = 1,
	 .max = 100000,
	 .help = "most messages a consumer handles in one PostgreSQL transaction before it "
	         "commits their offsets"},
	{.name = "batch.max.ms", .type = PW_CONF_DURATION_MS, .def = "200", .min = 1,
	 .max = 60000,
	 .help = "longest a consumer waits to fill a batch before handling what it has"},
	{.name = "service.stuck.after", .type = PW_CONF_DURATION_MS, .def = "2m", .min = 1000,
	 .max = 86400000,
	 .help = "a consumer whose batches have failed this long without one success makes "
	         "/readyz answer 503"},
	{.name = "service.stop.flush.ms", .type = PW_CONF_DURATION_MS, .def = "30s", .min = 100,
	 .max = 600000,
	 .help = "how long produced messages may wait for their acknowledgements: before a held "
	         "batch is read again, and at stop before the service exits"},
	{.name = "service.kafka.down.after", .type = PW_CONF_DURATION_MS, .def = "5s", .min = 1000,
	 .max = 600000,
	 .help = "when no Kafka broker has answered the service's probe (a metadata request every "
	         "second) or its consumers for this long, /readyz answers 503 until one does"},
	{.name = "service.data.loss.unready", .type = PW_CONF_DURATION_MS, .def = "10m", .min = 0,
	 .max = 86400000,
	 .help = "after a consumer found messages the broker deleted before its group read them "
	         "(data loss, logged and counted), /readyz answers 503 for this long; 0: never"},
};

static const char *const type_names[] = {
	[PW_CONF_STRING] = "string",
	[PW_CONF_INT] = "int",
	[PW_CONF_DOUBLE] = "double",
	[PW_CONF_BOOL] = "bool",
	[PW_CONF_DURATION_MS] = "duration (ms)",
};

const pw_conf_key *pw_config_common_keys(size_t *n)
{
	*n = sizeof common_keys / sizeof common_keys[0];
	return common_keys;
}

/* ---- parsing ------------------------------------------------------------ */

static bool is_numeric_type(pw_conf_type t)
{
	return t == PW_CONF_INT || t == PW_CONF_DOUBLE || t == PW_CONF_DURATION_MS;
}

/* Writes v as an integer when it is one, else with %g. */
static void format_number(char *buf, size_t len, double v)
{
	if (fabs(v) < 1e15 && v == (double)(int64_t)v) /* no floor(): pwconfig needs no libm */
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%g", v);
}

static bool parse_int(const char *s, int64_t *out)
{
	if (!*s || isspace((unsigned char)*s))
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

static bool parse_duration(const char *s, int64_t *out)
{
	if (!isdigit((unsigned char)*s))
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno)
		return false;
	long long mul;
	if (*end == '\0' || strcmp(end, "ms") == 0)
		mul = 1;
	else if (strcmp(end, "s") == 0)
		mul = 1000;
	else if (strcmp(end, "m") == 0)
		mul = 60 * 1000;
	else if (strcmp(end, "h") == 0)
		mul = 3600 * 1000;
	else
		return false;
	if (v > INT64_MAX / mul)
		return false;
	*out = v * mul;
	return true;
}

static bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return true;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return true;
		}
	}
	return false;
}

static bool in_choices(const char *choices, const char *s)
{
	size_t n = strlen(s);
	for (const char *p = choices; *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && strncmp(p, s, n) == 0)
			return true;
		if (!bar)
			break;
		p = bar + 1;
	}
	return false;
}

/*
 * Parses text for key into *out. On failure writes why (e.g. `"x" is not an
 * integer`) and returns false.
 */
static bool parse_value(const pw_conf_key *key, const char *text, conf_parsed *out,
                        char *why, size_t whylen)
{
	double num = 0;
	switch (key->type) {
	case PW_CONF_STRING:
		if (key->choices && !in_choices(key->choices, text)) {
			snprintf(why, whylen, "\"%s\" is not one of %s", text, key->choices);
			return false;
		}
		return true;
	case PW_CONF_INT:
		if (!parse_int(text, &out->i)) {
			snprintf(why, whylen, "\"%s\" is not an integer", text);
			return false;
		}
		num = (double)out->i;
		break;
	case PW_CONF_DURATION_MS:
		if (!parse_duration(text, &out->i)) {
			snprintf(why, whylen,
			         "\"%s\" is not a duration (a number of ms, or with suffix ms, s, m, h)",
			         text);
			return false;
		}
		num = (double)out->i;
		break;
	case PW_CONF_DOUBLE: {
		char *end = NULL;
		bool ok = *text && !isspace((unsigned char)*text);
		if (ok) {
			errno = 0;
			out->d = strtod(text, &end);
			ok = errno == 0 && *end == '\0' && isfinite(out->d);
		}
		if (!ok) {
			snprintf(why, whylen, "\"%s\" is not a finite number", text);
			return false;
		}
		num = out->d;
		break;
	}
	case PW_CONF_BOOL:
		if (!parse_bool(text, &out->b)) {
			snprintf(why, whylen, "\"%s\" is not a boolean (true/false, yes/no, on/off, 1/0)",
			         text);
			return false;
		}
		return true;
	default:
		snprintf(why, whylen, "key has an unknown type");
		return false;
	}
	if (key->min < key->max && (num < key->min || num > key->max)) {
		char lo[32], hi[32];
		format_number(lo, sizeof lo, key->min);
		format_number(hi, sizeof hi, key->max);
		snprintf(why, whylen, "%s is out of range [%s, %s]", text, lo, hi);
		return false;
	}
	return true;
}

/* ---- names -------------------------------------------------------------- */

/* Declared names: [a-z0-9_]+ words separated by single dots. */
static bool valid_key_name(const char *s)
{
	if (!*s || *s == '.')
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '.') {
			if (p[1] == '.' || p[1] == '\0')
				return false;
		} else if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')) {
			return false;
		}
	}
	return true;
}

/* librdkafka property names: [a-z0-9._-]+, not starting or ending with '.'. */
static bool valid_kafka_prop(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || s[0] == '.' || s[n - 1] == '.')
		return false;
	for (const char *p = s; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '.' ||
		      *p == '_' || *p == '-'))
			return false;
	return true;
}

pw_status pw_config_env_name(const char *key, char *buf, size_t buflen)
{
	size_t n = strlen(key);
	if (buflen < n + 4)
		return PW_ERR_INVALID;
	memcpy(buf, "PW_", 3);
	for (size_t i = 0; i < n; i++)
		buf[3 + i] = key[i] == '.' ? '_' : (char)toupper((unsigned char)key[i]);
	buf[3 + n] = '\0';
	return PW_OK;
}

static bool is_kafka_name(const char *name)
{
	return strncmp(name, PW_CONFIG_KAFKA_PREFIX, strlen(PW_CONFIG_KAFKA_PREFIX)) == 0;
}

static const char *slot_name(const conf_slot *s)
{
	return s->key ? s->key->name : s->name;
}

/* ---- the handle --------------------------------------------------------- */

static conf_slot *find_slot(const pw_config *cfg, const char *name)
{
	if (!cfg || !name)
		return NULL;
	for (size_t i = 0; i < cfg->nslots; i++)
		if (strcmp(slot_name(&cfg->slots[i]), name) == 0)
			return &cfg->slots[i];
	return NULL;
}

/* Returns a copy of def with every "{service}" replaced; NULL on NOMEM. */
static char *expand_default(const char *def, const char *service)
{
	static const char tag[] = "{service}";
	size_t taglen = sizeof tag - 1, slen = strlen(service), n = 0;
	for (const char *p = strstr(def, tag); p; p = strstr(p + taglen, tag))
		n++;
	char *out = malloc(strlen(def) + n * slen + 1);
	if (!out)
		return NULL;
	char *w = out;
	for (const char *p = def;;) {
		const char *hit = strstr(p, tag);
		size_t len = hit ? (size_t)(hit - p) : strlen(p);
		memcpy(w, p, len);
		w += len;
		if (!hit)
			break;
		memcpy(w, service, slen);
		w += slen;
		p = hit + taglen;
	}
	*w = '\0';
	return out;
}

static void slot_clear_value(conf_slot *s)
{
	free(s->text);
	free(s->source);
	s->text = NULL;
	s->source = NULL;
	memset(&s->v, 0, sizeof s->v);
}

/* Sets s to text with source; text NULL makes it unset. */
static pw_status slot_assign(conf_slot *s, const char *text, conf_parsed v, const char *source)
{
	char *t = NULL, *src = NULL;
	if (text) {
		t = strdup(text);
		src = strdup(source);
		if (!t || !src) {
			free(t);
			free(src);
			return PW_ERR_NOMEM;
		}
	}
	slot_clear_value(s);
	s->text = t;
	s->source = src;
	s->v = v;
	return PW_OK;
}

static pw_status rebuild_kafka(pw_config *cfg)
{
	size_t n = 0;
	for (size_t i = 0; i < cfg->nslots; i++) {
		const conf_slot *s = &cfg->slots[i];
		if (is_kafka_name(slot_name(s)) && s->text && s->text[0])
			n++;
	}
	pw_kv *kv = NULL;
	if (n > 0) {
		kv = calloc(n, sizeof *kv);
		if (!kv) {
			/* never leave pairs pointing at values that were just replaced */
			free(cfg->kafka);
			cfg->kafka = NULL;
			cfg->nkafka = 0;
			return PW_ERR_NOMEM;
		}
	}
	size_t j = 0;
	for (size_t i = 0; i < cfg->nslots; i++) {
		const conf_slot *s = &cfg->slots[i];
		if (is_kafka_name(slot_name(s)) && s->text && s->text[0]) {
			kv[j].key = slot_name(s) + strlen(PW_CONFIG_KAFKA_PREFIX);
			kv[j].value = s->text;
			j++;
		}
	}
	free(cfg->kafka);
	cfg->kafka = kv;
	cfg->nkafka = n;
	return PW_OK;
}

static pw_status check_table(const pw_config *cfg, const pw_conf_key *k, char *errbuf,
                             size_t errlen)
{
	if (!k->name || !valid_key_name(k->name))
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "configuration table: invalid key name \"%s\"",
		               k->name ? k->name : "(null)");
	if ((int)k->type < PW_CONF_STRING || k->type > PW_CONF_DURATION_MS)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "configuration table: key \"%s\" has an unknown type", k->name);
	char env[256], other[256];
	if (pw_config_env_name(k->name, env, sizeof env) != PW_OK)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "configuration table: key name \"%s\" is too long", k->name);
	for (size_t i = 0; i < cfg->nslots; i++) {
		const char *name = cfg->slots[i].key->name;
		if (strcmp(name, k->name) == 0)
			return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			               "configuration table: duplicate key \"%s\"", k->name);
		pw_config_env_name(name, other, sizeof other);
		if (strcmp(env, other) == 0)
			return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			               "configuration keys \"%s\" and \"%s\" share the environment "
			               "variable %s",
			               name, k->name, env);
	}
	return PW_OK;
}

pw_config *pw_config_new(const char *service, const pw_conf_key *own, size_t nkeys,
                         char *errbuf, size_t errlen)
{
	size_t ncommon;
	const pw_conf_key *common = pw_config_common_keys(&ncommon);
	pw_config *cfg = calloc(1, sizeof *cfg);
	if (!cfg)
		goto fail_nomem;
	cfg->service = strdup(service ? service : "");
	cfg->capslots = ncommon + nkeys + 8;
	cfg->slots = calloc(cfg->capslots, sizeof *cfg->slots);
	if (!cfg->service || !cfg->slots)
		goto fail_nomem;

	for (size_t i = 0; i < ncommon + nkeys; i++) {
		const pw_conf_key *k = i < ncommon ? &common[i] : &own[i - ncommon];
		if (check_table(cfg, k, errbuf, errlen) != PW_OK)
			goto fail;
		conf_slot *s = &cfg->slots[cfg->nslots++];
		s->key = k;
		if (!k->def)
			continue;
		s->def = expand_default(k->def, cfg->service);
		if (!s->def)
			goto fail_nomem;
		char why[256];
		conf_parsed v = {0};
		if (!parse_value(k, s->def, &v, why, sizeof why)) {
			pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			        "configuration table: default of \"%s\": %s", k->name, why);
			goto fail;
		}
		if (slot_assign(s, s->def, v, "default") != PW_OK)
			goto fail_nomem;
	}
	cfg->ndeclared = cfg->nslots;
	if (rebuild_kafka(cfg) != PW_OK)
		goto fail_nomem;
	return cfg;

fail_nomem:
	pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory building the configuration");
fail:
	pw_config_free(cfg);
	return NULL;
}

void pw_config_free(pw_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->nslots; i++) {
		slot_clear_value(&cfg->slots[i]);
		free(cfg->slots[i].name);
		free(cfg->slots[i].def);
	}
	free(cfg->slots);
	free(cfg->kafka);
	free(cfg->service);
	free(cfg);
}

pw_status pw_config_set_default(pw_config *cfg, const char *key, const char *value,
                                char *errbuf, size_t errlen)
{
	conf_slot *s = find_slot(cfg, key);
	if (!s || !s->key)
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "cannot set the default of unknown configuration key \"%s\"",
		               key ? key : "(null)");
	conf_parsed v = {0};
	char why[256];
	if (value && !parse_value(s->key, value, &v, why, sizeof why))
		return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
		               "invalid default for configuration key \"%s\": %s", key, why);
	char *def = NULL;
	if (value && !(def = strdup(value)))
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	if (slot_assign(s, value, v, "default") != PW_OK) {
		free(def);
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	}
	free(s->def);
	s->def = def;
	if (rebuild_kafka(cfg) != PW_OK)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	return PW_OK;
}

/* Appends a pass-through slot for name ("kafka.<prop>"); NULL on NOMEM. */
static conf_slot *add_passthrough(pw_config *cfg, const char *name)
{
	if (cfg->nslots == cfg->capslots) {
		size_t cap = cfg->capslots * 2;
		conf_slot *grown = realloc(cfg->slots, cap * sizeof *grown);
		if (!grown)
			return NULL;
		cfg->slots = grown;
		cfg->capslots = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return NULL;
	conf_slot *s = &cfg->slots[cfg->nslots++];
	memset(s, 0, sizeof *s);
	s->name = copy;
	return s;
}

pw_status pw_config_set(pw_config *cfg, const char *key, const char *value,
                        const char *source, char *errbuf, size_t errlen)
{
	if (!source)
		source = "caller";
	if (!key || !value)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen,
		               "configuration key and value must not be NULL (%s)", source);
	conf_slot *s = find_slot(cfg, key);
	conf_parsed v = {0};
	if (s && s->key) {
		char why[512];
		if (!parse_value(s->key, value, &v, why, sizeof why))
			return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			               "invalid value for configuration key \"%s\" (%s): %s", key,
			               source, why);
	} else if (!s) {
		if (!is_kafka_name(key))
			return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			               "unknown configuration key \"%s\" (%s)", key, source);
		if (!valid_kafka_prop(key + strlen(PW_CONFIG_KAFKA_PREFIX)))
			return pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			               "invalid librdkafka property name in configuration key \"%s\" "
			               "(%s)",
			               key, source);
		s = add_passthrough(cfg, key);
		if (!s)
			return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	}
	if (slot_assign(s, value, v, source) != PW_OK || rebuild_kafka(cfg) != PW_OK)
		return pw_fail(PW_ERR_NOMEM, errbuf, errlen, "out of memory");
	return PW_OK;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

pw_status pw_config_load_file(pw_config *cfg, const char *path, char *errbuf, size_t errlen)
{
	pw_status st = PW_OK;
	FILE *f = fopen(path, "r");
	if (!f)
		return pw_fail(PW_ERR_IO, errbuf, errlen, "could not open configuration file \"%s\": %s",
		               path, strerror(errno));
	char line[PW_CONFIG_LINE_MAX];
	char source[PW_CONFIG_LINE_MAX + 32];
	for (unsigned lineno = 1; fgets(line, sizeof line, f); lineno++) {
		snprintf(source, sizeof source, "%s:%u", path, lineno);
		size_t len = strlen(line);
		if (len == sizeof line - 1 && line[len - 1] != '\n' && !feof(f)) {
			st = pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			             "configuration line too long (%s): more than %d bytes", source,
			             PW_CONFIG_LINE_MAX - 1);
			goto out;
		}
		char *p = trim(line);
		if (*p == '\0' || *p == '#')
			continue;
		char *eq = strchr(p, '=');
		if (!eq) {
			st = pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			             "malformed configuration line (%s): expected \"key = value\"",
			             source);
			goto out;
		}
		*eq = '\0';
		char *key = trim(p), *value = trim(eq + 1);
		size_t vlen = strlen(value);
		if (vlen >= 2 && value[0] == '"' && value[vlen - 1] == '"') {
			value[vlen - 1] = '\0';
			value++;
		}
		if (*key == '\0') {
			st = pw_fail(PW_ERR_CONFIG, errbuf, errlen,
			             "malformed configuration line (%s): empty key", source);
			goto out;
		}
		st = pw_config_set(cfg, key, value, source, errbuf, errlen);
		if (st != PW_OK)
			goto out;
	}
	if (ferror(f))
		st = pw_fail(PW_ERR_IO, errbuf, errlen, "could not read configuration file \"%s\": %s",
		             path, strerror(errno));
out:
	fclose(f);
	return st;
}

pw_status pw_config_load_env(pw_config *cfg, char *const *envp, char *errbuf, size_t errlen)
{
	static const char kafka_env[] = "PW_KAFKA_";
	if (!envp)
		envp = environ;
	char env[256], source[300], name[256];
	for (char *const *e = envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || strncmp(*e, "PW_", 3) != 0)
			continue;
		size_t nlen = (size_t)(eq - *e);
		if (nlen >= sizeof env)
			continue;
		memcpy(env, *e, nlen);
		env[nlen] = '\0';
		snprintf(source, sizeof source, "env %s", env);

		const char *key = NULL;
		for (size_t i = 0; i < cfg->ndeclared && !key; i++) {
			char mine[256];
			pw_config_env_name(cfg->slots[i].key->name, mine, sizeof mine);
			if (strcmp(mine, env) == 0)
				key = cfg->slots[i].key->name;
		}
		if (!key && strncmp(env, kafka_env, sizeof kafka_env - 1) == 0 &&
		    env[sizeof kafka_env - 1] != '\0') {
			/* PW_KAFKA_LINGER_MS -> kafka.linger.ms */
			size_t w = 0;
			for (const char *p = "kafka."; *p; p++)
				name[w++] = *p;
			for (const char *p = env + sizeof kafka_env - 1; *p && w < sizeof name - 1; p++)
				name[w++] = *p == '_' ? '.' : (char)tolower((unsigned char)*p);
			name[w] = '\0';
			key = name;
		}
		if (!key)
			continue;
		pw_status st = pw_config_set(cfg, key, eq + 1, source, errbuf, errlen);
		if (st != PW_OK)
			return st;
	}
	return PW_OK;
}

pw_status pw_config_load(pw_config *cfg, const char *path, char *const *envp,
                         char *errbuf, size_t errlen)
{
	if (path) {
		pw_status st = pw_config_load_file(cfg, path, errbuf, errlen);
		if (st != PW_OK)
			return st;
	}
	return pw_config_load_env(cfg, envp, errbuf, errlen);
}

/* ---- getters ------------------------------------------------------------ */

static const conf_slot *typed_slot(const pw_config *cfg, const char *key, pw_conf_type t)
{
	const conf_slot *s = find_slot(cfg, key);
	if (!s || !s->text)
		return NULL;
	if (s->key ? s->key->type != t : t != PW_CONF_STRING)
		return NULL;
	return s;
}

const char *pw_config_get_str(const pw_config *cfg, const char *key)
{
	const conf_slot *s = typed_slot(cfg, key, PW_CONF_STRING);
	return s ? s->text : NULL;
}

int64_t pw_config_get_int(const pw_config *cfg, const char *key)
{
	const conf_slot *s = typed_slot(cfg, key, PW_CONF_INT);
	return s ? s->v.i : 0;
}

double pw_config_get_double(const pw_config *cfg, const char *key)
{
	const conf_slot *s = typed_slot(cfg, key, PW_CONF_DOUBLE);
	return s ? s->v.d : 0.0;
}

bool pw_config_get_bool(const pw_config *cfg, const char *key)
{
	const conf_slot *s = typed_slot(cfg, key, PW_CONF_BOOL);
	return s ? s->v.b : false;
}

int64_t pw_config_get_duration_ms(const pw_config *cfg, const char *key)
{
	const conf_slot *s = typed_slot(cfg, key, PW_CONF_DURATION_MS);
	return s ? s->v.i : 0;
}

bool pw_config_is_set(const pw_config *cfg, const char *key)
{
	const conf_slot *s = find_slot(cfg, key);
	return s && s->text;
}

const char *pw_config_source(const pw_config *cfg, const char *key)
{
	const conf_slot *s = find_slot(cfg, key);
	if (!s)
		return NULL;
	return s->source ? s->source : "default";
}

const char *pw_config_service(const pw_config *cfg)
{
	return cfg->service;
}

const pw_kv *pw_config_kafka_props(const pw_config *cfg, size_t *n)
{
	*n = cfg->nkafka;
	return cfg->kafka;
}

/* ---- the reference ------------------------------------------------------ */

/* Writes s for a markdown table cell: '|' escaped, newlines as spaces. */
static void md_cell(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", out);
		else if (*s == '\n')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
}

pw_status pw_config_write_reference(FILE *out, const char *title, const pw_conf_key *keys,
                                    size_t nkeys)
{
	fprintf(out, "# %s\n\n", title);
	fputs("Each key takes its value from, later sources winning: its default; a line\n"
	      "`key = value` in the configuration file (`#` starts a comment line); the\n"
	      "environment variable shown (`PW_` and the key upper-cased, dots as\n"
	      "underscores). Unknown keys and values of the wrong type or out of range stop\n"
	      "the service at start-up with a message naming the key and where it was set.\n"
	      "\n"
	      "Any key `kafka.<property>` is passed to librdkafka as `<property>`, so every\n"
	      "property of librdkafka's CONFIGURATION.md can be set: `kafka.linger.ms = 5`\n"
	      "in the file, or `PW_KAFKA_LINGER_MS=5` in the environment. Durations are\n"
	      "milliseconds, or take a suffix `ms`, `s`, `m` or `h`. In defaults,\n"
	      "`{service}` stands for the name of the service.\n\n",
	      out);
	fputs("| key | type | default | range | environment | description |\n", out);
	fputs("|---|---|---|---|---|---|\n", out);
	for (size_t i = 0; i < nkeys; i++) {
		const pw_conf_key *k = &keys[i];
		char env[256];
		if (pw_config_env_name(k->name, env, sizeof env) != PW_OK)
			return PW_ERR_INVALID;
		fprintf(out, "| `%s` | %s | ", k->name, type_names[k->type]);
		if (!k->def) {
			fputs("(none)", out);
		} else if (!k->def[0]) {
			fputs("(empty)", out);
		} else {
			fputc('`', out);
			md_cell(out, k->def);
			fputc('`', out);
		}
		fputs(" | ", out);
		if (is_numeric_type(k->type) && k->min < k->max) {
			char lo[32], hi[32];
			format_number(lo, sizeof lo, k->min);
			format_number(hi, sizeof hi, k->max);
			fprintf(out, "%s … %s", lo, hi);
		} else if (k->type == PW_CONF_STRING && k->choices) {
			fputs("one of ", out);
			for (const char *p = k->choices; *p; p++) {
				if (p == k->choices || p[-1] == '|')
					fputc('`', out);
				if (*p == '|')
					fputs(", ", out);
				else
					fputc(*p, out);
				if (p[1] == '|' || p[1] == '\0')
					fputc('`', out);
			}
		} else {
			fputs("—", out);
		}
		fprintf(out, " | `%s` | ", env);
		md_cell(out, k->help ? k->help : "");
		fputs(" |\n", out);
	}
	return ferror(out) ? PW_ERR_IO : PW_OK;
}
