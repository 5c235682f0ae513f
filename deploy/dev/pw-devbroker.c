/*
 * pw-devbroker.c: the development Kafka broker, librdkafka's mock cluster in a
 * process of its own.
 *
 * deploy/dev/stack.sh starts it next to the throwaway PostgreSQL and Redis
 * servers. It creates every topic of common/pw_topics.c with its partition
 * count, writes the cluster's bootstrap list to a file (atomically, so a reader
 * never sees half of it) and serves the Kafka wire protocol on 127.0.0.1 until
 * SIGTERM or SIGINT. The services only ever see that bootstrap list: they talk
 * to this process exactly as to Apache Kafka. What the mock cluster does not
 * do (persistence, compaction, retention, auth) is in docs/operations.md.
 * `--list-topics` prints the topic table so that tests compare the broker
 * against the same single source of truth.
 *
 * Fixed ports (--port-base P): broker i listens on 127.0.0.1:P+i-1, so that a
 * broker restarted after a crash comes back where every client already looks
 * (librdkafka reconnects to the same addresses; it only loses what the broker
 * kept in memory: topics' messages and committed offsets). librdkafka 2.0's
 * mock cluster has no port option and binds port 0; this program defines
 * bind(2), which the library's call resolves to (an executable's symbol
 * interposes on libc's), and turns each loopback bind to port 0 made while
 * the cluster is created into a bind to the next fixed port, with
 * SO_REUSEADDR so that a restart does not wait for TIME_WAIT.
 */
#define _GNU_SOURCE
#include "pw_log.h"
#include "pw_status.h"
#include "pw_topics.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PW_DEVBROKER_MAX_BROKERS 16

typedef struct pw_devbroker_opts {
	int port_base;              /* 0: ephemeral ports (librdkafka's choice) */
	const char *bootstrap_file; /* borrowed from argv */
	const char *pidfile;        /* borrowed from argv; NULL for none */
	int brokers;
	bool list_topics;
	pw_log_level log_level;
} pw_devbroker_opts;

/*
 * The next fixed port for bind() below, and how many remain; set by main
 * around rd_kafka_mock_cluster_new only (0 otherwise: binds pass through).
 */
static int pw_devbroker_next_port, pw_devbroker_ports_left;

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	static int (*real_bind)(int, const struct sockaddr *, socklen_t);
	if (!real_bind)
		real_bind = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");
	if (!real_bind) {
		errno = ENOSYS;
		return -1;
	}
	if (pw_devbroker_ports_left > 0 && addr && addr->sa_family == AF_INET &&
	    len >= (socklen_t)sizeof(struct sockaddr_in) &&
	    ((const struct sockaddr_in *)addr)->sin_port == 0) {
		struct sockaddr_in sin = *(const struct sockaddr_in *)addr;
		sin.sin_port = htons((uint16_t)pw_devbroker_next_port);
		int one = 1;
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		pw_devbroker_next_port++;
		pw_devbroker_ports_left--;
		return real_bind(fd, (const struct sockaddr *)&sin, sizeof sin);
	}
	return real_bind(fd, addr, len);
}

/* Set by the signal handler, read by the main loop; nothing else touches it. */
static volatile sig_atomic_t pw_devbroker_stop;

static void pw_devbroker_on_signal(int sig)
{
	(void)sig;
	pw_devbroker_stop = 1;
}

static void pw_devbroker_usage(FILE *out)
{
	fputs("usage: pw-devbroker --bootstrap-file PATH [--brokers N] [--pidfile PATH]\n"
	      "                    [--port-base PORT] [--log-level debug|info|warn|error]\n"
	      "       pw-devbroker --list-topics\n"
	      "\n"
	      "Runs a librdkafka mock cluster with every perfwatch topic on 127.0.0.1,\n"
	      "writes its bootstrap servers to PATH and stays up until SIGTERM/SIGINT.\n"
	      "--port-base puts broker i on PORT+i-1 (a restarted broker comes back there).\n"
	      "--list-topics prints 'name partitions replication cleanup-policy' per topic.\n",
	      out);
}

