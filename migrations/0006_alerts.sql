-- 0006_alerts.sql: alerts in the shape of artifact 3.
--
-- The gate, the watcher and the baseliner raise Alerts (alert.proto); each
-- keeps its own alert_id stable for the same finding, so a redelivered or
-- re-derived alert upserts the same row. A higher revision (bisection and
-- attribution summaries filled in) replaces the stored one; a lower or equal
-- one changes nothing: ON CONFLICT (alert_id) DO UPDATE ... WHERE
-- alerts.revision < EXCLUDED.revision. status is the alert's life on the
-- triage side, set by the pager, and survives revisions.

CREATE TABLE perfwatch.alerts (
    alert_id                text PRIMARY KEY CHECK (alert_id <> ''),
    revision                integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    kind                    text NOT NULL CHECK (kind IN ('regression', 'improvement', 'infra_health')),
    source                  text NOT NULL CHECK (source IN ('gate', 'watcher', 'baseliner')),
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL DEFAULT now(),
    series_id               bigint REFERENCES perfwatch.series (series_id),
    series_key              text NOT NULL,
    config_hash             text NOT NULL DEFAULT '',
    baseline_median         double precision,
    baseline_mad            double precision,
    baseline_n              integer,
    baseline_version        integer,
    baseline_window_start   timestamptz,
    baseline_window_end     timestamptz,
    observed_median         double precision,
    observed_n              integer,
    observed_release        text NOT NULL DEFAULT '',
    delta_abs               double precision,
    delta_abs_unit          text NOT NULL DEFAULT '',
    delta_pct               double precision,
    z_robust                double precision,
    fdr_q                   double precision,
    mde_pct                 double precision,
    two_sigma_pct           double precision,
    passed_min_effect       boolean NOT NULL DEFAULT false,
    correlated_series       text[] NOT NULL DEFAULT '{}',
    clean_series            text[] NOT NULL DEFAULT '{}',
    changepoint_id          text NOT NULL DEFAULT '',
    cp_nightly              date,
    cl_range_lo             text NOT NULL DEFAULT '',
    cl_range_hi             text NOT NULL DEFAULT '',
    n_cls                   integer,
    bisection_id            text NOT NULL DEFAULT '',
    bisection_status        text NOT NULL DEFAULT '',
    culprit                 text NOT NULL DEFAULT '',
    verified_adjacent_clean boolean NOT NULL DEFAULT false,
    cherry_pick_reproduced  boolean NOT NULL DEFAULT false,
    op_diff_uri             text NOT NULL DEFAULT '',
    hlo_diff_uri            text NOT NULL DEFAULT '',
    trace_before_uri        text NOT NULL DEFAULT '',
    trace_after_uri         text NOT NULL DEFAULT '',
    verdict                 text NOT NULL CHECK (verdict IN ('blocking', 'p1', 'pass', 'validated_win', 'frozen', 'quarantined',
                                                             'insufficient_data', 'investigate', 'trend', 'waived')),
    owner_hint              text NOT NULL DEFAULT '',
    page_route              text NOT NULL DEFAULT '',
    routing                 text NOT NULL CHECK (routing IN ('page', 'queue', 'none')),
    release_id              text NOT NULL DEFAULT '',
    fleet_event_id          text NOT NULL DEFAULT '',
    summary                 text NOT NULL DEFAULT '',
    status                  text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'acknowledged', 'resolved')),
    resolved_at             timestamptz,
    CHECK (status <> 'resolved' OR resolved_at IS NOT NULL)
);
-- pager, operators and Grafana: open alerts, newest first
CREATE INDEX alerts_open ON perfwatch.alerts (created_at DESC) WHERE status <> 'resolved';
-- Grafana: alerts of one series
CREATE INDEX alerts_by_series ON perfwatch.alerts (series_id, created_at);
-- gate reports: alerts of one release
CREATE INDEX alerts_by_release ON perfwatch.alerts (release_id) WHERE release_id <> '';
-- reports: alerts per week
CREATE INDEX alerts_by_created ON perfwatch.alerts (created_at);

