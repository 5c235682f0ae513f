-- readonly-role.sql: the read-only role Grafana (and analysts) log in as.
--
-- perfwatch_ro may read every table and view of the perfwatch schema and
-- nothing else; its sessions are read-only by default. Run as a PostgreSQL
-- administrator (superuser, or CREATEROLE plus membership in perfwatch),
-- connected to the perfwatch database, after the migrations:
--
--   psql "host=... dbname=perfwatch user=postgres" -v ON_ERROR_STOP=1 -f deploy/postgres/readonly-role.sql
--   psql ... -c "ALTER ROLE perfwatch_ro PASSWORD '...'"      (production only)
--
-- It is idempotent: deploy/dev/stack.sh runs it on every start, after the
-- migrations. It is not a migration because creating a role needs CREATEROLE,
-- which the perfwatch role that runs migrations does not (and should not)
-- have. ALTER DEFAULT PRIVILEGES makes every table or view that a later
-- migration creates (as perfwatch) readable without running this again;
-- running it again after an upgrade does no harm. docs/operations.md,
-- "Grafana", describes its use.

SELECT 'CREATE ROLE perfwatch_ro LOGIN' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'perfwatch_ro')
\gexec
ALTER ROLE perfwatch_ro SET default_transaction_read_only = on;
GRANT CONNECT ON DATABASE perfwatch TO perfwatch_ro;
GRANT USAGE ON SCHEMA perfwatch TO perfwatch_ro;
GRANT SELECT ON ALL TABLES IN SCHEMA perfwatch TO perfwatch_ro;
ALTER DEFAULT PRIVILEGES FOR ROLE perfwatch IN SCHEMA perfwatch GRANT SELECT ON TABLES TO perfwatch_ro;