static pw_status pw_devbroker_parse_args(int argc, char **argv, pw_devbroker_opts *o,
                                         char *errbuf, size_t errlen)
{
	o->bootstrap_file = NULL;
	o->port_base = 0;
	o->pidfile = NULL;
	o->brokers = 3;
	o->list_topics = false;
	o->log_level = PW_LOG_INFO;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--list-topics") == 0) {
			o->list_topics = true;
			continue;
		}
		if (strcmp(a, "--bootstrap-file") != 0 && strcmp(a, "--brokers") != 0 &&
		    strcmp(a, "--pidfile") != 0 && strcmp(a, "--log-level") != 0 &&
		    strcmp(a, "--port-base") != 0)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "unknown option \"%s\"", a);
		if (!v)
			return pw_fail(PW_ERR_INVALID, errbuf, errlen, "option \"%s\" needs a value", a);
		i++;
		if (strcmp(a, "--bootstrap-file") == 0) {
			o->bootstrap_file = v;
		} else if (strcmp(a, "--pidfile") == 0) {
			o->pidfile = v;
		} else if (strcmp(a, "--port-base") == 0) {
			char *end = NULL;
			errno = 0;
			long n = strtol(v, &end, 10);
			if (errno || !end || *end || n < 1024 || n > 65535 - PW_DEVBROKER_MAX_BROKERS)
				return pw_fail(PW_ERR_INVALID, errbuf, errlen,
				               "invalid port base \"%s\": expected 1024..%d", v,
				               65535 - PW_DEVBROKER_MAX_BROKERS);
			o->port_base = (int)n;
		} else if (strcmp(a, "--brokers") == 0) {
			char *end = NULL;
			errno = 0;
			long n = strtol(v, &end, 10);
			if (errno || !end || *end || n < 1 || n > PW_DEVBROKER_MAX_BROKERS)
				return pw_fail(PW_ERR_INVALID, errbuf, errlen,
				               "invalid broker count \"%s\": expected 1..%d", v,
				               PW_DEVBROKER_MAX_BROKERS);
			o->brokers = (int)n;
		} else {
			int lvl = pw_log_level_parse(v);
			if (lvl < 0)
				return pw_fail(PW_ERR_INVALID, errbuf, errlen, "invalid log level \"%s\"", v);
			o->log_level = (pw_log_level)lvl;
		}
	}
	if (!o->list_topics && !o->bootstrap_file)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "--bootstrap-file is required");
	return PW_OK;
}

/*
 * Writes content plus a newline to path through a temporary file in the same
 * directory and rename(2), so that a reader sees either no file or all of it.
 */
static pw_status pw_devbroker_write_atomic(const char *path, const char *content,
                                           char *errbuf, size_t errlen)
{
	char tmp[4096];
	int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof tmp)
		return pw_fail(PW_ERR_INVALID, errbuf, errlen, "path too long: \"%s\"", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return pw_fail(PW_ERR_IO, errbuf, errlen, "could not create \"%s\": %s", tmp,
		               strerror(errno));
	pw_status st = PW_OK;
	if (fprintf(f, "%s\n", content) < 0 || fflush(f) != 0 || fsync(fileno(f)) != 0) {
		st = pw_fail(PW_ERR_IO, errbuf, errlen, "could not write \"%s\": %s", tmp,
		             strerror(errno));
		fclose(f);
		goto remove_tmp;
	}
	if (fclose(f) != 0) {
		st = pw_fail(PW_ERR_IO, errbuf, errlen, "could not close \"%s\": %s", tmp,
		             strerror(errno));
		goto remove_tmp;
	}
	if (rename(tmp, path) != 0) {
		st = pw_fail(PW_ERR_IO, errbuf, errlen, "could not rename \"%s\" to \"%s\": %s", tmp,
		             path, strerror(errno));
		goto remove_tmp;
	}
	return PW_OK;
remove_tmp:
	unlink(tmp);
	return st;
}

