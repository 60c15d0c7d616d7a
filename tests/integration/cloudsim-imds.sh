#!/bin/sh
# cloudsim-imds.sh - the instance metadata service as an instance sees it,
# from its own private address: identity paths, user data, the token rules,
# the instance role's credentials (used through the AWS CLI to tag the
# instance itself, and read by botocore's own IMDS client), Spot
# interruption and rebalance notices (POST /_sim/interrupt), the Spot
# termination by real time and by /_sim/time, and the control API's errors.

. "${srcdir:-.}/cloudsim-lib.sh"

"$PYTHON3" -c 'import botocore.utils' 2>/dev/null ||
	skip "python3 botocore is needed to cross-check the IMDS with its own client"

BOOT="$TMP/boot"
start_sim "$DATA/imds.yaml" --boot-dir "$BOOT"
AMI=ami-0123456789abcdef0
ACCOUNT=123456789012
ROLE=gpuburst-node

# imds IP PATH...: GET each PATH from IP with a fresh IMDSv2 token and
# without one; a JSON object PATH -> [status, body, content type] and
# "notoken:PATH" -> status, on stdout.
cat >"$TMP/imds.py" <<'PY'
import http.client, json, sys
port, ip = int(sys.argv[1]), sys.argv[2]
def req(method, path, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(ip, 0))
    c.request(method, path, headers=headers or {})
    r = c.getresponse()
    b = r.read()
    c.close()
    return [r.status, b.decode("latin-1"), r.getheader("Content-Type")]
tok = req("PUT", "/latest/api/token", {"X-aws-ec2-metadata-token-ttl-seconds": "60"})
assert tok[0] == 200, tok
out = {}
for p in sys.argv[3:]:
    out[p] = req("GET", p, {"X-aws-ec2-metadata-token": tok[1]})
    out["notoken:" + p] = req("GET", p)[0]
json.dump(out, sys.stdout)
PY
imds() {
	ip="$1"
	shift
	"$PYTHON3" "$TMP/imds.py" "$PORT" "$ip" "$@"
}

# ctl_status METHOD PATH JSON: "STATUS BODY" of a control call, errors too.
ctl_status() {
	"$PYTHON3" -c 'import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1] + sys.argv[3], method=sys.argv[2],
    data=sys.argv[4].encode(), headers={"Content-Type": "application/json"})
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    r = opener.open(req, timeout=10)
    print(r.status, r.read().decode().strip())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())' "$ENDPOINT" "$@"
}

# The boot script: records its pid, then runs until stopped.
cat >"$TMP/ud" <<'UD'
#!/bin/sh
# gpuburst-imds-test user data
echo $$ >pid
while :; do sleep 0.05; done
UD

launch() {	# launch NAME ARG... -> instance id
	name="$1"
	shift
	awsc ec2 run-instances --image-id "$AMI" --instance-type g5.xlarge --count 1 \
		--user-data "file://$TMP/ud" --metadata-options InstanceMetadataTags=enabled \
		--tag-specifications "ResourceType=instance,Tags=[{Key=Name,Value=$name}]" \
		"$@" >"$TMP/run-$name.json" 2>"$TMP/err" || fail "run-instances $name: $(cat "$TMP/err")"
	jget "$TMP/run-$name.json" 'd["Instances"][0]["InstanceId"]'
}

SPOT="$(launch spot --instance-market-options MarketType=spot \
	--iam-instance-profile Name=$ROLE)"
OD="$(launch ondemand \
	--iam-instance-profile Arn=arn:aws:iam::$ACCOUNT:instance-profile/gpuburst/$ROLE)"
NOPROF="$(awsc ec2 run-instances --image-id "$AMI" --instance-type g5.xlarge --count 1 \
	>"$TMP/run-noprof.json" 2>"$TMP/err" && jget "$TMP/run-noprof.json" 'd["Instances"][0]["InstanceId"]')" ||
	fail "run-instances without a profile: $(cat "$TMP/err")"
SPOT_IP="$(jget "$TMP/run-spot.json" 'd["Instances"][0]["PrivateIpAddress"]')"
OD_IP="$(jget "$TMP/run-ondemand.json" 'd["Instances"][0]["PrivateIpAddress"]')"
NOPROF_IP="$(jget "$TMP/run-noprof.json" 'd["Instances"][0]["PrivateIpAddress"]')"
wait_file "$BOOT/$SPOT/pid"
wait_file "$BOOT/$OD/pid"
SPOT_PID="$(cat "$BOOT/$SPOT/pid")"
kill -0 "$SPOT_PID" 2>/dev/null || fail "the spot instance's boot process is not running"
ok "launched spot $SPOT ($SPOT_IP) and on-demand $OD ($OD_IP) with instance profile $ROLE"

