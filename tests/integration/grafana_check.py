#!/usr/bin/env python3
"""grafana_check.py: checks perfwatch's Grafana provisioning without a Grafana.

Run by tests/integration/test_grafana.sh, which loads a fixture into the dev
database first. Two parts:

  structure  every file of deploy/grafana parses; the data-source file
             provisions the two uids the dashboards use; every dashboard has
             a unique uid and title, panels with unique ids, a known type, a
             grid position inside the 24-column grid, targets with unique
             refIds and a data source that is provisioned; every $variable a
             query uses is a template variable or a Grafana macro.
  queries    every SQL query (panels, annotations, template variables) runs
             against PostgreSQL AS THE READ-ONLY ROLE (--dsn), with Grafana's
             macros expanded to concrete SQL over a fixed time range and the
             template variables set from their own queries' results; a
             time-series query must return a "time" column, an annotation
             "time" and "text". --expect FILE names, per panel, rows the
             fixture must produce (see test_grafana.sh).

Prints "ok: ..." / "FAIL: ..." lines; exits 1 if any check failed.
"""
import argparse
import csv
import glob
import io
import json
import os
import re
import subprocess
import sys

import yaml

PANEL_TYPES = {"timeseries", "table", "stat", "barchart", "text", "row", "gauge", "bargauge", "state-timeline"}
MACROS = {"__timeFilter", "__timeFrom", "__timeTo", "__timeGroup", "__timeGroupAlias", "__unixEpochFilter",
          "__interval", "__interval_ms", "__rate_interval", "__range"}
T_FROM = "2000-01-01T00:00:00Z"   # the dashboards' time range; --from / --to
T_TO = "2100-01-01T00:00:00Z"

failures = 0
TIME_RANGE = (T_FROM, T_TO)


def same(got, want):
    """A CSV cell against an expected value: numbers compare as numbers."""
    if got is None:
        return False
    try:
        return abs(float(got) - float(want)) <= 1e-9 * max(1.0, abs(float(want)))
    except (TypeError, ValueError):
        return got == str(want)


def ok(msg):
    print("ok: " + msg)


def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg)


def expand_macros(sql):
    """Grafana's PostgreSQL macros as the data source expands them, for [T_FROM, T_TO]."""
    ts = "'%s'::timestamptz"
    T_FROM, T_TO = TIME_RANGE

    def group(m, alias):
        col, interval = m.group(1).strip(), m.group(2).strip().strip("'")
        secs = {"s": 1, "m": 60, "h": 3600, "d": 86400}[interval[-1]] * int(interval[:-1])
        expr = "to_timestamp(floor(extract(epoch FROM %s) / %d) * %d)" % (col, secs, secs)
        return expr + (' AS "time"' if alias else "")

    sql = re.sub(r"\$__timeGroupAlias\(([^,]+),\s*([^)]+)\)", lambda m: group(m, True), sql)
    sql = re.sub(r"\$__timeGroup\(([^,]+),\s*([^)]+)\)", lambda m: group(m, False), sql)
    sql = re.sub(r"\$__timeFilter\(([^)]+)\)",
                 lambda m: "%s BETWEEN %s AND %s" % (m.group(1).strip(), ts % T_FROM, ts % T_TO), sql)
    sql = sql.replace("$__timeFrom()", ts % T_FROM).replace("$__timeTo()", ts % T_TO)
    return sql


def substitute(sql, variables):
    for name in sorted(variables, key=len, reverse=True):
        sql = sql.replace("${%s}" % name, variables[name]).replace("$" + name, variables[name])
    return sql