/*
 * librdkafka's log lines, as JSON lines. The hosting rd_kafka_t has no
 * bootstrap.servers on purpose (it only owns the mock cluster), so its
 * CONFWARN about that is dropped.
 */
static void pw_devbroker_log_cb(const rd_kafka_t *rk, int level, const char *fac,
                                const char *buf)
{
	const pw_log *lg = rd_kafka_opaque(rk);
	if (!lg)
		return;
	if (strcmp(fac, "CONFWARN") == 0 && strstr(buf, "bootstrap.servers"))
		return;
	pw_log_level l = level <= 3 ? PW_LOG_ERROR
	                 : level == 4 ? PW_LOG_WARN
	                 : level <= 6 ? PW_LOG_INFO
	                              : PW_LOG_DEBUG;
	pw_log_write(lg, l, (const char *[]){"source", "librdkafka", "facility", fac, NULL}, "%s",
	             buf);
}

static void pw_devbroker_list_topics(FILE *out)
{
	for (size_t i = 0; i < pw_topics_count; i++)
		fprintf(out, "%s %d %d %s\n", pw_topics[i].name, pw_topics[i].partitions,
		        pw_topics[i].replication, pw_topics[i].compacted ? "compact" : "delete");
}

/* Creates the hosting client. Returns NULL with errbuf filled on failure. */
static rd_kafka_t *pw_devbroker_client_new(const pw_log *lg, char *errbuf, size_t errlen)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char kerr[512];
	if (rd_kafka_conf_set(conf, "client.id", "pw-devbroker", kerr, sizeof kerr) !=
	    RD_KAFKA_CONF_OK) {
		pw_fail(PW_ERR_KAFKA, errbuf, errlen, "could not configure client: %s", kerr);
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	rd_kafka_conf_set_opaque(conf, (void *)lg);
	rd_kafka_conf_set_log_cb(conf, pw_devbroker_log_cb);
	/* rd_kafka_new takes conf on success only. */
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, kerr, sizeof kerr);
	if (!rk) {
		pw_fail(PW_ERR_KAFKA, errbuf, errlen, "could not create client: %s", kerr);
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	return rk;
}

static pw_status pw_devbroker_create_topics(rd_kafka_mock_cluster_t *mc, int brokers,
                                            const pw_log *lg, char *errbuf, size_t errlen)
{
	bool reduced = false;
	for (size_t i = 0; i < pw_topics_count; i++) {
		const pw_topic_spec *t = &pw_topics[i];
		int repl = t->replication < brokers ? t->replication : brokers;
		if (repl != t->replication && !reduced) {
			pw_log_warn(lg, "replication reduced to %d, the broker count, on every topic "
			            "that asks for more", brokers);
			reduced = true;
		}
		rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(mc, t->name, t->partitions, repl);
		if (err)
			return pw_fail(PW_ERR_KAFKA, errbuf, errlen, "could not create topic \"%s\": %s",
			               t->name, rd_kafka_err2str(err));
		char parts[16], rep[16];
		snprintf(parts, sizeof parts, "%d", t->partitions);
		snprintf(rep, sizeof rep, "%d", repl);
		pw_log_write(lg, PW_LOG_DEBUG,
		             (const char *[]){"topic", t->name, "partitions", parts, "replication", rep,
		                              NULL},
		             "topic created");
	}
	return PW_OK;
}

static pw_status pw_devbroker_install_signals(char *errbuf, size_t errlen)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = pw_devbroker_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
		return pw_fail(PW_ERR_IO, errbuf, errlen, "could not install signal handlers: %s",
		               strerror(errno));
	/* A client that disconnects mid-response must not kill the broker. */
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) != 0)
		return pw_fail(PW_ERR_IO, errbuf, errlen, "could not ignore SIGPIPE: %s",
		               strerror(errno));
	return PW_OK;
}

