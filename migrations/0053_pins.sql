-- 0053_pins.sql: per-family version pinning (seed §8 follow-up; docs/gate.md
-- "Pins", docs/canary.md "Pins"). A gate waiver with pin set keeps the
-- family it names on release N−1 while every other family takes N: the
-- waiver row says to what (release, artifact) and who signed it off; the
-- canary records PINNED for the family's rollout instead of promoting it,
-- and reports the pin's expiry once (pin_expiries, claimed in the
-- transaction that writes its outbox row on perf.rollouts.v1).
ALTER TABLE perfwatch.waivers
    ADD COLUMN pin boolean NOT NULL DEFAULT false,
    ADD COLUMN pin_release text NOT NULL DEFAULT '',
    ADD COLUMN pin_artifact text NOT NULL DEFAULT '',
    ADD COLUMN pin_signed_off_by text NOT NULL DEFAULT '',
    ADD CONSTRAINT waivers_pin_complete CHECK (NOT pin OR (model <> '' AND pin_release <> '' AND pin_signed_off_by <> '' AND owner <> ''));
COMMENT ON COLUMN perfwatch.waivers.pin IS 'the family named by model stays on pin_release (N−1) while the others take this release';
COMMENT ON COLUMN perfwatch.waivers.pin_release IS 'pin: N−1, the release the family stays on';
COMMENT ON COLUMN perfwatch.waivers.pin_artifact IS 'pin: N−1''s pre-staged serving artifact ('''' = the canary''s baseline artifact of the family)';
COMMENT ON COLUMN perfwatch.waivers.pin_signed_off_by IS 'pin: the model team''s sign-off (required)';
CREATE INDEX waivers_pins ON perfwatch.waivers (release_id, model) WHERE pin;

ALTER TABLE perfwatch.canary_families
    ADD COLUMN pin_waiver_id text,
    ADD COLUMN pinned_release text,
    ADD COLUMN pinned_artifact text,
    ADD COLUMN pin_owner text,
    ADD COLUMN pin_signed_off_by text,
    ADD COLUMN pin_expires_at timestamptz,
    ADD COLUMN pinned_at timestamptz,
    ADD COLUMN pin_expired_at timestamptz,
    ADD CONSTRAINT canary_families_pin CHECK ((pinned_at IS NULL) = (pin_waiver_id IS NULL)
                                             AND (pin_expired_at IS NULL OR pinned_at IS NOT NULL));
COMMENT ON COLUMN perfwatch.canary_families.pinned_at IS 'when the canary recorded PINNED (the family was not promoted while the pin lasted)';
COMMENT ON COLUMN perfwatch.canary_families.pin_expired_at IS 'when the pin''s expiry was reported (PIN_EXPIRED on perf.rollouts.v1); the family decides again from then';

CREATE TABLE perfwatch.pin_expiries (
    release_id    text NOT NULL,
    waiver_id     text NOT NULL,
    family        text NOT NULL,
    expired_at    timestamptz NOT NULL,
    reported_at   timestamptz NOT NULL DEFAULT now(),
    rollouts      integer NOT NULL,
    PRIMARY KEY (release_id, waiver_id),
    FOREIGN KEY (release_id, waiver_id) REFERENCES perfwatch.waivers (release_id, waiver_id)
);
COMMENT ON TABLE perfwatch.pin_expiries IS 'one row per pin whose expiry the canary reported (error log, metric, PIN_EXPIRED on perf.rollouts.v1): written once with its outbox rows';
COMMENT ON COLUMN perfwatch.pin_expiries.rollouts IS 'canary rollouts of the family whose PINNED ended (0: the canary had not seen the family; one message with no rollout)';
