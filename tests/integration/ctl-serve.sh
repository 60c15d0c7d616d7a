#!/bin/sh
# ctl-serve.sh - `gpuburstctl metrics serve` over HTTP, on a state file
# built by gb_mkstate (a done request with instances and calls, a pending
# approval, a denied one, a suspend, capacity memory):
#  - status page off (the default): /metrics answers, / and /api/... are 404;
#  - status page on, on a unix socket (unix:/PATH, mode 0660) with a token:
#    the page's files (index.html, status.js, status.css, favicon.svg)
#    without the token, with the Content-Security-Policy that keeps the page
#    to its own origin; /metrics, /api/status, /api/events and the pictures
#    401 without it, 200 with it (Bearer or ?token=), a wrong one 401;
#    /api/status is the document of the state file (the requests with their
#    instances and calls by region, the pending approval, the pools);
#    /api/events answers text/event-stream whose first event is that
#    document; /api/requests/ID.svg is the request's picture, an unknown ID
#    or a malformed name 404; POST is 405 everywhere;
#  - the socket file goes at SIGTERM; a stale one (nobody listening) is
#    replaced, a live one (another serve) or a regular file is refused;
#  - a bad token file: every user may read it, too short, a blank in it, a
#    FIFO, missing: a clear error naming the file, nothing listens;
#  - metrics.listen unix: with a relative path is a configuration error.
. "$srcdir/ctl-lib.sh"

"$MK" "$tmp/state/state.db" fixture >"$tmp/ids" || { echo "FAIL: gb_mkstate"; exit 1; }
rid() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/ids"; }
DONE=$(rid done) PEND=$(rid pending)
TOKEN=0123456789abcdef0123456789abcdef
printf '%s\n' "$TOKEN" >"$tmp/token"
chmod 600 "$tmp/token"
SOCK="$tmp/status.sock"

