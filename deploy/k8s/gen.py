#!/usr/bin/env python3
"""gen.py: writes deploy/k8s/*.yaml from deploy/config/*.conf and
deploy/prometheus/, so that the manifests carry the same configuration text
as the compose deployment. Run it after changing either:

    python3 deploy/k8s/gen.py

tests/integration/test_deploy.sh fails when the committed manifests differ
from what this prints.
"""
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DEPLOY = os.path.dirname(HERE)
NS = "perfwatch"
IMAGE = "registry.example.com/perfwatch:0.1.0"

# name: (replicas, extra env from secrets [(env, secret, key)], serve a Service)
SERVICES = {
    "ingester": (2, [], False),
    "baseliner": (2, [], False),
    "watcher": (2, [], False),
    "gate": (2, [], False),
    "bisector": (2, [], False),
    "attributor": (2, [], False),
    "pager": (2, [("PW_PAGER_TRIAGE_KEY", "perfwatch-pager", "triage-key")], True),
    "planner": (2, [], False),
    "canary": (1, [], False),
}
# services that must never run twice, not even for the length of a rollout: Recreate stops the old pod first
# (none today: the pager, the last, keeps its incidents in PostgreSQL since migration 0040)
SINGLETONS = set()
# plain env per service: what differs between this cluster and compose (the same .conf text serves both)
PLAIN_ENV = {
    "pager": [
        # pages and info notices, to the cluster's Alertmanager (the one Prometheus alerts to)
        ("PW_PAGER_ALERTMANAGER_URL", "http://alertmanager.monitoring.svc:9093"),
        # the generic webhook: each page version and notice as JSON, to the site's on-call bridge
        ("PW_PAGER_WEBHOOK_URL", "http://oncall-webhook.monitoring.svc:8080/perfwatch/pager"),
        # what triage links start with: the pager's HTTP port behind the site's ingress
        ("PW_PAGER_TRIAGE_BASE_URL", "https://perfwatch-pager.example.com"),
    ],
}
REPLICA_NOTE = {
    "ingester": "scale-out through the consumer group perfwatch-ingester: up to 12 replicas x ingest.workers (perf.runs.v1 has 12 partitions)",
    "baseliner": "scale-out through the consumer group perfwatch-baseliner: up to 12 replicas (perf.points.v1 has 12 partitions)",
    "gate": "scale-out through the consumer group perfwatch-gate (tests/integration/test_services_scaleout.sh): requests spread over up to 3 replicas (perf.gate.requests.v1 has 3 partitions); every replica polls the pending evaluations and one stores each",
    "bisector": "scale-out through the consumer group perfwatch-bisector (tests/integration/test_services_scaleout.sh): alerts over up to 6 replicas (perf.alerts.v1 has 6 partitions); each bisection is scheduled by one replica at a time (row lock)",
    "attributor": "scale-out through the consumer group perfwatch-attributor (tests/integration/test_services_scaleout.sh): up to 6 replicas (perf.alerts.v1 has 6 partitions)",
    "watcher": "scale-out through the consumer group perfwatch-watcher (tests/integration/test_watcher_scaleout.sh, test_watcher_restart.sh's handover): up to 12 replicas (perf.points.v1 has 12 partitions); every replica reads the whole fleet-change feed through a reader of its own, and drops the series it holds at a rebalance, loading them again from PostgreSQL",
    "planner": "scale-out through the consumer group perfwatch-planner: its inputs have one partition each, so one replica reads them; every replica's tick plans the earliest unplanned sweep and the plan id (plan: + sweep id) lets one store and publish it (ON CONFLICT DO NOTHING with its outbox row)",
    "canary": "one replica: each family's windows share a partition of perf.canary.v1 (6 partitions), and its row lock and stored window count would keep a second member consistent (a stale family is rebuilt from PostgreSQL), but two replicas are not tested yet",
    "pager": "scale-out through the consumer group perfwatch-pager (tests/integration/test_pager_scaleout.sh): the open incidents are the deployment's, in PostgreSQL, and the replicas handle messages one at a time under its pager_state row lock, each delivery claimed by one replica, so two give the same pages as one, each delivered once; more replicas buy availability, not throughput (docs/operations.md, Scaling out)",
}


