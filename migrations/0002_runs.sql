-- 0002_runs.sql: runs, their metric samples (the series points) and per-op timings.
--
-- The ingester writes one runs row per RunResult (run.proto), one samples row
-- per MetricSample and one op_timings row per OpTiming, all in the
-- transaction that precedes its Kafka offset commit. Every key is natural,
-- so a redelivered RunResult inserts nothing (ON CONFLICT DO NOTHING); a
-- redelivery whose payload_sha256 differs is a conflict and goes to the DLQ.
-- samples carries the series_id and a copy of the run's time and build so
-- that "series by time" and "candidate points of a build" are one index scan.

CREATE TABLE perfwatch.runs (
    run_id              text NOT NULL CHECK (run_id <> ''),
    repeat_index        integer NOT NULL CHECK (repeat_index >= 0),
    model               text NOT NULL,
    model_rev           text NOT NULL,
    hlo_fingerprint     text NOT NULL,
    build_id            text NOT NULL,
    build_kind          text NOT NULL CHECK (build_kind IN ('nightly', 'rc', 'bisect', 'release')),
    compiler_cl         text NOT NULL,
    compiler_cl_number  bigint NOT NULL,
    release_id          text NOT NULL DEFAULT '',
    platform            text NOT NULL,
    platform_family     text NOT NULL DEFAULT 'unspecified',
    chips               integer NOT NULL DEFAULT 0 CHECK (chips >= 0),
    config              text NOT NULL,
    phase               text NOT NULL DEFAULT 'unspecified'
                            CHECK (phase IN ('unspecified', 'prefill', 'decode', 'mixed', 'training')),
    batch               integer NOT NULL DEFAULT 0 CHECK (batch >= 0),
    seq_len             integer NOT NULL DEFAULT 0 CHECK (seq_len >= 0),
    dtype               text NOT NULL DEFAULT 'unspecified'
                            CHECK (dtype IN ('unspecified', 'bf16', 'int8', 'fp8', 'fp16', 'fp32')),
    geometry_matched    boolean NOT NULL DEFAULT false,
    firmware            text NOT NULL,
    chip_set            text NOT NULL,
    cell                text NOT NULL,
    harness_version     text NOT NULL,
    runtime_env         text NOT NULL DEFAULT '',
    host_cpuset         text NOT NULL DEFAULT '',
    reserved_neighbors  boolean NOT NULL DEFAULT false,
    warmup_discarded_s  double precision NOT NULL DEFAULT 0 CHECK (warmup_discarded_s >= 0),
    compile_cache_hits  integer NOT NULL DEFAULT 0 CHECK (compile_cache_hits >= 0),
    compile_cache_total integer NOT NULL DEFAULT 0 CHECK (compile_cache_total >= compile_cache_hits),
    allocator_steady_s  double precision NOT NULL DEFAULT 0,
    load_mode           text NOT NULL DEFAULT 'unspecified'
                            CHECK (load_mode IN ('unspecified', 'open_loop', 'closed_loop')),
    arrival_rate_rps    double precision NOT NULL DEFAULT 0 CHECK (arrival_rate_rps >= 0),
    trace_mix           text NOT NULL DEFAULT '',
    seed                numeric(20, 0) NOT NULL DEFAULT 0,
    measure_window_s    double precision NOT NULL DEFAULT 0,
    started_at          timestamptz NOT NULL,
    finished_at         timestamptz NOT NULL,
    wall_step_us        double precision NOT NULL DEFAULT 0,
    roofline_predicted_step_us double precision NOT NULL DEFAULT 0,
    achieved_hbm_bw_tb_s double precision NOT NULL DEFAULT 0,
    achieved_bw_fraction double precision NOT NULL DEFAULT 0,
    hlo_text            text NOT NULL DEFAULT '',
    trace_uri           text NOT NULL DEFAULT '',
    hlo_uri             text NOT NULL DEFAULT '',
    bisect_job_id       text NOT NULL DEFAULT '',
    payload_sha256      bytea NOT NULL,
    kafka_partition     integer NOT NULL DEFAULT -1,
    kafka_offset        bigint NOT NULL DEFAULT -1,
    ingested_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, repeat_index),
    CHECK (finished_at >= started_at)
);
-- attributor: before/after runs of one run key on one build
CREATE INDEX runs_by_key_build ON perfwatch.runs (model, hlo_fingerprint, platform, config, build_id);
-- operators and Grafana: recent runs
CREATE INDEX runs_by_finished ON perfwatch.runs (finished_at);
-- bisector: runs made for a bisect job
CREATE INDEX runs_by_bisect_job ON perfwatch.runs (bisect_job_id) WHERE bisect_job_id <> '';

