-- 0003_fleet_baselines.sql: fleet-change events, baselines and freezes.
--
-- The baseliner stores every FleetChangeEvent (fleet.proto) it consumes,
-- freezes the series the event selects (one freezes row per series and
-- event) and re-baselines them; every baseline version (baseline.proto) is
-- kept, and latest_baselines (0011) is the one the gate and Grafana read.
-- Redis caches only the latest version per series; this table is the truth.

CREATE TABLE perfwatch.fleet_changes (
    event_id         text PRIMARY KEY CHECK (event_id <> ''),
    occurred_at      timestamptz NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('recabling', 'firmware', 'harness', 'chip_set', 'host', 'runtime', 'other')),
    reason           text NOT NULL DEFAULT '',
    source           text NOT NULL DEFAULT '',
    platforms        text[] NOT NULL DEFAULT '{}',
    chip_sets        text[] NOT NULL DEFAULT '{}',
    cells            text[] NOT NULL DEFAULT '{}',
    firmware         text[] NOT NULL DEFAULT '{}',
    harness_versions text[] NOT NULL DEFAULT '{}',
    from_version     text NOT NULL DEFAULT '',
    to_version       text NOT NULL DEFAULT '',
    received_at      timestamptz NOT NULL DEFAULT now()
);
-- Grafana annotations and the watcher: changes in a time range
CREATE INDEX fleet_changes_by_time ON perfwatch.fleet_changes (occurred_at);

COMMENT ON TABLE perfwatch.fleet_changes IS 'one row per FleetChangeEvent (fleet.proto); natural key event_id; insert ON CONFLICT DO NOTHING. Selector arrays: empty = any; AND across arrays, OR within';
COMMENT ON COLUMN perfwatch.fleet_changes.event_id IS 'unique id of the change, e.g. fc-2026-06-15-0007';
COMMENT ON COLUMN perfwatch.fleet_changes.occurred_at IS 'when the change took effect in the fleet';
COMMENT ON COLUMN perfwatch.fleet_changes.kind IS 'recabling, firmware, harness, chip_set, host, runtime, other';
COMMENT ON COLUMN perfwatch.fleet_changes.reason IS 'human text';
COMMENT ON COLUMN perfwatch.fleet_changes.source IS 'who emitted the event';
COMMENT ON COLUMN perfwatch.fleet_changes.platforms IS 'platform selector (platform names)';
COMMENT ON COLUMN perfwatch.fleet_changes.chip_sets IS 'chip-set selector';
COMMENT ON COLUMN perfwatch.fleet_changes.cells IS 'cell selector';
COMMENT ON COLUMN perfwatch.fleet_changes.firmware IS 'firmware selector';
COMMENT ON COLUMN perfwatch.fleet_changes.harness_versions IS 'harness version selector';
COMMENT ON COLUMN perfwatch.fleet_changes.from_version IS 'version before a firmware/harness change';
COMMENT ON COLUMN perfwatch.fleet_changes.to_version IS 'version after a firmware/harness change';
COMMENT ON COLUMN perfwatch.fleet_changes.received_at IS 'when the baseliner stored it';

CREATE TABLE perfwatch.baselines (
    series_id               bigint NOT NULL REFERENCES perfwatch.series (series_id),
    version                 integer NOT NULL CHECK (version >= 1),
    state                   text NOT NULL CHECK (state IN ('baselining', 'active', 'frozen', 'quarantined')),
    hlo_fingerprint         text NOT NULL,
    median                  double precision NOT NULL,
    mad_n                   double precision NOT NULL CHECK (mad_n >= 0),
    band_lo                 double precision NOT NULL,
    band_hi                 double precision NOT NULL,
    sigma                   double precision NOT NULL CHECK (sigma >= 0),
    sigma_pct               double precision NOT NULL,
    platform_norm_sigma_pct double precision NOT NULL DEFAULT 0,
    n                       integer NOT NULL CHECK (n >= 0),
    days                    integer NOT NULL DEFAULT 0 CHECK (days >= 0),
    chip_sets               integer NOT NULL DEFAULT 0 CHECK (chip_sets >= 0),
    window_start            timestamptz,
    window_end              timestamptz,
    unit                    text NOT NULL,
    build_id                text NOT NULL DEFAULT '',
    freeze_reason           text NOT NULL DEFAULT '',
    freeze_event_id         text NOT NULL DEFAULT '',
    computed_at             timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (series_id, version),
    CHECK (band_lo <= band_hi),
    CHECK (window_end IS NULL OR window_start IS NULL OR window_end >= window_start)
);
-- the primary key serves "latest baseline per series" (ORDER BY version DESC LIMIT 1 / DISTINCT ON)
-- operators and Grafana: frozen and quarantined series
CREATE INDEX baselines_not_active ON perfwatch.baselines (state, series_id) WHERE state IN ('frozen', 'quarantined');