class Literal(str):
    pass


def literal(dumper, data):
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")


yaml.SafeDumper.add_representer(Literal, literal)


def labels(name):
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "perfwatch"}


def service_docs(name):
    replicas, secret_env, with_service = SERVICES[name]
    conf = open(os.path.join(DEPLOY, "config", name + ".conf")).read()
    docs = [{
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "perfwatch-" + name, "namespace": NS, "labels": labels(name)},
        "data": {name + ".conf": Literal(conf)},
    }]
    env = [{"name": "PW_PG_DSN", "valueFrom": {"secretKeyRef": {"name": "perfwatch-db", "key": "dsn"}}}]
    env += [{"name": e, "valueFrom": {"secretKeyRef": {"name": s, "key": k}}} for e, s, k in secret_env]
    env += [{"name": e, "value": v} for e, v in PLAIN_ENV.get(name, [])]
    container = {
        "name": name,
        "image": IMAGE,
        "command": ["/usr/local/bin/pw-" + name, "--config", "/etc/perfwatch/%s.conf" % name],
        "ports": [{"name": "http", "containerPort": 9100}],
        "envFrom": [{"configMapRef": {"name": "perfwatch-env"}}],
        "env": env,
        "startupProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 2, "failureThreshold": 30},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10, "timeoutSeconds": 3,
                          "failureThreshold": 6},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 5, "timeoutSeconds": 3,
                           "failureThreshold": 3},
        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
        "securityContext": {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/perfwatch", "readOnly": True}],
    }
    dep = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "perfwatch-" + name, "namespace": NS, "labels": labels(name)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels(name)},
            "strategy": ({"type": "Recreate"} if name in SINGLETONS else
                         {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}),
            "template": {
                "metadata": {"labels": labels(name),
                             "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9100",
                                             "prometheus.io/path": "/metrics"}},
                "spec": {
                    "terminationGracePeriodSeconds": 30,
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 10001},
                    "containers": [container],
                    "volumes": [{"name": "config", "configMap": {"name": "perfwatch-" + name}}],
                },
            },
        },
    }
    docs.append(dep)
    if with_service:
        docs.append({"apiVersion": "v1", "kind": "Service",
                     "metadata": {"name": "perfwatch-" + name, "namespace": NS, "labels": labels(name)},
                     "spec": {"selector": labels(name), "ports": [{"name": "http", "port": 9100, "targetPort": "http"}]}})
    return docs


def common_docs():
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": {"app.kubernetes.io/part-of": "perfwatch"}}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "perfwatch-env", "namespace": NS},
         "data": {"PW_KAFKA_BOOTSTRAP_SERVERS": "kafka-bootstrap.kafka.svc:9092",
                  "PW_REDIS_ADDR": "redis.perfwatch.svc:6379"}},
        {"apiVersion": "batch/v1", "kind": "Job",
         "metadata": {"name": "perfwatch-migrate", "namespace": NS, "labels": labels("migrate")},
         "spec": {"backoffLimit": 3, "template": {"metadata": {"labels": labels("migrate")}, "spec": {
             "restartPolicy": "OnFailure",
             "securityContext": {"runAsNonRoot": True, "runAsUser": 10001},
             "containers": [{
                 "name": "migrate", "image": IMAGE,
                 "command": ["/usr/local/bin/pw-migrate", "--dsn", "$(PW_PG_DSN)", "--dir", "/usr/share/perfwatch/migrations"],
                 "env": [{"name": "PW_PG_DSN", "valueFrom": {"secretKeyRef": {"name": "perfwatch-db", "key": "dsn"}}}],
             }]}}}},
    ]