# --- identity paths, user data, token rules
MD=/latest/meta-data
CREDS=$MD/iam/security-credentials
imds "$SPOT_IP" $MD/instance-id $MD/ami-launch-index $MD/instance-type \
	$MD/placement/availability-zone $MD/placement/region $MD/local-ipv4 \
	$MD/instance-life-cycle /latest/user-data $CREDS/ $CREDS $MD/tags/instance/Name \
	$MD/spot/instance-action $MD/spot/termination-time \
	$MD/events/recommendations/rebalance $MD/no-such-path $CREDS/other-role \
	>"$TMP/spot-md.json" || fail "IMDS from $SPOT_IP"
check_md() {	# check_md FILE PATH STATUS [BODY]
	expect_eq "$2 status" "$(jget "$1" "d['$2'][0]")" "$3"
	[ $# -lt 4 ] || expect_eq "$2" "$(jget "$1" "d['$2'][1]")" "$4"
	expect_eq "$2 without a token" "$(jget "$1" "d['notoken:$2']")" 401
}
check_md "$TMP/spot-md.json" $MD/instance-id 200 "$SPOT"
check_md "$TMP/spot-md.json" $MD/ami-launch-index 200 0
check_md "$TMP/spot-md.json" $MD/instance-type 200 g5.xlarge
check_md "$TMP/spot-md.json" $MD/placement/availability-zone 200 ap-south-1a
check_md "$TMP/spot-md.json" $MD/placement/region 200 ap-south-1
check_md "$TMP/spot-md.json" $MD/local-ipv4 200 "$SPOT_IP"
check_md "$TMP/spot-md.json" $MD/instance-life-cycle 200 spot
check_md "$TMP/spot-md.json" $MD/tags/instance/Name 200 spot
check_md "$TMP/spot-md.json" $CREDS/ 200 "$ROLE"
check_md "$TMP/spot-md.json" $CREDS 200 "$ROLE"
check_md "$TMP/spot-md.json" $MD/spot/instance-action 404
check_md "$TMP/spot-md.json" $MD/spot/termination-time 404
check_md "$TMP/spot-md.json" $MD/events/recommendations/rebalance 404
check_md "$TMP/spot-md.json" $MD/no-such-path 404
check_md "$TMP/spot-md.json" $CREDS/other-role 404
ok "identity paths, instance-life-cycle spot, role name; 404 before any notice; 401 without a token"
check_md "$TMP/spot-md.json" /latest/user-data 200
expect_eq "user-data bytes" "$(jget "$TMP/spot-md.json" "d['/latest/user-data'][1] == open('$TMP/ud', encoding='latin-1').read()")" True
expect_eq "user-data type" "$(jget "$TMP/spot-md.json" "d['/latest/user-data'][2]")" application/octet-stream
ok "user-data is the decoded UserData, byte for byte"

imds "$OD_IP" $MD/instance-life-cycle $CREDS/ $MD/instance-id >"$TMP/od-md.json" ||
	fail "IMDS from $OD_IP"
check_md "$TMP/od-md.json" $MD/instance-life-cycle 200 on-demand
check_md "$TMP/od-md.json" $CREDS/ 200 "$ROLE"
check_md "$TMP/od-md.json" $MD/instance-id 200 "$OD"
imds "$NOPROF_IP" $CREDS/ /latest/user-data $MD/instance-id >"$TMP/np-md.json" ||
	fail "IMDS from $NOPROF_IP"
check_md "$TMP/np-md.json" $CREDS/ 404
check_md "$TMP/np-md.json" /latest/user-data 404
check_md "$TMP/np-md.json" $MD/instance-id 200 "$NOPROF"
ok "on-demand life cycle, the role of a profile given by ARN; no profile, no user data: 404"

# --- the role's credentials: EC2's JSON, a session the EC2 API takes
imds "$SPOT_IP" "$CREDS/$ROLE" >"$TMP/creds.json" || fail "credentials from $SPOT_IP"
check_md "$TMP/creds.json" "$CREDS/$ROLE" 200
"$PYTHON3" - "$TMP/creds.json" "$CREDS/$ROLE" >"$TMP/creds.sh" <<'PY' || fail "credential JSON: $(cat "$TMP/creds.json")"
import json, re, sys
c = json.loads(json.load(open(sys.argv[1]))[sys.argv[2]][1])
assert list(c) == ["Code", "LastUpdated", "Type", "AccessKeyId", "SecretAccessKey",
                   "Token", "Expiration"], list(c)
assert c["Code"] == "Success" and c["Type"] == "AWS-HMAC", c
iso = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"
assert re.match(iso, c["LastUpdated"]) and re.match(iso, c["Expiration"]), c
assert c["Expiration"] > c["LastUpdated"], c
assert c["AccessKeyId"].startswith("ASIA") and c["Token"], c
print("AKID='%s' SECRET='%s' TOKEN='%s'" % (c["AccessKeyId"], c["SecretAccessKey"], c["Token"]))
PY
eval "$(cat "$TMP/creds.sh")"
ok "credentials: Code Success, Type AWS-HMAC, ASIA key, token, ISO-8601 LastUpdated < Expiration"
control GET /_sim/sts >"$TMP/sts.json" || fail "/_sim/sts"
expect_eq "the instance's session" "$(jget "$TMP/sts.json" "[(s['role_arn'], s['source']) for s in d['sessions'] if s['session_name'] == '$SPOT' and s['access_key_id'] == '$AKID']")" \
	"[[\"arn:aws:iam::$ACCOUNT:role/$ROLE\", \"instance-profile\"]]"
imds "$SPOT_IP" "$CREDS/$ROLE" >"$TMP/creds2.json" || fail "credentials again"
expect_eq "same session while valid" "$(jget "$TMP/creds2.json" "json.loads(d['$CREDS/$ROLE'][1])['AccessKeyId']")" "$AKID"
ok "/_sim/sts lists the session: role $ROLE, session name $SPOT; asked again, the same key"

awsc ec2 create-tags --resources "$SPOT" --tags "Key=gpuburst:agent,Value=ok: tagged by itself" \
	2>"$TMP/err" || fail "create-tags with the instance's credentials: $(cat "$TMP/err")"
AKID_ROLE="$AKID"
unset AKID SECRET TOKEN
awsc ec2 describe-instances --instance-ids "$SPOT" >"$TMP/desc.json" 2>"$TMP/err" ||
	fail "describe-instances: $(cat "$TMP/err")"
expect_eq "tag through DescribeInstances" "$(jget "$TMP/desc.json" "[t['Value'] for t in d['Reservations'][0]['Instances'][0]['Tags'] if t['Key'] == 'gpuburst:agent']")" \
	'["ok: tagged by itself"]'
imds "$SPOT_IP" $MD/tags/instance/gpuburst:agent >"$TMP/tag.json" || fail "IMDS tag"
check_md "$TMP/tag.json" $MD/tags/instance/gpuburst:agent 200 "ok: tagged by itself"
control GET /_sim/sts >"$TMP/sts.json" || fail "/_sim/sts"
expect_eq "calls signed by the session" "$(jget "$TMP/sts.json" "[s['calls'] for s in d['sessions'] if s['access_key_id'] == '$AKID_ROLE'][0] >= 1")" True
ok "CreateTags signed with the role's session (X-Amz-Security-Token) tagged the instance; seen by DescribeInstances and the IMDS"

# --- botocore's own IMDS client, connecting from the instance's address
"$PYTHON3" - "$ENDPOINT" "$SPOT_IP" "$ROLE" "$AKID_ROLE" >"$TMP/boto.out" 2>&1 <<'PY' ||
import socket, sys
import urllib3.util.connection as u3conn
import botocore.utils
endpoint, ip, role, akid = sys.argv[1:5]
orig = u3conn.create_connection
def from_instance(address, *args, **kwargs):
    kwargs["source_address"] = (ip, 0)
    return orig(address, *args, **kwargs)
u3conn.create_connection = from_instance
try:
    import urllib3.connection
    if getattr(urllib3.connection, "create_connection", None) is orig:
        urllib3.connection.create_connection = from_instance
except ImportError:
    pass
f = botocore.utils.InstanceMetadataFetcher(timeout=5, num_attempts=1,
                                           base_url=endpoint, env={})
tok = f._fetch_metadata_token()
assert tok and tok.startswith("gbsim-imds-"), tok
c = f.retrieve_iam_role_credentials()
assert c.get("role_name") == role, c
assert c.get("access_key") == akid, (c.get("access_key"), akid)
assert c.get("secret_key") and c.get("token") and c.get("expiry_time"), c
print("botocore ok", c["role_name"], c["expiry_time"])
PY
	fail "botocore's InstanceMetadataFetcher: $(cat "$TMP/boto.out")"
ok "botocore IMDSFetcher got a token; InstanceMetadataFetcher parsed the role credentials ($(cat "$TMP/boto.out"))"

# --- control API errors
expect_status() {	# expect_status WHAT JSON STATUS [BODY-SUBSTRING]
	got="$(ctl_status POST /_sim/interrupt "$2")"
	expect_eq "$1 status" "${got%% *}" "$3"
	case "$got" in *"${4:-}"*) ;; *) fail "$1: '$got' does not mention '$4'" ;; esac
}
expect_status "spot on on-demand" "{\"instance\": \"$OD\", \"kind\": \"spot\"}" 400 On-Demand
expect_status "unknown instance" '{"instance": "i-0123456789abcdef0", "kind": "spot"}' 404 i-0123456789abcdef0
expect_status "bad kind" "{\"instance\": \"$SPOT\", \"kind\": \"stop\"}" 400 kind
expect_status "no kind" "{\"instance\": \"$SPOT\"}" 400 kind
expect_status "instance not a string" '{"instance": 7, "kind": "spot"}' 400 instance
expect_status "in a string" "{\"instance\": \"$SPOT\", \"kind\": \"spot\", \"in\": \"2\"}" 400 '"in must'
expect_status "in negative" "{\"instance\": \"$SPOT\", \"kind\": \"spot\", \"in\": -1}" 400 '"in must'
expect_status "unknown field" "{\"instance\": \"$SPOT\", \"kind\": \"spot\", \"when\": 2}" 400 when
expect_status "not JSON" '{"instance":' 400 JSON
ok "interrupt errors: spot on on-demand 400, unknown id 404, bad kind/instance/in/fields/JSON 400 naming the field"

