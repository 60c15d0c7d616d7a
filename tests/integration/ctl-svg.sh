#!/bin/sh
# ctl-svg.sh - `gpuburstctl requests show ID --svg FILE` on a request a real
# burst made: gpuburst-resume queues 6 nodes of a nodeset homed in
# Singapore (the approval policy gates it), `gpuburstctl approve` lets it go
# and gpuburst-worker launches against gpuburst-cloudsim's default scenario,
# where Singapore is short of GPUs: InsufficientInstanceCapacity in
# ap-southeast-1a (an injected one whose message is hostile markup) and 1c,
# instances in ap-southeast-1b, Mumbai and Tokyo.  Slurm is a closed port
# (the NodeAddr updates fail, recorded as such).  Then:
#  - the picture is well-formed XML (xmllint, else python), its texts are
#    escaped (the message comes back intact, no raw markup), and it has a
#    bar per call coloured by outcome and one per instance, a lane per AZ;
#  - rsvg-convert renders it to a PNG of the size the SVG announces, whose
#    pixels hold the ok and the capacity-refusal colours inside those bars;
#  - "-" writes it to standard output; --json says what was written;
#  - a FILE in a missing directory (8), a directory or a FIFO (10), an
#    unknown request (8), "-" with --json (2): a clear error, nothing
#    written, an existing file left as it was, no temporary file behind.
CLOUDSIM_NO_AWS_CLI=yes
. "$srcdir/cloudsim-lib.sh"

command -v rsvg-convert >/dev/null 2>&1 || skip "rsvg-convert is not installed (Debian: librsvg2-bin)"
CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
RESUME="$GB_TOP_BUILDDIR/src/resume/gpuburst-resume"
WORKER="$GB_TOP_BUILDDIR/src/worker/gpuburst-worker"

# the workers detach: wait for the last one before the directory goes
trap 'wait_worker; cleanup' EXIT

start_sim "$GB_TOP_SRCDIR/etc/cloudsim/default.yaml"
{
	conf_head
	conf_creds
	cat <<EOF
  connect_timeout: 2s
  request_timeout: 5s
regions:
  - name: ap-southeast-1
    ami: ami-1
    azs: [{name: ap-southeast-1a, subnets: [subnet-apse1a-1]}, {name: ap-southeast-1b, subnets: [subnet-apse1b-1]}, {name: ap-southeast-1c, subnets: [subnet-apse1c-1]}]
  - name: ap-south-1
    ami: ami-2
    azs: [{name: ap-south-1a, subnets: [subnet-aps1a-1]}, {name: ap-south-1b, subnets: [subnet-aps1b-1]}]
  - name: ap-northeast-1
    ami: ami-3
    azs: [{name: ap-northeast-1a, subnets: [subnet-apne1a-1]}]
fallback_groups:
  sea: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-southeast-1, ap-south-1, ap-northeast-1]}
policy: {manual_resume_needs_approval: true}
admins: {users: ["#$(id -u)"]}
nodesets:
  - {name: g5, nodes: "g5-[1-16]", instance_type: g5.xlarge, home_region: ap-southeast-1}
EOF
} >"$TMP/gb.yaml"
printf 'ClusterName=unreach\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\nMessageTimeout=2\nAuthType=auth/none\n' >"$TMP/slurm.conf"
export GPUBURST_WORKER="$WORKER"
gctl() { SLURM_CONF="$TMP/slurm.conf" "$CTL" -c "$TMP/gb.yaml" "$@"; }

# ---- the burst
HOSTILE='No <capacity> & "none" '"'here'"' </text><script>alert(1)</script>'
control POST /_sim/fault "$("$PYTHON3" -c 'import json, sys
print(json.dumps({"kind": "error", "action": "RunInstances", "region": "ap-southeast-1",
                  "code": "InsufficientInstanceCapacity", "status": 500, "message": sys.argv[1]}))' "$HOSTILE")" \
	>/dev/null || fail "fault injection"