COMMENT ON TABLE perfwatch.runs IS 'one row per RunResult (run.proto); natural key (run_id, repeat_index); insert ON CONFLICT DO NOTHING, compare payload_sha256 to detect conflicting redeliveries';
COMMENT ON COLUMN perfwatch.runs.run_id IS 'executor run id, e.g. t1-00412';
COMMENT ON COLUMN perfwatch.runs.repeat_index IS '0-based repeat of the run key within the run';
COMMENT ON COLUMN perfwatch.runs.model IS 'model name, e.g. chat-8b';
COMMENT ON COLUMN perfwatch.runs.model_rev IS 'model revision (checkpoint/retrain id)';
COMMENT ON COLUMN perfwatch.runs.hlo_fingerprint IS 'serving HLO fingerprint, e.g. hlo:9f31c2ab';
COMMENT ON COLUMN perfwatch.runs.build_id IS 'compiler build: nightly/RC/release id, e.g. xla-rc-2026-06-17';
COMMENT ON COLUMN perfwatch.runs.build_kind IS 'nightly, rc, bisect or release';
COMMENT ON COLUMN perfwatch.runs.compiler_cl IS 'head compiler CL of the build, e.g. cl/7841917';
COMMENT ON COLUMN perfwatch.runs.compiler_cl_number IS 'the CL as an integer, orders CLs';
COMMENT ON COLUMN perfwatch.runs.release_id IS 'release train of the build; empty for nightlies and bisect builds';
COMMENT ON COLUMN perfwatch.runs.platform IS 'platform name, e.g. v6e-4';
COMMENT ON COLUMN perfwatch.runs.platform_family IS 'accelerator family: tpu_v5e, tpu_v6e, tpu_ironwood, gpu_h100, gpu_b200, simulator';
COMMENT ON COLUMN perfwatch.runs.chips IS 'chips in the slice';
COMMENT ON COLUMN perfwatch.runs.config IS 'canonical config string, e.g. decode.B64.s2048.int8';
COMMENT ON COLUMN perfwatch.runs.phase IS 'phase regime: prefill, decode, mixed, training';
COMMENT ON COLUMN perfwatch.runs.batch IS 'resident batch B, sequences';
COMMENT ON COLUMN perfwatch.runs.seq_len IS 'tokens: mean context for decode, prompt length for prefill';
COMMENT ON COLUMN perfwatch.runs.dtype IS 'numerics: bf16, int8, fp8, fp16, fp32';
COMMENT ON COLUMN perfwatch.runs.geometry_matched IS 'true: shapes aligned to the platform tile (measures hardware); false: production-shaped';
COMMENT ON COLUMN perfwatch.runs.firmware IS 'accelerator firmware / driver version';
COMMENT ON COLUMN perfwatch.runs.chip_set IS 'reserved pinned chip set, e.g. pinned-7';
COMMENT ON COLUMN perfwatch.runs.cell IS 'datacenter cell, e.g. cell-mtv5-c12';
COMMENT ON COLUMN perfwatch.runs.harness_version IS 'benchmark harness, e.g. perfbench-2.31';
COMMENT ON COLUMN perfwatch.runs.runtime_env IS 'framework/runtime stack text';
COMMENT ON COLUMN perfwatch.runs.host_cpuset IS 'host CPUs pinned for the input feed, e.g. 0-15';
COMMENT ON COLUMN perfwatch.runs.reserved_neighbors IS 'true when the sub-pod was reserved (no neighbours)';
COMMENT ON COLUMN perfwatch.runs.warmup_discarded_s IS 'seconds of warm-up discarded before measuring';
COMMENT ON COLUMN perfwatch.runs.compile_cache_hits IS 'executables served from the compile cache';
COMMENT ON COLUMN perfwatch.runs.compile_cache_total IS 'executables needed';
COMMENT ON COLUMN perfwatch.runs.allocator_steady_s IS 'seconds until the allocator reached steady state';
COMMENT ON COLUMN perfwatch.runs.load_mode IS 'open_loop (Poisson) or closed_loop (throughput ceiling only)';
COMMENT ON COLUMN perfwatch.runs.arrival_rate_rps IS 'requests/s offered (Poisson lambda); 0 for closed-loop';
COMMENT ON COLUMN perfwatch.runs.trace_mix IS 'trace-derived length mix, e.g. chat-8b@2026-06 (p50 6k/p95 32k)';
COMMENT ON COLUMN perfwatch.runs.seed IS 'load-generator RNG seed (uint64)';
COMMENT ON COLUMN perfwatch.runs.measure_window_s IS 'seconds of the measurement window';
COMMENT ON COLUMN perfwatch.runs.started_at IS 'measurement start (RunResult.started_unix_us)';
COMMENT ON COLUMN perfwatch.runs.finished_at IS 'measurement end (RunResult.finished_unix_us)';
COMMENT ON COLUMN perfwatch.runs.wall_step_us IS 'microseconds, measured wall time of one step';
COMMENT ON COLUMN perfwatch.runs.roofline_predicted_step_us IS 'microseconds, roofline-predicted ideal step time; 0 when not computed';
COMMENT ON COLUMN perfwatch.runs.achieved_hbm_bw_tb_s IS 'TB/s, achieved aggregate HBM bandwidth of the slice';
COMMENT ON COLUMN perfwatch.runs.achieved_bw_fraction IS 'ratio 0..1, achieved / peak HBM bandwidth';
COMMENT ON COLUMN perfwatch.runs.hlo_text IS 'post-optimisation HLO text of the measured module (may be abbreviated)';
COMMENT ON COLUMN perfwatch.runs.trace_uri IS 'link to the kernel-level trace';
COMMENT ON COLUMN perfwatch.runs.hlo_uri IS 'link to the full serialized HLO';
COMMENT ON COLUMN perfwatch.runs.bisect_job_id IS 'bisect job the run was made for; empty otherwise';
COMMENT ON COLUMN perfwatch.runs.payload_sha256 IS 'sha256 of the RunResult payload bytes, to tell an identical redelivery from a conflicting one';
COMMENT ON COLUMN perfwatch.runs.kafka_partition IS 'perf.runs.v1 partition the run arrived on';
COMMENT ON COLUMN perfwatch.runs.kafka_offset IS 'perf.runs.v1 offset the run arrived at';
COMMENT ON COLUMN perfwatch.runs.ingested_at IS 'when the ingester stored the row';

