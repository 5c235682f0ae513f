#!/usr/bin/env python3
"""cdp_click.py: drive a headless Chromium through the DevTools protocol, with
nothing but the standard library (a minimal WebSocket client), for the
triage-page test.

  cdp_click.py URL [--click ELEMENT_ID] [--expect-id ID]... [--set ID=VALUE]... [--out FILE]
                   [--count SELECTOR=N]... [--screenshot ID=FILE.png]

Starts `chromium --headless` with remote debugging on a free port, opens URL,
checks that every --expect-id element exists, gives each --set form field
(an input or a select, by id) its value as a user would, optionally clicks the element
ELEMENT_ID with real mouse events at its centre (Input.dispatchMouseEvent)
and waits for the page it leads to, then writes the final page's text (and
its HTTP status in the first line) to --out or stdout. Before any click,
each --count checks that document.querySelectorAll(SELECTOR) finds exactly N
elements as Chromium rendered them, and --screenshot saves a PNG of the
element ID as drawn (Page.captureScreenshot clipped to its box). Exit 1 on
any failure.
"""
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request


class WS:
    def __init__(self, url):
        assert url.startswith("ws://")
        hostport, path = url[5:].split("/", 1)
        host, port = hostport.split(":")
        self.s = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, hostport, key)).encode())
        resp = b""
        while b"\r\n\r\n" not in resp:
            resp += self.s.recv(4096)
        head, self.buf = resp.split(b"\r\n\r\n", 1)
        assert b" 101 " in head.split(b"\r\n")[0], head
        self.id = 0
        self.events = []

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        data = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            data += self._read(n)
            if b0 & 0x80:
                return json.loads(data)

    def send(self, method, **params):
        self.id += 1
        payload = json.dumps({"id": self.id, "method": method, "params": params}).encode()
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
                                 if n < 65536 else bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
        want = self.id
        while True:
            m = self.recv()
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, name, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for i, e in enumerate(self.events):
                if e.get("method") == name:
                    return self.events.pop(i)
            self.events.append(self.recv())
        raise TimeoutError(name)


def main():
    args = sys.argv[1:]
    url, click, expect, out, sets, counts, shots = args[0], None, [], None, [], [], []
    i = 1
    while i < len(args):
        if args[i] == "--click":
            click = args[i + 1]
        elif args[i] == "--expect-id":
            expect.append(args[i + 1])
        elif args[i] == "--out":
            out = args[i + 1]
        elif args[i] == "--set":
            sets.append(args[i + 1].split("=", 1))
        elif args[i] == "--count":
            counts.append(args[i + 1].rsplit("=", 1))
        elif args[i] == "--screenshot":
            shots.append(args[i + 1].split("=", 1))
        i += 2
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    profile = tempfile.mkdtemp(prefix="pw-chromium-")
    chrome = subprocess.Popen(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=%d" % port,
                               "--user-data-dir=" + profile, "about:blank"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        targets = None
        for _ in range(200):
            try:
                targets = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=1))
                if any(t["type"] == "page" for t in targets):
                    break
            except OSError:
                pass
            time.sleep(0.1)
        page = next(t for t in targets if t["type"] == "page")
        ws = WS(page["webSocketDebuggerUrl"])
        ws.send("Page.enable")
        ws.send("Network.enable")
        ws.send("Emulation.setDeviceMetricsOverride", width=1280, height=1024, deviceScaleFactor=1, mobile=False)
        ws.send("Page.navigate", url=url)
        ws.wait_event("Page.loadEventFired")

        def ev(expr):
            return ws.send("Runtime.evaluate", expression=expr, returnByValue=True)["result"].get("value")

        for e in expect:
            if not ev("!!document.getElementById(%s)" % json.dumps(e)):
                raise AssertionError("no element #%s on %s" % (e, url))
        for sel, n in counts:
            got = ev("document.querySelectorAll(%s).length" % json.dumps(sel))
            if got != int(n):
                raise AssertionError("%s: %s elements on %s, want %s" % (sel, got, url, n))
        for eid, path in shots:
            box = ev("(() => { const e = document.getElementById(%s); if (!e) return null; window.scrollTo(0, 0);"
                     " const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()"
                     % json.dumps(eid))
            if not box or box[2] <= 0 or box[3] <= 0:
                raise AssertionError("no visible element #%s to screenshot on %s" % (eid, url))
            png = ws.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                          clip={"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1})["data"]
            open(path, "wb").write(base64.b64decode(png))
        for fid, value in sets:
            ok = ev("(() => { const e = document.getElementById(%s); if (!e) return false; e.focus(); e.value = %s;"
                    " e.dispatchEvent(new Event('input', {bubbles: true}));"
                    " e.dispatchEvent(new Event('change', {bubbles: true})); return e.value === %s; })()"
                    % (json.dumps(fid), json.dumps(value), json.dumps(value)))
            if not ok:
                raise AssertionError("could not set #%s to %r on %s" % (fid, value, url))
        if click:
            box = ev("(() => { const r = document.getElementById(%s).getBoundingClientRect();"
                     " return [r.x + r.width / 2, r.y + r.height / 2]; })()" % json.dumps(click))
            ws.events.clear()
            for t in ("mousePressed", "mouseReleased"):
                ws.send("Input.dispatchMouseEvent", type=t, x=box[0], y=box[1], button="left", clickCount=1)
            ws.wait_event("Page.loadEventFired")
        status = 0
        for e in ws.events:
            if e.get("method") == "Network.responseReceived" and e["params"]["type"] == "Document":
                status = e["params"]["response"]["status"]
        text = "%d\n%s\n" % (status, ev("document.body.innerText"))
        if out:
            open(out, "w").write(text)
        else:
            sys.stdout.write(text)
        return 0
    finally:
        chrome.terminate()
        try:
            chrome.wait(10)
        except subprocess.TimeoutExpired:
            chrome.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
