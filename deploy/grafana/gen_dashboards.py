#!/usr/bin/env python3
"""gen_dashboards.py: writes the Grafana dashboards of deploy/grafana/dashboards.

The dashboards are data; this script is where their queries are written, one
panel a call, so that a change is a readable diff. Run it after editing:

    python3 deploy/grafana/gen_dashboards.py

`--check` exits 1 when the committed JSON differs from what it writes
(tests/integration/test_grafana.sh runs it). The queries use Grafana's
PostgreSQL macros ($__timeFilter, $__timeGroupAlias) and the template
variables each dashboard defines; the data sources are the uids of
provisioning/datasources/perfwatch.yaml.
"""
import json
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dashboards")
WRITTEN = {}
PG = {"type": "grafana-postgresql-datasource", "uid": "perfwatch-pg"}
PROM = {"type": "prometheus", "uid": "perfwatch-prom"}

def target_sql(sql, fmt="time_series", ref="A"):
    return {"refId": ref, "datasource": PG, "format": fmt, "rawQuery": True, "editorMode": "code",
            "rawSql": " ".join(l.strip() for l in sql.strip().splitlines())}

def target_prom(expr, legend, ref="A"):
    return {"refId": ref, "datasource": PROM, "expr": expr, "legendFormat": legend}

class Dash:
    def __init__(self, uid, title, desc):
        self.d = {"uid": uid, "title": title, "description": desc, "tags": ["perfwatch"],
                  "schemaVersion": 39, "version": 1, "editable": True, "timezone": "utc",
                  "time": {"from": "now-30d", "to": "now"}, "refresh": "",
                  "templating": {"list": []}, "annotations": {"list": []}, "panels": []}
        self.id = 0; self.y = 0
    def var(self, name, label, sql):
        self.d["templating"]["list"].append({
            "name": name, "label": label, "type": "query", "datasource": PG,
            "query": " ".join(l.strip() for l in sql.strip().splitlines()),
            "definition": " ".join(l.strip() for l in sql.strip().splitlines()),
            "refresh": 1, "sort": 0, "multi": False, "includeAll": False})
    def ann(self, name, color, sql):
        self.d["annotations"]["list"].append({
            "name": name, "enable": True, "iconColor": color, "datasource": PG,
            "target": target_sql(sql, "table")})
    def panel(self, ptype, title, desc, targets, w=24, h=8, **extra):
        self.id += 1
        p = {"id": self.id, "type": ptype, "title": title, "description": desc,
             "datasource": targets[0]["datasource"], "targets": targets,
             "gridPos": {"x": 0, "y": self.y, "w": w, "h": h}}
        p.update(extra)
        self.y += h
        self.d["panels"].append(p)
    def write(self, name):
        WRITTEN[name] = json.dumps(self.d, indent=2) + "\n"

# 1. one series, its baseline band, changepoints and fleet changes
d = Dash("perfwatch-series", "perfwatch / series",
         "One series: its points, the baseline median and noise band of every version, changepoints and fleet changes as annotations.")
d.var("series", "series", """
SELECT series_key AS __text, series_id AS __value FROM perfwatch.series ORDER BY series_key""")
d.ann("changepoints", "red", """
SELECT c.shift_at AS time, 'changepoint ' || c.direction || ' ' || round(c.delta_pct::numeric, 2) || '% '
       || c.last_clean_cl || '..' || c.first_shifted_cl || ' (' || c.annotation || ', ' || c.routing || ')' AS text,
       c.method || ',' || c.annotation AS tags
  FROM perfwatch.changepoints c
 WHERE c.series_id = $series AND $__timeFilter(c.shift_at)
 ORDER BY 1""")
d.ann("fleet changes", "orange", """
SELECT f.occurred_at AS time, f.kind || ': ' || f.reason || ' (' || f.event_id || ')' AS text, f.kind AS tags
  FROM perfwatch.fleet_changes f, perfwatch.series s
 WHERE s.series_id = $series AND $__timeFilter(f.occurred_at)
   AND (cardinality(f.platforms) = 0 OR s.platform = ANY (f.platforms))
 ORDER BY 1""")
