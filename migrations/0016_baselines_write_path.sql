-- 0016_baselines_write_path.sql: the baseliner's per-batch writes. Every
-- series point that completes a window is a new row of baselines (one per
-- point in steady state, as many as samples), and every point moves its
-- series' row of baseliner_series (the resume mark).
--
-- baselines loses its foreign key to series, as samples did in 0015: the
-- per-row trigger and index probe took a third of the COPY of a batch's
-- versions (4,000 rows: ~32 ms -> ~15 ms on the dev stack). The only writer,
-- the baseliner, takes series ids from the SeriesPoints that the ingester
-- published after committing the series row, so the reference holds.
--
-- baseliner_series keeps half of each page free, so that the update of a
-- row's mark fits on its page and touches no index (a HOT update): with
-- full pages every update also inserted into both indexes.

ALTER TABLE perfwatch.baselines DROP CONSTRAINT IF EXISTS baselines_series_id_fkey;
COMMENT ON COLUMN perfwatch.baselines.series_id IS 'series (0001); kept by the baseliner, without a foreign key (0016)';

ALTER TABLE perfwatch.baseliner_series SET (fillfactor = 50);
