#!/usr/bin/env python3
"""sql_params.py: no C source builds SQL text from values (issue 19).

Every query perfwatch sends is a string literal with $1, $2 ... parameters;
values travel as parameters or through COPY's binary stream, never inside the
SQL text. This check reads every .c and .h file of the tree (common, services,
tools, tests, bench, deploy) and flags any call that composes text with an SQL
fragment in it:

  - a formatting call (snprintf, sprintf, vsnprintf, asprintf, vasprintf,
    dprintf, fprintf to anything but stdout/stderr) whose format holds an SQL
    keyword (upper case, as the project writes SQL) and a conversion (%s, %d...);
  - any other *printf (a string builder such as sb_printf) given a literal
    with an SQL keyword and a conversion;
  - a concatenating or copying call (strcat, strncat, strcpy, strncpy, stpcpy,
    memcpy, fputs, fwrite, any *append* or *_cat helper) given a literal that
    holds an SQL keyword.

An exception (an identifier list from a static table, a test's fixture) is
written where it happens: a comment "sql-ok: REASON" on the call's first line
or on one of the three lines above it. The check prints every exception it
honoured, so that the list is visible in the test log.

  tests/lint/sql_params.py ROOT        exit 1 listing each violation
  tests/lint/sql_params.py --self-test the rules against known bad and good code
"""
import os
import re
import sys

DIRS = ["common", "services", "tools", "tests", "bench", "deploy"]
SQL = re.compile(
    r"\b(SELECT|INSERT\s+INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|WHERE|VALUES|COPY|FROM|JOIN|"
    r"RETURNING|ON\s+CONFLICT|SAVEPOINT|TRUNCATE|CREATE|ALTER|DROP|LISTEN|NOTIFY)\b")
CONV = re.compile(r"%(?!%)[-+ #0']*(\*|\d+)?(\.(\*|\d+))?(hh|h|ll|l|j|z|t|L)?[diouxXeEfFgGaAcsp]")
FORMAT_FUNCS = {"snprintf": 2, "sprintf": 1, "vsnprintf": 2, "vsprintf": 1, "asprintf": 1,
                "vasprintf": 1, "dprintf": 1, "fprintf": 1, "vfprintf": 1}
COPY_FUNCS = {"strcat", "strncat", "strcpy", "strncpy", "stpcpy", "stpncpy", "memcpy", "fputs",
              "fwrite"}
# any other *printf (string builders such as sb_printf) and *append* / *cat helpers count too
CALL = re.compile(r"\b(" + "|".join(sorted(set(FORMAT_FUNCS) | COPY_FUNCS)) +
                  r"|\w+printf|\w*append\w*|\w+_cat)\s*\(")
OUTPUT_ONLY = {"printf", "vprintf"}  # standard output is not SQL
ALLOW = re.compile(r"sql-ok:\s*\S")


