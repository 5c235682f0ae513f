#!/usr/bin/env python3
"""pager_replay.py: a replay of the pager's five input topics, for the pager's
scale-out test (tests/integration/test_pager_scaleout.sh) and bench
(bench/pager_scaleout.sh).

  pager_replay.py NS PHASE [--events N] [--seed S] [--out DIR]

Produces (kcat) the messages of one PHASE of the replay, under namespace NS
(every model, release and id carries it), in an order shuffled with seed S:

  alerts        per RC event (N of them, disjoint CL ranges): the gate's
                alerts of three families (chat-8b 7.8% of spend: TPOT +8.2%,
                cost +8.2%, B8 TPOT +7.4%, HBM -1.6% P1; rank-moe-110b 5%: MFU
                -3.3%, TPOT p99 +3.0%; tail-13b 1%: TPOT +12%) and the
                GateVerdict naming them; a watcher shift of its own (+5% on a
                top-tier series: a high page, held for nothing); a P1-only RC
                (a ticket) with its verdict; a verdict validating a registered
                win (an info notice);
  attributions  the attributor's owner hint ("compiler") for each RC's
                headline alert;
  bisections    the bisector's verified culprit for each RC's headline alert
                and for the watcher's shift.

Prints what it produced ("alerts: 34 messages") and, with --out, keeps the
encoded messages there. The spend weights of NS's models are SQL on stdout
with --spend-sql (psql reads it).
"""
import os
import random
import subprocess
import sys
import tempfile
import time

FAMILIES = [  # family, spend share, tier
    ("chat-8b", 0.078, "top"),
    ("rank-moe-110b", 0.05, "top"),
    ("tail-13b", 0.01, "tail"),
    ("watch-70b", 0.04, "top"),
    ("p1-34b", 0.03, "top"),
]
RC_ALERTS = [  # series id, family, config, metric, pct, verdict
    (10, "chat-8b", "decode.B64.s2048.int8", "tpot_p50_ms", 8.2, "VERDICT_BLOCKING"),
    (15, "chat-8b", "decode.B64.s2048.int8", "cost_per_mtok_usd", 8.2, "VERDICT_BLOCKING"),
    (78, "chat-8b", "decode.B8.s2048.int8", "tpot_p50_ms", 7.4, "VERDICT_BLOCKING"),
    (14, "chat-8b", "decode.B64.s2048.int8", "hbm_bw_util", -1.6, "VERDICT_P1"),
    (29, "rank-moe-110b", "decode.B8.s2048.int8", "mfu", -3.3, "VERDICT_BLOCKING"),
    (27, "rank-moe-110b", "decode.B8.s2048.int8", "tpot_p99_ms", 3.0, "VERDICT_BLOCKING"),
    (90, "tail-13b", "decode.B8.s2048.int8", "tpot_p50_ms", 12.0, "VERDICT_BLOCKING"),
]


def series(ns, family, config, metric):
    key = "%s.%s/hlo:1/v6e-4/%s/%s" % (family, ns, config, metric)
    return key, ('series_key: "%s" series { model: "%s.%s" hlo_fingerprint: "hlo:1" platform: "v6e-4" '
                 'config: "%s" metric: "%s" }' % (key, family, ns, config, metric))


def alert(ns, aid, family, config, metric, pct, verdict, source, release, lo, hi, now):
    key, s = series(ns, family, config, metric)
    return key, ('alert_id: "%s" revision: 1 kind: ALERT_KIND_REGRESSION source: %s created_unix_us: %d %s '
                 'baseline { median: 3.9 mad: 0.02 n: 30 } observed { median: 4.2 n: 5 release: "%s" } '
                 'delta { pct: %s z_robust: 10 fdr_q: 0.001 } effect_gate { mde_pct: 1 passed_min_effect: true } '
                 'changepoint { nightly: "2026-06-17" cl_range_lo: "cl/%d" cl_range_hi: "cl/%d" n_cls: %d } '
                 'verdict: %s release_id: "%s"'
                 % (aid, source, now, s, release, pct, lo, hi, hi - lo, verdict, release))


