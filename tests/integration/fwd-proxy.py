#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""fwd-proxy.py - a small forward HTTP proxy for the integration tests.

Listens on 127.0.0.1 (port given, or 0 for an ephemeral one) and serves
    CONNECT host:port                 a tunnel: bytes copied both ways
    GET|POST|... http://host:port/p   forwarded, the answer relayed
Host names ending in .gpuburst.test (and loopback names and addresses)
are mapped to 127.0.0.1; anything else is refused with 403: the proxy
never connects off the loopback, whatever it is asked.  With --refuse
STATUS every request is answered with that status (407 with a
Proxy-Authenticate challenge) and nothing is connected.

One line per request is appended to --log: "METHOD TARGET auth=yes|no"
(whether a Proxy-Authorization header came; its value is never written).
The port goes to --port-file and the pid to --pid-file, each written
whole (a temporary file renamed), then "listening on 127.0.0.1:PORT" is
printed.  Python 3 standard library only.
"""
import argparse
import http.client
import http.server
import ipaddress
import os
import select
import socket
import sys
import threading
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
              "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}


def loopback_for(host):
    """127.0.0.1 for a name this proxy serves, else None."""
    h = host.strip("[]").rstrip(".").lower()
    if h.endswith(".gpuburst.test") or h == "localhost":
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(h).is_loopback:
            return "127.0.0.1"
    except ValueError:
        pass
    return None


def split_target(target):
    """("host", port) of "host:port" or "[v6]:port"; ValueError if malformed."""
    host, sep, port = target.rpartition(":")
    if not sep or not host:
        raise ValueError(target)
    p = int(port)
    if not 0 < p < 65536:
        raise ValueError(target)
    return host, p


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fwd-proxy"

    def log_message(self, fmt, *args):  # the request log is ours
        pass

    def record(self):
        auth = "yes" if self.headers.get("Proxy-Authorization") else "no"
        with self.server.log_lock:
            with open(self.server.log_path, "a") as f:
                f.write("%s %s auth=%s\n" % (self.command, self.path, auth))

    def answer(self, status, text=""):
        body = text.encode()
        self.send_response(status)
        if status == 407:
            self.send_header("Proxy-Authenticate", 'Basic realm="fwd-proxy"')
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def refused(self):
        """Answer as --refuse says; RET whether the request is done."""
        if self.server.refuse:
            self.answer(self.server.refuse, "refused by fwd-proxy --refuse\n")
            self.close_connection = True
            return True
        return False

    def do_CONNECT(self):
        self.record()
        if self.refused():
            return
        try:
            host, port = split_target(self.path)
        except ValueError:
            self.answer(400, "bad CONNECT target\n")
            return
        addr = loopback_for(host)
        if addr is None:
            self.answer(403, "fwd-proxy only reaches the loopback\n")
            return
        try:
            up = socket.create_connection((addr, port), timeout=10)
        except OSError as e:
            self.answer(502, "cannot connect: %s\n" % e)
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        self.relay(self.connection, up)
        self.close_connection = True

    def relay(self, a, b):
        socks = [a, b]
        try:
            while True:
                ready, _, _ = select.select(socks, [], [], 30)
                if not ready:
                    return
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        except OSError:
            return
        finally:
            b.close()

    def forward(self):
        self.record()
        if self.refused():
            return
        u = urllib.parse.urlsplit(self.path)
        if u.scheme != "http" or not u.hostname:
            self.answer(400, "an absolute http:// URL is needed\n")
            return
        addr = loopback_for(u.hostname)
        if addr is None:
            self.answer(403, "fwd-proxy only reaches the loopback\n")
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        path = (u.path or "/") + ("?" + u.query if u.query else "")
        try:
            c = http.client.HTTPConnection(addr, u.port or 80, timeout=30)
            c.request(self.command, path, body=body, headers=headers)
            r = c.getresponse()
            data = r.read()
        except OSError as e:
            self.answer(502, "cannot forward: %s\n" % e)
            return
        self.send_response(r.status, r.reason)
        for k, v in r.getheaders():
            if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        c.close()

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = forward


def write_whole(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any)")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--pid-file")
    ap.add_argument("--log", required=True, help="one line per request")
    ap.add_argument("--refuse", type=int, metavar="STATUS",
                    help="answer every request with STATUS (403, 407 ...)")
    a = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.log_path = a.log
    srv.log_lock = threading.Lock()
    srv.refuse = a.refuse
    open(a.log, "a").close()
    port = srv.server_address[1]
    if a.pid_file:
        write_whole(a.pid_file, "%d\n" % os.getpid())
    write_whole(a.port_file, "%d\n" % port)
    print("listening on 127.0.0.1:%d" % port, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