d.panel("timeseries", "points and baseline band",
        "Every measured point (samples) with the median and band [band_lo, band_hi] of each baseline version at the end of its window.",
        [target_sql("""
SELECT measured_at AS time, value AS "point"
  FROM perfwatch.samples
 WHERE series_id = $series AND $__timeFilter(measured_at)
 ORDER BY 1""", ref="A"),
         target_sql("""
SELECT window_end AS time, median AS "baseline median", band_lo AS "band low", band_hi AS "band high"
  FROM perfwatch.baselines
 WHERE series_id = $series AND window_end IS NOT NULL AND $__timeFilter(window_end)
 ORDER BY 1""", ref="B")], h=10,
        fieldConfig={"defaults": {"custom": {"drawStyle": "points", "pointSize": 4}}, "overrides": [
            {"matcher": {"id": "byName", "options": "baseline median"}, "properties": [{"id": "custom.drawStyle", "value": "line"}]},
            {"matcher": {"id": "byName", "options": "band low"}, "properties": [{"id": "custom.drawStyle", "value": "line"}, {"id": "custom.lineStyle", "value": {"fill": "dash"}}]},
            {"matcher": {"id": "byName", "options": "band high"}, "properties": [{"id": "custom.drawStyle", "value": "line"}, {"id": "custom.fillBelowTo", "value": "band low"}]}]})
d.panel("table", "baseline versions", "perfwatch.baselines of the series, newest first.", [target_sql("""
SELECT version, state, median, mad_n, band_lo, band_hi, sigma_pct, n, days, chip_sets, window_start, window_end,
       freeze_reason, computed_at
  FROM perfwatch.baselines
 WHERE series_id = $series
 ORDER BY version DESC
 LIMIT 200""", "table")])
d.panel("table", "changepoints", "perfwatch.changepoints of the series in the time range.", [target_sql("""
SELECT day, first_shifted_build_id, last_clean_cl, first_shifted_cl, n_cls, level_before, level_after, unit,
       delta_pct, p, direction, method, annotation, fleet_event_id, routing, detected_at
  FROM perfwatch.changepoints
 WHERE series_id = $series AND $__timeFilter(shift_at)
 ORDER BY shift_at DESC""", "table")])
d.panel("table", "frozen and quarantined series", "perfwatch.active_freezes: series frozen now, with the fleet change that froze them.", [target_sql("""
SELECT series_key, event_id, kind, reason, frozen_at, frozen_version
  FROM perfwatch.active_freezes
 ORDER BY frozen_at DESC
 LIMIT 500""", "table")])
d.write("perfwatch-series.json")

# 2. the gate
d = Dash("perfwatch-gate", "perfwatch / release gate",
         "The gate's history (perfwatch.gate_history) and each release's family verdicts and regressed series.")
d.var("release", "release", """
SELECT release_id FROM perfwatch.gate_evaluations GROUP BY release_id ORDER BY max(requested_at) DESC LIMIT 200""")
d.panel("table", "gate history", "One line per evaluation in the time range, with its detection latency (SLO < 24 h).", [target_sql("""
SELECT requested_at, release_id, evaluation, candidate_build_id, baseline_release, status, verdict, tests,
       fleet_weighted_impact_pct, regressed_series, extract(epoch FROM latency) AS latency_s
  FROM perfwatch.gate_history
 WHERE $__timeFilter(requested_at)
 ORDER BY requested_at DESC""", "table")])
d.panel("timeseries", "verdicts per day", "Evaluations by verdict, per day.", [target_sql("""
SELECT $__timeGroupAlias(evaluated_at, '1d'), coalesce(verdict, status) AS metric, count(*) AS value
  FROM perfwatch.gate_evaluations
 WHERE $__timeFilter(evaluated_at)
 GROUP BY 1, 2
 ORDER BY 1""")])