def messages(ns, phase, events, now):
    """The (topic, key, proto type, proto file, text) of one phase."""
    out = []
    for e in range(events):
        rel, lo, hi = "rc%d-%s" % (e, ns), 1000 * (e + 1) + 100, 1000 * (e + 1) + 138
        head = "gate-%s-e1-s10" % rel
        if phase == "alerts":
            fams = {}
            for sid, fam, cfg, met, pct, v in RC_ALERTS:
                aid = "gate-%s-e1-s%d" % (rel, sid)
                key, text = alert(ns, aid, fam, cfg, met, pct, v, "ALERT_SOURCE_GATE", rel, lo, hi, now)
                out.append(("perf.alerts.v1", key, "Alert", "alert.proto", text))
                fams.setdefault(fam, []).append('series { series_key: "%s" family: "%s.%s" alert_id: "%s" verdict: %s }'
                                                % (key, fam, ns, aid, v))
            text = ('release_id: "%s" evaluation: 1 verdict: VERDICT_BLOCKING candidate_build_id: "%s" '
                    'evaluated_unix_us: %d ' % (rel, rel, now))
            text += " ".join('families { family: "%s.%s" verdict: VERDICT_BLOCKING }' % (f, ns) for f in fams)
            text += " " + " ".join(x for f in fams.values() for x in f)
            out.append(("perf.gate.verdicts.v1", rel, "GateVerdict", "gate.proto", text))
        elif phase == "attributions":
            key, s = series(ns, "chat-8b", "decode.B64.s2048.int8", "tpot_p50_ms")
            out.append(("perf.attributions.v1", head, "Attribution", "attribution.proto",
                        'alert_id: "%s" %s owner_hint: "compiler" status: "ok" created_unix_us: %d' % (head, s, now)))
        elif phase == "bisections":
            key, s = series(ns, "chat-8b", "decode.B64.s2048.int8", "tpot_p50_ms")
            out.append(("perf.bisections.v1", "bs-" + rel, "Bisection", "bisect.proto",
                        'bisection_id: "bs-%s" alert_id: "%s" %s range_lo: "cl/%d" range_hi: "cl/%d" n_cls: %d '
                        'culprit: "cl/%d" culprit_owner: "xla-fusion" verified_adjacent_clean: true '
                        'cherry_pick_reproduced: true status: BISECTION_STATUS_DONE started_unix_us: %d '
                        'updated_unix_us: %d' % (rel, head, s, lo, hi, hi - lo, hi - 6, now, now)))
    # the watcher's shift (no gate: paged at once), a P1-only RC (a ticket), a validated win (a notice)
    wid = "watch-70b-%s" % ns
    if phase == "alerts":
        key, text = alert(ns, wid, "watch-70b", "decode.B8.s2048.int8", "tpot_p50_ms", 5.0, "VERDICT_UNSPECIFIED",
                          "ALERT_SOURCE_WATCHER", "", 90100, 90120, now)
        out.append(("perf.alerts.v1", key, "Alert", "alert.proto", text.replace(' release_id: ""', "")))
        rel = "rcp1-" + ns
        aid = "gate-%s-e1-s1" % rel
        key, text = alert(ns, aid, "p1-34b", "decode.B8.s2048.int8", "tpot_p50_ms", 1.5, "VERDICT_P1",
                          "ALERT_SOURCE_GATE", rel, 80100, 80120, now)
        out.append(("perf.alerts.v1", key, "Alert", "alert.proto", text))
        out.append(("perf.gate.verdicts.v1", rel, "GateVerdict", "gate.proto",
                    'release_id: "%s" evaluation: 1 verdict: VERDICT_P1 candidate_build_id: "%s" evaluated_unix_us: %d '
                    'families { family: "p1-34b.%s" verdict: VERDICT_P1 } '
                    'series { series_key: "%s" family: "p1-34b.%s" alert_id: "%s" verdict: VERDICT_P1 }'
                    % (rel, rel, now, ns, key, ns, aid)))
        rel = "rcwin-" + ns
        key, s = series(ns, "chat-8b", "decode.B8.s2048.int8", "ttft_p50_ms")
        out.append(("perf.gate.verdicts.v1", rel, "GateVerdict", "gate.proto",
                    'release_id: "%s" evaluation: 1 verdict: VERDICT_PASS candidate_build_id: "%s" evaluated_unix_us: %d '
                    'families { family: "chat-8b.%s" verdict: VERDICT_VALIDATED_WIN tier: TIER_TOP } '
                    'series { series_key: "%s" family: "chat-8b.%s" verdict: VERDICT_VALIDATED_WIN delta_pct: -4.0 '
                    'baseline_median: 100 candidate_median: 96 unit: "ms" }' % (rel, rel, now, ns, key, ns)))
    elif phase == "bisections":
        key, s = series(ns, "watch-70b", "decode.B8.s2048.int8", "tpot_p50_ms")
        out.append(("perf.bisections.v1", "bs-" + wid, "Bisection", "bisect.proto",
                    'bisection_id: "bs-%s" alert_id: "%s" %s range_lo: "cl/90100" range_hi: "cl/90120" n_cls: 20 '
                    'culprit: "cl/90111" culprit_owner: "xla-layout" verified_adjacent_clean: true '
                    'cherry_pick_reproduced: true status: BISECTION_STATUS_DONE started_unix_us: %d updated_unix_us: %d'
                    % (wid, wid, s, now, now)))
    return out


def main():
    args = sys.argv[1:]
    ns, phase = args[0], args[1]
    events, seed, out_dir, spend = 4, 1, None, False
    i = 2
    while i < len(args):
        if args[i] == "--events":
            events = int(args[i + 1])
        elif args[i] == "--seed":
            seed = int(args[i + 1])
        elif args[i] == "--out":
            out_dir = args[i + 1]
        elif args[i] == "--spend-sql":
            spend = True
            i -= 1
        i += 2
    if spend:
        print("INSERT INTO perfwatch.spend_weights (model, spend_share, tier, source) VALUES %s ON CONFLICT (model) DO NOTHING;"
              % ", ".join("('%s.%s', %s, '%s', 'it')" % (f, ns, share, tier) for f, share, tier in FAMILIES))
        return 0
    msgs = messages(ns, phase, events, int(time.time()) * 1000000)
    random.Random(seed).shuffle(msgs)
    d = out_dir or tempfile.mkdtemp(prefix="pager-replay-")
    os.makedirs(d, exist_ok=True)
    brokers = os.environ["PW_KAFKA_BOOTSTRAP_SERVERS"]
    for n, (topic, key, typ, proto, text) in enumerate(msgs):
        path = os.path.join(d, "%s-%03d.bin" % (phase, n))
        with open(path, "wb") as f:
            subprocess.run(["protoc", "--encode=perfwatch.v1." + typ, "-I", "proto", "proto/perfwatch/v1/" + proto],
                           input=text.encode(), stdout=f, check=True)
        subprocess.run(["kcat", "-P", "-b", brokers, "-t", topic, "-k", key, path], check=True)
    print("%s: %d messages" % (phase, len(msgs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
