#!/usr/bin/env python3
"""http_abuse.py: abuse one service's HTTP endpoint for a while, then check it.

    http_abuse.py PORT SECONDS [EXTRA_PATH]

For SECONDS, all at once against 127.0.0.1:PORT:
  - slowloris: CONNS (200) connections each send a partial request
    ("GET /metrics HTTP/1.1", a Host header) and then one more header line
    every 3 s, never the blank line that ends the request, and are held open;
  - odd requests, one after the other in a loop: a 100 KB path, a 100 KB
    query, a 20 KB header, malformed and odd query strings on /readyz,
    /metrics and EXTRA_PATH (e.g. the pager's /triage), bytes that are not
    HTTP, a body on a GET, a POST announcing 1 GB, HTTP/0.9, pipelined
    requests, a request cut off mid-line; each must get an answer or a
    close within 15 s;
  - a prober: GET /healthz once a second (5 s timeout), as a scrape would.
Then it closes the slow connections and asks GET /healthz, /readyz and
/metrics normally.

Prints one JSON object: slow connections opened and still open at the end
(the server closes a request not complete within its deadline), odd requests
sent and how they ended (status code or "closed"/"timeout"), probe answers
and their worst latency during the abuse, and the status and latency of each
request afterwards. Exits 0 when every probe during the abuse and every
request afterwards answered 200; 1 otherwise (the JSON says which failed).
"""
import json
import socket
import sys
import threading
import time

CONNS = 200
HOST = "127.0.0.1"


def now():
    return time.monotonic()


def one_request(port, raw, timeout=15.0):
    """Sends raw bytes; returns the status code of the first answer, "closed" or "timeout"."""
    s = socket.create_connection((HOST, port), timeout=timeout)
    try:
        try:
            s.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may refuse before reading everything; its answer says why
        data = b""
        deadline = now() + timeout
        while b"\r\n" not in data and now() < deadline:
            try:
                chunk = s.recv(4096)
            except socket.timeout:
                return "timeout"
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
        if not data:
            return "closed" if now() < deadline else "timeout"
        parts = data.split(b"\r\n", 1)[0].split()
        if len(parts) >= 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit():
            return int(parts[1])
        return "garbage:" + data[:40].decode("latin-1")
    finally:
        s.close()


def get(port, path, timeout=5.0):
    t0 = now()
    try:
        st = one_request(port, b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                         timeout)
    except OSError as e:
        st = "error:" + e.__class__.__name__
    return st, round(now() - t0, 3)


def odd_requests(extra):
    big = "a" * 100_000
    paths = ["/readyz", "/metrics"] + ([extra] if extra else [])
    reqs = [
        ("100KB path", b"GET /" + big.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("100KB query", b"GET /metrics?q=" + big.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("20KB header", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 20_000 + b"\r\n\r\n"),
        ("not HTTP", bytes(range(256)) * 8),
        ("empty line", b"\r\n\r\n"),
        ("HTTP/0.9", b"GET /healthz\r\n\r\n"),
        ("absolute URI", b"GET http://evil.example/healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("body on GET", b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + b"z" * 5000),
        ("POST 1 GB", b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\nabc"),
        ("negative length", b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
        ("chunked GET", b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffff\r\n"),
        ("pipelined 50", b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 50),
        ("method garbage", b"\x00\x01GET / HTTP/1.1\r\n\r\n"),
        ("unknown method", b"BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("HTTP/9.9", b"GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n"),
        ("dot-dot", b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("encoded slash", b"GET /%2e%2e%2fmetrics HTTP/1.1\r\nHost: x\r\n\r\n"),
    ]
    odd_q = ["?", "?&&&", "?a", "?=", "?==&=", "?%", "?%z", "?%zz", "?%00", "?a=%00b", "?a=%ff%fe",
             "?page=%00&action=%ff&exp=-1&sig=%", "?page=x&page=y", "?exp=99999999999999999999999",
             "?" + "a=1&" * 3000, "?a=" + "%41" * 5000, "?a b=c", "?a=\xff".encode("latin-1").decode("latin-1"),
             "#frag", "?x=<script>alert(1)</script>", "?x=';DROP TABLE runs;--"]
    for p in paths:
        for q in odd_q:
            raw = ("GET " + p + q + " HTTP/1.1\r\nHost: x\r\n\r\n").encode("latin-1")
            reqs.append((p + " odd query " + repr(q[:24]), raw))
    return reqs


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    extra = sys.argv[3] if len(sys.argv) > 3 else ""
    stop = threading.Event()
    out = {"port": port, "seconds": seconds}

    # slowloris
    slow = []
    opened = 0
    for _ in range(CONNS):
        try:
            s = socket.create_connection((HOST, port), timeout=5)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            s.setblocking(False)
            slow.append(s)
            opened += 1
        except OSError:
            pass
    out["slow_opened"] = opened

    def trickle():
        i = 0
        while not stop.wait(3.0):
            i += 1
            for s in slow:
                try:
                    s.send(b"X-Slow-%d: 1\r\n" % i)
                except OSError:
                    pass

    results = {}

    def odd():
        reqs = odd_requests(extra)
        sent = 0
        while not stop.is_set():
            for name, raw in reqs:
                if stop.is_set():
                    break
                try:
                    r = one_request(port, raw)
                except OSError as e:
                    r = "error:" + e.__class__.__name__
                sent += 1
                results.setdefault(name, {})
                results[name][str(r)] = results[name].get(str(r), 0) + 1
        out["odd_sent"] = sent

    probes = []

    def prober():
        while not stop.is_set():
            t0 = now()
            probes.append(get(port, "/healthz"))
            stop.wait(max(0.0, 1.0 - (now() - t0)))

    threads = [threading.Thread(target=f) for f in (trickle, odd, prober)]
    t_start = now()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    out["abuse_seconds"] = round(now() - t_start, 1)

    # which slow connections the server closed (a read returns b"" or an answer)
    still = 0
    for s in slow:
        try:
            s.recv(4096)  # b"" or an answer (e.g. 408): the server ended it
        except BlockingIOError:
            still += 1
        except OSError:
            pass
    out["slow_still_open"] = still
    for s in slow:
        s.close()

    out["odd"] = results
    out["probes"] = len(probes)
    out["probes_ok"] = sum(1 for st, _ in probes if st == 200)
    out["probe_worst_s"] = max((lat for _, lat in probes), default=None)
    time.sleep(0.5)
    after = {}
    for p in ["/healthz", "/readyz", "/metrics"] + ([extra] if extra else []):
        after[p] = get(port, p)
    out["after"] = after
    print(json.dumps(out, sort_keys=True))
    ok = out["probes"] > 0 and out["probes_ok"] == out["probes"] and all(
        after[p][0] == 200 for p in ("/healthz", "/readyz", "/metrics"))
    # the extra path must answer (any HTTP status: /triage with no query is a 400 page)
    if extra and not isinstance(after[extra][0], int):
        ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
