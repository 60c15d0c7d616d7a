#!/usr/bin/env python3
# page-driver.py - load gpuburst's status page in a headless Chromium and
# watch it through the DevTools protocol (python3-websocket), for
# 37-status-page.sh.
#
#   page-driver.py URL DIR JOB_FILE TIMEOUT
#
# Loads URL, waits for the page's first document, writes DIR/ready with the
# request ids the page shows then, and waits for JOB_FILE (the Slurm job id
# the test submits after that).  It then watches, without reloading, the
# row of that job's request until its state is done, records every
# (state, progress) it showed, opens the request's timeline picture, and
# writes DIR/result.json: the rows seen, the documents the page drew, the
# page's loads and navigations, every URL the page asked for, its console
# errors and the picture's size.  Exit 0 when it got that far; the test
# judges the result.
import json
import os
import subprocess
import sys
import time
import urllib.request

import websocket

URL, DIR, JOB_FILE, TIMEOUT = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
PROFILE = os.path.join(DIR, "chromium-profile")
DEADLINE = time.monotonic() + TIMEOUT


def log(msg):
    print("page-driver: " + msg, flush=True)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        for d in os.environ.get("PATH", "").split(":"):
            p = os.path.join(d, name)
            if os.access(p, os.X_OK):
                return p
    sys.exit("page-driver: no chromium")


args = [chromium(), "--headless=new", "--disable-gpu", "--no-first-run",
        "--no-default-browser-check", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-extensions",
        "--disable-default-apps", "--disable-dev-shm-usage", "--no-pings",
        "--user-data-dir=" + PROFILE, "--remote-debugging-port=0", "about:blank"]
if os.geteuid() == 0:
    args.insert(1, "--no-sandbox")     # Chromium refuses its sandbox as root
os.makedirs(PROFILE, exist_ok=True)
browser = subprocess.Popen(args, stdout=open(os.path.join(DIR, "chromium.log"), "w"),
                           stderr=subprocess.STDOUT, env=dict(os.environ, HOME=DIR))

try:
    port_file = os.path.join(PROFILE, "DevToolsActivePort")
    while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
        if browser.poll() is not None or time.monotonic() > DEADLINE:
            sys.exit("page-driver: chromium did not start (see chromium.log)")
        time.sleep(0.1)
    port = int(open(port_file).read().split("\n")[0])
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    targets = json.load(opener.open("http://127.0.0.1:%d/json/list" % port, timeout=10))
    page = next(t for t in targets if t["type"] == "page")
    ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=5,
                                     suppress_origin=True)

    seq = [0]
    events = {"loads": 0, "navigations": 0, "urls": [], "errors": []}

    def on_event(m):
        meth, p = m.get("method"), m.get("params", {})
        if meth == "Page.loadEventFired":
            events["loads"] += 1
        elif meth == "Page.frameNavigated" and "parentId" not in p["frame"]:
            events["navigations"] += 1
        elif meth == "Network.requestWillBeSent":
            events["urls"].append(p["request"]["url"])
        elif meth == "Runtime.exceptionThrown":
            events["errors"].append(p["exceptionDetails"].get("text", "exception"))
        elif meth == "Runtime.consoleAPICalled" and p.get("type") == "error":
            events["errors"].append(" ".join(str(a.get("value")) for a in p["args"]))
        elif meth == "Log.entryAdded" and p["entry"]["level"] == "error":
            e = p["entry"]
            # EventSource's own reconnects are the page's business, not errors
            if "EventSource" not in e.get("text", ""):
                events["errors"].append(e.get("source", "") + ": " + e.get("text", ""))

    def call(method, **params):
        seq[0] += 1
        ws.send(json.dumps({"id": seq[0], "method": method, "params": params}))
        while True:
            m = json.loads(ws.recv())
            if m.get("id") == seq[0]:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            on_event(m)

    def js(expr):
        r = call("Runtime.evaluate", expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def pump(seconds):
        """Read events for about [seconds]."""
        end = time.monotonic() + seconds
        ws.settimeout(0.1)
        try:
            while time.monotonic() < end:
                try:
                    on_event(json.loads(ws.recv()))
                except websocket.WebSocketTimeoutException:
                    pass
        finally:
            ws.settimeout(5)

    def wait(what, expr):
        while True:
            v = js(expr)
            if v:
                return v
            if time.monotonic() > DEADLINE:
                sys.exit("page-driver: timed out waiting for " + what)
            pump(0.25)

    for domain in ("Page", "Network", "Runtime", "Log"):
        call(domain + ".enable")
    call("Page.navigate", url=URL)
    wait("the first document",
         "!!document.body && Number(document.body.dataset.updates || 0) >= 1")
    js("window.gbMarker = 'loaded once'")
    rows = ("Array.from(document.querySelectorAll('#requests tbody tr'))"
            ".map(r => ({id: r.dataset.id, state: r.dataset.state,"
            " job: r.querySelector('.job').textContent,"
            " progress: r.querySelector('.progress').textContent}))")
    initial = js(rows)
    with open(os.path.join(DIR, "ready.tmp"), "w") as f:
        json.dump([r["id"] for r in initial], f)
    os.rename(os.path.join(DIR, "ready.tmp"), os.path.join(DIR, "ready"))
    log("loaded; %d requests shown; waiting for %s" % (len(initial), JOB_FILE))

    while not os.path.exists(JOB_FILE):
        if time.monotonic() > DEADLINE:
            sys.exit("page-driver: no job file")
        pump(0.25)
    job = open(JOB_FILE).read().strip()
    seen = []
    row = None
    while True:
        now = [r for r in js(rows) if r["job"] == job]
        if now:
            row = now[0]
            cur = [row["state"], row["progress"]]
            if not seen or seen[-1] != cur:
                seen.append(cur)
                log("job %s: request %s %s, %s" % (job, row["id"], cur[0], cur[1]))
            if row["state"] in ("done", "failed", "cancelled"):
                break
        if time.monotonic() > DEADLINE:
            break
        pump(0.2)

    picture = None
    if row:
        js("document.querySelector('#requests tr[data-id=\"%s\"]').click()" % row["id"])
        picture = wait("the timeline picture",
                       "(() => { const i = document.getElementById('timeline-img');"
                       " return i.complete && i.naturalWidth > 0 ?"
                       " {w: i.naturalWidth, h: i.naturalHeight, src: i.getAttribute('src')}"
                       " : null; })()")
    pump(1)
    result = {
        "initial": [r["id"] for r in initial],
        "job": job,
        "request": row["id"] if row else None,
        "seen": seen,
        "updates": int(js("Number(document.body.dataset.updates || 0)")),
        "marker": js("window.gbMarker || null"),
        "conn": js("document.getElementById('conn').textContent"),
        "approvals_shown": js("document.querySelectorAll('#approvals tbody tr').length"),
        "pools_shown": js("document.querySelectorAll('#pools tbody tr').length"),
        "picture": picture,
        "loads": events["loads"],
        "navigations": events["navigations"],
        "urls": events["urls"],
        "errors": events["errors"],
    }
    with open(os.path.join(DIR, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    log("done: %d rows seen, %d documents drawn" % (len(seen), result["updates"]))
    try:
        call("Browser.close")
    except Exception:
        pass
finally:
    try:
        browser.wait(timeout=10)
    except subprocess.TimeoutExpired:
        browser.kill()
        browser.wait()
