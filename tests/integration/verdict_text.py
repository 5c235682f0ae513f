"""verdict_text.py: reads a GateVerdict in protoc's text format (protoc --decode).

parse(path) -> (top, blocks): top maps the message's scalar fields to their
values (quotes stripped); blocks lists its nested messages (families, series)
in order, each a dict of its scalar fields plus "kind", the field's name.
Shared by the gate's scenario tests (test_gate_quiet.sh, test_gate_registered.sh),
which import it from tests/integration.
"""


def parse(path):
    top, blocks, cur, depth = {}, [], None, 0
    for raw in open(path):
        l = raw.strip()
        if l.endswith("{"):
            if depth == 0:
                cur = {"kind": l[:-1].strip()}
            depth += 1
            continue
        if l == "}":
            depth -= 1
            if depth == 0:
                blocks.append(cur)
            continue
        k, _, v = l.partition(": ")
        (cur if depth else top)[k] = v.strip('"')
    return top, blocks
