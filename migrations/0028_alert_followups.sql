-- 0028: follow-up revisions of alerts (alert.proto, common/pw_alert_followup.h).
--
-- The bisector and the attributor keep the alerts they take off
-- perf.alerts.v1 (the original message, its Kafka key) so that they can
-- publish the same alert again with a higher revision when a bisection ends
-- (the "bisection" block, artifact 3) or an attribution is written (the
-- "artifacts" block). One row per alert_id; both services update it under
-- its row lock, so their revisions never collide and each follow-up carries
-- the latest of both blocks. A follow-up is published only when a block
-- changes (a redelivered input publishes nothing new).
CREATE TABLE perfwatch.alert_followups (
    alert_id                text PRIMARY KEY CHECK (alert_id <> ''),
    topic_key               text NOT NULL,
    revision                integer NOT NULL CHECK (revision >= 1),
    payload                 bytea NOT NULL,
    received_at             timestamptz NOT NULL DEFAULT now(),
    published_revision      integer NOT NULL DEFAULT 0,
    published_at            timestamptz,
    bisection_id            text NOT NULL DEFAULT '',
    bisection_status        text NOT NULL DEFAULT '',
    confidence              text NOT NULL DEFAULT '',
    reason                  text NOT NULL DEFAULT '',
    culprit                 text NOT NULL DEFAULT '',
    verified_adjacent_clean boolean NOT NULL DEFAULT false,
    cherry_pick_reproduced  boolean NOT NULL DEFAULT false,
    attribution_id          text NOT NULL DEFAULT '',
    op_diff                 text NOT NULL DEFAULT '',
    hlo_diff                text NOT NULL DEFAULT ''
);
COMMENT ON TABLE perfwatch.alert_followups IS 'alerts the bisector and attributor took in, and the bisection / attribution blocks of their follow-up revisions';
COMMENT ON COLUMN perfwatch.alert_followups.topic_key IS 'Kafka key of the original alert; the follow-up uses it';
COMMENT ON COLUMN perfwatch.alert_followups.revision IS 'revision of the stored original (the highest non-follow-up revision seen)';
COMMENT ON COLUMN perfwatch.alert_followups.payload IS 'the original perfwatch.v1.Alert as received';
COMMENT ON COLUMN perfwatch.alert_followups.published_revision IS 'revision of the last follow-up written to the outbox; 0 none';
COMMENT ON COLUMN perfwatch.alert_followups.attribution_id IS 'Attribution natural key (its alert_id)';
COMMENT ON COLUMN perfwatch.alert_followups.op_diff IS 'link to the op diff, perfwatch://attribution/ALERT/op-diff';
COMMENT ON COLUMN perfwatch.alert_followups.hlo_diff IS 'link to the HLO diff, perfwatch://attribution/ALERT/hlo-diff; empty when the HLO did not change';
