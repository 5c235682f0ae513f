/*
 * pw_service.h: the one runtime every perfwatch service starts from.
 *
 * A service is described by data — a pw_service_def: its name, its
 * configuration keys, the inputs it consumes with their batch callbacks, the
 * periodic work of its main thread, its readiness check — and
 * pw_service_main() does everything else, the same way for every service:
 *
 *   - the command line (--config FILE, --config-reference, --help), the
 *     configuration (pw_config.h: common keys + the service's table, then the
 *     file, then PW_* variables), exit code 2 for a bad command line or
 *     configuration;
 *   - the JSON logger, named after the service, at log.level;
 *   - SIGTERM/SIGINT set the stop flag (nothing else runs in the handler),
 *     SIGPIPE is ignored;
 *   - the metrics registry and the HTTP server (/healthz, /readyz, /metrics,
 *     plus the service's own handlers) on http.listen / http.port;
 *   - per worker: a PostgreSQL connection (when the service declares .pg), a
 *     Redis connection (.redis), an idempotent producer, and a consumer-group
 *     member running pw_consumer_run with the held-batch commit rule of
 *     pw_kafka.h (when the input says .outputs);
 *   - the outbox (pw_outbox.h): rows the callbacks wrote in their
 *     transactions are published after each batch and each tick, and at start
 *     for what a previous run left;
 *   - readiness: /readyz is 503 while starting, while stopping, while any
 *     worker's PostgreSQL connection is down, while a consumer has failed its
 *     batches for longer than service.stuck.after without one success, while
 *     the outbox cannot be published, and whenever the service's own check
 *     says so; the reason names which;
 *   - orderly stop: the stop flag ends every consumer loop (a gathered batch
 *     is handed over once more, held batches are committed when their outputs
 *     are acknowledged), the tick loop returns, producers flush within
 *     service.stop.flush.ms, then everything is released in reverse order;
 *   - the exit code: 0 after a requested stop, 1 when a worker or the tick
 *     failed fatally (one fatal worker stops the process: its partitions need
 *     a new owner), 2 for a bad command line or configuration.
 *
 * The shape follows the command and VFS tables of Redis, git and SQLite: the
 * table says what a service is, one engine says how it runs. Each
 * services/<name>/main.c is then a pw_service_def and the few callbacks that
 * bind it to the service's own logic (kept in plain functions elsewhere in
 * services/<name>/, testable without a broker).
 *
 * Threading: one thread per consumer worker, the main thread runs init, the
 * ticks and release; HTTP handlers run on the HTTP thread (pw_http.h). A
 * worker's connections are used by its thread only; the main thread has its
 * own set (pw_service_main_worker).
 */
#ifndef PW_SERVICE_H
#define PW_SERVICE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pw_config.h"
#include "pw_dlq.h"
#include "pw_http.h"
#include "pw_kafka.h"
#include "pw_log.h"
#include "pw_metrics.h"
#include "pw_outbox.h"
#include "pw_pg.h"
#include "pw_redis.h"
#include "pw_status.h"

/* Consumer inputs per service, at most. */
#define PW_SERVICE_MAX_INPUTS 4
/* Workers of one input, at most. */
#define PW_SERVICE_MAX_WORKERS 16

typedef struct pw_service pw_service;

/*
 * What the runtime gives one thread of the service: its index among the
 * input's workers (0 for the main thread) and its own connections, each
 * created and owned by the runtime. pg is NULL unless the service declares
 * .pg, rd NULL unless it declares .redis (or redis.addr is empty), outbox NULL
 * unless the service declares .outbox. producer is always there: it carries
 * the dead letters of the worker's batches, its outputs, and its outbox rows.
 */
typedef struct pw_service_worker {
	pw_service *svc;
	void *app;          /* what init stored in *app (the service's shared state) */
	int input;          /* index into def->inputs, -1 for the main thread */
	int index;          /* 0 .. workers-1 within the input */
	pw_pg *pg;
	pw_redis *rd;
	pw_producer *producer;
	pw_outbox *outbox;
	void *ctx;          /* the callbacks' context: see def->worker_init and worker_is_ctx */
} pw_service_worker;

