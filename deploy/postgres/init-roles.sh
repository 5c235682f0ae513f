#!/bin/sh
# init-roles.sh: the roles and database perfwatch needs on a new PostgreSQL
# (the official image runs it once, from /docker-entrypoint-initdb.d, as the
# superuser). perfwatch owns the database and runs the migrations; it is not
# a superuser. The password comes from PERFWATCH_PASSWORD (deploy/secrets/postgres.env).
set -eu
pw=${PERFWATCH_PASSWORD:?set PERFWATCH_PASSWORD (deploy/secrets/postgres.env)}
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v pw="$pw" <<'SQL'
CREATE ROLE perfwatch LOGIN PASSWORD :'pw';
CREATE DATABASE perfwatch OWNER perfwatch;
SQL
