-- 0004_gate.sql: the release gate: spend weights, evaluations, per-family and
-- per-series results, waivers and expected-win registrations.
--
-- The gate stores each GateRequest (gate.proto) as a gate_evaluations row
-- keyed by (release_id, evaluation), with its waivers, expected wins and tier
-- repeats, computes the verdict and writes the results in the same
-- transaction that marks the evaluation done; a redelivered request finds
-- the row done and republishes the stored verdict instead of re-deciding.
-- spend_weights is the model -> fleet-spend table the policy of §8 weighs by.

CREATE TABLE perfwatch.spend_weights (
    model        text PRIMARY KEY,
    spend_share  double precision NOT NULL CHECK (spend_share >= 0 AND spend_share <= 1),
    tier         text NOT NULL CHECK (tier IN ('top', 'tail')),
    source       text NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE perfwatch.spend_weights IS 'share of fleet spend and tier per model family; natural key model; upsert ON CONFLICT (model) DO UPDATE';
COMMENT ON COLUMN perfwatch.spend_weights.model IS 'model family, e.g. chat-8b';
COMMENT ON COLUMN perfwatch.spend_weights.spend_share IS 'ratio 0..1 of fleet spend (all rows sum to <= 1)';
COMMENT ON COLUMN perfwatch.spend_weights.tier IS 'top (top-20 by spend: MDE 1%, pages) or tail (MDE 3%, trend queue)';
COMMENT ON COLUMN perfwatch.spend_weights.source IS 'where the share came from, e.g. finance-2026-q2';
COMMENT ON COLUMN perfwatch.spend_weights.updated_at IS 'last change';

CREATE TABLE perfwatch.gate_evaluations (
    release_id         text NOT NULL CHECK (release_id <> ''),
    evaluation         integer NOT NULL CHECK (evaluation >= 1),
    candidate_build_id text NOT NULL,
    candidate_cl       text NOT NULL DEFAULT '',
    baseline_release   text NOT NULL,
    families           text[] NOT NULL DEFAULT '{}',
    fdr_q              double precision NOT NULL CHECK (fdr_q > 0 AND fdr_q < 1),
    requested_at       timestamptz NOT NULL,
    deadline           timestamptz,
    status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
    verdict            text CHECK (verdict IN ('blocking', 'p1', 'pass', 'validated_win', 'frozen', 'quarantined',
                                               'insufficient_data', 'investigate', 'trend', 'waived')),
    tests              integer NOT NULL DEFAULT 0 CHECK (tests >= 0),
    fleet_weighted_impact_pct double precision NOT NULL DEFAULT 0,
    summary            text NOT NULL DEFAULT '',
    evaluated_at       timestamptz,
    PRIMARY KEY (release_id, evaluation),
    CHECK (status <> 'done' OR (verdict IS NOT NULL AND evaluated_at IS NOT NULL))
);
-- Grafana: recent gate verdicts
CREATE INDEX gate_evaluations_by_requested ON perfwatch.gate_evaluations (requested_at);

COMMENT ON TABLE perfwatch.gate_evaluations IS 'one row per GateRequest evaluation; natural key (release_id, evaluation); insert ON CONFLICT DO NOTHING, then finish it by setting status done with the GateVerdict fields';
COMMENT ON COLUMN perfwatch.gate_evaluations.release_id IS 'release under gate, e.g. xla-rc-2026-06-17';
COMMENT ON COLUMN perfwatch.gate_evaluations.evaluation IS 'evaluation attempt, 1-based';
COMMENT ON COLUMN perfwatch.gate_evaluations.candidate_build_id IS 'candidate build id';
COMMENT ON COLUMN perfwatch.gate_evaluations.candidate_cl IS 'head CL of the candidate';
COMMENT ON COLUMN perfwatch.gate_evaluations.baseline_release IS 'current prod release the baselines are on';
COMMENT ON COLUMN perfwatch.gate_evaluations.families IS 'model families gated; empty = every family with spend weight';
COMMENT ON COLUMN perfwatch.gate_evaluations.fdr_q IS 'Benjamini-Hochberg level, e.g. 0.05';
COMMENT ON COLUMN perfwatch.gate_evaluations.requested_at IS 'when release tooling asked';
COMMENT ON COLUMN perfwatch.gate_evaluations.deadline IS 'verdict needed by (RC cut + 24 h)';
COMMENT ON COLUMN perfwatch.gate_evaluations.status IS 'pending (waiting for candidate points), done, failed';
COMMENT ON COLUMN perfwatch.gate_evaluations.verdict IS 'overall verdict once done';
COMMENT ON COLUMN perfwatch.gate_evaluations.tests IS 'size of the BH family';
COMMENT ON COLUMN perfwatch.gate_evaluations.fleet_weighted_impact_pct IS 'percent, spend-weighted aggregate regression over all families';
COMMENT ON COLUMN perfwatch.gate_evaluations.summary IS 'one line for humans';
COMMENT ON COLUMN perfwatch.gate_evaluations.evaluated_at IS 'when the verdict was computed';

CREATE TABLE perfwatch.gate_tier_repeats (
    release_id  text NOT NULL,
    evaluation  integer NOT NULL,
    tier        text NOT NULL CHECK (tier IN ('top', 'tail')),
    n           integer NOT NULL CHECK (n >= 1),
    mde_pct     double precision NOT NULL CHECK (mde_pct > 0),
    PRIMARY KEY (release_id, evaluation, tier),
    FOREIGN KEY (release_id, evaluation) REFERENCES perfwatch.gate_evaluations (release_id, evaluation) ON DELETE CASCADE
);
COMMENT ON TABLE perfwatch.gate_tier_repeats IS 'n and MDE per tier of one evaluation (GateRequest.tiers); natural key (release_id, evaluation, tier)';
COMMENT ON COLUMN perfwatch.gate_tier_repeats.n IS 'candidate repeats per series';
COMMENT ON COLUMN perfwatch.gate_tier_repeats.mde_pct IS 'percent, minimum detectable effect of the tier';

CREATE TABLE perfwatch.gate_family_results (
    release_id                text NOT NULL,
    evaluation                integer NOT NULL,
    family                    text NOT NULL,
    tier                      text NOT NULL CHECK (tier IN ('top', 'tail')),
    verdict                   text NOT NULL CHECK (verdict IN ('blocking', 'p1', 'pass', 'validated_win', 'frozen', 'quarantined',
                                                               'insufficient_data', 'investigate', 'trend', 'waived')),
    spend_share               double precision NOT NULL DEFAULT 0,
    spend_weighted_impact_pct double precision NOT NULL DEFAULT 0,
    gated_series              integer NOT NULL DEFAULT 0,
    regressed_series          integer NOT NULL DEFAULT 0,
    PRIMARY KEY (release_id, evaluation, family),
    FOREIGN KEY (release_id, evaluation) REFERENCES perfwatch.gate_evaluations (release_id, evaluation) ON DELETE CASCADE
);
COMMENT ON TABLE perfwatch.gate_family_results IS 'verdict of one model family on one evaluation (GateVerdict.families); natural key (release_id, evaluation, family)';
COMMENT ON COLUMN perfwatch.gate_family_results.spend_share IS 'ratio 0..1, family share of fleet spend at evaluation time';
COMMENT ON COLUMN perfwatch.gate_family_results.spend_weighted_impact_pct IS 'percent of fleet spend affected';
COMMENT ON COLUMN perfwatch.gate_family_results.gated_series IS 'series tested';
COMMENT ON COLUMN perfwatch.gate_family_results.regressed_series IS 'series with a significant, effect-passing regression';

CREATE TABLE perfwatch.gate_series_results (
    release_id         text NOT NULL,
    evaluation         integer NOT NULL,
    series_id          bigint NOT NULL REFERENCES perfwatch.series (series_id),
    family             text NOT NULL,
    tier               text NOT NULL CHECK (tier IN ('top', 'tail')),
    baseline_version   integer,
    baseline_median    double precision,
    baseline_mad_n     double precision,
    baseline_n         integer NOT NULL DEFAULT 0,
    candidate_median   double precision,
    candidate_n        integer NOT NULL DEFAULT 0,
    unit               text NOT NULL,
    u                  double precision,
    p                  double precision CHECK (p IS NULL OR (p >= 0 AND p <= 1)),
    welch_t            double precision,
    welch_p            double precision CHECK (welch_p IS NULL OR (welch_p >= 0 AND welch_p <= 1)),
    q                  double precision CHECK (q IS NULL OR (q >= 0 AND q <= 1)),
    delta_pct          double precision,
    expected_delta_pct double precision NOT NULL DEFAULT 0,
    mde_pct            double precision NOT NULL,
    two_sigma_pct      double precision,
    effect_passed      boolean NOT NULL DEFAULT false,
    direction          text CHECK (direction IN ('regression', 'improvement')),
    verdict            text NOT NULL CHECK (verdict IN ('blocking', 'p1', 'pass', 'validated_win', 'frozen', 'quarantined',
                                                        'insufficient_data', 'investigate', 'trend', 'waived')),
    waiver_id          text NOT NULL DEFAULT '',
    alert_id           text NOT NULL DEFAULT '',
    PRIMARY KEY (release_id, evaluation, series_id),
    FOREIGN KEY (release_id, evaluation) REFERENCES perfwatch.gate_evaluations (release_id, evaluation) ON DELETE CASCADE
);
-- Grafana: the gate history of one series
CREATE INDEX gate_series_results_by_series ON perfwatch.gate_series_results (series_id);

COMMENT ON TABLE perfwatch.gate_series_results IS 'one line of artifact 7 (GateSeriesResult); natural key (release_id, evaluation, series_id); nulls where the statistic was not computed (frozen, insufficient data)';
COMMENT ON COLUMN perfwatch.gate_series_results.baseline_version IS 'baseline version compared against';
COMMENT ON COLUMN perfwatch.gate_series_results.baseline_median IS 'in unit';
COMMENT ON COLUMN perfwatch.gate_series_results.baseline_mad_n IS 'normalised MAD, in unit';
COMMENT ON COLUMN perfwatch.gate_series_results.baseline_n IS 'points in the baseline';
COMMENT ON COLUMN perfwatch.gate_series_results.candidate_median IS 'in unit';
COMMENT ON COLUMN perfwatch.gate_series_results.candidate_n IS 'candidate repeats';
COMMENT ON COLUMN perfwatch.gate_series_results.u IS 'Mann-Whitney U statistic';
COMMENT ON COLUMN perfwatch.gate_series_results.p IS 'Mann-Whitney two-sided p-value';
COMMENT ON COLUMN perfwatch.gate_series_results.welch_t IS 'Welch t statistic';
COMMENT ON COLUMN perfwatch.gate_series_results.welch_p IS 'Welch two-sided p-value';
COMMENT ON COLUMN perfwatch.gate_series_results.q IS 'Benjamini-Hochberg q over every gated test of the release';
COMMENT ON COLUMN perfwatch.gate_series_results.delta_pct IS 'percent, (candidate - baseline) / baseline x 100';
COMMENT ON COLUMN perfwatch.gate_series_results.expected_delta_pct IS 'percent, registered expected delta (0 when none)';
COMMENT ON COLUMN perfwatch.gate_series_results.mde_pct IS 'percent, tier MDE';
COMMENT ON COLUMN perfwatch.gate_series_results.two_sigma_pct IS 'percent, 2 sigma / baseline median x 100';
COMMENT ON COLUMN perfwatch.gate_series_results.effect_passed IS '|delta - expected| > max(mde_pct, two_sigma_pct)';
COMMENT ON COLUMN perfwatch.gate_series_results.direction IS 'regression or improvement when significant; null otherwise';
COMMENT ON COLUMN perfwatch.gate_series_results.verdict IS 'series verdict after policy';
COMMENT ON COLUMN perfwatch.gate_series_results.waiver_id IS 'waiver applied when verdict is waived';
COMMENT ON COLUMN perfwatch.gate_series_results.alert_id IS 'alert raised for the series; empty when none';

CREATE TABLE perfwatch.waivers (
    waiver_id    text PRIMARY KEY CHECK (waiver_id <> ''),
    release_id   text NOT NULL DEFAULT '',
    model        text NOT NULL DEFAULT '',
    platform     text NOT NULL DEFAULT '',
    config       text NOT NULL DEFAULT '',
    metric       text NOT NULL DEFAULT '',
    owner        text NOT NULL CHECK (owner <> ''),
    approved_by  text NOT NULL DEFAULT '',
    reason       text NOT NULL CHECK (reason <> ''),
    expires_at   timestamptz NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
-- gate: waivers in force now
CREATE INDEX waivers_by_expiry ON perfwatch.waivers (expires_at);

COMMENT ON TABLE perfwatch.waivers IS 'narrow, auditable gate bypasses (GateRequest.waivers); natural key waiver_id; insert ON CONFLICT DO NOTHING. Empty selector = any';
COMMENT ON COLUMN perfwatch.waivers.release_id IS 'release the waiver arrived with; empty when it applies to any release until expiry';
COMMENT ON COLUMN perfwatch.waivers.model IS 'model family selector';
COMMENT ON COLUMN perfwatch.waivers.platform IS 'platform selector';
COMMENT ON COLUMN perfwatch.waivers.config IS 'config selector';
COMMENT ON COLUMN perfwatch.waivers.metric IS 'metric selector';
COMMENT ON COLUMN perfwatch.waivers.owner IS 'who owns the waiver and its removal';
COMMENT ON COLUMN perfwatch.waivers.approved_by IS 'model-team sign-off';
COMMENT ON COLUMN perfwatch.waivers.reason IS 'why';
COMMENT ON COLUMN perfwatch.waivers.expires_at IS 'a waiver past expiry does not apply';
COMMENT ON COLUMN perfwatch.waivers.created_at IS 'when stored';

CREATE TABLE perfwatch.expected_wins (
    release_id         text NOT NULL,
    series_key         text NOT NULL,
    expected_delta_pct double precision NOT NULL,
    registered_by      text NOT NULL DEFAULT '',
    cl                 text NOT NULL DEFAULT '',
    note               text NOT NULL DEFAULT '',
    registered_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (release_id, series_key)
);
COMMENT ON TABLE perfwatch.expected_wins IS 'registered expected deltas (GateRequest.expected_wins); natural key (release_id, series_key); the gate tests observed - expected against zero. series_key is text, not a foreign key: a win may be registered before the series has a point';
COMMENT ON COLUMN perfwatch.expected_wins.series_key IS 'canonical series key';
COMMENT ON COLUMN perfwatch.expected_wins.expected_delta_pct IS 'percent, signed intended change of the metric value';
COMMENT ON COLUMN perfwatch.expected_wins.registered_by IS 'owner of the registration';
COMMENT ON COLUMN perfwatch.expected_wins.cl IS 'CL that delivers the win';
COMMENT ON COLUMN perfwatch.expected_wins.note IS 'free text';
COMMENT ON COLUMN perfwatch.expected_wins.registered_at IS 'when stored';
