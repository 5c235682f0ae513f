/*
 * test_bl_service.c: the baseliner's binding to the service runtime
 * (services/baseliner/baseliner_service.c, compiled in).
 *
 * pw_service calls worker_init for every thread, the main thread's too
 * (input -1) when the service has an outbox. The baseliner's one
 * pw_baseliner must stay on the consumer worker's connections: bound to the
 * main thread's, whose outbox publishes at any moment, a batch's
 * transaction was rolled back under it ("commit without a transaction") and
 * two threads used one libpq connection (the fault harness's reference run
 * at --models 56: the baseliner stopped polling and stayed 503).
 */
#include <criterion/criterion.h>

#include "../../services/baseliner/baseliner_service.c"

Test(bl_service, main_thread_leaves_the_consumer_workers_connections)
{
	static bl_app app;
	pw_log lg;
	pw_log_init(&lg, "baseliner", PW_LOG_ERROR);
	app.lg = &lg;
	/* stand-ins: only their addresses are compared */
	static char pg0, pg1, rd0, rd1, prod0, prod1;
	pw_service_worker consumer = {.input = 0, .pg = (pw_pg *)&pg0, .rd = (pw_redis *)&rd0,
	                              .producer = (pw_producer *)&prod0};
	pw_service_worker main_thread = {.input = -1, .pg = (pw_pg *)&pg1, .rd = (pw_redis *)&rd1,
	                                 .producer = (pw_producer *)&prod1};
	char err[256];
	cr_assert_eq(pw_bl_worker_init(&app, &consumer, err, sizeof err), PW_OK);
	cr_assert_eq(pw_bl_worker_init(&app, &main_thread, err, sizeof err), PW_OK);
	cr_assert_eq(consumer.ctx, &app.b);
	cr_assert_eq(app.b.pg, (pw_pg *)&pg0, "the batch runs on the main thread's connection");
	cr_assert_eq(app.b.rd, (pw_redis *)&rd0);
	cr_assert_eq(app.b.prod, (pw_producer *)&prod0);
	/* the main thread's release leaves the consumer's baseliner alone */
	pw_bl_worker_release(&app, &main_thread);
	cr_assert(app.b_made);
	pw_bl_worker_release(&app, &consumer);
	cr_assert_not(app.b_made);
}
