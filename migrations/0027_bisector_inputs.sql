-- 0027: the bisector's event target ranks its metric first; one dead letter per consuming service.
-- An event's alerts are ranked by how directly their metric measures the
-- regressed family's speed (bisect.h pw_bisect_metric_rank: median latency 0,
-- throughput 1, tail latency 2, utilisation 3, cost 4), then by |delta| /
-- noise saturated at 10 (pw_bisect_score), then by the relative effect:
-- cost_per_mtok_usd moves with the latency by the same ratio and would
-- otherwise tie with, or beat, the latency it is derived from; and two
-- latency series far above the noise (B64 and B8 TPOT, z 23.7 and 23.6) differ
-- in z by their MADs' sampling error, in effect by 8.2% against 7.7%.
ALTER TABLE perfwatch.bisections ADD COLUMN target_rank smallint NOT NULL DEFAULT 3;
ALTER TABLE perfwatch.bisections ADD COLUMN target_pct double precision NOT NULL DEFAULT 0;
COMMENT ON COLUMN perfwatch.bisections.target_pct IS '|delta_pct| of the target alert: the last tie-breaker of the event target';
COMMENT ON COLUMN perfwatch.bisections.target_rank IS 'metric rank of the target alert (0 median latency .. 4 cost); a later alert of the event with a lower rank, or the same rank and a larger target_score, or both equal and a larger target_pct, becomes the target before the first job';

-- A message that several services consume (perf.alerts.v1: the bisector, the
-- attributor, the pager) may be bad for each of them: each records its own
-- dead letter. The natural key was (topic, partition, offset), so the second
-- service's letter was dropped by ON CONFLICT DO NOTHING (it still reached
-- perf.dlq.v1). A redelivery to the same service is still recorded once.
ALTER TABLE perfwatch.dead_letters DROP CONSTRAINT dead_letters_pkey;
ALTER TABLE perfwatch.dead_letters ADD PRIMARY KEY (source_topic, kafka_partition, kafka_offset, service);
COMMENT ON TABLE perfwatch.dead_letters IS 'one row per dead-lettered message and consuming service (dlq.proto); natural key (source_topic, kafka_partition, kafka_offset, service); insert ON CONFLICT DO NOTHING';