def strip_comments(src):
    """Blanks comments (keeping newlines and string literals) so that offsets stay."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def call_args(src, i):
    """The arguments (text) of the call whose '(' ends just before i."""
    args, cur, depth, n = [], [], 1, len(src)
    while i < n and depth > 0:
        c = src[i]
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            cur.append(src[i:j + 1])
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if depth == 1 and c == ",":
            args.append("".join(cur).strip())
            cur = []
        elif depth > 0:
            cur.append(c)
        i += 1
    args.append("".join(cur).strip())
    return args


def literal_text(arg):
    """The concatenated string literals of an argument ('' when it has none)."""
    return "".join(m.group(1) for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', arg))


def check_source(path, src):
    """(violations, exceptions): lists of "path:line: what"."""
    bad, allowed = [], []
    lines = src.split("\n")
    code = strip_comments(src)
    for m in CALL.finditer(code):
        name = m.group(1)
        if name in OUTPUT_ONLY:
            continue
        args = call_args(code, m.end())
        what = None
        if name.endswith("printf") and name not in FORMAT_FUNCS:
            for a in args:
                t = literal_text(a)
                if SQL.search(t) and CONV.search(t):
                    what = f"{name} formats SQL with values: \"{t[:70]}\""
                    break
        elif name in FORMAT_FUNCS:
            k = FORMAT_FUNCS[name]
            if name in ("fprintf", "vfprintf", "dprintf") and args and args[0] in (
                    "stderr", "stdout", "1", "2"):
                continue
            fmt = literal_text(args[k]) if len(args) > k else ""
            if SQL.search(fmt) and CONV.search(fmt):
                what = f"{name} formats SQL with values: \"{fmt[:70]}\""
        else:
            for a in args:
                t = literal_text(a)
                if t and SQL.search(t):
                    what = f"{name} concatenates SQL text: \"{t[:70]}\""
                    break
        if not what:
            continue
        line = code.count("\n", 0, m.start()) + 1
        where = f"{path}:{line}"
        near = "\n".join(lines[max(0, line - 4):line])
        if ALLOW.search(near):
            reason = ALLOW.search(near).group(0)
            allowed.append(f"{where}: {what} ({near[near.find('sql-ok:'):].splitlines()[0].strip(' */')})")
        else:
            bad.append(f"{where}: {what}")
    return bad, allowed


def self_test():
    cases = [
        ('snprintf(q, sizeof q, "DELETE FROM t WHERE service = \'%s\'", s);', 1),
        ('snprintf(q, sizeof q,\n  "SELECT a FROM t "\n  "WHERE k = %d", k);', 1),
        ('asprintf(&q, "INSERT INTO t VALUES (%s)", v);', 1),
        ('fprintf(m, "UPDATE t SET a = %s", v);', 1),
        ('strcat(q, " WHERE id = ");', 1),
        ('/* sql-ok: identifiers from a static table */\n'
         'snprintf(q, sizeof q, "COPY t (%s) FROM STDIN", cols);', 0),
        ('pw_pg_exec(pg, "SELECT a FROM t WHERE k = $1", 1, p, &r, e, n);', 0),
        ('fprintf(stderr, "SELECT failed: %s", msg);', 0),
        ('snprintf(b, sizeof b, "%s has %d points", key, n);', 0),
        ('snprintf(b, sizeof b, "100%% of the rows FROM %s", w); /* not sql-ok */', 1),
        ('const char *q = "SELECT 1 FROM t WHERE a LIKE \'x%\'";', 0),
        ('sb_printf(&q, "SELECT a FROM t WHERE k IN (%s)", list);', 1),
        ('pw_buf_append(&q, " WHERE k = ");', 1),
        ('sb_printf(&e, "%s: intensity %.0f FLOP/B", what, x);', 0),
        ('printf("SELECT-like output %s", s);', 0),
    ]
    fails = 0
    for src, want in cases:
        bad, _ = check_source("self-test.c", src)
        if len(bad) != want:
            fails += 1
            print(f"sql_params self-test: FAIL: {src!r}: {len(bad)} findings, want {want}")
    print(f"sql_params self-test: {len(cases) - fails} of {len(cases)} cases as expected")
    return 1 if fails else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    root = argv[1]
    bad, allowed, nfiles = [], [], 0
    for d in DIRS:
        for dp, dn, fn in os.walk(os.path.join(root, d)):
            dn.sort()
            for f in sorted(fn):
                if not f.endswith((".c", ".h")):
                    continue
                p = os.path.join(dp, f)
                with open(p, encoding="utf-8", errors="replace") as fh:
                    b, a = check_source(os.path.relpath(p, root), fh.read())
                bad += b
                allowed += a
                nfiles += 1
    for a in allowed:
        print(f"sql_params: allowed: {a}")
    for b in bad:
        print(f"sql_params: FAIL: {b}")
    print(f"sql_params: {nfiles} files, {len(bad)} violations, {len(allowed)} allowed exceptions")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