COMMENT ON TABLE perfwatch.alerts IS 'one row per alert (alert.proto, artifact 3); natural key alert_id; upsert replacing only on a higher revision';
COMMENT ON COLUMN perfwatch.alerts.alert_id IS 'e.g. perfreg-2026-06-18-00412';
COMMENT ON COLUMN perfwatch.alerts.revision IS '1 when raised; later revisions carry bisection/attribution summaries';
COMMENT ON COLUMN perfwatch.alerts.kind IS 'regression, improvement, infra_health';
COMMENT ON COLUMN perfwatch.alerts.source IS 'gate, watcher or baseliner';
COMMENT ON COLUMN perfwatch.alerts.created_at IS 'first raised (Alert.created_unix_us)';
COMMENT ON COLUMN perfwatch.alerts.updated_at IS 'last revision stored';
COMMENT ON COLUMN perfwatch.alerts.series_id IS 'series; null only for fleet-wide infra-health alerts';
COMMENT ON COLUMN perfwatch.alerts.series_key IS 'canonical series key (or a description for fleet-wide infra alerts)';
COMMENT ON COLUMN perfwatch.alerts.config_hash IS 'hash of the exact Config; bisection reproduces this regime';
COMMENT ON COLUMN perfwatch.alerts.baseline_median IS 'in the series unit';
COMMENT ON COLUMN perfwatch.alerts.baseline_mad IS 'normalised MAD, in unit';
COMMENT ON COLUMN perfwatch.alerts.baseline_n IS 'points in the baseline';
COMMENT ON COLUMN perfwatch.alerts.baseline_version IS 'baseline version compared against';
COMMENT ON COLUMN perfwatch.alerts.baseline_window_start IS 'first point of the baseline window';
COMMENT ON COLUMN perfwatch.alerts.baseline_window_end IS 'last point of the baseline window';
COMMENT ON COLUMN perfwatch.alerts.observed_median IS 'in unit';
COMMENT ON COLUMN perfwatch.alerts.observed_n IS 'observed repeats';
COMMENT ON COLUMN perfwatch.alerts.observed_release IS 'build observed, e.g. xla-rc-2026-06-17';
COMMENT ON COLUMN perfwatch.alerts.delta_abs IS 'observed - baseline median, in delta_abs_unit';
COMMENT ON COLUMN perfwatch.alerts.delta_abs_unit IS 'unit of delta_abs, e.g. ms';
COMMENT ON COLUMN perfwatch.alerts.delta_pct IS 'percent, delta_abs / baseline median x 100';
COMMENT ON COLUMN perfwatch.alerts.z_robust IS 'delta_abs / baseline_mad';
COMMENT ON COLUMN perfwatch.alerts.fdr_q IS 'BH q (gate) or changepoint p (watcher)';
COMMENT ON COLUMN perfwatch.alerts.mde_pct IS 'percent, tier MDE';
COMMENT ON COLUMN perfwatch.alerts.two_sigma_pct IS 'percent, 2 sigma of the baseline';
COMMENT ON COLUMN perfwatch.alerts.passed_min_effect IS '|delta| > max(mde, 2 sigma)';
COMMENT ON COLUMN perfwatch.alerts.correlated_series IS 'other series moving together, display strings';
COMMENT ON COLUMN perfwatch.alerts.clean_series IS 'related series that did not move, display strings';
COMMENT ON COLUMN perfwatch.alerts.changepoint_id IS 'changepoint behind the alert; empty when none';
COMMENT ON COLUMN perfwatch.alerts.cp_nightly IS 'UTC date of the shift';
COMMENT ON COLUMN perfwatch.alerts.cl_range_lo IS 'last clean CL';
COMMENT ON COLUMN perfwatch.alerts.cl_range_hi IS 'first shifted CL';
COMMENT ON COLUMN perfwatch.alerts.n_cls IS 'CLs in the range';
COMMENT ON COLUMN perfwatch.alerts.bisection_id IS 'bisection of the alert; empty until started';
COMMENT ON COLUMN perfwatch.alerts.bisection_status IS 'bisection status text (running, done, ...)';
COMMENT ON COLUMN perfwatch.alerts.culprit IS 'culprit CL; empty until found';
COMMENT ON COLUMN perfwatch.alerts.verified_adjacent_clean IS 'culprit - 1 re-tested clean';
COMMENT ON COLUMN perfwatch.alerts.cherry_pick_reproduced IS 'culprit alone on the base reproduced';
COMMENT ON COLUMN perfwatch.alerts.op_diff_uri IS 'link to the op diff';
COMMENT ON COLUMN perfwatch.alerts.hlo_diff_uri IS 'link to the HLO diff';
COMMENT ON COLUMN perfwatch.alerts.trace_before_uri IS 'link to the baseline-side trace';
COMMENT ON COLUMN perfwatch.alerts.trace_after_uri IS 'link to the candidate-side trace';
COMMENT ON COLUMN perfwatch.alerts.verdict IS 'verdict of the finding, e.g. blocking';
COMMENT ON COLUMN perfwatch.alerts.owner_hint IS 'team most likely to own it';
COMMENT ON COLUMN perfwatch.alerts.page_route IS 'route to page, e.g. ml-perf-triage; empty when not paging';
COMMENT ON COLUMN perfwatch.alerts.routing IS 'page, queue or none';
COMMENT ON COLUMN perfwatch.alerts.release_id IS 'release under gate; empty for watcher alerts';
COMMENT ON COLUMN perfwatch.alerts.fleet_event_id IS 'fleet change behind an infra-health alert';
COMMENT ON COLUMN perfwatch.alerts.summary IS 'one line for humans';
COMMENT ON COLUMN perfwatch.alerts.status IS 'open, acknowledged (paged), resolved (triaged); set by the pager';
COMMENT ON COLUMN perfwatch.alerts.resolved_at IS 'when resolved';