SLURM_CONF="$TMP/slurm.conf" "$RESUME" -c "$TMP/gb.yaml" 'g5-[1-6]' || fail "gpuburst-resume"
gctl --json requests >"$TMP/reqs.json" || fail "requests"
req=$(jget "$TMP/reqs.json" 'd["requests"][0]["id"]')
expect_eq "gated" "$(jget "$TMP/reqs.json" 'd["requests"][0]["state"]')" pending_approval
gctl approve "$req" --comment "let it go" >"$TMP/approve.out" 2>"$TMP/err" || fail "approve: $(cat "$TMP/approve.out" "$TMP/err")"
for _ in $(seq 1 240); do
	gctl --json requests show "$req" >"$TMP/show.json" 2>"$TMP/err" || fail "requests show: $(cat "$TMP/err")"
	case $(jget "$TMP/show.json" 'd["request"]["state"]') in done|failed) break ;; esac
	sleep 0.25
done
wait_worker
gctl --json requests show "$req" >"$TMP/show.json" || fail "requests show"
expect_eq "burst" "$(jget "$TMP/show.json" '[d["request"]["state"], d["request"]["result"]]')" '["done", "success"]'
expect_eq "outcomes" "$(jget "$TMP/show.json" 'sorted(set((a["state"], a["error_class"]) for a in d["attempts"]), key=str)')" \
	'[["failed", "CAPACITY"], ["ok", null]]'
expect_eq "hostile message recorded" "$(jget "$TMP/show.json" '[a["message"] for a in d["attempts"] if a["message"] and "<" in a["message"]]')" \
	"$("$PYTHON3" -c 'import json, sys; print(json.dumps([sys.argv[1]]))' "$HOSTILE")"
[ "$(jget "$TMP/show.json" 'len(set(a["region"] for a in d["attempts"]))')" -ge 2 ] || fail "one region only"
[ "$(jget "$TMP/show.json" 'len(d["instances"])')" -ge 6 ] || fail "fewer than 6 instances"
ok "a real burst: $(jget "$TMP/show.json" 'len(d["attempts"])') calls in $(jget "$TMP/show.json" 'len(set((a["region"], a["az"]) for a in d["attempts"]))') AZs, $(jget "$TMP/show.json" 'len(d["instances"])') instances, approved"

# ---- the picture
mkdir "$TMP/pics"
gctl requests show "$req" --svg "$TMP/pics/t.svg" >"$TMP/stdout" 2>"$TMP/err" ||
	fail "--svg: $(cat "$TMP/stdout" "$TMP/err")"
lanes=$(jget "$TMP/show.json" 'len(set((x["region"], x["az"]) for x in d["attempts"] + d["instances"]))')
grep -q "^wrote $TMP/pics/t.svg: 1200 x [0-9]* pixels; $lanes of $lanes AZ lanes, " "$TMP/stdout" ||
	fail "--svg said: $(cat "$TMP/stdout")"
[ ! -s "$TMP/err" ] || fail "--svg wrote to stderr: $(cat "$TMP/err")"
expect_eq "files in out/" "$(ls -A "$TMP/pics")" t.svg
if command -v xmllint >/dev/null 2>&1; then
	xmllint --noout "$TMP/pics/t.svg" || fail "xmllint"
	ok "xmllint --noout: well-formed"
fi
grep -q '<script>\|<capacity>' "$TMP/pics/t.svg" && fail "raw markup in the picture"
grep -q 'No &lt;capacity&gt; &amp; &quot;none&quot; &apos;here&apos; &lt;/text&gt;&lt;script&gt;' "$TMP/pics/t.svg" ||
	fail "the message is not escaped as expected"
"$PYTHON3" - "$TMP/pics/t.svg" "$TMP/show.json" "$HOSTILE" <<'PY' || fail "the SVG's content"
import json, sys
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
d = json.load(open(sys.argv[2]))
hostile = sys.argv[3]
assert root.tag == NS + "svg" and root.get("width") == "1200", root.attrib
h = int(root.get("height"))
assert 200 < h <= 3200, h
def titled(prefix):
    return [(e, e.find(NS + "title").text) for e in root.iter(NS + "rect")
            if e.find(NS + "title") is not None and e.find(NS + "title").text.startswith(prefix)]
