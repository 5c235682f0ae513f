-- 0022_compiler_cls.sql: the compiler's CL history (compiler.proto CompilerCl).
--
-- The bisector consumes perf.compiler-cls.v1 (compacted, keyed by CL) into
-- this table and reads it to list a range's CLs, the cost model's
-- perf-relevant flags (its build candidates) and roll membership (the roll
-- lane). Upserted by cl_number: the latest message for a CL wins, as on the
-- compacted topic. docs/compiler-cls.md is the contract.

CREATE TABLE perfwatch.compiler_cls (
    cl_number         bigint PRIMARY KEY CHECK (cl_number > 0),
    cl                text NOT NULL UNIQUE CHECK (cl <> ''),
    title             text NOT NULL DEFAULT '',
    author            text NOT NULL DEFAULT '',
    team              text NOT NULL DEFAULT '',
    perf_relevant     boolean NOT NULL DEFAULT false,
    perf_benchmarks   text[] NOT NULL DEFAULT '{}',
    roll_repo         text NOT NULL DEFAULT '',
    roll_commits      integer NOT NULL DEFAULT 0 CHECK (roll_commits >= 0),
    roll_commit_ids   text[] NOT NULL DEFAULT '{}',
    submitted_at      timestamptz,
    source            text NOT NULL DEFAULT '',
    updated_at        timestamptz NOT NULL DEFAULT now()
);
-- bisector: the flagged CLs of a range
CREATE INDEX compiler_cls_flagged ON perfwatch.compiler_cls (cl_number) WHERE perf_relevant;

COMMENT ON TABLE perfwatch.compiler_cls IS 'one row per compiler CL (compiler.proto CompilerCl); natural key cl_number; upserted from perf.compiler-cls.v1';
COMMENT ON COLUMN perfwatch.compiler_cls.cl IS 'CL name, e.g. cl/7841917';
COMMENT ON COLUMN perfwatch.compiler_cls.title IS 'first line of the description';
COMMENT ON COLUMN perfwatch.compiler_cls.author IS 'author or owning team';
COMMENT ON COLUMN perfwatch.compiler_cls.team IS 'owning team when known apart from the author';
COMMENT ON COLUMN perfwatch.compiler_cls.perf_relevant IS 'the pre-submit cost model flags it for at least one benchmark';
COMMENT ON COLUMN perfwatch.compiler_cls.perf_benchmarks IS 'series-key globs model/platform/config it is flagged for; * = every benchmark';
COMMENT ON COLUMN perfwatch.compiler_cls.roll_repo IS 'upstream repository of a roll; empty when not a roll';
COMMENT ON COLUMN perfwatch.compiler_cls.roll_commits IS 'upstream commits inside a roll; 0 when not a roll';
COMMENT ON COLUMN perfwatch.compiler_cls.roll_commit_ids IS 'the upstream commits in order, when listed';
COMMENT ON COLUMN perfwatch.compiler_cls.submitted_at IS 'submit time, when known';
COMMENT ON COLUMN perfwatch.compiler_cls.source IS 'publisher of the message';
COMMENT ON COLUMN perfwatch.compiler_cls.updated_at IS 'last upsert';
