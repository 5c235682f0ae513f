-- 0037_confirm_joined_findings.sql: outliers that join a confirmed finding.
--
-- After a confirmed shift every nightly of the series stays outside its band
-- until the shift is accepted. Such an outlier at the finding's level is the
-- same shift seen again: it takes the finding's outcome and CL range without
-- a rerun (services/bisector/confirm.c, join_finding), and names the finding
-- it joined here: the alert a rerun confirmed (job_id is that rerun's), or
-- the watcher's alert of the shift (job_id NULL). '' for an outlier decided
-- by its own rerun.
ALTER TABLE perfwatch.confirm_alerts
    ADD COLUMN joined_alert_id text NOT NULL DEFAULT '';

COMMENT ON COLUMN perfwatch.confirm_alerts.joined_alert_id IS
    'the alert whose finding this outlier joined without a rerun: one a rerun confirmed, or the watcher''s of the shift ('''' when it had its own)';