calls = titled("attempt #")
assert len(calls) == len(d["attempts"]), (len(calls), len(d["attempts"]))
colour = {"ok": "#2ca02c", "partial": "#bcbd22", "CAPACITY": "#d62728"}
for a in d["attempts"]:
    bar = [e for e, t in calls if t.startswith("attempt #%d " % a["seq"])]
    assert len(bar) == 1, a["seq"]
    if a["state"] == "ok":
        want = colour["ok" if a["got"] >= a["asked"] else "partial"]
    else:
        want = colour[a["error_class"]]
    assert bar[0].get("fill") == want, (a, bar[0].attrib)
# the message comes back whole through the XML parser
assert any(hostile in t for e, t in calls), [t for e, t in calls]
insts = titled("instance ")
assert len(insts) == len(d["instances"]), (len(insts), len(d["instances"]))
texts = [e.text or "" for e in root.iter(NS + "text")]
for a in d["attempts"]:
    assert a["az"] in texts, a["az"]
assert any(t.startswith("Request %s: resume of g5-[1-6] (6 nodes, nodeset g5): done, success" % d["request"]["id"])
           for t in texts), texts[:3]
for label in ("approval asked", "approved by", "v1 heuristic", "result: success", "ok: got all",
              "capacity refusal"):
    assert any(t.startswith(label) for t in texts), label
print("ok - the SVG: %d call bars coloured by outcome, %d instance bars, %d lanes, the message intact"
      % (len(calls), len(insts), len(set((a["region"], a["az"]) for a in d["attempts"]))))
PY
ok "escaped: no raw markup, the entities in place"

# ---- rendered
rsvg-convert -o "$TMP/t.png" "$TMP/pics/t.svg" || fail "rsvg-convert"
"$PYTHON3" - "$TMP/pics/t.svg" "$TMP/t.png" <<'PY' || fail "the PNG"
import struct, sys, zlib
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"