d.panel("timeseries", "request to verdict", "Latency from request to stored verdict (SLO < 24 h).", [target_sql("""
SELECT evaluated_at AS time, extract(epoch FROM latency) AS "request to verdict (s)"
  FROM perfwatch.gate_history
 WHERE evaluated_at IS NOT NULL AND $__timeFilter(evaluated_at)
 ORDER BY 1""")], fieldConfig={"defaults": {"unit": "s"}, "overrides": []})
d.panel("table", "families of the release", "Family verdicts of the release's newest evaluation.", [target_sql("""
SELECT f.family, f.tier, f.verdict, f.spend_share, f.spend_weighted_impact_pct, f.gated_series, f.regressed_series
  FROM perfwatch.gate_family_results f
 WHERE f.release_id = '$release'
   AND f.evaluation = (SELECT max(evaluation) FROM perfwatch.gate_evaluations WHERE release_id = '$release')
 ORDER BY f.verdict, f.spend_share DESC""", "table")])
d.panel("table", "series of the release", "Series results of the release's newest evaluation, regressions first.", [target_sql("""
SELECT s.series_key, r.family, r.tier, r.verdict, r.delta_pct, r.expected_delta_pct, r.effect_pct, r.excess_pct,
       r.threshold_pct, r.practical_pct, r.noise_floor_pct, r.mde_pct, r.q, r.baseline_median, r.candidate_median, r.unit, r.baseline_n, r.candidate_n, r.waiver_id, r.alert_id
  FROM perfwatch.gate_series_results r
  JOIN perfwatch.series s USING (series_id)
 WHERE r.release_id = '$release'
   AND r.evaluation = (SELECT max(evaluation) FROM perfwatch.gate_evaluations WHERE release_id = '$release')
 ORDER BY (r.verdict IN ('blocking', 'p1')) DESC, r.delta_pct DESC NULLS LAST
 LIMIT 1000""", "table")])
d.panel("table", "pins of the release", "Families a waiver of the release keeps on N-1 (per-family version pinning, docs/gate.md \"Pins\"): to which release and artifact, owner, model-team sign-off, expiry, and whether the expiry passed and was reported (PIN_EXPIRED on perf.rollouts.v1).", [target_sql("""
SELECT w.model AS family, w.pin_release AS pinned_release, w.pin_artifact AS pinned_artifact, w.waiver_id, w.owner,
       w.pin_signed_off_by AS signed_off_by, w.expires_at,
       CASE WHEN w.expires_at > now() THEN 'pinned' WHEN e.waiver_id IS NULL THEN 'expired' ELSE 'expired, reported' END AS state,
       e.reported_at AS expiry_reported_at
  FROM perfwatch.waivers w
  LEFT JOIN perfwatch.pin_expiries e ON e.release_id = w.release_id AND e.waiver_id = w.waiver_id
 WHERE w.release_id = '$release' AND w.pin
 ORDER BY w.model, w.waiver_id""", "table")])
d.panel("timeseries", "canary decisions per day",
        "pw-canary's final decisions (perfwatch.canary_families, docs/canary.md §8) per day: PROMOTE, ROLLBACK, and HOLD once inconclusive at the horizon.",
        [target_sql("""
SELECT $__timeGroupAlias(decided_at, '1d'), decision || CASE WHEN inconclusive THEN ' (inconclusive)' ELSE '' END AS metric,
       count(*) AS value
  FROM perfwatch.canary_families
 WHERE final AND $__timeFilter(decided_at)
 GROUP BY 1, 2
 ORDER BY 1""")], fieldConfig={"defaults": {"custom": {"drawStyle": "bars"}}, "overrides": []})