write_conf() {	# EXTRA-METRICS-YAML
	{
		cat <<EOF
cluster_name: t
state_dir: $tmp/state
log: {file: $tmp/gb.log}
metrics: {$1}
EOF
		conf_mumbai 40
	} >"$tmp/gb.yaml"
}
SERVE_PID=
serve() {	# start metrics serve; wait until it listens (or exits); output in $SERVE_OUT
	SERVE_OUT=${SERVE_OUT:-$tmp/serve.out}
	SLURM_CONF=/nonexistent "$CTL" -c "$tmp/gb.yaml" metrics serve "$@" >"$SERVE_OUT" 2>&1 &
	SERVE_PID=$!
	for _ in $(seq 1 100); do
		grep -q '^serving' "$SERVE_OUT" && return 0
		kill -0 "$SERVE_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
stop() {
	[ -n "$SERVE_PID" ] || return 0
	kill "$SERVE_PID" 2>/dev/null
	wait "$SERVE_PID"
	SERVE_PID=
}
trap 'stop; rm -rf "$tmp"' EXIT

# http WHERE METHOD PATH [HEADER]: "STATUS\tCONTENT-TYPE\tCSP" then the body;
# WHERE: unix:PATH or host:port.  Event streams: the first event only.
http() {
	"$PY" - "$@" <<'PY'
import http.client, signal, socket, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
where, method, path = sys.argv[1:4]
headers = {"Authorization": sys.argv[4]} if len(sys.argv) > 4 else {}
class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(where[5:])
c = Unix("localhost") if where.startswith("unix:") else http.client.HTTPConnection(where, timeout=10)
c.request(method, path, body=b"x" if method == "POST" else None, headers=headers)
r = c.getresponse()
print("%d\t%s\t%s" % (r.status, r.getheader("Content-Type"), r.getheader("Content-Security-Policy")))
if r.getheader("Content-Type", "").startswith("text/event-stream"):
    body = b""
    while body.count(b"\n\n") < 2:
        body += r.read1(65536)
    sys.stdout.write(body.decode())
else:
    sys.stdout.write(r.read().decode("utf-8", "replace"))
PY
}
status_of() { http "$@" | head -1 | cut -f1; }
expect() {	# WHAT GOT WANT
	[ "$2" = "$3" ] || bad "$1: got '$2', want '$3'"
	ok
}
free_port() {
	"$PY" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# ---- the page off (the default): the metrics only
PORT=$(free_port)
write_conf "listen: 127.0.0.1:$PORT"
serve || bad "serve (page off): $(cat "$tmp/serve.out")"
expect "page off: /metrics" "$(status_of 127.0.0.1:$PORT GET /metrics)" 200
expect "page off: /" "$(status_of 127.0.0.1:$PORT GET /)" 404
expect "page off: /api/status" "$(status_of 127.0.0.1:$PORT GET /api/status)" 404
http 127.0.0.1:$PORT GET /status.js | grep -q 'the status page is off: metrics.status_page' ||
	bad "page off: /status.js does not say why"
stop

# ---- the page on, a unix socket, a token
write_conf "listen: \"unix:$SOCK\", status_page: true, token_file: $tmp/token"
serve || bad "serve (unix, token): $(cat "$tmp/serve.out")"
grep -q "^serving the metrics and the status page at unix:$SOCK (read-only, with a token)" "$tmp/serve.out" ||
	bad "serve said: $(cat "$tmp/serve.out")"
expect "socket mode" "$(stat -c %a "$SOCK")" 660
U="unix:$SOCK"
for f in / /index.html /status.js /status.css /favicon.svg; do
	expect "$f without a token" "$(status_of "$U" GET "$f")" 200
done
expect "index.html" "$(http "$U" GET / | head -1 | cut -f2)" "text/html; charset=utf-8"
expect "status.js" "$(http "$U" GET /status.js | head -1 | cut -f2)" "text/javascript; charset=utf-8"
http "$U" GET / | head -1 | cut -f3 | grep -q "^default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'" ||
	bad "the page's Content-Security-Policy: $(http "$U" GET / | head -1)"
ok
for p in /metrics /api/status /api/events "/api/requests/$DONE.svg"; do
	expect "$p without a token" "$(status_of "$U" GET "$p")" 401
	expect "$p, a wrong token" "$(status_of "$U" GET "$p" "Bearer ${TOKEN}x")" 401
	expect "$p, a wrong ?token=" "$(status_of "$U" GET "$p?token=nope")" 401
	expect "$p, Bearer" "$(status_of "$U" GET "$p" "Bearer $TOKEN")" 200
	expect "$p, ?token=" "$(status_of "$U" GET "$p?token=$TOKEN")" 200
	expect "POST $p" "$(status_of "$U" POST "$p" "Bearer $TOKEN")" 405
done
expect "POST /" "$(status_of "$U" POST /)" 405

http "$U" GET /api/status "Bearer $TOKEN" | sed 1d >"$tmp/status.json"
"$PY" - "$tmp/status.json" "$DONE" "$PEND" <<'PY' || bad "/api/status: $(head -c 600 "$tmp/status.json")"
import json, sys
d = json.load(open(sys.argv[1]))
done, pend = sys.argv[2], sys.argv[3]
reqs = {r["id"]: r for r in d["requests"]}
assert d["cluster"] == "t" and d["state_file"] is True, d
assert len(d["requests"]) == 4, list(reqs)
r = reqs[done]
assert (r["state"], r["node_count"], r["launched"]) == ("done", 4, 4), r
assert r["instances"] == {"total": 4, "alive": 3, "running": 3}, r["instances"]
assert sorted((c["region"], c["calls"], c["ok"]) for c in r["calls"]) == \
    [("ap-northeast-1", 1, 1), ("ap-south-1", 1, 1)], r["calls"]
assert "input" not in r, "what Slurm gave is not the page's"
assert [a["request_id"] for a in d["approvals"]] == [pend], d["approvals"]
assert reqs[pend]["state"] == "pending_approval"
assert d["pools"] and all("region" in p and "asked" not in p for p in d["pools"]), d["pools"]
PY
ok
http "$U" GET /api/events "Bearer $TOKEN" >"$tmp/events"
expect "event stream" "$(head -1 "$tmp/events" | cut -f2)" "text/event-stream; charset=utf-8"
"$PY" - "$tmp/events" "$tmp/status.json" <<'PY' || bad "first event: $(head -c 400 "$tmp/events")"
import json, sys
lines = open(sys.argv[1]).read().split("\n")[1:]
assert lines[0] == "retry: 2000", lines[:3]
i = lines.index("event: status")
assert lines[i + 1].startswith("data: ")
ev = json.loads(lines[i + 1][6:])
st = json.load(open(sys.argv[2]))
ev.pop("now"); st.pop("now")
assert ev == st, "the first event is not the document"
PY
ok
http "$U" GET "/api/requests/$DONE.svg" "Bearer $TOKEN" >"$tmp/pic"
expect "picture type" "$(head -1 "$tmp/pic" | cut -f2)" "image/svg+xml"
sed 1d "$tmp/pic" | grep -q '^<svg' || bad "picture: $(head -c 200 "$tmp/pic")"
ok
expect "an unknown request" "$(status_of "$U" GET /api/requests/0000000000000000.svg "Bearer $TOKEN")" 404
expect "a malformed name" "$(status_of "$U" GET /api/requests/$DONE.png "Bearer $TOKEN")" 404
expect "a path outside" "$(status_of "$U" GET /../etc/passwd "Bearer $TOKEN")" 404

# a second serve on the same socket is refused; the first one still answers
# (the second writes a file of its own: the first one's messages go on in
# serve.out, as libmicrohttpd's about the event stream closed above did in CI)
SERVE_PID_1=$SERVE_PID
SERVE_OUT=$tmp/serve2.out
serve && bad "a second serve on a live socket started: $(cat "$SERVE_OUT")"
grep -q "something answers there already" "$SERVE_OUT" || bad "second serve: $(cat "$SERVE_OUT")"
SERVE_OUT=$tmp/serve.out
ok
SERVE_PID=$SERVE_PID_1
expect "the first still answers" "$(status_of "$U" GET /)" 200
stop
[ -e "$SOCK" ] && bad "the socket file is left at SIGTERM"
ok

# a stale socket file (nobody listening) is replaced; a regular file is not
"$PY" -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$SOCK"
[ -S "$SOCK" ] || bad "no stale socket made"
serve || bad "serve over a stale socket: $(cat "$tmp/serve.out")"
expect "over a stale socket" "$(status_of "$U" GET /)" 200
stop
echo keep >"$SOCK"
serve && bad "serve replaced a regular file"
grep -q "$SOCK is a regular file, not a socket: not replaced" "$tmp/serve.out" ||
	bad "regular file at the socket's path: $(cat "$tmp/serve.out")"
expect "the file kept" "$(cat "$SOCK")" keep
SERVE_PID=
rm -f "$SOCK"

# ---- bad token files: a clear error naming the file, nothing listens
bad_token() {	# WHAT WANT
	serve && bad "serve started with $1"
	grep -q -- "$2" "$tmp/serve.out" || bad "$1: $(cat "$tmp/serve.out")"
	[ -e "$SOCK" ] && bad "$1: the socket was made"
	SERVE_PID=
	ok
}
chmod 644 "$tmp/token"
bad_token "a token every user may read" "metrics.token_file: $tmp/token: every user may read it (mode 0644): chmod o-r"
printf 'short\n' >"$tmp/token"
chmod 600 "$tmp/token"
bad_token "a short token" "the token is 5 characters; 16 to 256 needed"
printf 'abcdefgh abcdefgh\n' >"$tmp/token"
bad_token "a blank" "the token has a blank or a character outside printable ASCII at byte 9"
rm -f "$tmp/token"
mkfifo "$tmp/token"
bad_token "a FIFO" "$tmp/token is not a regular file (a FIFO)"
rm -f "$tmp/token"
bad_token "no file" "metrics.token_file: cannot open $tmp/token: No such file or directory"

# ---- a relative socket path is a configuration error
write_conf 'listen: "unix:status.sock"'
SLURM_CONF=/nonexistent "$CTL" -c "$tmp/gb.yaml" metrics serve >"$tmp/out" 2>&1
expect "unix: with a relative path" "$?" 3
grep -q "listen 'unix:status.sock' is not an address and port nor a socket" "$tmp/out" ||
	bad "unix: relative: $(cat "$tmp/out")"
ok

echo "ctl-serve: $n checks"
exit $fail