# --- rebalance on the on-demand instance: visible at once, nothing ends
ctl_status POST /_sim/interrupt "{\"instance\": \"$OD\", \"kind\": \"rebalance\"}" >"$TMP/rb.out"
expect_eq "rebalance status" "$(cut -d' ' -f1 "$TMP/rb.out")" 200
RB_TIME="$(cut -d' ' -f2- "$TMP/rb.out" | "$PYTHON3" -c 'import json, sys; print(json.load(sys.stdin)["time"])')"
imds "$OD_IP" $MD/events/recommendations/rebalance $MD/spot/instance-action >"$TMP/od-rb.json" ||
	fail "IMDS rebalance"
check_md "$TMP/od-rb.json" $MD/events/recommendations/rebalance 200 "{\"noticeTime\": \"$RB_TIME\"}"
check_md "$TMP/od-rb.json" $MD/spot/instance-action 404
control GET /_sim/state >"$TMP/state.json" || fail "/_sim/state"
expect_eq "state rebalance" "$(jget "$TMP/state.json" "[(i['state'], i['rebalance']['time'], i['spot_action']) for i in d['instances'] if i['id'] == '$OD']")" \
	"[[\"running\", \"$RB_TIME\", null]]"
ok "rebalance: {\"noticeTime\": \"$RB_TIME\"} from the on-demand instance; it keeps running"

