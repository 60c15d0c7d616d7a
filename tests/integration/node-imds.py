#!/usr/bin/env python3
# node-imds.py - a fake EC2 instance metadata service (IMDSv2) and a fake
# EC2 CreateTags endpoint on 127.0.0.1, for node-agent.sh
#
#   node-imds.py DIR
#
# Listens on an ephemeral port of 127.0.0.1 and writes it to DIR/port.
# What it serves is read from files of DIR at each request, so that the
# test changes the instance by writing files:
#   instance-id, instance-type, launch-index, az, region   identity items
#   node-tag     the gpuburst:node tag's value (absent: 404, not yet tagged)
#   tags-off     present: instance metadata tags are off (404 on tags/instance)
#   user-data    the user data (absent: 404)
#   spot         present: spot/instance-action answers its content
#   rebalance    present: events/recommendations/rebalance answers its content
# IMDSv2 as EC2: PUT /latest/api/token with the TTL header gives a token;
# a GET without a valid token is 401.  The instance role "gb-node-role"
# has session credentials.  Every request is appended to DIR/requests.log
# as "SOURCE_IP METHOD PATH STATUS"; every EC2 call (POST /) to
# DIR/ec2.log as one JSON object of its form fields.
import http.server
import json
import os
import socketserver
import sys
import urllib.parse

DIR = sys.argv[1]
ROLE = "gb-node-role"
tokens = set()


def read(name, default=None):
    try:
        with open(os.path.join(DIR, name)) as f:
            return f.read()
    except FileNotFoundError:
        return default


def log(name, line):
    with open(os.path.join(DIR, name), "a") as f:
        f.write(line + "\n")


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="text/plain"):
        data = body.encode()
        log("requests.log", "%s %s %s %d" % (self.client_address[0], self.command,
                                             self.path, status))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(n)
        if self.path != "/latest/api/token":
            return self.reply(404, "")
        if not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            return self.reply(400, "missing TTL")
        tok = "tok-%d" % (len(tokens) + 1)
        tokens.add(tok)
        self.reply(200, tok)

    def meta(self, p):
        items = {
            "instance-id": read("instance-id", "i-0123456789abcdef0"),
            "ami-launch-index": read("launch-index", "0"),
            "instance-type": read("instance-type", "p5.48xlarge"),
            "placement/availability-zone": read("az", "us-east-1a"),
            "placement/region": read("region", "us-east-1"),
            "instance-life-cycle": "spot",
            "local-ipv4": self.client_address[0],
        }
        if p in items:
            return 200, items[p]
        tags_off = read("tags-off") is not None
        tag = read("node-tag")
        if p == "tags/instance":
            if tags_off:
                return 404, ""
            return 200, "gpuburst:cluster\n" + ("gpuburst:node" if tag else "")
        if p == "tags/instance/gpuburst:node":
            if tags_off or tag is None:
                return 404, ""
            return 200, tag.strip()
        if p == "spot/instance-action":
            s = read("spot")
            return (404, "") if s is None else (200, s)
        if p == "events/recommendations/rebalance":
            s = read("rebalance")
            return (404, "") if s is None else (200, s)
        if p == "iam/security-credentials/":
            return 200, ROLE
        if p == "iam/security-credentials/" + ROLE:
            return 200, json.dumps({
                "Code": "Success", "LastUpdated": "2026-12-06T12:00:00Z",
                "Type": "AWS-HMAC", "AccessKeyId": "ASIAFAKEINSTANCEROLE",
                "SecretAccessKey": "fake-secret-key-of-the-role",
                "Token": "fake-session-token-of-the-role",
                "Expiration": "2099-01-01T00:00:00Z"})
        return 404, ""

    def do_GET(self):
        if self.headers.get("X-aws-ec2-metadata-token") not in tokens:
            return self.reply(401, "")
        if self.path == "/latest/user-data":
            ud = read("user-data")
            return self.reply(404, "") if ud is None else self.reply(200, ud)
        prefix = "/latest/meta-data/"
        if not self.path.startswith(prefix):
            return self.reply(404, "")
        status, body = self.meta(self.path[len(prefix):])
        self.reply(status, body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        form = dict(urllib.parse.parse_qsl(self.rfile.read(n).decode()))
        form["_authorization"] = self.headers.get("Authorization", "")
        form["_security_token"] = self.headers.get("X-Amz-Security-Token", "")
        log("ec2.log", json.dumps(form, sort_keys=True))
        if form.get("Action") != "CreateTags":
            return self.reply(400, "<Response><Errors><Error><Code>InvalidAction</Code>"
                              "<Message>no</Message></Error></Errors></Response>")
        self.reply(200, '<?xml version="1.0" encoding="UTF-8"?>\n'
                   '<CreateTagsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">'
                   "<requestId>r-1</requestId><return>true</return></CreateTagsResponse>",
                   "text/xml")


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = S(("127.0.0.1", 0), H)
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
srv.serve_forever()