d.panel("table", "canary decisions per family",
        "Each family's decision of each rollout decided in the time range: the deciding metric's effect with its confidence-sequence interval at the decision, its windows, the N-1 artifact a ROLLBACK flipped to, and the page the pager raised for it (docs/pager.md, canary rollbacks).",
        [target_sql("""
SELECT c.decided_at, c.rollout_id, c.family, c.family_kind, c.decision, c.inconclusive, c.metric,
       c.effect_pct AS "effect %", c.lo_pct AS "interval lo %", c.hi_pct AS "interval hi %",
       c.decision_windows AS windows, c.release, c.previous_release, c.rollback_artifact,
       c.mde_pct, c.tolerance_pct, p.page_id, p.delivery_status
  FROM perfwatch.canary_families c
  LEFT JOIN perfwatch.pages p
    ON p.payload -> 'canary' ->> 'rollout_id' = c.rollout_id AND p.payload -> 'canary' ->> 'family' = c.family
 WHERE c.final AND $__timeFilter(c.decided_at)
 ORDER BY c.decided_at DESC, c.family
 LIMIT 500""", "table")], fieldConfig={"defaults": {}, "overrides": [
            {"matcher": {"id": "byName", "options": "decision"}, "properties": [
                {"id": "custom.cellOptions", "value": {"type": "color-text"}},
                {"id": "mappings", "value": [{"type": "value", "options": {
                    "ROLLBACK": {"color": "red", "index": 0}, "PROMOTE": {"color": "green", "index": 1},
                    "HOLD": {"color": "orange", "index": 2}}}]}]}]})
d.panel("timeseries", "canary effect and interval at the decision",
        "Per family, the deciding metric's effect (percent, canary vs baseline) and the two ends of its confidence-sequence interval at each final decision in the time range; a ROLLBACK's interval lies wholly above the tolerance.",
        [target_sql("""
SELECT decided_at AS time, family || ' ' || metric || ' effect' AS metric, effect_pct AS value
  FROM perfwatch.canary_families WHERE final AND effect_pct IS NOT NULL AND $__timeFilter(decided_at)
UNION ALL
SELECT decided_at, family || ' ' || metric || ' lo', lo_pct
  FROM perfwatch.canary_families WHERE final AND lo_pct IS NOT NULL AND $__timeFilter(decided_at)
UNION ALL
SELECT decided_at, family || ' ' || metric || ' hi', hi_pct
  FROM perfwatch.canary_families WHERE final AND hi_pct IS NOT NULL AND $__timeFilter(decided_at)
 ORDER BY 1""")], fieldConfig={"defaults": {"unit": "percent", "custom": {"drawStyle": "points", "pointSize": 8}},
                                "overrides": []})
d.write("perfwatch-gate.json")

# 3. pages, triage and the report card
d = Dash("perfwatch-pages", "perfwatch / pages, triage and report card",
         "Pages, their triage verdicts, the false-page budget (5 a week) and the detector's report card.")
d.panel("stat", "report card (time range)",
        "Pages raised, triaged, true and false, false-page rate, validated wins and median time to verdict in the time range (pages, triage_verdicts, gate_series_results).",
        [target_sql("""
SELECT count(p.page_id) AS "pages",
       count(t.page_id) AS "triaged",
       count(*) FILTER (WHERE t.outcome = 'true_regression') AS "true pages",
       count(*) FILTER (WHERE t.outcome = 'false_regression') AS "false pages",
       (count(*) FILTER (WHERE t.outcome = 'false_regression'))::double precision / NULLIF(count(t.page_id), 0) AS "false-page rate",
       (SELECT count(*) FROM perfwatch.gate_series_results r JOIN perfwatch.gate_evaluations g USING (release_id, evaluation)
         WHERE r.verdict = 'validated_win' AND $__timeFilter(g.evaluated_at)) AS "validated wins",
       extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY t.decided_at - p.created_at)) AS "median time to verdict (s)"
  FROM perfwatch.pages p
  LEFT JOIN perfwatch.triage_verdicts t USING (page_id)
 WHERE $__timeFilter(p.created_at)""", "table")], h=5)
d.panel("timeseries", "pages per week against the budget",
        "perfwatch.pages_weekly: pages, false pages and untriaged pages per ISO week; the budget is 5 false pages a week.",
        [target_sql("""
SELECT week AS time, pages, false_pages AS "false pages", untriaged, 5 AS "false-page budget"
  FROM perfwatch.pages_weekly
 WHERE $__timeFilter(week)
 ORDER BY 1""")], fieldConfig={"defaults": {"custom": {"drawStyle": "bars"}}, "overrides": [
            {"matcher": {"id": "byName", "options": "false-page budget"}, "properties": [{"id": "custom.drawStyle", "value": "line"}, {"id": "color", "value": {"mode": "fixed", "fixedColor": "red"}}]}]})