/*
 * One consumed input: a member of the consumer group kafka.group.id (or of
 * kafka.group.id + "-" + group_suffix) subscribed to topics, `workers` threads
 * of it. Each worker gets its own context from the service's worker_init, and
 * on_batch is called with that context (pw_batch_fn of pw_kafka.h: return
 * PW_OK only when the batch's effect is durable; bad input is dead-lettered
 * in the callback and still PW_OK).
 */
typedef struct pw_service_input {
	const char *name;              /* for logs and metrics, e.g. "points" */
	const char *const *topics;     /* NULL-terminated, names from pw_topics.h */
	pw_batch_fn on_batch;
	const char *group_suffix;      /* NULL: the group is kafka.group.id itself */
	const char *workers_key;       /* an INT config key giving the worker count; NULL: 1 */
	/*
	 * Hold each batch until the messages its callback produced on the worker's
	 * producer are acknowledged (pw_consumer_opts.outputs), instead of the
	 * callback flushing. The flush bound is service.stop.flush.ms.
	 */
	bool outputs;
	/*
	 * A DURATION_MS key bounding the wait for a held batch's acknowledgements
	 * (pw_consumer_opts.outputs_timeout_ms); NULL: service.stop.flush.ms.
	 */
	const char *outputs_timeout_key;
	/*
	 * The input's topics are keyed alike and a member must hold partition p
	 * of each of them (the watcher's points and baselines of one series): the
	 * group is assigned by range, topic by topic, with eager rebalances,
	 * instead of the default cooperative-sticky, which balances the count of
	 * partitions over all topics and can give one member every points
	 * partition and the other every baselines partition.
	 */
	bool co_partitioned;
} pw_service_input;

typedef struct pw_service_def {
	const char *name;              /* "gate": logger, config, outbox rows, metrics prefix */
	const char *summary;           /* one line for --help */
	const pw_conf_key *keys;       /* the service's own keys (may be NULL) */
	size_t nkeys;
	const pw_kv *defaults;         /* common keys with another default here, e.g. http.port */
	size_t ndefaults;
	const pw_kv *producer_props;   /* producer properties the operator has not set, e.g.
	                                  message.max.bytes for large verdicts */
	size_t nproducer_props;
	bool pg;                       /* each worker and the main thread get a PostgreSQL connection */
	bool redis;                    /* ... and a Redis connection when redis.addr is set */
	bool outbox;                   /* the service writes pw_outbox rows in its transactions */

	/*
	 * The size of the service's shared state when the runtime is to own it:
	 * the runtime allocates app_size zeroed bytes before init, presets *app
	 * to them, and frees them after release (also when init fails). 0: init
	 * builds *app itself and release frees it.
	 */
	size_t app_size;
	/*
	 * After the configuration is loaded and the metrics registry and HTTP
	 * server exist (not started), before any connection: read the service's
	 * keys, register its metrics and HTTP handlers, build its shared state.
	 * *app is then passed to every other callback. Return PW_ERR_CONFIG for a
	 * bad value (exit 2), anything else non-OK is fatal (exit 1).
	 */
	pw_status (*init)(pw_service *svc, void **app, char *errbuf, size_t errlen);
	/*
	 * Frees what init built (not the app_size block itself), after every
	 * worker stopped, and also after a failed init that left *app set (then
	 * on a partly built app). May be NULL.
	 */
	void (*release)(void *app);

	const pw_service_input *inputs;
	size_t ninputs;

	/*
	 * Builds one worker's context from its connections (called on the main
	 * thread before the worker starts, also for the main thread's own worker
	 * when tick is set, with w->input == -1). May be NULL: w->ctx is then app,
	 * or the pw_service_worker itself when worker_is_ctx is set.
	 */
	pw_status (*worker_init)(void *app, pw_service_worker *w, char *errbuf, size_t errlen);
	void (*worker_release)(void *app, pw_service_worker *w);
	/*
	 * The batch callbacks get the worker itself (w->ctx == w) as their
	 * context: its connections and, in w->app, the service's state. For a
	 * service whose worker needs nothing of its own beyond what the runtime
	 * gives it (no worker_init/worker_release needed).
	 */
	bool worker_is_ctx;

	/*
	 * Periodic work on the main thread, every tick_key milliseconds (a
	 * DURATION_MS key of the service; NULL: 1 s): the gate's evaluation poll,
	 * the bisector's scheduler, the pager's deliveries. A retriable status is
	 * logged and retried after a backoff; PW_ERR_SHUTDOWN ends the service
	 * cleanly; anything else is fatal. *next_ms (preset to the interval) may be
	 * lowered to come back sooner. May be NULL: the main thread only waits.
	 */
	pw_status (*tick)(void *app, pw_service_worker *main, int64_t *next_ms, char *errbuf,
	                  size_t errlen);
	const char *tick_key;

	/* The service's own readiness; may be NULL. Runs on the HTTP thread. */
	bool (*ready)(void *app, char *reason, size_t reasonlen);

	/* One log line of totals at stop; may be NULL. */
	void (*stopped)(void *app, const pw_log *lg);
} pw_service_def;

