-- 0040_outbox_dead_letters.sql: an outbox row that can never be published is set aside.
--
-- A row over its topic's limit (common/pw_outbox.h: the producer's
-- message.max.bytes, 1,000,000 bytes for a topic at the broker's default),
-- or one the producer or the broker refuses as too large, used to be retried
-- forever ("message too large; retrying") and every row of its service
-- behind it waited with it, across restarts. Now the publisher dead-letters
-- it (perfwatch.dead_letters with source_topic 'perfwatch.outbox' and
-- kafka_offset the row's id, and perf.dlq.v1) and marks it here in the same
-- transaction: published_at says the row left the outbox, dead_lettered_at
-- that it went to the dead letters rather than to its topic.

ALTER TABLE perfwatch.outbox
    ADD COLUMN dead_lettered_at   timestamptz,
    ADD COLUMN dead_letter_reason text,
    ADD COLUMN dead_letter_detail text;

COMMENT ON COLUMN perfwatch.outbox.published_at IS 'when the row left the outbox: the broker acknowledged it, or (dead_lettered_at set) it was dead-lettered; null while pending';
COMMENT ON COLUMN perfwatch.outbox.dead_lettered_at IS 'when the row was dead-lettered instead of published (too large for its topic); null otherwise';
COMMENT ON COLUMN perfwatch.outbox.dead_letter_reason IS 'the dead letter''s reason (oversize); null unless dead-lettered';
COMMENT ON COLUMN perfwatch.outbox.dead_letter_detail IS 'why, as in perfwatch.dead_letters.detail; null unless dead-lettered';
