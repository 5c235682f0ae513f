-- 0049_gate_inheritance.sql: the gate's family verdict records the
-- inheritance the plan of the candidate's sweep holds for the family
-- (perfwatch.plan_inheritances, docs/planner.md "Clustering"): a model that
-- inherits a representative's verdict instead of running is reported with
-- it ("rank-x inherits from chat-8b, similarity 0.98"), and its verdict is
-- the representative's when it has no candidate run of its own
-- (docs/gate.md, "Inherited verdicts").
ALTER TABLE perfwatch.gate_family_results
    ADD COLUMN inherits_from      text NOT NULL DEFAULT '',
    ADD COLUMN inherit_similarity double precision
        CHECK (inherit_similarity IS NULL OR (inherit_similarity >= 0 AND inherit_similarity <= 1)),
    ADD COLUMN verdict_inherited  boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN perfwatch.gate_family_results.inherits_from IS
    'the representative whose verdict the plan says this model inherits; empty when none';
COMMENT ON COLUMN perfwatch.gate_family_results.inherit_similarity IS
    'ratio 0..1, the signature similarity the plan recorded; NULL when no inheritance';
COMMENT ON COLUMN perfwatch.gate_family_results.verdict_inherited IS
    'the verdict is the representative''s: no candidate run of the family''s own';