/*
 * Runs the service described by def (static, borrowed) with main's
 * arguments and environment. Returns the process exit code: 0 after a
 * requested stop, 1 on a fatal error, 2 on a bad command line or
 * configuration. Libraries never exit; main returns what this returns.
 */
int pw_service_main(const pw_service_def *def, int argc, char **argv, char **envp);

/* Accessors for init, the callbacks and HTTP handlers; all borrowed. */
const pw_config *pw_service_config(const pw_service *svc);
const pw_log *pw_service_log(const pw_service *svc);
pw_metrics *pw_service_metrics(pw_service *svc);
/* What init stored in *app (NULL before init returned). */
void *pw_service_app(pw_service *svc);
/* The HTTP server, to add handlers from init (pw_http_handle). */
pw_http *pw_service_http(pw_service *svc);
/* The stop flag every loop watches; set it to stop the service. */
volatile sig_atomic_t *pw_service_stop_flag(pw_service *svc);
bool pw_service_stopping(const pw_service *svc);

/*
 * The consumer of an input's worker (for pw_consumer_handle: assignment and
 * positions), NULL for the main thread's worker. Used from the worker's own
 * thread only.
 */
pw_consumer *pw_service_worker_consumer(const pw_service_worker *w);

/*
 * Whether a batch callback that failed with st should fail the batch (so that
 * the consumer retries it) rather than dead-letter the message: the server
 * gone, a timeout, memory, the broker, or a stop. Anything else (PW_ERR_PG: a
 * statement the server rejected, PW_ERR_INVALID, ...) would fail again on
 * every retry and stall the partition behind it: the message is dead-lettered
 * as processing_failed instead. Wider than pw_status_retriable, which speaks
 * of one call, not of a batch.
 */
bool pw_service_retriable(pw_status st);

/*
 * The dead letter's reason for a message whose callback failed with st and
 * is not retried (pw_service_retriable false): DLQ_REASON_OVERSIZE for
 * PW_ERR_TOO_LARGE (what the message made would not fit its topic:
 * pw_outbox_add), DLQ_REASON_PROCESSING_FAILED for anything else.
 */
Perfwatch__V1__DlqReason pw_service_failure_reason(pw_status st);

/*
 * Dead-letters one consumed message in the worker's transaction and on
 * perf.dlq.v1: a row in perfwatch.dead_letters (idempotent on the source
 * offset) and a DeadLetter produced on w->producer (flushed with the batch's
 * outputs). payload_type names what the message should have been. The
 * DeadLetter always fits the topic: an oversized payload is cut, its SHA-256
 * and original length kept (pw_dlq.h). PW_OK, or the PostgreSQL or Kafka
 * error (retriable: the batch is retried).
 */
pw_status pw_service_dead_letter(pw_service_worker *w, const rd_kafka_message_t *msg,
                                 const char *payload_type, Perfwatch__V1__DlqReason reason,
                                 const char *detail, char *errbuf, size_t errlen);

#endif
