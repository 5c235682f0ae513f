-- 0008_attributions.sql: the attributor's per-op diff, HLO diff and roofline check.
--
-- One attributions row per alert (attribution.proto) and one
-- attribution_ops row per op of the diff (artifact 6). Re-attributing an
-- alert replaces both in one transaction (DELETE the ops, upsert the row,
-- insert the ops), so the stored diff is always one consistent computation.
-- alert_id is not a foreign key to alerts: the attributor may see an alert on
-- perf.alerts.v1 before the service that raised it has stored its row.

CREATE TABLE perfwatch.attributions (
    alert_id              text PRIMARY KEY CHECK (alert_id <> ''),
    series_id             bigint REFERENCES perfwatch.series (series_id),
    before_run_id         text NOT NULL,
    before_repeat_index   integer NOT NULL,
    before_build_id       text NOT NULL,
    after_run_id          text NOT NULL,
    after_repeat_index    integer NOT NULL,
    after_build_id        text NOT NULL,
    kernel_sum_before_us  double precision NOT NULL,
    kernel_sum_after_us   double precision NOT NULL,
    wall_before_us        double precision NOT NULL,
    wall_after_us         double precision NOT NULL,
    top_op_family         text NOT NULL DEFAULT '',
    top_op_family_share   double precision,
    hlo_diff              text NOT NULL DEFAULT '',
    added_bytes_per_step  double precision,
    achieved_bw_tb_s      double precision,
    predicted_delta_us    double precision,
    predicted_delta_pct   double precision,
    measured_delta_us     double precision,
    measured_delta_pct    double precision,
    residual_us           double precision,
    memory_bound          boolean,
    roofline_explanation  text NOT NULL DEFAULT '',
    created_at            timestamptz NOT NULL
);

COMMENT ON TABLE perfwatch.attributions IS 'one attribution per alert (attribution.proto); natural key alert_id; replaced whole on re-attribution';
COMMENT ON COLUMN perfwatch.attributions.before_run_id IS 'run used as the before side';
COMMENT ON COLUMN perfwatch.attributions.before_repeat_index IS 'its repeat';
COMMENT ON COLUMN perfwatch.attributions.before_build_id IS 'its build, e.g. the prod release';
COMMENT ON COLUMN perfwatch.attributions.after_run_id IS 'run used as the after side';
COMMENT ON COLUMN perfwatch.attributions.after_repeat_index IS 'its repeat';
COMMENT ON COLUMN perfwatch.attributions.after_build_id IS 'its build, e.g. the RC';
COMMENT ON COLUMN perfwatch.attributions.kernel_sum_before_us IS 'microseconds per step, sum of before op times';
COMMENT ON COLUMN perfwatch.attributions.kernel_sum_after_us IS 'microseconds per step, sum of after op times';
COMMENT ON COLUMN perfwatch.attributions.wall_before_us IS 'microseconds, wall step time before';
COMMENT ON COLUMN perfwatch.attributions.wall_after_us IS 'microseconds, wall step time after';
COMMENT ON COLUMN perfwatch.attributions.top_op_family IS 'op family the delta concentrates in, e.g. fusion.1423';
COMMENT ON COLUMN perfwatch.attributions.top_op_family_share IS 'ratio 0..1 of the kernel delta explained by it';
COMMENT ON COLUMN perfwatch.attributions.hlo_diff IS 'unified diff of the post-optimisation HLO, before -> after';
COMMENT ON COLUMN perfwatch.attributions.added_bytes_per_step IS 'bytes of HBM traffic per step added (negative: removed)';
COMMENT ON COLUMN perfwatch.attributions.achieved_bw_tb_s IS 'TB/s, achieved bandwidth used for the prediction';
COMMENT ON COLUMN perfwatch.attributions.predicted_delta_us IS 'microseconds, roofline-predicted step-time change';
COMMENT ON COLUMN perfwatch.attributions.predicted_delta_pct IS 'percent of the before wall step time';
COMMENT ON COLUMN perfwatch.attributions.measured_delta_us IS 'microseconds, measured wall step change';
COMMENT ON COLUMN perfwatch.attributions.measured_delta_pct IS 'percent, measured';
COMMENT ON COLUMN perfwatch.attributions.residual_us IS 'microseconds, measured - predicted';
COMMENT ON COLUMN perfwatch.attributions.memory_bound IS 'config on the bandwidth side of the ridge';
COMMENT ON COLUMN perfwatch.attributions.roofline_explanation IS 'human text';
COMMENT ON COLUMN perfwatch.attributions.created_at IS 'when computed';

CREATE TABLE perfwatch.attribution_ops (
    alert_id    text NOT NULL REFERENCES perfwatch.attributions (alert_id) ON DELETE CASCADE,
    op_name     text NOT NULL,
    rank        integer NOT NULL CHECK (rank >= 0),
    category    text NOT NULL DEFAULT '',
    exec_unit   text NOT NULL DEFAULT '',
    calls       integer NOT NULL DEFAULT 0,
    before_us   double precision NOT NULL DEFAULT 0,
    after_us    double precision NOT NULL DEFAULT 0,
    delta_us    double precision NOT NULL,
    change      text NOT NULL CHECK (change IN ('unchanged', 'changed', 'removed', 'new')),
    note        text NOT NULL DEFAULT '',
    PRIMARY KEY (alert_id, op_name)
);

COMMENT ON TABLE perfwatch.attribution_ops IS 'rows of the per-op diff (artifact 6, attribution.proto OpDiffRow); natural key (alert_id, op_name)';
COMMENT ON COLUMN perfwatch.attribution_ops.rank IS '0-based position when sorted by |delta_us| descending';
COMMENT ON COLUMN perfwatch.attribution_ops.category IS 'what the op does';
COMMENT ON COLUMN perfwatch.attribution_ops.exec_unit IS 'execution unit, e.g. VPU';
COMMENT ON COLUMN perfwatch.attribution_ops.calls IS 'calls per step';
COMMENT ON COLUMN perfwatch.attribution_ops.before_us IS 'microseconds per step before; 0 when new';
COMMENT ON COLUMN perfwatch.attribution_ops.after_us IS 'microseconds per step after; 0 when removed';
COMMENT ON COLUMN perfwatch.attribution_ops.delta_us IS 'microseconds, after - before';
COMMENT ON COLUMN perfwatch.attribution_ops.change IS 'unchanged, changed, removed, new';
COMMENT ON COLUMN perfwatch.attribution_ops.note IS 'display note, e.g. NEW (VPU)';