CREATE TABLE perfwatch.samples (
    run_id          text NOT NULL,
    repeat_index    integer NOT NULL,
    metric          text NOT NULL,
    series_id       bigint NOT NULL REFERENCES perfwatch.series (series_id),
    value           double precision NOT NULL CHECK (value NOT IN ('NaN', 'Infinity', '-Infinity')),
    unit            text NOT NULL,
    measured_at     timestamptz NOT NULL,
    build_id        text NOT NULL,
    build_kind      text NOT NULL CHECK (build_kind IN ('nightly', 'rc', 'bisect', 'release')),
    compiler_cl_number bigint NOT NULL,
    chip_set        text NOT NULL,
    bisect_job_id   text NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, repeat_index, metric),
    FOREIGN KEY (run_id, repeat_index) REFERENCES perfwatch.runs (run_id, repeat_index) ON DELETE CASCADE
);
-- Grafana and the watcher: a series by time
CREATE INDEX samples_by_series_time ON perfwatch.samples (series_id, measured_at);
-- gate and baseliner: the points of a series on one build
CREATE INDEX samples_by_series_build ON perfwatch.samples (series_id, build_id);
-- bisector: the points of a bisect job
CREATE INDEX samples_by_bisect_job ON perfwatch.samples (bisect_job_id) WHERE bisect_job_id <> '';

