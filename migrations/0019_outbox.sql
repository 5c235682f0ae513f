-- 0019_outbox.sql: one transactional outbox for every service (common/pw_outbox.h).
--
-- A service writes the packed messages that announce a decision in the same
-- transaction as the decision, one row per message, with its own name in
-- `service`; its publisher claims the service's unpublished rows oldest first
-- (FOR UPDATE SKIP LOCKED), produces them, waits for the broker's
-- acknowledgements and only then sets published_at. A service killed between
-- its commit and the acknowledgement sends the rows again when it starts.
-- `ref` groups the rows of one decision so that a redelivered request can
-- mark them unpublished again (pw_outbox_resend).
--
-- One table rather than one per service (docs/architecture.md): one
-- publisher, one index and one place where an operator looks for what is
-- stuck; the gate's and the watcher's outboxes (0013, 0014) move here with
-- all their rows (published ones too: a redelivered gate request may ask for
-- its verdict again), and those tables are dropped. The gate's rows
-- have ref = release_id || '/' || evaluation, the watcher's the changepoint_id.

CREATE TABLE perfwatch.outbox (
    id            bigserial PRIMARY KEY,
    service       text NOT NULL CHECK (service <> ''),
    ref           text,
    topic         text NOT NULL CHECK (topic <> ''),
    message_key   text NOT NULL,
    payload       bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    published_at  timestamptz
);
-- publishers: a service's unpublished rows, oldest first
CREATE INDEX outbox_unpublished ON perfwatch.outbox (service, id) WHERE published_at IS NULL;
-- pw_outbox_resend: the rows of one decision
CREATE INDEX outbox_by_ref ON perfwatch.outbox (service, ref) WHERE ref IS NOT NULL;

COMMENT ON TABLE perfwatch.outbox IS 'messages of every service, written with the decision they announce and published after commit; id orders them; set published_at once the broker acknowledged';
COMMENT ON COLUMN perfwatch.outbox.id IS 'publication order within a service';
COMMENT ON COLUMN perfwatch.outbox.service IS 'producing service (gate, watcher, bisector, attributor, pager, ...)';
COMMENT ON COLUMN perfwatch.outbox.ref IS 'the decision the message belongs to (gate: release_id/evaluation, watcher: changepoint_id); null when none';
COMMENT ON COLUMN perfwatch.outbox.topic IS 'topic to publish on';
COMMENT ON COLUMN perfwatch.outbox.message_key IS 'Kafka key of the message';
COMMENT ON COLUMN perfwatch.outbox.payload IS 'the packed protobuf';
COMMENT ON COLUMN perfwatch.outbox.created_at IS 'when the decision was stored';
COMMENT ON COLUMN perfwatch.outbox.published_at IS 'when the broker acknowledged it; null while pending';

-- the gate's and the watcher's rows, in their publication order
INSERT INTO perfwatch.outbox (service, ref, topic, message_key, payload, created_at, published_at)
SELECT 'gate', release_id || '/' || evaluation, topic, message_key, payload, created_at, published_at
FROM perfwatch.gate_outbox
ORDER BY created_at, release_id, evaluation, seq;

INSERT INTO perfwatch.outbox (service, ref, topic, message_key, payload, created_at, published_at)
SELECT 'watcher', changepoint_id, m.topic, series_key, m.payload, created_at, published_at
FROM perfwatch.watcher_outbox
CROSS JOIN LATERAL (VALUES (0, 'perf.changepoints.v1', changepoint_pb),
                           (1, 'perf.alerts.v1', alert_pb)) AS m (seq, topic, payload)
ORDER BY created_at, changepoint_id, m.seq;

DROP TABLE perfwatch.gate_outbox;
DROP TABLE perfwatch.watcher_outbox;
