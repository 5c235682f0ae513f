-- 0029: the bisector's event target ranks its metric first (services/bisector/main.c).
-- An event's alerts are ranked by how directly their metric measures the
-- regressed family's speed (bisect.h pw_bisect_metric_rank: median latency 0,
-- throughput 1, tail latency 2, utilisation 3, cost 4), then by |delta| /
-- noise: cost_per_mtok_usd moves with the latency by the same ratio and would
-- otherwise tie with, or beat, the latency it is derived from.
ALTER TABLE perfwatch.bisections ADD COLUMN target_rank smallint NOT NULL DEFAULT 3;
COMMENT ON COLUMN perfwatch.bisections.target_rank IS 'metric rank of the target alert (0 median latency .. 4 cost); a later alert of the event with a lower rank, or the same rank and a larger target_score, becomes the target before the first job';