# --- spot interruption in 2 s of real time: the notice, the IMDS and
# --- /_sim/state read in one process, well within those 2 s
cat >"$TMP/interrupt.py" <<'PY'
import http.client, json, sys
port, ip, iid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def req(method, path, body=None, headers=None, src=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10,
                                   source_address=(src, 0) if src else None)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    b = r.read().decode()
    c.close()
    return r.status, b
out = {"interrupt": req("POST", "/_sim/interrupt",
                        json.dumps({"instance": iid, "kind": "spot", "in": 2}))}
tok = req("PUT", "/latest/api/token", headers={"X-aws-ec2-metadata-token-ttl-seconds": "60"},
          src=ip)[1]
for p in ("spot/instance-action", "spot/termination-time"):
    out[p] = req("GET", "/latest/meta-data/" + p, headers={"X-aws-ec2-metadata-token": tok},
                 src=ip)
st = json.loads(req("GET", "/_sim/state")[1])
out["state"] = [(i["state"], i["spot_action"], i["spot_interrupted"])
                for i in st["instances"] if i["id"] == iid]
json.dump(out, sys.stdout)
PY
"$PYTHON3" "$TMP/interrupt.py" "$PORT" "$SPOT_IP" "$SPOT" >"$TMP/int.json" ||
	fail "interrupt $SPOT"
