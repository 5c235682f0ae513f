-- 0047_planner.sql: the planner (docs/planner.md): its inputs — the model
-- catalogue (spend_weights grown into one; spend_weights is kept in step for
-- the gate and the pager), platform capacity, the release calendar's sweeps,
-- the CLs with the ops they touch — and its output, one plan per sweep with
-- its items, inheritances and chip-hour lines.
--
-- Natural keys: catalogue.model, platform_capacity.platform,
-- sweeps.sweep_id, planner_cls.cl_number, plans.plan_id ("plan:" + sweep
-- id, one plan per sweep). A plan and its rows are written once, in one
-- transaction with its outbox row (ON CONFLICT DO NOTHING): a planner
-- restarted mid-plan writes and publishes the same plan once.

CREATE TABLE perfwatch.catalogue (
    model            text PRIMARY KEY CHECK (model <> '' AND strpos(model, '/') = 0),
    family           text NOT NULL DEFAULT '',
    tier             text NOT NULL CHECK (tier IN ('top', 'tail')),
    spend_share      double precision NOT NULL CHECK (spend_share >= 0 AND spend_share <= 1),
    platforms        text[] NOT NULL,
    configs          text[] NOT NULL,
    hlo_fingerprint  text NOT NULL CHECK (hlo_fingerprint <> ''),
    nops             integer NOT NULL DEFAULT 0,
    message          bytea NOT NULL,
    source           text NOT NULL DEFAULT '',
    adopted_at       timestamptz,
    updated_at       timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE perfwatch.catalogue IS 'the model catalogue (plan.proto CatalogueModel), one row per model; upserted from perf.catalogue.v1; spend_weights follows it';
COMMENT ON COLUMN perfwatch.catalogue.spend_share IS 'ratio 0..1 of fleet spend';
COMMENT ON COLUMN perfwatch.catalogue.platforms IS 'platforms the model serves on, primary first';
COMMENT ON COLUMN perfwatch.catalogue.hlo_fingerprint IS 'serving HLO fingerprint; a change re-checks inheritance at the next plan';
COMMENT ON COLUMN perfwatch.catalogue.message IS 'the packed CatalogueModel (per-op signature included)';
COMMENT ON COLUMN perfwatch.catalogue.adopted_at IS 'when this fingerprint was adopted (weekly auto-adoption, seed §3)';

CREATE TABLE perfwatch.platform_capacity (
    platform            text PRIMARY KEY,
    chip_hours_per_week double precision NOT NULL CHECK (chip_hours_per_week > 0),
    sigma_pct           double precision NOT NULL DEFAULT 0 CHECK (sigma_pct >= 0),
    source              text NOT NULL DEFAULT '',
    updated_at          timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE perfwatch.platform_capacity IS 'benchmark capacity per platform (plan.proto PlatformCapacity); upserted from perf.capacity.v1';
COMMENT ON COLUMN perfwatch.platform_capacity.sigma_pct IS 'percent; the platform noise norm, 0 = the planner''s default (0.4 TPU, 2 GPU)';

CREATE TABLE perfwatch.sweeps (
    sweep_id     text PRIMARY KEY CHECK (sweep_id <> ''),
    kind         text NOT NULL CHECK (kind IN ('nightly', 'rc')),
    release      text NOT NULL,
    cl_head      bigint NOT NULL CHECK (cl_head > 0),
    day          date NOT NULL,
    source       text NOT NULL DEFAULT '',
    received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sweeps_by_day ON perfwatch.sweeps (day, kind);
COMMENT ON TABLE perfwatch.sweeps IS 'the release calendar''s sweeps (plan.proto Sweep); a sweep without a plan is planned when its CLs are known';
COMMENT ON COLUMN perfwatch.sweeps.cl_head IS 'the CL number of the build measured';

CREATE TABLE perfwatch.planner_cls (
    cl_number      bigint PRIMARY KEY CHECK (cl_number > 0),
    op_costs       bytea,
    nop_costs      integer NOT NULL DEFAULT 0,
    perf_relevant  boolean NOT NULL DEFAULT false,
    nbenchmarks    integer NOT NULL DEFAULT 0,
    checked        boolean NOT NULL DEFAULT false,
    checked_at     timestamptz
);
CREATE INDEX planner_cls_touching ON perfwatch.planner_cls (cl_number) WHERE nop_costs > 0;
CREATE INDEX planner_cls_unchecked ON perfwatch.planner_cls (cl_number) WHERE NOT checked;
COMMENT ON TABLE perfwatch.planner_cls IS 'every CL the planner read from perf.compiler-cls.v1, with its op costs (the packed CompilerCl) and the static check''s result';
COMMENT ON COLUMN perfwatch.planner_cls.op_costs IS 'the packed CompilerCl as received; NULL when it touches no op';
COMMENT ON COLUMN perfwatch.planner_cls.nbenchmarks IS 'benchmarks the static check flagged it for';
COMMENT ON COLUMN perfwatch.planner_cls.checked IS 'the static check ran (against the catalogue read to its end) and the CL was republished; true at once for a CL without op costs';

CREATE TABLE perfwatch.plans (
    plan_id               text PRIMARY KEY,
    sweep_id              text NOT NULL UNIQUE REFERENCES perfwatch.sweeps (sweep_id),
    kind                  text NOT NULL CHECK (kind IN ('nightly', 'rc')),
    release               text NOT NULL,
    cl_head               bigint NOT NULL,
    day                   date NOT NULL,
    chip_hours            double precision NOT NULL,
    naive_chip_hours_week double precision NOT NULL,
    spend_coverage        double precision NOT NULL,
    spend_measured        double precision NOT NULL,
    spend_inherited       double precision NOT NULL,
    t0_candidates         integer NOT NULL DEFAULT 0,
    t0_pruned             integer NOT NULL DEFAULT 0,
    t1_models             integer NOT NULL DEFAULT 0,
    clusters              integer NOT NULL DEFAULT 0,
    models                integer NOT NULL DEFAULT 0,
    plan_ms               double precision NOT NULL DEFAULT 0,
    created_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plans_by_day ON perfwatch.plans (day, kind);
COMMENT ON TABLE perfwatch.plans IS 'one plan per sweep (plan.proto Plan), written once with its outbox row';
COMMENT ON COLUMN perfwatch.plans.spend_coverage IS 'ratio 0..1 of fleet spend measured on the plan or inherited from a measured representative';
COMMENT ON COLUMN perfwatch.plans.naive_chip_hours_week IS 'chip-hours: the full matrix at 5 repeats, 15 min, 8 sweeps a week';
COMMENT ON COLUMN perfwatch.plans.plan_ms IS 'milliseconds pw_plan_make took';

CREATE TABLE perfwatch.plan_items (
    plan_id         text NOT NULL REFERENCES perfwatch.plans (plan_id),
    model           text NOT NULL,
    platform        text NOT NULL,
    config          text NOT NULL,
    repeats         integer NOT NULL CHECK (repeats > 0),
    tier            text NOT NULL CHECK (tier IN ('T0', 'T1', 'T2', 'tail')),
    top             boolean NOT NULL DEFAULT false,
    mde_pct         double precision NOT NULL,
    sigma_pct       double precision NOT NULL,
    hlo_fingerprint text NOT NULL,
    PRIMARY KEY (plan_id, model, platform, config)
);
CREATE INDEX plan_items_by_model ON perfwatch.plan_items (model, platform, config);
COMMENT ON TABLE perfwatch.plan_items IS 'what a plan runs: model x platform x config x repeats, by tier';
COMMENT ON COLUMN perfwatch.plan_items.mde_pct IS 'percent: the effect the repeats detect at power 0.9';

CREATE TABLE perfwatch.plan_inheritances (
    plan_id                    text NOT NULL REFERENCES perfwatch.plans (plan_id),
    model                      text NOT NULL,
    representative             text NOT NULL,
    similarity                 double precision NOT NULL CHECK (similarity >= 0 AND similarity <= 1),
    hlo_fingerprint            text NOT NULL,
    representative_fingerprint text NOT NULL,
    representative_measured    boolean NOT NULL,
    PRIMARY KEY (plan_id, model)
);
CREATE INDEX plan_inheritances_by_model ON perfwatch.plan_inheritances (model);
COMMENT ON TABLE perfwatch.plan_inheritances IS 'models that take a representative''s verdict instead of running (signature similarity >= planner.cluster.similarity)';

CREATE TABLE perfwatch.plan_lines (
    plan_id            text NOT NULL REFERENCES perfwatch.plans (plan_id),
    tier               text NOT NULL CHECK (tier IN ('T0', 'T1', 'T2', 'tail', 'reserve')),
    chip_hours         double precision NOT NULL,
    planned_chip_hours double precision NOT NULL,
    points             integer NOT NULL DEFAULT 0,
    repeats            integer NOT NULL DEFAULT 0,
    models             integer NOT NULL DEFAULT 0,
    deferred           integer NOT NULL DEFAULT 0,
    PRIMARY KEY (plan_id, tier)
);
COMMENT ON TABLE perfwatch.plan_lines IS 'the chip-hour line of each tier of a plan (seed §5''s budget lines)';
COMMENT ON COLUMN perfwatch.plan_lines.chip_hours IS 'chip-hours the plan runs (the reserve: held for the week)';
COMMENT ON COLUMN perfwatch.plan_lines.planned_chip_hours IS 'chip-hours before pruning (T0)';