COMMENT ON TABLE perfwatch.samples IS 'one row per metric of a run, i.e. one SeriesPoint (series.proto); natural key (run_id, repeat_index, metric); measured_at, build and chip_set are copies of the run for index-only series scans';
COMMENT ON COLUMN perfwatch.samples.metric IS 'metric text name, e.g. tpot_p50_ms';
COMMENT ON COLUMN perfwatch.samples.series_id IS 'the series this sample is a point of';
COMMENT ON COLUMN perfwatch.samples.value IS 'measured value in unit; finite (NaN and infinities are dead-lettered)';
COMMENT ON COLUMN perfwatch.samples.unit IS 'ms, tok/s/chip, ratio, usd/Mtok';
COMMENT ON COLUMN perfwatch.samples.measured_at IS 'the run''s finished_at';
COMMENT ON COLUMN perfwatch.samples.build_id IS 'the run''s compiler build id';
COMMENT ON COLUMN perfwatch.samples.build_kind IS 'nightly, rc, bisect or release';
COMMENT ON COLUMN perfwatch.samples.compiler_cl_number IS 'head CL of the build as an integer';
COMMENT ON COLUMN perfwatch.samples.chip_set IS 'the run''s chip set (baselines need >= 3 distinct)';
COMMENT ON COLUMN perfwatch.samples.bisect_job_id IS 'bisect job of the run; empty otherwise';

CREATE TABLE perfwatch.op_timings (
    run_id              text NOT NULL,
    repeat_index        integer NOT NULL,
    op_name             text NOT NULL,
    category            text NOT NULL DEFAULT '',
    hlo_kind            text NOT NULL DEFAULT '',
    exec_unit           text NOT NULL DEFAULT '',
    calls               integer NOT NULL CHECK (calls >= 0),
    us_per_step         double precision NOT NULL CHECK (us_per_step >= 0),
    hbm_bytes_per_step  double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, repeat_index, op_name),
    FOREIGN KEY (run_id, repeat_index) REFERENCES perfwatch.runs (run_id, repeat_index) ON DELETE CASCADE
);

COMMENT ON TABLE perfwatch.op_timings IS 'per-op profiler timings of a run (run.proto OpTiming); natural key (run_id, repeat_index, op_name); the attributor joins two runs on op_name';
COMMENT ON COLUMN perfwatch.op_timings.op_name IS 'HLO instruction name, e.g. fusion.1423';
COMMENT ON COLUMN perfwatch.op_timings.category IS 'what the op does, e.g. attention_softmax_fused';
COMMENT ON COLUMN perfwatch.op_timings.hlo_kind IS 'HLO op / fusion kind, e.g. kLoop';
COMMENT ON COLUMN perfwatch.op_timings.exec_unit IS 'execution unit: MXU, VPU, ICI, DMA; empty when unknown';
COMMENT ON COLUMN perfwatch.op_timings.calls IS 'calls per step';
COMMENT ON COLUMN perfwatch.op_timings.us_per_step IS 'microseconds per step, summed over calls';
COMMENT ON COLUMN perfwatch.op_timings.hbm_bytes_per_step IS 'bytes of HBM traffic per step; 0 when unknown';
