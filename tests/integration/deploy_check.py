#!/usr/bin/env python3
"""deploy_check.py: the static half of tests/integration/test_deploy.sh.

Checks deploy/compose.yaml, deploy/k8s/*.yaml, deploy/config/*.conf and
deploy/Dockerfile without Docker or Kubernetes (neither exists here):

  - every YAML file parses; the k8s manifests are what deploy/k8s/gen.py makes;
  - compose: the infrastructure (kafka in KRaft mode, postgres, redis,
    prometheus, alertmanager, grafana), the seven services, the planner and
    the canary are there;
    depends_on names services that exist; every mounted host path exists;
    every env file is one deploy/secrets.sh writes; Kafka auto-creation off;
  - kubernetes: a Deployment per service whose selector matches its pod
    labels, /readyz readiness and /healthz liveness probes on the container's
    port, config from a ConfigMap that is in the manifests, DSNs and the triage
    key from Secret keys the example Secrets define; the ConfigMap's text is
    deploy/config/<name>.conf;
  - configuration keys: every key a .conf file sets and every PW_* variable
    compose or the manifests give a service is a common key (docs/config.md),
    one of the service's own keys (`pw-NAME --config-reference` when the
    binary has it, else the `.name = "..."` entries of services/NAME/*.c), or
    kafka.<a librdkafka property> (librdkafka-dev's CONFIGURATION.md);
  - the pager is given its Alertmanager URL, webhook URL and triage link
    base (pager.conf or the environment) in compose and in the manifests;
  - commands: every command is /usr/local/bin/<binary> that the Dockerfile
    copies from the CMake build, and that binary is built in --build.

A service whose program is not in the tree yet (no services/NAME/main.c:
its logic may be there before its main) is reported PENDING for the key and binary checks; everything else about it is
checked. Prints ok/FAIL/PENDING lines; exit 1 on any FAIL.
"""
import argparse
import glob
import gzip
import os
import re
import subprocess
import sys

import yaml

SEVEN = ["ingester", "baseliner", "watcher", "gate", "bisector", "attributor", "pager"]
# every service the deployment runs: the seven, the test planner (docs/planner.md) and the production canary
# (docs/canary.md §8), each with its compose service, Deployment, config file and keys checked alike
SERVICES = SEVEN + ["planner", "canary"]
# services that must never run twice (docs/operations.md, "Scaling out"): their state is one process's memory
# (none today: the pager keeps its incidents in PostgreSQL since migration 0040)
SINGLETONS = []
# services that run more than once in the manifests and compose for availability (test_pager_scaleout.sh)
REPLICATED = {"pager": 2}
INFRA = ["kafka", "postgres", "redis", "prometheus", "alertmanager", "grafana"]
failures = 0


def ok(m):
    print("ok: " + m)


def fail(m):
    global failures
    failures += 1
    print("FAIL: " + m)


def pending(m):
    print("PENDING: " + m)


def env_name(key):
    return "PW_" + key.upper().replace(".", "_")


def common_keys(repo):
    keys = set()
    for line in open(os.path.join(repo, "docs/config.md")):
        m = re.match(r"\| `([a-z][a-z0-9_.]*)` \|", line)
        if m:
            keys.add(m.group(1))
    return keys


def rdkafka_props():
    props = set()
    for path in glob.glob("/usr/share/doc/librdkafka*/CONFIGURATION.md*"):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            for line in f:
                m = re.match(r"^([a-z][a-z0-9_.]+)\s+\|\s+[CP*]\s+\|", line)
                if m:
                    props.add(m.group(1))
    return props


def service_keys(repo, build, name):
    """(keys, how) or (None, why) when the service is not in the tree yet."""
    src = os.path.join(repo, "services", name)
    if not os.path.isfile(os.path.join(src, "main.c")):
        return None, "services/%s/main.c is not in the tree yet" % name
    binary = os.path.join(build, "services", name, "pw-" + name)
    if os.access(binary, os.X_OK):
        p = subprocess.run([binary, "--config-reference"], capture_output=True, text=True, timeout=10)
        keys = set(re.findall(r"^\| `([a-z][a-z0-9_.]*)` \|", p.stdout, re.M))
        if p.returncode == 0 and keys:
            return keys, "pw-%s --config-reference" % name
    keys = set()
    for c in glob.glob(os.path.join(src, "*.c")):
        keys |= set(re.findall(r'\.name\s*=\s*"([a-z][a-z0-9_.]*\.[a-z0-9_.]+)"', open(c).read()))
    return keys, "the .name entries of services/%s/*.c" % name


