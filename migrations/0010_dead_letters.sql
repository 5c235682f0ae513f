-- 0010_dead_letters.sql: messages a service could not process.
--
-- Every consumer writes a DeadLetter (dlq.proto) here and to perf.dlq.v1
-- before committing the source offset. The key is where the message came
-- from, (source topic, partition, offset), so a bad message that is
-- redelivered after a crash is recorded once. The original key and payload
-- are kept verbatim for replay after a fix.

CREATE TABLE perfwatch.dead_letters (
    source_topic      text NOT NULL,
    kafka_partition   integer NOT NULL CHECK (kafka_partition >= 0),
    kafka_offset      bigint NOT NULL CHECK (kafka_offset >= 0),
    reason            text NOT NULL CHECK (reason IN ('decode_failed', 'missing_field', 'invalid_value', 'inconsistent',
                                                      'conflict', 'unknown_reference', 'oversize', 'processing_failed')),
    detail            text NOT NULL,
    service           text NOT NULL,
    payload_type      text NOT NULL DEFAULT '',
    original_key      bytea,
    original_payload  bytea,
    failed_at         timestamptz NOT NULL,
    recorded_at       timestamptz NOT NULL DEFAULT now(),
    replayed_at       timestamptz,
    PRIMARY KEY (source_topic, kafka_partition, kafka_offset)
);
-- operators and Grafana: dead letters over time, by reason
CREATE INDEX dead_letters_by_failed ON perfwatch.dead_letters (failed_at);
CREATE INDEX dead_letters_by_reason ON perfwatch.dead_letters (reason, failed_at);

COMMENT ON TABLE perfwatch.dead_letters IS 'one row per dead-lettered message (dlq.proto); natural key (source_topic, kafka_partition, kafka_offset); insert ON CONFLICT DO NOTHING';
COMMENT ON COLUMN perfwatch.dead_letters.source_topic IS 'topic the message came from, e.g. perf.runs.v1';
COMMENT ON COLUMN perfwatch.dead_letters.kafka_partition IS 'source partition';
COMMENT ON COLUMN perfwatch.dead_letters.kafka_offset IS 'source offset';
COMMENT ON COLUMN perfwatch.dead_letters.reason IS 'decode_failed, missing_field, invalid_value, inconsistent, conflict, unknown_reference, oversize, processing_failed';
COMMENT ON COLUMN perfwatch.dead_letters.detail IS 'lower-case message in PostgreSQL style';
COMMENT ON COLUMN perfwatch.dead_letters.service IS 'service that gave up on it';
COMMENT ON COLUMN perfwatch.dead_letters.payload_type IS 'message type expected, e.g. perfwatch.v1.RunResult';
COMMENT ON COLUMN perfwatch.dead_letters.original_key IS 'Kafka key, verbatim; null when the message had none';
COMMENT ON COLUMN perfwatch.dead_letters.original_payload IS 'Kafka value, verbatim; null when the message had none';
COMMENT ON COLUMN perfwatch.dead_letters.failed_at IS 'when the service gave up on it';
COMMENT ON COLUMN perfwatch.dead_letters.recorded_at IS 'when stored';
COMMENT ON COLUMN perfwatch.dead_letters.replayed_at IS 'when replayed after a fix; null until then';