def run_sql(dsn, sql):
    """(columns, rows) or raises RuntimeError with psql's message."""
    p = subprocess.run(["psql", dsn, "-X", "-q", "--csv", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip() or "psql exit %d" % p.returncode)
    rows = list(csv.reader(io.StringIO(p.stdout)))
    if not rows:
        return [], []
    return rows[0], rows[1:]


def sql_vars(sql):
    return {v for v in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", sql)} - MACROS


def check_datasources(root):
    uids = {}
    path = os.path.join(root, "provisioning/datasources/perfwatch.yaml")
    doc = yaml.safe_load(open(path))
    if doc.get("apiVersion") != 1:
        fail("%s: apiVersion is not 1" % path)
    for ds in doc.get("datasources", []):
        for key in ("name", "uid", "type", "url"):
            if not ds.get(key):
                fail("%s: data source without %s" % (path, key))
        uids[ds.get("uid")] = ds.get("type")
    pg = [d for d in doc.get("datasources", []) if d.get("type") == "grafana-postgresql-datasource"]
    if len(pg) == 1 and pg[0].get("user") == "perfwatch_ro" and pg[0].get("jsonData", {}).get("database") == "perfwatch":
        ok("PostgreSQL data source logs in as perfwatch_ro to database perfwatch")
    else:
        fail("PostgreSQL data source must be one, user perfwatch_ro, database perfwatch")
    path = os.path.join(root, "provisioning/dashboards/perfwatch.yaml")
    doc = yaml.safe_load(open(path))
    provs = doc.get("providers", [])
    if doc.get("apiVersion") == 1 and len(provs) == 1 and provs[0].get("type") == "file" and provs[0].get("options", {}).get("path"):
        ok("dashboard provider: file, %s" % provs[0]["options"]["path"])
    else:
        fail("%s: expected one file provider with options.path" % path)
    ok("data sources: %s" % ", ".join("%s (%s)" % kv for kv in sorted(uids.items())))
    return uids


def collect_queries(dash, uids):
    """Structure checks; returns [(where, kind, format, sql)] of the SQL queries."""
    out = []
    name = dash.get("uid", "?")
    for key in ("uid", "title", "panels", "schemaVersion"):
        if key not in dash:
            fail("dashboard %s: no %s" % (name, key))
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    for v in variables.values():
        ds = v.get("datasource", {})
        if ds.get("uid") not in uids:
            fail("%s: variable %s uses unprovisioned data source %s" % (name, v["name"], ds))
        if ds.get("uid") == "perfwatch-pg":
            out.append(("%s variable %s" % (name, v["name"]), "variable", "table", v["query"], v["name"]))
    for a in dash.get("annotations", {}).get("list", []):
        ds = a.get("datasource", {})
        if ds.get("uid") not in uids:
            fail("%s: annotation %s uses unprovisioned data source %s" % (name, a.get("name"), ds))
        t = a.get("target", {})
        if ds.get("uid") == "perfwatch-pg":
            out.append(("%s annotation %s" % (name, a.get("name")), "annotation", "table", t.get("rawSql", ""), None))
    ids = set()
    for p in dash.get("panels", []):
        where = "%s panel %s (%s)" % (name, p.get("id"), p.get("title"))
        if p.get("id") in ids:
            fail("%s: duplicate panel id" % where)
        ids.add(p.get("id"))
        if p.get("type") not in PANEL_TYPES:
            fail("%s: unknown panel type %s" % (where, p.get("type")))
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "xywh") or g["x"] < 0 or g["w"] < 1 or g["x"] + g["w"] > 24 or g["h"] < 1:
            fail("%s: bad gridPos %s" % (where, g))
        if not p.get("title"):
            fail("%s: no title" % where)
        targets = p.get("targets", [])
        if not targets:
            fail("%s: no targets" % where)
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs) or not all(refs):
            fail("%s: refIds %s not unique" % (where, refs))
        for t in targets:
            ds = t.get("datasource") or p.get("datasource") or {}
            if ds.get("uid") not in uids:
                fail("%s: target %s uses unprovisioned data source %s" % (where, t.get("refId"), ds))
                continue
            if uids[ds["uid"]] == "prometheus":
                if not t.get("expr"):
                    fail("%s: Prometheus target %s without expr" % (where, t.get("refId")))
                for v in sql_vars(t.get("expr", "")):
                    fail("%s: unknown variable $%s" % (where, v))
                out.append((where + " " + t["refId"], "promql", "", t.get("expr", ""), None))
                continue
            if t.get("format") not in ("time_series", "table"):
                fail("%s: target %s format %s" % (where, t.get("refId"), t.get("format")))
            if not t.get("rawSql") or not t.get("rawQuery"):
                fail("%s: target %s is not raw SQL" % (where, t.get("refId")))
            out.append((where + " " + t["refId"], "panel", t.get("format"), t.get("rawSql", ""), None))
    for where, kind, fmt, sql, _ in out:
        for v in sql_vars(sql):
            if v not in variables:
                fail("%s: $%s is neither a template variable nor a macro" % (where, v))
    return out