def secret_docs():
    return [
        {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
         "metadata": {"name": "perfwatch-db", "namespace": NS},
         "stringData": {"dsn": "host=postgres.perfwatch.svc port=5432 dbname=perfwatch user=perfwatch password=REPLACE-ME sslmode=require",
                        "grafana-dsn-password": "REPLACE-ME"}},
        {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
         "metadata": {"name": "perfwatch-pager", "namespace": NS},
         "stringData": {"triage-key": "REPLACE-ME-with-64-hex-characters"}},
    ]


def prometheus_docs():
    rules = open(os.path.join(DEPLOY, "prometheus/rules/perfwatch.rules.yml")).read()
    jobs = []
    for name in SERVICES:
        jobs.append({
            "job_name": "perfwatch-" + name,
            "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": [NS]}}],
            "relabel_configs": [
                {"source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_part_of",
                                   "__meta_kubernetes_pod_label_app_kubernetes_io_name"],
                 "regex": "perfwatch;" + name, "action": "keep"},
                {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_scrape"], "regex": "true",
                 "action": "keep"},
                {"source_labels": ["__meta_kubernetes_pod_ip"], "regex": "(.+)", "target_label": "__address__",
                 "replacement": "$1:9100"},
                {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "instance"},
            ],
        })
    prom = {
        "global": {"scrape_interval": "15s", "evaluation_interval": "30s", "external_labels": {"system": "perfwatch"}},
        "rule_files": ["/etc/prometheus/rules/*.yml"],
        "alerting": {"alertmanagers": [{"static_configs": [{"targets": ["alertmanager.monitoring.svc:9093"]}]}]},
        "scrape_configs": jobs + [{"job_name": "kafka-exporter",
                                   "static_configs": [{"targets": ["kafka-exporter.kafka.svc:9308"]}]}],
    }
    text = ("# prometheus.yml for Kubernetes: pod discovery in namespace perfwatch, one job per\n"
            "# service (the label app.kubernetes.io/name), port 9100. Generated by deploy/k8s/gen.py.\n"
            + yaml.safe_dump(prom, sort_keys=False))
    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "perfwatch-prometheus", "namespace": "monitoring"},
         "data": {"prometheus.yml": Literal(text)}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "perfwatch-prometheus-rules", "namespace": "monitoring"},
         "data": {"perfwatch.rules.yml": Literal(rules)}},
    ]


def dump(docs, header):
    return header + "".join("---\n" + yaml.safe_dump(d, sort_keys=False, width=200) for d in docs)


def files():
    out = {}
    h = "# %s: generated by deploy/k8s/gen.py from deploy/config and deploy/prometheus; do not edit.\n"
    out["00-common.yaml"] = dump(common_docs(), h % "00-common.yaml"
                                 + "# The namespace, the addresses every service reads (perfwatch-env), the migrations Job.\n")
    out["01-secrets.example.yaml"] = dump(secret_docs(), h % "01-secrets.example.yaml"
                                          + "# TEMPLATES: create the real Secrets with kubectl (docs/operations.md); never commit values.\n")
    for name in SERVICES:
        note = REPLICA_NOTE[name]
        out["%s.yaml" % name] = dump(service_docs(name), h % ("%s.yaml" % name) + "# pw-%s: %s.\n" % (name, note))
    out["prometheus.yaml"] = dump(prometheus_docs(), h % "prometheus.yaml"
                                  + "# Prometheus's configuration and perfwatch's rules, for a Prometheus in namespace monitoring.\n")
    out["kustomization.yaml"] = (h % "kustomization.yaml") + yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": ["00-common.yaml"] + ["%s.yaml" % n for n in SERVICES] + ["prometheus.yaml"]}, sort_keys=False)
    return out


if __name__ == "__main__":
    check = len(sys.argv) > 1 and sys.argv[1] == "--check"
    stale = []
    for fname, text in files().items():
        path = os.path.join(HERE, fname)
        if check:
            if not os.path.exists(path) or open(path).read() != text:
                stale.append(fname)
        else:
            open(path, "w").write(text)
    if stale:
        print("deploy/k8s: out of date, run python3 deploy/k8s/gen.py: " + " ".join(stale))
        sys.exit(1)
