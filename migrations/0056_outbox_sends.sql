-- 0056_outbox_sends.sql: what lets a publisher that restarts find the rows it
-- had already sent (common/pw_outbox.h, "once on the topic").
--
-- Every message an outbox publishes carries the header perfwatch-outbox =
-- service/id/sends. A publisher that starts, or whose previous round failed,
-- or that claims a row older than a normal publish takes, first reads the
-- row's topic from the row's time onwards for that header, and marks a row it
-- finds published instead of sending it again. pw_outbox_resend asks for a
-- row to go out again on purpose: it counts `sends` up, so the header of the
-- new copy differs and the copy already on the topic does not stop it, and
-- sets resent_at, where the search for the new copy starts.

ALTER TABLE perfwatch.outbox
    ADD COLUMN sends integer NOT NULL DEFAULT 0 CHECK (sends >= 0),
    ADD COLUMN resent_at timestamptz;

COMMENT ON COLUMN perfwatch.outbox.sends IS 'times pw_outbox_resend asked for the row again; part of the message''s perfwatch-outbox header';
COMMENT ON COLUMN perfwatch.outbox.resent_at IS 'when pw_outbox_resend last asked for the row again; null if never';
