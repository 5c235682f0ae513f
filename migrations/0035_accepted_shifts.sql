-- 0035_accepted_shifts.sql: accepted shifts (issue 17).
--
-- A level shift that has held (the watcher's changepoint, still shifted
-- `baseliner.accept_after_nightlies` nightlies on), that a shipped release
-- waived, or whose page was triaged a true regression is accepted: the
-- baseliner freezes the series as it does for a fleet change and restarts
-- its window from the changepoint's first shifted point, so that the gate
-- compares later releases against the shifted level instead of blocking
-- every one of them on a shift already shipped. The freeze's event_id is
-- the acceptance's accept_id, which names no fleet change: the foreign key
-- of freezes to fleet_changes goes, and a freeze's cause says which it is.
CREATE TABLE perfwatch.shift_acceptances (
    series_id       bigint NOT NULL REFERENCES perfwatch.series (series_id),
    reason          text NOT NULL CHECK (reason IN ('changepoint_held', 'waiver', 'triaged_true')),
    source_id       text NOT NULL,
    accept_id       text NOT NULL CHECK (length(accept_id) BETWEEN 1 AND 63),
    status          text NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'accepted', 'fixed', 'withdrawn', 'superseded')),
    shift_at        timestamptz NOT NULL,
    level_before    double precision NOT NULL,
    level_after     double precision NOT NULL,
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    accepted_at     timestamptz,
    accepted_upto   timestamptz,
    nightlies_held  integer,
    old_version     integer,
    old_level       double precision,
    new_version     integer,
    new_level       double precision,
    done_at         timestamptz,
    PRIMARY KEY (series_id, reason, source_id),
    CHECK (status <> 'accepted' OR (accepted_at IS NOT NULL AND accepted_upto IS NOT NULL))
);
-- the baseliner's load: the series' pending shift; the freeze's time by its id
CREATE INDEX shift_acceptances_pending ON perfwatch.shift_acceptances (series_id) WHERE status = 'pending';
CREATE INDEX shift_acceptances_by_accept ON perfwatch.shift_acceptances (series_id, accept_id);
COMMENT ON TABLE perfwatch.shift_acceptances IS 'level shifts the baseliner tracks until they are accepted (a new baseline from the shifted level), fixed or withdrawn; one row per (series, reason, source)';
COMMENT ON COLUMN perfwatch.shift_acceptances.reason IS 'changepoint_held (a watcher changepoint still shifted accept_after_nightlies nightlies on), waiver (a gate verdict''s WAIVED series result), triaged_true (a page triaged a true regression)';
COMMENT ON COLUMN perfwatch.shift_acceptances.source_id IS 'the changepoint_id, waiver_id or page_id that asked for it';
COMMENT ON COLUMN perfwatch.shift_acceptances.accept_id IS 'the event_id of the freeze it makes (acc-<16 hex>: one per run configuration and first shifted build, shared by its metrics and its re-baseline job)';
COMMENT ON COLUMN perfwatch.shift_acceptances.status IS 'pending until enough nightlies follow the shift; then accepted (still shifted) or fixed (back at level_before); withdrawn when the watcher withdrew the changepoint; superseded when a re-baseline (a fleet change''s) already started after the shift';
COMMENT ON COLUMN perfwatch.shift_acceptances.shift_at IS 'measured time of the first shifted point: the new window starts here';
COMMENT ON COLUMN perfwatch.shift_acceptances.accepted_upto IS 'newest measurement folded in when accepted: points up to it that were kept out against the old baseline belong to the new window';
COMMENT ON COLUMN perfwatch.shift_acceptances.nightlies_held IS 'nightlies measured at or after shift_at when accepted';
COMMENT ON COLUMN perfwatch.shift_acceptances.old_level IS 'median of the baseline version the acceptance froze (old_version); null when the series had none';
COMMENT ON COLUMN perfwatch.shift_acceptances.new_level IS 'median of the version that ended the freeze (new_version), set with done_at';

ALTER TABLE perfwatch.freezes DROP CONSTRAINT freezes_event_id_fkey;
ALTER TABLE perfwatch.freezes
    ADD COLUMN cause text NOT NULL DEFAULT 'fleet_change' CHECK (cause IN ('fleet_change', 'accepted_shift'));
COMMENT ON COLUMN perfwatch.freezes.cause IS 'fleet_change: event_id is a perfwatch.fleet_changes row; accepted_shift: event_id is a perfwatch.shift_acceptances accept_id';

-- the same columns; an accepted shift's freeze shows kind accepted_shift
CREATE OR REPLACE VIEW perfwatch.active_freezes AS
SELECT f.series_id, s.series_key, f.event_id, coalesce(c.kind, f.cause) AS kind,
       coalesce(c.reason, f.reason) AS reason, f.frozen_at, f.frozen_version
  FROM perfwatch.freezes f
  JOIN perfwatch.series s USING (series_id)
  LEFT JOIN perfwatch.fleet_changes c ON c.event_id = f.event_id AND f.cause = 'fleet_change'
 WHERE f.unfrozen_at IS NULL;
