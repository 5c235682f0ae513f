/*
 * it_kafka_admin.c: the few broker-side operations the integration tests need
 * against the dev stack's Kafka node, through librdkafka's admin API.
 *
 * test_kafka_loss.sh uses it to make the broker's retention delete messages a
 * stopped group has not read (a topic's retention shrunk, then restored) and
 * to read where a partition's log now starts. Nothing here is used by a
 * service.
 *
 *   it_kafka_admin set-config BOOTSTRAP TOPIC KEY=VALUE...
 *       replaces the topic's dynamic configuration with the pairs given
 *       (AlterConfigs: keys not given return to the broker's defaults)
 *   it_kafka_admin watermarks BOOTSTRAP TOPIC PARTITION
 *       prints "LOW HIGH": the partition's first kept offset and its end
 *
 * Exit 0 on success, 1 on a broker error, 2 on usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

static rd_kafka_t *client_new(const char *bootstrap)
{
	char why[512];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, why, sizeof why)) {
		fprintf(stderr, "it_kafka_admin: %s\n", why);
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof why);
	if (!rk) {
		fprintf(stderr, "it_kafka_admin: %s\n", why);
		rd_kafka_conf_destroy(conf);
	}
	return rk;
}

static int set_config(rd_kafka_t *rk, const char *topic, char **pairs, int npairs)
{
	rd_kafka_ConfigResource_t *res = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic);
	for (int i = 0; i < npairs; i++) {
		char *eq = strchr(pairs[i], '=');
		if (!eq || eq == pairs[i]) {
			fprintf(stderr, "it_kafka_admin: \"%s\" is not KEY=VALUE\n", pairs[i]);
			rd_kafka_ConfigResource_destroy(res);
			return 2;
		}
		*eq = '\0';
		if (rd_kafka_ConfigResource_set_config(res, pairs[i], eq + 1)) {
			fprintf(stderr, "it_kafka_admin: cannot set \"%s\"\n", pairs[i]);
			rd_kafka_ConfigResource_destroy(res);
			return 2;
		}
	}
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_AlterConfigs(rk, &res, 1, NULL, q);
	rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
	int rc = 1;
	if (!ev) {
		fprintf(stderr, "it_kafka_admin: no answer to AlterConfigs within 30 s\n");
	} else if (rd_kafka_event_error(ev)) {
		fprintf(stderr, "it_kafka_admin: AlterConfigs: %s\n", rd_kafka_event_error_string(ev));
	} else {
		const rd_kafka_AlterConfigs_result_t *r = rd_kafka_event_AlterConfigs_result(ev);
		size_t n = 0;
		const rd_kafka_ConfigResource_t **rs = r ? rd_kafka_AlterConfigs_result_resources(r, &n)
		                                         : NULL;
		if (n == 1 && !rd_kafka_ConfigResource_error(rs[0]))
			rc = 0;
		else
			fprintf(stderr, "it_kafka_admin: AlterConfigs of %s: %s\n", topic,
			        n ? rd_kafka_ConfigResource_error_string(rs[0]) : "no result");
	}
	if (ev)
		rd_kafka_event_destroy(ev);
	rd_kafka_queue_destroy(q);
	rd_kafka_ConfigResource_destroy(res);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 4 || (strcmp(argv[1], "set-config") && strcmp(argv[1], "watermarks")) ||
	    (strcmp(argv[1], "watermarks") == 0 && argc != 5)) {
		fprintf(stderr, "usage: it_kafka_admin set-config BOOTSTRAP TOPIC KEY=VALUE...\n"
		                "       it_kafka_admin watermarks BOOTSTRAP TOPIC PARTITION\n");
		return 2;
	}
	rd_kafka_t *rk = client_new(argv[2]);
	if (!rk)
		return 1;
	int rc;
	if (strcmp(argv[1], "set-config") == 0) {
		rc = set_config(rk, argv[3], argv + 4, argc - 4);
	} else {
		int64_t lo = 0, hi = 0;
		rd_kafka_resp_err_t err =
			rd_kafka_query_watermark_offsets(rk, argv[3], atoi(argv[4]), &lo, &hi, 10000);
		if (err) {
			fprintf(stderr, "it_kafka_admin: watermarks of %s [%s]: %s\n", argv[3], argv[4],
			        rd_kafka_err2str(err));
			rc = 1;
		} else {
			printf("%lld %lld\n", (long long)lo, (long long)hi);
			rc = 0;
		}
	}
	rd_kafka_destroy(rk);
	return rc;
}