int main(int argc, char **argv)
{
	char err[1024];
	pw_devbroker_opts opts;
	pw_log lg;
	pw_log_init(&lg, "devbroker", PW_LOG_INFO);

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		pw_devbroker_usage(stdout);
		return 0;
	}
	if (pw_devbroker_parse_args(argc, argv, &opts, err, sizeof err) != PW_OK) {
		fprintf(stderr, "pw-devbroker: %s\n", err);
		pw_devbroker_usage(stderr);
		return 2;
	}
	if (opts.list_topics) {
		pw_devbroker_list_topics(stdout);
		return 0;
	}
	lg.min_level = opts.log_level;

	int rc = 1;
	bool wrote_pidfile = false, wrote_bootstrap = false;
	rd_kafka_mock_cluster_t *mc = NULL;
	/* Signals first, so that a TERM during start-up still ends in a clean exit. */
	if (pw_devbroker_install_signals(err, sizeof err) != PW_OK) {
		pw_log_error(&lg, "%s", err);
		return 1;
	}
	rd_kafka_t *rk = pw_devbroker_client_new(&lg, err, sizeof err);
	if (!rk) {
		pw_log_error(&lg, "%s", err);
		return 1;
	}
	pw_devbroker_next_port = opts.port_base;
	pw_devbroker_ports_left = opts.port_base ? opts.brokers : 0;
	mc = rd_kafka_mock_cluster_new(rk, opts.brokers);
	bool ports_used = pw_devbroker_ports_left == 0;
	pw_devbroker_ports_left = 0;
	if (mc && !ports_used) {
		pw_log_error(&lg, "mock cluster did not bind its %d brokers to ports from %d",
		             opts.brokers, opts.port_base);
		goto destroy_cluster;
	}
	if (!mc) {
		pw_log_error(&lg, "could not create mock cluster with %d brokers%s", opts.brokers,
		             opts.port_base ? " (are the fixed ports free?)" : "");
		goto destroy_client;
	}
	if (pw_devbroker_create_topics(mc, opts.brokers, &lg, err, sizeof err) != PW_OK) {
		pw_log_error(&lg, "%s", err);
		goto destroy_cluster;
	}
	const char *bootstraps = rd_kafka_mock_cluster_bootstraps(mc);
	if (opts.pidfile) {
		char pid[32];
		snprintf(pid, sizeof pid, "%ld", (long)getpid());
		if (pw_devbroker_write_atomic(opts.pidfile, pid, err, sizeof err) != PW_OK) {
			pw_log_error(&lg, "%s", err);
			goto destroy_cluster;
		}
		wrote_pidfile = true;
	}
	/* Written last: its presence tells stack.sh that every topic exists. */
	if (pw_devbroker_write_atomic(opts.bootstrap_file, bootstraps, err, sizeof err) != PW_OK) {
		pw_log_error(&lg, "%s", err);
		goto remove_files;
	}
	wrote_bootstrap = true;

	char pidbuf[32], nbrokers[16], ntopics[16];
	snprintf(pidbuf, sizeof pidbuf, "%ld", (long)getpid());
	snprintf(nbrokers, sizeof nbrokers, "%d", opts.brokers);
	snprintf(ntopics, sizeof ntopics, "%zu", pw_topics_count);
	pw_log_write(&lg, PW_LOG_INFO,
	             (const char *[]){"bootstrap_servers", bootstraps, "brokers", nbrokers, "topics",
	                              ntopics, "pid", pidbuf, "bootstrap_file", opts.bootstrap_file,
	                              NULL},
	             "dev broker up");

	const struct timespec tick = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
	while (!pw_devbroker_stop)
		nanosleep(&tick, NULL);
	pw_log_info(&lg, "shutdown requested; stopping the mock cluster");
	rc = 0;

remove_files:
	/* A stale bootstrap file would point the next reader at closed ports. */
	if (wrote_bootstrap)
		unlink(opts.bootstrap_file);
	if (wrote_pidfile)
		unlink(opts.pidfile);
destroy_cluster:
	rd_kafka_mock_cluster_destroy(mc);
destroy_client:
	rd_kafka_destroy(rk);
	if (rc == 0)
		pw_log_info(&lg, "dev broker stopped");
	return rc;
}
