#!/usr/bin/env python3
"""doc_paths.py: every repository path the docs and deploy/ name exists.

A page that names `services/pager/triage.c:21` or a manifest that names
`deploy/k8s/grafana.yaml` sends its reader to a file; when the file moves or
never was, the reader is lost. This check reads README.md, docs/*.md and
every file under deploy/ (text files git tracks; without git, every text file
below deploy/ outside lib/ directories) and finds each word that starts with
one of the tree's top folders:

  services/ common/ tools/ tests/ bench/ docs/ deploy/ migrations/ proto/

and is not itself inside a longer path (`build/tools/pw-topics`,
`run/kafka/data`, `/etc/perfwatch/...` and URLs are other places: build
outputs and what programs create at run time are not in the tree). The path
must exist; a `:LINE` or `:FIRST-LAST` suffix must be a line of the file. A
path with a `*` or a `[...]` must match at least one file
(`tests/unit/test_*door.c`, `common/pw_drift.[ch]`); a path holding a
placeholder (`services/<name>/main.c`, `${DIR}`, `{a,b}`) is a pattern, not
a path, and is passed over, and so is a path that git ignores
(`deploy/secrets/`, made by deploy/secrets.sh where it is deployed). A
program is named by its build path (`build/tools/pw-migrate`) or its source.

  tests/lint/doc_paths.py ROOT        exit 1 listing each missing path
  tests/lint/doc_paths.py --self-test the rules against known text
"""
import glob
import os
import re
import subprocess
import sys

TOPS = ["services", "common", "tools", "tests", "bench", "docs", "deploy", "migrations", "proto"]
# a top folder not preceded by a path character, then path characters; a :LINE or :A-B after
PATH = re.compile(r"(?<![\w./$~-])((?:" + "|".join(TOPS) + r")/[\w.\-/*<>{}$\[\]]*)(?::(\d+)(?:-(\d+))?)?")
PLACEHOLDER = re.compile(r"[<>{}$]")
TEXT_LIMIT = 1 << 20


def sources(root):
    """README.md, docs/*.md and deploy/**: the files whose paths are checked."""
    out = [os.path.join(root, "README.md")]
    out += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files", "-z", "deploy"], capture_output=True,
                                check=True).stdout.decode().split("\0")
        out += [os.path.join(root, p) for p in listed if p]
    except (OSError, subprocess.CalledProcessError):
        for d, dirs, files in os.walk(os.path.join(root, "deploy")):
            dirs[:] = sorted(x for x in dirs if x != "lib")
            out += [os.path.join(d, f) for f in sorted(files)]
    return [p for p in out if os.path.isfile(p)]


def read_text(path):
    """The file's text, or None for a large or binary file."""
    if os.path.getsize(path) > TEXT_LIMIT:
        return None
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def ignored(root, path):
    """Whether git ignores path (made at run time); False without git."""
    try:
        return subprocess.run(["git", "-C", root, "check-ignore", "-q", "--no-index", path],
                              capture_output=True).returncode == 0
    except OSError:
        return False


def line_count(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n") + 1


def check_path(root, path, first, last):
    """None when path (with its line numbers) names something in the tree, else what is wrong."""
    path = path.rstrip(".")  # a sentence's full stop
    if PLACEHOLDER.search(path):
        return None
    full = os.path.join(root, path)
    if ignored(root, path):
        return None
    if "*" in path or "[" in path:
        return None if glob.glob(full) else "matches no file"
    if not os.path.exists(full):
        return "does not exist"
    if first is not None:
        if not os.path.isfile(full):
            return "is not a file but has a line number"
        n = line_count(full)
        for ln in (first, last):
            if ln is not None and not 1 <= int(ln) <= n:
                return "has no line %s (%d lines)" % (ln, n)
    return None


def check_text(root, name, text):
    """[(name, line, path, problem)] for every path of text that names nothing."""
    bad = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in PATH.finditer(line):
            problem = check_path(root, m.group(1), m.group(2), m.group(3))
            if problem:
                shown = m.group(0).rstrip(".")
                bad.append((name, lineno, shown, problem))
    return bad


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        for p in ["services/pager/triage.c", "docs/z.md", "deploy/k8s/gate.yaml", "tests/unit/test_a_door.c",
                  "common/pw_dlq.c", "tools/perfwatch/main.c", "bench/run.sh", "migrations/0001_x.sql"]:
            os.makedirs(os.path.join(root, os.path.dirname(p)), exist_ok=True)
            with open(os.path.join(root, p), "w") as f:
                f.write("a\nb\nc\n")
        good = """services/pager/triage.c:2 and `docs/z.md`, deploy/k8s/gate.yaml:1-3. common/pw_dlq.[ch]
            tests/unit/test_*door.c, common/, (tools/perfwatch/main.c) bench/run.sh migrations/0001_x.sql
            services/<name>/main.c ${BUILD}/tools/x build/tools/pw-topics run/kafka/data
            /etc/perfwatch/deploy/x.conf https://example.org/services/none.c ./run/tests/x"""
        bad = """services/x/y.c
            see docs/gone.md:3 and deploy/k8s/grafana.yaml
            services/pager/triage.c:40 common/pw_dlq.c:1-9 tests/unit/test_*nothing.c
            tools/gone/ bench/gone.sh migrations/0099_gone.sql proto/none.proto common/pw_x.[ch]"""
        errors = []
        found = check_text(root, "good", good)
        if found:
            errors.append("flagged good text: %s" % found)
        found = [b[2] for b in check_text(root, "bad", bad)]
        want = ["services/x/y.c", "docs/gone.md:3", "deploy/k8s/grafana.yaml", "services/pager/triage.c:40",
                "common/pw_dlq.c:1-9", "tests/unit/test_*nothing.c", "tools/gone/", "bench/gone.sh",
                "migrations/0099_gone.sql", "proto/none.proto", "common/pw_x.[ch]"]
        if found != want:
            errors.append("bad text: flagged %s, want %s" % (found, want))
    for e in errors:
        print("self-test: " + e)
    print("doc_paths self-test: %s" % ("FAILED" if errors else "ok"))
    return 1 if errors else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = argv[1]
    bad, files = [], sources(root)
    for path in files:
        text = read_text(path)
        if text is not None:
            bad += check_text(root, os.path.relpath(path, root), text)
    for name, lineno, path, problem in bad:
        print("%s:%d: %s %s" % (name, lineno, path, problem))
    print("doc_paths: %d files read, %d paths that name nothing" % (len(files), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
