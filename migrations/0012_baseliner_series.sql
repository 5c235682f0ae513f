-- 0012_baseliner_series.sql: the baseliner's per-series state and resume mark.
--
-- One row per series the baseliner has seen, written in the same transaction
-- as the batch's baselines, freezes and alerts (0003, 0006), before its Kafka
-- offsets are committed. A restarted baseliner reads it to tell a redelivered
-- point (at or before the mark's perf.points.v1 offset: one series is one
-- partition) from a new one, re-fills the series' window from
-- perfwatch.samples (0002) up to the newest measurement folded in, and matches fleet-change
-- selectors against the environment of each series' latest point, also for
-- series it has not seen since the restart. state is also what
-- `perfwatch series show` reports for a series with no baseline yet.

CREATE TABLE perfwatch.baseliner_series (
    series_id         bigint PRIMARY KEY REFERENCES perfwatch.series (series_id),
    series_key        text NOT NULL,
    state             text NOT NULL CHECK (state IN ('baselining', 'active', 'frozen', 'quarantined')),
    mark_measured_at  timestamptz,
    mark_partition    integer NOT NULL DEFAULT -1,
    mark_offset       bigint NOT NULL DEFAULT -1,
    platform          text NOT NULL DEFAULT '',
    chip_set          text NOT NULL DEFAULT '',
    cell              text NOT NULL DEFAULT '',
    firmware          text NOT NULL DEFAULT '',
    harness_version   text NOT NULL DEFAULT '',
    window_n          integer NOT NULL DEFAULT 0 CHECK (window_n >= 0),
    window_need       text NOT NULL DEFAULT '',
    updated_at        timestamptz NOT NULL DEFAULT now()
);
-- fleet-change selection after a restart scans every row; operators: series by state
CREATE INDEX baseliner_series_by_state ON perfwatch.baseliner_series (state);

COMMENT ON TABLE perfwatch.baseliner_series IS 'baseliner state per series: resume mark, latest environment, window progress; natural key series_id; upserted per batch';
COMMENT ON COLUMN perfwatch.baseliner_series.series_key IS 'copy of the series key';
COMMENT ON COLUMN perfwatch.baseliner_series.state IS 'baselining, active, frozen or quarantined, as the state machine has it now';
COMMENT ON COLUMN perfwatch.baseliner_series.mark_measured_at IS 'newest measured_at folded into the state; the window is re-filled up to it';
COMMENT ON COLUMN perfwatch.baseliner_series.mark_partition IS 'perf.points.v1 partition of the series'' points; -1 when unknown';
COMMENT ON COLUMN perfwatch.baseliner_series.mark_offset IS 'offset of the last point consumed; points at or before it are redeliveries';
COMMENT ON COLUMN perfwatch.baseliner_series.platform IS 'platform of the latest point (fleet-change selector)';
COMMENT ON COLUMN perfwatch.baseliner_series.chip_set IS 'chip set of the latest point (fleet-change selector)';
COMMENT ON COLUMN perfwatch.baseliner_series.cell IS 'cell of the latest point (fleet-change selector)';
COMMENT ON COLUMN perfwatch.baseliner_series.firmware IS 'firmware of the latest point (fleet-change selector)';
COMMENT ON COLUMN perfwatch.baseliner_series.harness_version IS 'harness version of the latest point (fleet-change selector)';
COMMENT ON COLUMN perfwatch.baseliner_series.window_n IS 'points in the null window now';
COMMENT ON COLUMN perfwatch.baseliner_series.window_need IS 'what the window holds and still lacks, human text';
COMMENT ON COLUMN perfwatch.baseliner_series.updated_at IS 'last batch that changed the row';
