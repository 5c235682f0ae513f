-- 0014_watcher_outbox.sql: the watcher's outbox — the Changepoint and Alert
-- messages of every changepoint row, kept until the broker acknowledged them.
--
-- The watcher (services/watcher, docs/watcher.md) inserts a changepoints row
-- (0005), its alerts row (0006) and this row in one transaction, commits,
-- then publishes every row whose published_at is null, flushes the producer,
-- marks them published and only then commits its Kafka offsets. A watcher
-- killed anywhere in between finds the unpublished rows on start and sends
-- them then: a changepoint is never lost, and never emitted twice except in
-- the short window between a successful flush and the published_at update
-- (the messages carry stable changepoint_id / alert_id, so consumers dedupe).

CREATE TABLE perfwatch.watcher_outbox (
    changepoint_id  text PRIMARY KEY REFERENCES perfwatch.changepoints (changepoint_id),
    series_key      text NOT NULL,
    changepoint_pb  bytea NOT NULL,
    alert_id        text NOT NULL,
    alert_pb        bytea NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    published_at    timestamptz
);
-- the watcher: what is still to be sent
CREATE INDEX watcher_outbox_unpublished ON perfwatch.watcher_outbox (created_at) WHERE published_at IS NULL;

COMMENT ON TABLE perfwatch.watcher_outbox IS 'watcher messages per changepoint until the broker acknowledged them; natural key changepoint_id; insert ON CONFLICT DO NOTHING, set published_at after pw_producer_flush';
COMMENT ON COLUMN perfwatch.watcher_outbox.changepoint_id IS 'the changepoint the messages are about';
COMMENT ON COLUMN perfwatch.watcher_outbox.series_key IS 'Kafka key of both messages';
COMMENT ON COLUMN perfwatch.watcher_outbox.changepoint_pb IS 'packed perfwatch.v1.Changepoint for perf.changepoints.v1';
COMMENT ON COLUMN perfwatch.watcher_outbox.alert_id IS 'the alert raised with it';
COMMENT ON COLUMN perfwatch.watcher_outbox.alert_pb IS 'packed perfwatch.v1.Alert for perf.alerts.v1';
COMMENT ON COLUMN perfwatch.watcher_outbox.created_at IS 'when the changepoint was stored';
COMMENT ON COLUMN perfwatch.watcher_outbox.published_at IS 'when the producer flush confirmed both messages; null until then';
