-- 0029_first_signal.sql: the owner of a first signal (issue 17, seed §8).
--
-- The baseliner's outlier alert is the first signal of a shift. It is
-- infra_health only when an infra cause explains it (a fleet change, an
-- environment change between the series' points, or outliers on unrelated
-- models on one platform and chip set at once); otherwise its kind is
-- 'unconfirmed': owned by the triage rotation for confirmation, neither
-- infra's nor the compiler team's (alert.proto ALERT_KIND_UNCONFIRMED).
ALTER TABLE perfwatch.alerts DROP CONSTRAINT alerts_kind_check;
ALTER TABLE perfwatch.alerts ADD CONSTRAINT alerts_kind_check
    CHECK (kind IN ('regression', 'improvement', 'infra_health', 'unconfirmed'));
ALTER TABLE perfwatch.alerts
    ADD COLUMN signal_cause text NOT NULL DEFAULT ''
        CHECK (signal_cause IN ('', 'fleet_change', 'harness_change', 'fleet_wide', 'none_found')),
    ADD COLUMN signal_evidence text NOT NULL DEFAULT '',
    ADD COLUMN needs_confirmation boolean NOT NULL DEFAULT false;
-- triage: first signals still waiting for confirmation
CREATE INDEX alerts_unconfirmed ON perfwatch.alerts (created_at) WHERE needs_confirmation;

COMMENT ON COLUMN perfwatch.alerts.kind IS 'regression, improvement, infra_health, unconfirmed (an outlier no infra cause explains)';
COMMENT ON COLUMN perfwatch.alerts.signal_cause IS 'baseliner outliers: fleet_change, harness_change, fleet_wide (infra) or none_found (unconfirmed); empty otherwise';
COMMENT ON COLUMN perfwatch.alerts.signal_evidence IS 'what decided signal_cause, e.g. harness perfbench-2.31 -> perfbench-2.32';
COMMENT ON COLUMN perfwatch.alerts.needs_confirmation IS 'true while the owner is unknown: confirm by a rerun or the next nightly';
