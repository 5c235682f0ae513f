-- 0015_samples_unchecked_refs.sql: the ingest path's per-row costs. Samples
-- and op_timings keep their links to runs and series without per-row
-- foreign-key checks, and samples' key becomes the series-time order that
-- every reader uses, in place of a text key plus a second index.
--
-- A foreign key costs one trigger and one index probe per inserted row; on
-- the ingest path that tripled the COPY of samples (0.94 s -> 2.64 s for
-- 143,520 rows on the dev stack) and dominated ingest throughput. The links
-- are guaranteed by the only writer instead: the ingester inserts a run and
-- its samples and op timings in one transaction, and takes series ids from
-- perfwatch.series in that same transaction (services/ingester/store.c).
-- tests/integration/test_ingest_crash.sh checks that no sample or op timing
-- is orphaned after repeated kill -9.
--
-- The samples key was (run_id, repeat_index, metric) beside an index
-- samples_by_series_time (series_id, measured_at): two btrees per row, one
-- of them on a long text. It is now (series_id, measured_at, run_id,
-- repeat_index), which is unique exactly when the old key is (a series fixes
-- the metric, and a run has one measured_at), and is the order in which the
-- baseliner, the watcher, the gate and Grafana read a series. COPY of the
-- same 143,520 samples: 1.05 s -> 0.72 s.
--
-- Deleting runs still removes their samples and op timings, by one
-- statement-level trigger per DELETE rather than one cascade per row.

ALTER TABLE perfwatch.samples DROP CONSTRAINT samples_run_id_repeat_index_fkey;
ALTER TABLE perfwatch.samples DROP CONSTRAINT samples_series_id_fkey;
ALTER TABLE perfwatch.op_timings DROP CONSTRAINT op_timings_run_id_repeat_index_fkey;

ALTER TABLE perfwatch.samples DROP CONSTRAINT samples_pkey;
DROP INDEX perfwatch.samples_by_series_time;
ALTER TABLE perfwatch.samples
    ADD CONSTRAINT samples_pkey PRIMARY KEY (series_id, measured_at, run_id, repeat_index);
COMMENT ON TABLE perfwatch.samples IS 'one row per metric of a run, i.e. one SeriesPoint (series.proto); natural key (run_id, repeat_index, metric), enforced as the primary key (series_id, measured_at, run_id, repeat_index); measured_at, build and chip_set are copies of the run for index-only series scans; links to runs and series are kept by the ingester (0015)';
COMMENT ON VIEW perfwatch.series_points IS 'every point with its series key; Grafana time series: WHERE series_id = $1 AND measured_at BETWEEN $from AND $to (primary key of samples)';

CREATE FUNCTION perfwatch.runs_delete_children() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM perfwatch.samples s USING gone g
     WHERE s.run_id = g.run_id AND s.repeat_index = g.repeat_index;
    DELETE FROM perfwatch.op_timings o USING gone g
     WHERE o.run_id = g.run_id AND o.repeat_index = g.repeat_index;
    RETURN NULL;
END $$;

CREATE TRIGGER runs_delete_children AFTER DELETE ON perfwatch.runs
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION perfwatch.runs_delete_children();

COMMENT ON FUNCTION perfwatch.runs_delete_children() IS 'deletes the samples and op timings of deleted runs (the cascade of the foreign keys dropped in 0015)';