COMMENT ON TABLE perfwatch.baselines IS 'every baseline version of every series (baseline.proto); natural key (series_id, version); a re-baseline is a new version, a state change (baselining -> active -> frozen) updates its version in place, idempotently';
COMMENT ON COLUMN perfwatch.baselines.version IS '1, 2, ... per series';
COMMENT ON COLUMN perfwatch.baselines.state IS 'baselining (collecting), active (gating), frozen (fleet change), quarantined (sigma > 2x platform norm)';
COMMENT ON COLUMN perfwatch.baselines.hlo_fingerprint IS 'fingerprint the baseline belongs to (copy of the series'')';
COMMENT ON COLUMN perfwatch.baselines.median IS 'median of the window, in unit';
COMMENT ON COLUMN perfwatch.baselines.mad_n IS 'normalised MAD (1.4826 x MAD), in unit';
COMMENT ON COLUMN perfwatch.baselines.band_lo IS 'median - 3 x mad_n, in unit';
COMMENT ON COLUMN perfwatch.baselines.band_hi IS 'median + 3 x mad_n, in unit';
COMMENT ON COLUMN perfwatch.baselines.sigma IS 'sigma estimate of the 2-sigma filter, in unit';
COMMENT ON COLUMN perfwatch.baselines.sigma_pct IS 'percent, sigma / median x 100';
COMMENT ON COLUMN perfwatch.baselines.platform_norm_sigma_pct IS 'percent, the platform norm sigma the quarantine rule compares against';
COMMENT ON COLUMN perfwatch.baselines.n IS 'points in the window';
COMMENT ON COLUMN perfwatch.baselines.days IS 'distinct days in the window';
COMMENT ON COLUMN perfwatch.baselines.chip_sets IS 'distinct chip sets in the window';
COMMENT ON COLUMN perfwatch.baselines.window_start IS 'first point of the window';
COMMENT ON COLUMN perfwatch.baselines.window_end IS 'last point of the window';
COMMENT ON COLUMN perfwatch.baselines.unit IS 'unit of median, mad_n, band, sigma';
COMMENT ON COLUMN perfwatch.baselines.build_id IS 'build line measured, e.g. the current prod release';
COMMENT ON COLUMN perfwatch.baselines.freeze_reason IS 'why frozen or quarantined; empty when active';
COMMENT ON COLUMN perfwatch.baselines.freeze_event_id IS 'fleet change that froze it; empty otherwise';
COMMENT ON COLUMN perfwatch.baselines.computed_at IS 'when this version was computed (Baseline.computed_unix_us)';
COMMENT ON COLUMN perfwatch.baselines.updated_at IS 'last state change';

CREATE TABLE perfwatch.freezes (
    series_id          bigint NOT NULL REFERENCES perfwatch.series (series_id),
    event_id           text NOT NULL REFERENCES perfwatch.fleet_changes (event_id),
    frozen_at          timestamptz NOT NULL DEFAULT now(),
    frozen_version     integer,
    reason             text NOT NULL DEFAULT '',
    unfrozen_at        timestamptz,
    unfrozen_version   integer,
    PRIMARY KEY (series_id, event_id),
    CHECK (unfrozen_at IS NULL OR unfrozen_at >= frozen_at)
);
-- gate and baseliner: is this series frozen now
CREATE INDEX freezes_open ON perfwatch.freezes (series_id) WHERE unfrozen_at IS NULL;
-- which series did an event freeze
CREATE INDEX freezes_by_event ON perfwatch.freezes (event_id);

COMMENT ON TABLE perfwatch.freezes IS 'one row per (series, fleet-change event) freeze; natural key (series_id, event_id); open while unfrozen_at is null, closed when the new baseline is complete';
COMMENT ON COLUMN perfwatch.freezes.frozen_at IS 'when gating stopped';
COMMENT ON COLUMN perfwatch.freezes.frozen_version IS 'baseline version that was active when frozen; null when none';
COMMENT ON COLUMN perfwatch.freezes.reason IS 'human text, usually the event reason';
COMMENT ON COLUMN perfwatch.freezes.unfrozen_at IS 'when the re-baseline completed; null while frozen';
COMMENT ON COLUMN perfwatch.freezes.unfrozen_version IS 'baseline version that ended the freeze';
