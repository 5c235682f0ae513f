-- 0052_canary.sql: the production canary (docs/canary.md, "The canary
-- service"): every live window it read from perf.canary.v1, the state of
-- each (rollout, family, metric) sequence, and one decision per (rollout,
-- family).
--
-- Natural keys: canary_windows (rollout_id, family, metric, window_start) —
-- a redelivered window is written once; canary_metrics (rollout_id, family,
-- metric); canary_families (rollout_id, family). A final decision (PROMOTE,
-- ROLLBACK, or HOLD with inconclusive after the horizon) is recorded once,
-- with its outbox row on perf.rollouts.v1, in the transaction of the window
-- that decided it. The sequences are a pure function of the stored windows
-- in window order: pw-canary rebuilds them from this table after a restart.

CREATE TABLE perfwatch.canary_families (
    rollout_id          text NOT NULL CHECK (rollout_id <> '' AND strpos(rollout_id, '/') = 0),
    family              text NOT NULL CHECK (family <> '' AND strpos(family, '/') = 0),
    family_kind         text NOT NULL CHECK (family_kind IN ('tpu', 'gpu')),
    release             text NOT NULL,
    artifact            text NOT NULL DEFAULT '',
    previous_release    text NOT NULL,
    previous_artifact   text NOT NULL,
    alpha               double precision NOT NULL,
    mde_pct             double precision NOT NULL,
    tolerance_pct       double precision NOT NULL,
    pilot_windows       integer NOT NULL,
    horizon_s           bigint NOT NULL CHECK (horizon_s > 0),
    first_window_start  timestamptz NOT NULL,
    last_window_end     timestamptz NOT NULL,
    windows             integer NOT NULL DEFAULT 0,
    decision            text NOT NULL DEFAULT 'HOLD' CHECK (decision IN ('PROMOTE', 'HOLD', 'ROLLBACK')),
    inconclusive        boolean NOT NULL DEFAULT false,
    final               boolean NOT NULL DEFAULT false,
    metric              text CHECK (metric IN ('tpot', 'ttft', 'goodput')),
    effect_pct          double precision,
    lo_pct              double precision,
    hi_pct              double precision,
    decision_windows    integer,
    decided_window_start timestamptz,
    rollback_artifact   text,
    decided_at          timestamptz,
    PRIMARY KEY (rollout_id, family),
    CHECK (NOT inconclusive OR decision = 'HOLD'),
    CHECK (final = (decision <> 'HOLD' OR inconclusive)),
    CHECK ((decision = 'ROLLBACK') = (rollback_artifact IS NOT NULL))
);
COMMENT ON TABLE perfwatch.canary_families IS 'one row per (rollout, family) the canary saw: its releases and artifacts, the options its sequences run with, and its decision (final once PROMOTE, ROLLBACK or inconclusive)';
COMMENT ON COLUMN perfwatch.canary_families.mde_pct IS 'percent: NO_REGRESSION bound of every metric (by family, else by family kind)';
COMMENT ON COLUMN perfwatch.canary_families.horizon_s IS 'seconds: HOLD is final and inconclusive once the windows span this';
COMMENT ON COLUMN perfwatch.canary_families.tolerance_pct IS 'percent: REGRESSION bound';
COMMENT ON COLUMN perfwatch.canary_families.last_window_end IS 'end of the latest window stored (its start + its length)';
COMMENT ON COLUMN perfwatch.canary_families.inconclusive IS 'the horizon passed with neither PROMOTE nor ROLLBACK: HOLD, final';
COMMENT ON COLUMN perfwatch.canary_families.metric IS 'the metric that decided (ROLLBACK: the regressed one; PROMOTE: the last to clear)';
COMMENT ON COLUMN perfwatch.canary_families.effect_pct IS 'percent: 100·(canary/baseline − 1) of that metric at the decision; lo_pct, hi_pct its confidence sequence';
COMMENT ON COLUMN perfwatch.canary_families.rollback_artifact IS 'ROLLBACK: the pre-staged N−1 artifact the serving pointer flips to';

CREATE TABLE perfwatch.canary_metrics (
    rollout_id          text NOT NULL,
    family              text NOT NULL,
    metric              text NOT NULL CHECK (metric IN ('tpot', 'ttft', 'goodput')),
    windows             integer NOT NULL,
    last_window_start   timestamptz NOT NULL,
    cs_decision         text NOT NULL CHECK (cs_decision IN ('INSUFFICIENT_DATA', 'CONTINUE', 'REGRESSION', 'NO_REGRESSION')),
    verdict             text CHECK (verdict IN ('REGRESSION', 'NO_REGRESSION')),
    verdict_windows     integer,
    verdict_window_start timestamptz,
    effect_pct          double precision,
    lo_pct              double precision,
    hi_pct              double precision,
    PRIMARY KEY (rollout_id, family, metric),
    FOREIGN KEY (rollout_id, family) REFERENCES perfwatch.canary_families (rollout_id, family)
);
COMMENT ON TABLE perfwatch.canary_metrics IS 'the latest state of each (rollout, family, metric) confidence sequence (pw_cs), rewritten with every window';
COMMENT ON COLUMN perfwatch.canary_metrics.cs_decision IS 'what the sequence says after the latest window';
COMMENT ON COLUMN perfwatch.canary_metrics.verdict IS 'the first REGRESSION or NO_REGRESSION it said (kept: the decision acts on the first)';
COMMENT ON COLUMN perfwatch.canary_metrics.effect_pct IS 'percent: the estimate after the latest window; lo_pct, hi_pct its interval (NULL during the pilot)';

CREATE TABLE perfwatch.canary_windows (
    rollout_id          text NOT NULL,
    family              text NOT NULL,
    metric              text NOT NULL CHECK (metric IN ('tpot', 'ttft', 'goodput')),
    window_start        timestamptz NOT NULL,
    window_s            integer NOT NULL CHECK (window_s > 0),
    canary_value        double precision NOT NULL CHECK (canary_value > 0),
    baseline_value      double precision NOT NULL CHECK (baseline_value > 0),
    canary_replicas     integer NOT NULL,
    baseline_replicas   integer NOT NULL,
    canary_fraction     double precision NOT NULL,
    seq                 integer NOT NULL,
    source              text NOT NULL DEFAULT '',
    received_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (rollout_id, family, metric, window_start),
    UNIQUE (rollout_id, family, seq),
    FOREIGN KEY (rollout_id, family) REFERENCES perfwatch.canary_families (rollout_id, family)
);
COMMENT ON TABLE perfwatch.canary_windows IS 'every window the canary took from perf.canary.v1 (canary.proto CanaryWindow), once; replayed in window order to rebuild the sequences';
COMMENT ON COLUMN perfwatch.canary_windows.canary_value IS 'median of the window on the canary arm (ms for tpot, ttft; tokens/s/chip for goodput)';
COMMENT ON COLUMN perfwatch.canary_windows.seq IS 'the order the family''s windows were taken in, 1, 2, ...: the replay order';
COMMENT ON COLUMN perfwatch.canary_windows.canary_fraction IS 'ratio 0..1 of the family''s replicas on the canary';
