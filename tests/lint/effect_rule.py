#!/usr/bin/env python3
"""effect_rule.py: the minimum-effect filter is one rule, stated once, in the
same words in the code, its comments, the docs and the console report.

The rule (PW_COMPARE_FILTER_RULE, common/pw_stats.h):

    |effect| > max(0.7*MDE, 2*SE),  SE = sigma*sqrt(1/n_base + 1/n_cand)

It had drifted into three: max(0.7*MDE, 2*SE) in the code, "max(practical,
noise floor)" in docs/gate.md and "max(MDE_tier, 2σ)" in gate_eval.h. This
check fails when a place that states the rule does not carry its words, when
one states an older or vaguer form, when the reason for the 0.7 (the power
figure it buys) is missing, or when the report prints the filter in other
words than pw_compare_filter_text's.

Usage: effect_rule.py ROOT   (the source tree; exit 1 with the findings)
"""
import pathlib
import re
import sys

RULE = "max(0.7*MDE, 2*SE)"
FULL = "|effect| > max(0.7*MDE, 2*SE), SE = sigma*sqrt(1/n_base + 1/n_cand)"
# where the rule is stated, and what each must carry
STATES = {
    "common/pw_stats.h": [FULL, "0.935", "0.930"],
    "services/gate/gate_eval.h": [RULE, "PW_COMPARE_FILTER_RULE"],
    "docs/statistics.md": [RULE, "0.935", "0.930"],
    "docs/gate.md": [RULE, "0.935", "max(0.7*MDE=0.70%, 2*SE="],
}
# older or vaguer statements of the filter, wherever they describe the rule in force
STALE = [
    "max(MDE_tier, 2σ)",
    "max(practical, noise floor)",
    "max(T, k·σ",
    "noise=%.2f%%",
    "max(practical=%.2f%%",
]
# files that may quote the old rule as history ("until 2026-12")
HISTORY_OK = re.compile(r"until 2026-12|Until 2026-12|old rule|the rule until|Artifact 7 prints")
SCANNED = ["common", "services", "tools/perfwatch", "docs"]


def main(root):
    root = pathlib.Path(root)
    bad = []
    for rel, needles in STATES.items():
        text = (root / rel).read_text(encoding="utf-8")
        for n in needles:
            if n not in text:
                bad.append(f"{rel}: does not carry \"{n}\"")
    header = (root / "common/pw_stats.h").read_text(encoding="utf-8")
    m = re.search(r'#define PW_COMPARE_FILTER_RULE "([^"]*)"', header)
    if not m or m.group(1) != FULL:
        bad.append("common/pw_stats.h: PW_COMPARE_FILTER_RULE is not the rule")
    for d in SCANNED:
        for path in sorted((root / d).rglob("*")):
            if path.suffix not in (".c", ".h", ".md") or not path.is_file():
                continue
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for s in STALE:
                    if s in line and not HISTORY_OK.search(line):
                        bad.append(f"{path.relative_to(root)}:{i}: states the filter as \"{s}\"")
    # the console report and the alerts print through pw_compare_filter_text
    for rel in ("tools/perfwatch/cmd_gate.c", "services/gate/gate_messages.c"):
        if "pw_compare_filter_text(" not in (root / rel).read_text(encoding="utf-8"):
            bad.append(f"{rel}: prints the filter without pw_compare_filter_text")
    for b in bad:
        print(b)
    print(f"effect_rule: {len(bad)} finding(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