def check_promql(promtool, name, exprs):
    """Each expression's syntax, as recording rules that `promtool check rules` parses."""
    import tempfile
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": "perfwatch:dashboard_expr_%d" % i, "expr": e} for i, (_, e) in enumerate(exprs)]}]}
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as t:
        yaml.safe_dump(rules, t)
    p = subprocess.run([promtool, "check", "rules", t.name], capture_output=True, text=True)
    os.unlink(t.name)
    if p.returncode == 0:
        ok("%s: %d PromQL expressions parse (promtool check rules)" % (name, len(exprs)))
    else:
        fail("%s: promtool rejects a PromQL expression:\n%s" % (name, (p.stdout + p.stderr).strip()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True, help="deploy/grafana")
    ap.add_argument("--dsn", required=True, help="libpq DSN of the read-only role")
    ap.add_argument("--expect", help="JSON: {panel title or variable/annotation name: {column: value} or [value]}")
    ap.add_argument("--promtool", help="promtool, to check each PromQL expression's syntax")
    ap.add_argument("--from", dest="t_from", default=T_FROM, help="time range start (RFC 3339)")
    ap.add_argument("--to", dest="t_to", default=T_TO, help="time range end (RFC 3339)")
    ap.add_argument("--prefer", action="append", default=[], help="NAME=TEXT: variable NAME takes the value whose text is TEXT")
    args = ap.parse_args()
    global TIME_RANGE
    TIME_RANGE = (args.t_from, args.t_to)
    expect = json.load(open(args.expect)) if args.expect else {}
    prefer = dict(s.split("=", 1) for s in args.prefer)

    uids = check_datasources(args.root)
    files = sorted(glob.glob(os.path.join(args.root, "dashboards/*.json")))
    if len(files) < 4:
        fail("expected at least 4 dashboards, found %d" % len(files))
    seen_uid, seen_title = set(), set()
    nsql = npromql = 0
    matched = set()
    for f in files:
        try:
            dash = json.load(open(f))
        except ValueError as e:
            fail("%s: not JSON: %s" % (f, e))
            continue
        if dash.get("uid") in seen_uid or dash.get("title") in seen_title:
            fail("%s: uid or title used twice" % f)
        seen_uid.add(dash.get("uid"))
        seen_title.add(dash.get("title"))
        queries = collect_queries(dash, uids)
        ok("%s: structure (%d panels, %d queries)" % (os.path.basename(f), len(dash.get("panels", [])), len(queries)))
        variables = {}
        # variables first: their values feed the other queries
        for where, kind, fmt, sql, vname in [q for q in queries if q[1] == "variable"] + [q for q in queries if q[1] != "variable"]:
            if kind == "promql":
                npromql += 1
                continue
            concrete = substitute(expand_macros(sql), variables)
            nsql += 1
            try:
                cols, rows = run_sql(args.dsn, concrete)
            except RuntimeError as e:
                fail("%s: query failed as the read-only role: %s\n    SQL: %s" % (where, e, concrete))
                continue
            if kind == "variable":
                if "__value" in cols and "__text" in cols:
                    ti, vi = cols.index("__text"), cols.index("__value")
                    pick = [r for r in rows if r[ti] == prefer.get(vname)] or rows
                    variables[vname] = pick[0][vi] if pick else "0"
                else:
                    pick = [r for r in rows if r[0] == prefer.get(vname)] or rows
                    variables[vname] = pick[0][0] if pick else ""
                if vname in prefer and not any(r[cols.index("__text") if "__text" in cols else 0] == prefer[vname] for r in rows):
                    fail("%s: the fixture's value %r is not among its %d values" % (where, prefer[vname], len(rows)))
            if kind == "annotation" and not {"time", "text"} <= set(cols):
                fail("%s: annotation needs columns time and text, has %s" % (where, cols))
            if kind == "panel" and fmt == "time_series" and "time" not in cols:
                fail("%s: time series without a time column: %s" % (where, cols))
            ok("%s: %d rows as the read-only role" % (where, len(rows)))
            for key, want in expect.items():
                if key not in where:
                    continue
                matched.add(key)
                if isinstance(want, dict):
                    got = [dict(zip(cols, r)) for r in rows]
                    hit = [g for g in got if all(same(g.get(c), v) for c, v in want.items())]
                    if hit:
                        ok("%s: fixture row %s present" % (where, want))
                    else:
                        fail("%s: no row with %s; got %s" % (where, want, got[:5]))
                elif isinstance(want, int):
                    if len(rows) == want:
                        ok("%s: %d rows as the fixture makes" % (where, want))
                    else:
                        fail("%s: %d rows, fixture makes %d" % (where, len(rows), want))
        exprs = [(w, q) for w, k, _, q, _ in queries if k == "promql"]
        if exprs and args.promtool:
            check_promql(args.promtool, os.path.basename(f), exprs)
    for key in expect:
        if key not in matched:
            fail("expectation %r matched no query" % key)
    print("grafana_check: %d SQL queries run as the read-only role, %d PromQL expressions, %d dashboards" % (nsql, npromql, len(files)))
    if failures:
        print("grafana_check: %d check(s) failed" % failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