expect_eq "interrupt status" "$(jget "$TMP/int.json" 'd["interrupt"][0]')" 200
T="$(jget "$TMP/int.json" 'json.loads(d["interrupt"][1])["time"]')"
expect_eq "instance-action status" "$(jget "$TMP/int.json" 'd["spot/instance-action"][0]')" 200
expect_eq "instance-action" "$(jget "$TMP/int.json" 'd["spot/instance-action"][1]')" \
	"{\"action\": \"terminate\", \"time\": \"$T\"}"
expect_eq "termination-time" "$(jget "$TMP/int.json" 'd["spot/termination-time"]')" "[200, \"$T\"]"
expect_eq "state spot_action" "$(jget "$TMP/int.json" '[(s, a["time"], x) for s, a, x in d["state"]]')" \
	"[[\"running\", \"$T\", false]]"
ok "instance-action {\"action\": \"terminate\", \"time\": \"$T\"}, termination-time, /_sim/state spot_action"

state_of() {	# state_of ID -> "STATE CODE"
	awsc ec2 describe-instances --instance-ids "$1" >"$TMP/d.json" 2>"$TMP/err" ||
		fail "describe-instances: $(cat "$TMP/err")"
	jget "$TMP/d.json" "'%s %s' % (d['Reservations'][0]['Instances'][0]['State']['Name'], d['Reservations'][0]['Instances'][0].get('StateReason', {}).get('Code', '-'))"
}
# expect_spot_terminated WHAT ID TRIES: ID terminated by its Spot notice
# within TRIES looks 0.1 s apart
expect_spot_terminated() {
	for _ in $(seq 1 "$3"); do
		st="$(state_of "$2")"
		[ "$st" = "terminated Server.SpotInstanceTermination" ] && break
		sleep 0.1
	done
	expect_eq "$1" "$st" "terminated Server.SpotInstanceTermination"
}
expect_spot_terminated "after the notice's time" "$SPOT" 100
expect_eq "state reason message" "$(jget "$TMP/d.json" "d['Reservations'][0]['Instances'][0]['StateReason']['Message']")" \
	"Server.SpotInstanceTermination: Spot instance termination"
for _ in $(seq 1 100); do
	kill -0 "$SPOT_PID" 2>/dev/null || break
	sleep 0.05
done
if kill -0 "$SPOT_PID" 2>/dev/null; then fail "the spot instance's boot process survived its interruption"; fi
grep -q "boot stopping instance=$SPOT" "$TMP/sim.log" || fail "no 'boot stopping' for $SPOT in the log"
control GET /_sim/state >"$TMP/state.json" || fail "/_sim/state"
expect_eq "spot capacity back" "$(jget "$TMP/state.json" "[p['used'] for r in d['regions'] for a in r['azs'] for p in a['spot_pools']]")" "[0]"
imds "$SPOT_IP" $MD/instance-id >"$TMP/gone.json" || fail "IMDS after termination"
check_md "$TMP/gone.json" $MD/instance-id 404
ok "at $T the spot instance was terminated (Server.SpotInstanceTermination), its boot process stopped, its capacity returned"

# --- a notice an hour out, reached by moving the simulated clock
SPOT2="$(launch spot2 --instance-market-options MarketType=spot)"
ctl_status POST /_sim/interrupt "{\"instance\": \"$SPOT2\", \"kind\": \"spot\", \"in\": 3600}" >"$TMP/int2.out"
expect_eq "interrupt 2 status" "$(cut -d' ' -f1 "$TMP/int2.out")" 200
expect_eq "an hour before" "$(state_of "$SPOT2")" "running -"
control POST /_sim/time '{"advance": 3600}' >/dev/null || fail "/_sim/time"
expect_spot_terminated "after /_sim/time" "$SPOT2" 50
expect_status "interrupt a terminated instance" "{\"instance\": \"$SPOT2\", \"kind\": \"rebalance\"}" 404 "$SPOT2"
expect_eq "the on-demand instance" "$(state_of "$OD")" "running -"
ok "POST /_sim/time past the notice's time terminates the instance; a terminated one is 404; on-demand untouched"
