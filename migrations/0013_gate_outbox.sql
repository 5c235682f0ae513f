-- 0013_gate_outbox.sql: the gate's outbox, so that a stored verdict is always published.
--
-- The gate writes an evaluation's results (0004) and the messages that
-- announce them — one GateVerdict for perf.gate.verdicts.v1 and one Alert per
-- BLOCKING, P1 or INVESTIGATE series for perf.alerts.v1 — in the same
-- transaction, here. It then publishes every row whose published_at is null,
-- waits for the broker's acknowledgements and only then sets published_at.
-- A gate killed between the PostgreSQL commit and the publication finds the
-- rows unpublished on restart and sends them (consumers see at-least-once
-- delivery, keyed as in docs/schema.md); a redelivered GateRequest whose
-- evaluation is already done clears published_at to republish the stored
-- verdict instead of deciding again.
--
-- gate_evaluations gains received_at, when the gate stored the request: the
-- waiting rule gives every request at least gate.min_wait after its arrival
-- before a deadline counts as passed (a request replayed with a deadline in
-- the past is not decided before its runs could arrive).

ALTER TABLE perfwatch.gate_evaluations ADD COLUMN received_at timestamptz NOT NULL DEFAULT now();
COMMENT ON COLUMN perfwatch.gate_evaluations.received_at IS 'when the gate stored the request (the waiting rule counts gate.min_wait from here)';

CREATE TABLE perfwatch.gate_outbox (
    release_id    text NOT NULL,
    evaluation    integer NOT NULL,
    seq           integer NOT NULL CHECK (seq >= 0),
    topic         text NOT NULL CHECK (topic IN ('perf.gate.verdicts.v1', 'perf.alerts.v1')),
    message_key   text NOT NULL,
    payload       bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    published_at  timestamptz,
    PRIMARY KEY (release_id, evaluation, seq),
    FOREIGN KEY (release_id, evaluation) REFERENCES perfwatch.gate_evaluations (release_id, evaluation) ON DELETE CASCADE
);
-- gate: what is still to be published
CREATE INDEX gate_outbox_unpublished ON perfwatch.gate_outbox (release_id, evaluation, seq) WHERE published_at IS NULL;

COMMENT ON TABLE perfwatch.gate_outbox IS 'messages of a finished gate evaluation, written with its results and published after commit; natural key (release_id, evaluation, seq); insert ON CONFLICT DO NOTHING, set published_at once the broker acknowledged';
COMMENT ON COLUMN perfwatch.gate_outbox.release_id IS 'release of the evaluation';
COMMENT ON COLUMN perfwatch.gate_outbox.evaluation IS 'evaluation attempt';
COMMENT ON COLUMN perfwatch.gate_outbox.seq IS '0 for the GateVerdict, 1.. for the alerts, in publication order';
COMMENT ON COLUMN perfwatch.gate_outbox.topic IS 'topic to publish on';
COMMENT ON COLUMN perfwatch.gate_outbox.message_key IS 'Kafka key: release_id for verdicts, series_key for alerts';
COMMENT ON COLUMN perfwatch.gate_outbox.payload IS 'the packed protobuf (GateVerdict or Alert)';
COMMENT ON COLUMN perfwatch.gate_outbox.created_at IS 'when the evaluation stored it';
COMMENT ON COLUMN perfwatch.gate_outbox.published_at IS 'when the broker acknowledged it; null while pending';