d.panel("table", "planner: chip-hours and coverage per week",
        "perfwatch.plan_weeks (docs/planner.md): the chip-hour line of each tier over the week's plans, their total against the naive matrix, the RC's spend coverage, nightly pruning and models measured in the 28 days to the week's end; `perfwatch coverage` prints the same.",
        [target_sql("""
SELECT week, rc_sweep AS "RC", spend_coverage AS "spend gated", measured_28d::double precision / NULLIF(models, 0) AS "measured within 28 days",
       t0_chip_hours AS "T0", t0_planned_chip_hours AS "T0 planned", t1_chip_hours AS "T1", t2_chip_hours AS "T2",
       tail_chip_hours AS "tail", reserve_chip_hours AS "reserve", chip_hours AS "total", naive_ratio AS "of naive",
       t0_pruned_ratio AS "nightly pruned"
  FROM perfwatch.plan_weeks
 WHERE $__timeFilter(week)
 ORDER BY week DESC""", "table")])
d.panel("table", "false-page rate by month", "perfwatch.false_page_rate_monthly: two months over budget in a row force a threshold review (§8).", [target_sql("""
SELECT month, pages, triaged, false_pages, false_page_rate
  FROM perfwatch.false_page_rate_monthly
 WHERE $__timeFilter(month)
 ORDER BY month DESC""", "table")])
d.panel("table", "pages", "Pages in the time range with their triage verdict.", [target_sql("""
SELECT p.created_at, p.page_id, p.severity, p.verdict, p.route, p.summary, p.owner_hint, p.release_id,
       p.delivery_status, p.delivery_attempts, t.outcome, t.routed_to, t.triager, t.decided_at, p.triage_url
  FROM perfwatch.pages p
  LEFT JOIN perfwatch.triage_verdicts t USING (page_id)
 WHERE $__timeFilter(p.created_at)
 ORDER BY p.created_at DESC
 LIMIT 500""", "table")], h=10)
d.panel("table", "triage verdicts", "Verdicts decided in the time range.", [target_sql("""
SELECT t.decided_at, t.page_id, t.outcome, t.routed_to, t.triager, t.note, p.summary
  FROM perfwatch.triage_verdicts t
  JOIN perfwatch.pages p USING (page_id)
 WHERE $__timeFilter(t.decided_at)
 ORDER BY t.decided_at DESC
 LIMIT 500""", "table")])
d.panel("table", "open alerts", "perfwatch.open_alerts: alerts not yet resolved.", [target_sql("""
SELECT created_at, alert_id, kind, source, verdict, routing, page_route, delta_pct, fdr_q, series_key, release_id,
       culprit, status, summary
  FROM perfwatch.open_alerts
 WHERE $__timeFilter(created_at)
 ORDER BY created_at DESC
 LIMIT 500""", "table")])
d.panel("table", "bisections", "Bisections started in the time range, with their culprit and confidence.", [target_sql("""
SELECT b.started_at, b.bisection_id, b.status, b.range_lo, b.range_hi, b.n_cls, b.builds, b.culprit, b.culprit_title,
       b.confidence, b.updated_at - b.started_at AS age
  FROM perfwatch.bisections b
 WHERE $__timeFilter(b.started_at)
 ORDER BY b.started_at DESC
 LIMIT 200""", "table")])
d.panel("table", "dead letters", "Messages dead-lettered in the time range, by service, topic and reason.", [target_sql("""
SELECT service, source_topic, reason, count(*) AS messages, count(*) FILTER (WHERE replayed_at IS NOT NULL) AS replayed,
       max(failed_at) AS last_failed_at
  FROM perfwatch.dead_letters
 WHERE $__timeFilter(failed_at)
 GROUP BY 1, 2, 3
 ORDER BY 4 DESC""", "table")])