def check_keys(where, keys, env, allowed, props):
    env_allowed = {env_name(k): k for k in allowed}
    bad = []
    for k in keys:
        if k in allowed or (k.startswith("kafka.") and k[6:] in props):
            continue
        bad.append(k)
    for e in env:
        if not e.startswith("PW_"):
            continue
        if e in env_allowed:
            continue
        if e.startswith("PW_KAFKA_") and any(env_name("kafka." + p) == e for p in props):
            continue
        bad.append(e)
    if bad:
        fail("%s: unknown configuration keys or variables: %s" % (where, ", ".join(sorted(bad))))
    else:
        ok("%s: %d keys and %d PW_* variables all exist" % (where, len(keys), len([e for e in env if e.startswith("PW_")])))


def conf_keys(path):
    keys = []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            fail("%s: line without '=': %s" % (path, line))
            continue
        keys.append(line.split("=", 1)[0].strip())
    return keys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--build", required=True)
    a = ap.parse_args()
    deploy = os.path.join(a.repo, "deploy")

    for path in sorted(glob.glob(os.path.join(deploy, "**/*.y*ml"), recursive=True)):
        try:
            list(yaml.safe_load_all(open(path)))
        except yaml.YAMLError as e:
            fail("%s: not YAML: %s" % (path, e))
    ok("every YAML file under deploy/ parses")

    p = subprocess.run([sys.executable, os.path.join(deploy, "k8s/gen.py"), "--check"], capture_output=True, text=True)
    if p.returncode == 0:
        ok("deploy/k8s is what deploy/k8s/gen.py makes from deploy/config and deploy/prometheus")
    else:
        fail(p.stdout.strip() + p.stderr.strip())

    common = common_keys(a.repo)
    props = rdkafka_props()
    if len(common) < 8 or len(props) < 100:
        fail("could not read the common keys (%d) or librdkafka's properties (%d)" % (len(common), len(props)))
    dockerfile = open(os.path.join(deploy, "Dockerfile")).read()
    installed = dict(re.findall(r"^COPY --from=build /src/(\S+) (/usr/local/bin/\S+)$", dockerfile, re.M))
    installed = {v: k for k, v in installed.items()}
    secrets_sh = open(os.path.join(deploy, "secrets.sh")).read()
    written_env = set(re.findall(r"put (\S+\.env)", secrets_sh))

    # ---- compose
    compose = yaml.safe_load(open(os.path.join(deploy, "compose.yaml")))
    svcs = compose.get("services", {})
    for n in INFRA + SERVICES:
        if n not in svcs:
            fail("compose: no service %s" % n)
    kenv = svcs.get("kafka", {}).get("environment", {})
    if "controller" in str(kenv.get("KAFKA_PROCESS_ROLES", "")) and "KAFKA_CONTROLLER_QUORUM_VOTERS" in kenv \
            and "KAFKA_ZOOKEEPER_CONNECT" not in kenv and str(kenv.get("KAFKA_AUTO_CREATE_TOPICS_ENABLE")) == "false":
        ok("compose: kafka runs in KRaft mode (broker,controller, no ZooKeeper), topic auto-creation off")
    else:
        fail("compose: kafka is not a KRaft broker with auto-creation off")
    for n, s in svcs.items():
        for d in (s.get("depends_on") or {}):
            if d not in svcs:
                fail("compose: %s depends on unknown service %s" % (n, d))
        for v in s.get("volumes", []):
            host = v.split(":")[0]
            if host.startswith("./") and not os.path.exists(os.path.join(deploy, host)):
                fail("compose: %s mounts %s, which does not exist" % (n, host))
        for e in s.get("env_file", []):
            if not e.startswith("./secrets/") or os.path.basename(e) not in written_env:
                fail("compose: %s reads %s, which deploy/secrets.sh does not write" % (n, e))
        cmd = s.get("command")
        if str(s.get("image", "")).startswith("perfwatch:") and not s.get("entrypoint") \
                and isinstance(cmd, list) and cmd:
            if cmd[0] not in installed:
                fail("compose: %s runs %s, which the Dockerfile does not install" % (n, cmd[0]))
    ok("compose: %d services, depends_on, mounts and env files consistent" % len(svcs))
    for n in SINGLETONS:
        s = svcs.get(n, {})
        if (s.get("deploy") or {}).get("replicas") != 1 or not s.get("container_name"):
            fail("compose: %s must run once: deploy.replicas 1 and a container_name (so that --scale fails)" % n)
        else:
            ok("compose: %s runs once (replicas 1, container_name %s)" % (n, s["container_name"]))
    for n, want in REPLICATED.items():
        s = svcs.get(n, {})
        if (s.get("deploy") or {}).get("replicas", 1) < want or s.get("container_name"):
            fail("compose: %s runs %s replicas%s, want %d and no container_name" % (
                n, (s.get("deploy") or {}).get("replicas", 1), " with a container_name" if s.get("container_name") else "", want))
        else:
            ok("compose: %s runs %d replicas" % (n, s["deploy"]["replicas"]))
    for m in re.findall(r"/usr/local/bin/[a-z-]+", yaml.safe_dump(svcs.get("migrate", {}))):
        if m not in installed:
            fail("compose: migrate runs %s, which the Dockerfile does not install" % m)

    # ---- kubernetes
    docs = []
    for path in sorted(glob.glob(os.path.join(deploy, "k8s/*.yaml"))):
        for d in yaml.safe_load_all(open(path)):
            if d:
                d["_file"] = os.path.basename(path)
                docs.append(d)
    for d in docs:
        if d.get("kind") == "Kustomization":
            continue
        if not (d.get("apiVersion") and d.get("kind") and d.get("metadata", {}).get("name")):
            fail("%s: a document without apiVersion, kind or metadata.name" % d["_file"])
    configmaps = {(d["metadata"].get("namespace"), d["metadata"]["name"]): d for d in docs if d.get("kind") == "ConfigMap"}
    secrets = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "Secret"}
    deployments = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "Deployment"}
    kust = [d for d in docs if d.get("kind") == "Kustomization"]
    if kust:
        for r in kust[0].get("resources", []):
            if not os.path.exists(os.path.join(deploy, "k8s", r)):
                fail("kustomization: resource %s does not exist" % r)

    def pod_refs(where, ns, spec):
        for c in spec.get("containers", []):
            for ef in c.get("envFrom", []):
                ref = ef.get("configMapRef", {}).get("name")
                if ref and (ns, ref) not in configmaps:
                    fail("%s: envFrom ConfigMap %s is not in the manifests" % (where, ref))
            for e in c.get("env", []):
                sk = e.get("valueFrom", {}).get("secretKeyRef")
                if sk and (sk["name"] not in secrets or sk["key"] not in secrets[sk["name"]].get("stringData", {})):
                    fail("%s: %s from Secret %s key %s, which the example Secrets do not define" % (where, e["name"], sk["name"], sk["key"]))
            if c.get("command", [""])[0] not in installed:
                fail("%s: command %s is not installed by the Dockerfile" % (where, c.get("command")))
        for v in spec.get("volumes", []):
            cm = v.get("configMap", {}).get("name")
            if cm and (ns, cm) not in configmaps:
                fail("%s: volume ConfigMap %s is not in the manifests" % (where, cm))

    for d in docs:
        if d.get("kind") == "Job":
            pod_refs("k8s Job %s" % d["metadata"]["name"], d["metadata"].get("namespace"), d["spec"]["template"]["spec"])

    for n in SERVICES:
        dn = "perfwatch-" + n
        d = deployments.get(dn)
        if not d:
            fail("k8s: no Deployment %s" % dn)
            continue
        ns = d["metadata"].get("namespace")
        spec = d["spec"]
        tmpl = spec["template"]
        sel = spec.get("selector", {}).get("matchLabels", {})
        if not sel or any(tmpl["metadata"].get("labels", {}).get(k) != v for k, v in sel.items()):
            fail("k8s %s: selector %s does not match the pod labels" % (dn, sel))
        if not isinstance(spec.get("replicas"), int) or spec["replicas"] < 1:
            fail("k8s %s: replicas %s" % (dn, spec.get("replicas")))
        if n in SINGLETONS:
            if spec.get("replicas") != 1 or spec.get("strategy", {}).get("type") != "Recreate":
                fail("k8s %s: must never run twice: replicas %s, strategy %s (want 1, Recreate)" % (
                    dn, spec.get("replicas"), spec.get("strategy", {}).get("type")))
            else:
                ok("k8s %s: one replica, strategy Recreate (never two at once, also during a rollout)" % dn)
        if n in REPLICATED and spec.get("replicas", 1) < REPLICATED[n]:
            fail("k8s %s: %s replicas, want %d" % (dn, spec.get("replicas"), REPLICATED[n]))
        pod = tmpl["spec"]
        pod_refs("k8s " + dn, ns, pod)
        c = pod["containers"][0]
        ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
        for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
            g = c.get(probe, {}).get("httpGet", {})
            if g.get("path") != path or (g.get("port") not in ports and g.get("port") not in ports.values()):
                fail("k8s %s: %s is not GET %s on the container's port (%s)" % (dn, probe, path, g))
        conf_cm = [v["configMap"]["name"] for v in pod.get("volumes", []) if "configMap" in v]
        text = configmaps.get((ns, conf_cm[0] if conf_cm else ""), {}).get("data", {}).get(n + ".conf")
        want = open(os.path.join(deploy, "config", n + ".conf")).read()
        if text != want:
            fail("k8s %s: the ConfigMap's %s.conf differs from deploy/config/%s.conf" % (dn, n, n))
        if c["command"][1:3] != ["--config", "/etc/perfwatch/%s.conf" % n]:
            fail("k8s %s: command does not read /etc/perfwatch/%s.conf" % (dn, n))
        ok("k8s %s: %d replicas, probes /readyz and /healthz, config from ConfigMap %s, secrets %s" % (
            dn, spec["replicas"], conf_cm[0] if conf_cm else "?",
            ", ".join(sorted("%s/%s" % (e["valueFrom"]["secretKeyRef"]["name"], e["valueFrom"]["secretKeyRef"]["key"])
                             for e in c.get("env", []) if "secretKeyRef" in e.get("valueFrom", {})))))

    # ---- keys and binaries, per service
    env_cm = configmaps.get(("perfwatch", "perfwatch-env"), {}).get("data", {})
    for n in SERVICES:
        own, how = service_keys(a.repo, a.build, n)
        conf = os.path.join(deploy, "config", n + ".conf")
        keys = conf_keys(conf)
        cs = svcs.get(n, {})
        cenv = list((cs.get("environment") or {}).keys())
        d = deployments.get("perfwatch-" + n, {})
        kc = (d.get("spec", {}).get("template", {}).get("spec", {}).get("containers") or [{}])[0]
        kenv = [e["name"] for e in kc.get("env", [])] + list(env_cm.keys())
        binary = os.path.join(a.build, "services", n, "pw-" + n)
        if own is None:
            pending("%s: %s; keys it is given, to check once it lands: %s; variables: %s" % (
                n, how, ", ".join(keys), ", ".join(sorted(set(cenv + kenv)))))
            continue
        allowed = common | own
        check_keys("deploy/config/%s.conf (keys from docs/config.md and %s)" % (n, how), keys, [], allowed, props)
        check_keys("compose %s environment" % n, [], cenv, allowed, props)
        check_keys("k8s perfwatch-%s environment" % n, [], kenv, allowed, props)
        if n == "pager":
            # the pager must be told where to deliver (else it warns at start and pages reach nobody)
            # and what triage links start with, in both deployments
            need = ["pager.alertmanager.url", "pager.webhook.url", "pager.triage.base_url"]
            for where, env in (("compose pager", cenv), ("k8s perfwatch-pager", kenv)):
                missing = [k for k in need if k not in keys and env_name(k) not in env]
                if missing:
                    fail("%s: delivery settings not given: %s" % (where, ", ".join(missing)))
                else:
                    ok("%s: Alertmanager, webhook and triage link settings given" % where)
        cmd = cs.get("command", [""])[0]
        if installed.get(cmd) and os.access(os.path.join(a.build, installed[cmd][len("build/"):]), os.X_OK) \
                and os.access(binary, os.X_OK):
            ok("%s: %s is built (%s) and installed by the Dockerfile" % (n, cmd, binary))
        else:
            fail("%s: %s is not built in %s or not installed by the Dockerfile" % (n, cmd, a.build))
    for tool in ("/usr/local/bin/perfwatch", "/usr/local/bin/pw-migrate"):
        src = installed.get(tool, "")
        if not (src and os.access(os.path.join(a.build, src[len("build/"):]), os.X_OK)):
            fail("%s: not built or not installed" % tool)

    if failures:
        print("deploy_check: %d check(s) failed" % failures)
        return 1
    print("deploy_check: all static checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