def png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
    bpp = 4 if ctype == 6 else 3
    raw, stride, rows, prev, i = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if f:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                if f == 1:
                    line[x] = (line[x] + a) & 255
                elif f == 2:
                    line[x] = (line[x] + b) & 255
                elif f == 3:
                    line[x] = (line[x] + (a + b) // 2) & 255
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, lambda x, y: tuple(rows[y][x * bpp:x * bpp + 3]), lambda y: rows[y]

root = ET.parse(sys.argv[1]).getroot()
w, h, bpp, px, px_row = png(sys.argv[2])
assert (w, h) == (int(root.get("width")), int(root.get("height"))), (w, h, root.attrib)
def rgb(s):
    return tuple(int(s[i:i + 2], 16) for i in (1, 3, 5))
def near(p, q):
    return all(abs(a - b) <= 6 for a, b in zip(p, q))
found = {}
for e in root.iter(NS + "rect"):
    t = e.find(NS + "title")
    if t is None or not t.text.startswith("attempt #"):
        continue
    x, y = int(float(e.get("x"))), int(float(e.get("y")))
    got = px(x + 1, y + 2)
    assert near(got, rgb(e.get("fill"))), (t.text[:40], e.get("fill"), got)
    found[e.get("fill")] = found.get(e.get("fill"), 0) + 1
assert found.get("#2ca02c") and found.get("#d62728"), found
# and below the legend, whole areas of those colours (exact: bar insides)
def count(row, pat):
    n, i = 0, row.find(pat)
    while i >= 0:
        n += i % bpp == 0
        i = row.find(pat, i + 1)
    return n
counts = {}
for c in ("#2ca02c", "#d62728"):
    pat = bytes(rgb(c)) + (b"\xff" if bpp == 4 else b"")
    counts[c] = sum(count(px_row(y), pat) for y in range(150, h))
assert all(n >= 30 for n in counts.values()), counts
print("ok - rendered %dx%d; ok bars %d, capacity bars %d, their pixels %s" % (w, h,
      found["#2ca02c"], found["#d62728"], counts))
PY
ok "rsvg-convert renders it"

# ---- "-" is standard output; --json says what was written
gctl requests show "$req" --svg - >"$TMP/stdout.svg" 2>"$TMP/err" || fail "--svg -: $(cat "$TMP/err")"
head -c 5 "$TMP/stdout.svg" | grep -q '^<?xml' || fail "--svg - wrote: $(head -c 80 "$TMP/stdout.svg")"
tail -n 1 "$TMP/stdout.svg" | grep -q '^</svg>$' || fail "--svg -: not one document"
"$PYTHON3" -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$TMP/stdout.svg" ||
	fail "--svg -: not XML"
gctl --json requests show "$req" --svg "$TMP/pics/j.svg" >"$TMP/j.json" || fail "--json --svg"
expect_eq "--json" "$(jget "$TMP/j.json" '[d["schema"], d["svg"]["file"].endswith("/pics/j.svg"), d["svg"]["width"], d["svg"]["lanes"] == d["svg"]["lanes_total"] == '"$lanes"', d["svg"]["calls"] == d["svg"]["calls_total"], d["svg"]["instances"] == d["svg"]["instances_total"], "error" in d]')" \
	'["gpuburstctl/1", true, 1200, true, true, true, false]'
expect_eq "--json bytes" "$(jget "$TMP/j.json" 'd["svg"]["bytes"]')" "$(wc -c <"$TMP/pics/j.svg" | tr -d ' ')"
ok "--svg - to standard output; --json --svg FILE"

# ---- bad input: an error naming what is wrong, nothing written
cp "$TMP/pics/t.svg" "$TMP/keep.svg"
bad_svg() {	# WANT_RC WHAT_STDERR_SAYS ARG...
	want=$1 says=$2
	shift 2
	gctl requests show "$@" >"$TMP/stdout" 2>"$TMP/err"
	rc=$?
	expect_eq "exit of requests show $*" "$rc" "$want"
	grep -q -- "$says" "$TMP/err" || fail "requests show $*: stderr: $(cat "$TMP/err")"
	case " $* " in
	*" --json "*) jget "$TMP/stdout" 'd["error"]["exit"]' | grep -qx "$want" ||
		fail "requests show $*: stdout: $(cat "$TMP/stdout")" ;;
	*) [ ! -s "$TMP/stdout" ] || fail "requests show $*: stdout: $(cat "$TMP/stdout")" ;;
	esac
}
bad_svg 8 "directory $TMP/nodir: No such file or directory" "$req" --svg "$TMP/nodir/t.svg"
[ ! -e "$TMP/nodir" ] || fail "nodir made"
bad_svg 8 "$TMP/keep.svg is not a directory" "$req" --svg "$TMP/keep.svg/t.svg"
bad_svg 10 "$TMP/pics is a directory, not a file" "$req" --svg "$TMP/pics"
mkfifo "$TMP/pics/fifo"
bad_svg 10 "$TMP/pics/fifo is a FIFO: only a regular file is replaced" "$req" --svg "$TMP/pics/fifo"
rm "$TMP/pics/fifo"
bad_svg 8 "no request 0123456789abcdef" 0123456789abcdef --svg "$TMP/keep.svg"
cmp -s "$TMP/keep.svg" "$TMP/pics/t.svg" || fail "a failed run changed the file"
bad_svg 8 "no request 0123456789abcdef" 0123456789abcdef --svg "$TMP/pics/u.svg"
bad_svg 2 "--svg - and --json would both write to standard output" --json "$req" --svg -
bad_svg 2 'missing argument for option "--svg"' "$req" --svg
bad_svg 10 "no file name" "$req" --svg ''
expect_eq "files in out/ after the errors" "$(ls -A "$TMP/pics" | tr '\n' ' ')" "j.svg t.svg "
ok "bad FILE or request: exit 8, 10, 2 with the reason; no file written or changed"
exit 0