d.write("perfwatch-pages.json")

# 4. service health from Prometheus
d = Dash("perfwatch-health", "perfwatch / service health",
         "The services' own metrics as Prometheus scrapes them (deploy/prometheus/prometheus.yml), and the SLO alerts' inputs.")
d.d["time"] = {"from": "now-6h", "to": "now"}
d.d["refresh"] = "30s"
P = lambda t, desc, exprs, unit="short": d.panel("timeseries", t, desc, [target_prom(e, l, chr(65 + i)) for i, (e, l) in enumerate(exprs)],
                                                  w=12, fieldConfig={"defaults": {"unit": unit}, "overrides": []})
P("instances up", "Scrape targets up, per service.", [('sum by (job) (up{job=~"perfwatch-.*"})', "{{job}}")])
P("consumer lag", "Messages each consumer group has not committed yet (kafka-exporter).",
  [('sum by (consumergroup) (kafka_consumergroup_lag{consumergroup=~"perfwatch-.*"})', "{{consumergroup}}")])
P("ingest rate", "Runs and samples stored per second.", [
    ("sum(rate(perfwatch_ingester_runs_accepted_total[5m]))", "runs/s"),
    ("sum(rate(perfwatch_ingester_samples_accepted_total[5m]))", "samples/s")], "ops")
P("dead letters", "Messages sent to perf.dlq.v1 per second, by service.", [
    ("sum(rate(perfwatch_ingester_rejected_total[5m]))", "ingester"),
    ("sum(rate(perfwatch_baseliner_dead_letters_total[5m]))", "baseliner"),
    ("sum(rate(perfwatch_watcher_dead_letters_total[5m]))", "watcher")], "ops")
P("gate request to verdict (p95)", "95th percentile of the gate's request-to-verdict time (SLO < 24 h).", [
    ("histogram_quantile(0.95, sum by (le) (rate(perfwatch_gate_request_to_verdict_seconds_bucket[1h])))", "p95")], "s")
P("gate pending evaluations", "Evaluations waiting for runs or their deadline.", [
    ("sum(perfwatch_gate_pending_evaluations)", "pending")])
P("batch time (p95)", "95th percentile of one consumer batch, per service.", [
    ("histogram_quantile(0.95, sum by (le) (rate(perfwatch_ingester_batch_seconds_bucket[5m])))", "ingester"),
    ("histogram_quantile(0.95, sum by (le) (rate(perfwatch_baseliner_batch_seconds_bucket[5m])))", "baseliner"),
    ("histogram_quantile(0.95, sum by (le) (rate(perfwatch_watcher_append_seconds_bucket[5m])))", "watcher append")], "s")
P("changepoints and baselines", "Changepoints stored and baseline versions published per second.", [
    ("sum by (routing) (rate(perfwatch_watcher_changepoints_total[1h]))", "changepoints {{routing}}"),
    ("sum(rate(perfwatch_baseliner_baseline_updates_total[5m]))", "baseline versions")], "ops")
P("oldest active bisection", "Age of the oldest bisection still running (bisector).", [
    ("max(perfwatch_bisector_oldest_active_seconds)", "age")], "s")
P("pages and false pages (7 days)", "Pages delivered and pages triaged false over the last 7 days against the budget of 5 (pager).", [
    ("sum(increase(perfwatch_pager_pages_total[7d]))", "pages"),
    ('sum(increase(perfwatch_pager_triage_verdicts_total{outcome="false_regression"}[7d]))', "false pages")])
d.write("perfwatch-health.json")


if __name__ == "__main__":
    check = sys.argv[1:] == ["--check"]
    stale = []
    for name, text in WRITTEN.items():
        path = os.path.join(OUT, name)
        if check:
            if not os.path.exists(path) or open(path).read() != text:
                stale.append(name)
        else:
            with open(path, "w") as f:
                f.write(text)
    if stale:
        print("deploy/grafana/dashboards: out of date, run python3 deploy/grafana/gen_dashboards.py: " + " ".join(stale))
        sys.exit(1)
