#!/bin/sh
# ctl-cloud.sh - `gpuburstctl plan` and `gpuburstctl doctor` against
# gpuburst-cloudsim: the plan for a type, count and home region (pools in
# distance order, the approval verdict by size and by geography, JSON), and
# with the LLM planner a rejected proposal shown with why (text, JSON);
# policy.prefer's order and its words in the rationale;
# plan and the other read-only commands creating no state directory;
# doctor's checks one per line, JSON, the exit status of the first failed
# check, a wrong secret and a world-writable state directory caught, no
# secret printed; doctor's RunInstances DryRun per region, nodeset and type
# (tests/data/cloudsim/doctor.yaml): a good launch configuration passes, a
# bad AMI, subnet, security group, key pair or instance profile and a
# missing permission each fail naming the region, the nodeset, EC2's code
# and the fix; several unreachable regions each fail, in configuration
# order; progress on stderr only when it is a terminal; a type that is a
# nodeset's second type plans with that nodeset.
. "$srcdir/cloudsim-lib.sh"

CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
start_sim "$GB_TOP_SRCDIR/etc/cloudsim/default.yaml" --time-scale 20
SECRET_OK=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
write_conf() {	# FILE SECRET [EXTRA]
	{
		conf_head
		cat <<EOF
  connect_timeout: 2s
  request_timeout: 5s
  credentials: {access_key_id: AKIDEXAMPLE, secret_access_key: $2, imds: false}
regions:
  - name: ap-south-1
    ami: ami-1
    azs: [{name: ap-south-1a, subnets: [subnet-aps1a-1]}, {name: ap-south-1b, subnets: [subnet-aps1b-1]}]
  - name: ap-northeast-1
    ami: ami-2
    azs: [{name: ap-northeast-1a, subnets: [subnet-apne1a-1]}]
fallback_groups:
  sea: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1, ap-northeast-1]}
nodesets:
  - {name: g5, nodes: "g5-[1-16]", instance_type: g5.xlarge, home_region: ap-southeast-1}
${3:-}
EOF
	} >"$1"
}
write_conf "$TMP/gb.yaml" "$SECRET_OK" "policy: {allowed_geo_regions: [ap-south-1]}"

# ---- plan
ctl plan --type g5.xlarge --count 12 --home ap-southeast-1 >"$TMP/plan.out" 2>"$TMP/plan.err" ||
	fail "plan: $(cat "$TMP/plan.out" "$TMP/plan.err")"
grep -q '^Plan for 12 x g5.xlarge, home ap-southeast-1 (nodeset g5, planner heuristic)' "$TMP/plan.out" ||
	fail "plan header: $(cat "$TMP/plan.out")"
grep -q '^  1  ap-south-1  ' "$TMP/plan.out" || fail "nearest region first: $(cat "$TMP/plan.out")"
grep -q '^Approval: needed (12 nodes for job 1 > prod threshold 10)' "$TMP/plan.out" || fail "size verdict"
grep -q '^Rationale: .*prefer' "$TMP/plan.out" && fail "nearest says something of prefer: $(cat "$TMP/plan.out")"
ok "plan: pools nearest first, approval needed by size"

# ---- policy.prefer cheapest: Tokyo, cheaper here, before Mumbai; the
# rationale says so (the price file only for these plans)
write_conf "$TMP/cheap.yaml" "$SECRET_OK" "policy: {prefer: cheapest}"
made_state=
[ -d "$TMP/state" ] || { mkdir -p "$TMP/state" && made_state=1; }
printf '%s\n' 'gpuburst-prices 1' 'refreshed 2026-12-01T00:00:00Z' 'source test' \
	'ap-south-1 g5.xlarge on-demand 1.46' 'ap-northeast-1 g5.xlarge on-demand 1.21' >"$TMP/state/prices"
pctl() { env SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "$TMP/cheap.yaml" "$@"; }
pctl plan --type g5.xlarge --count 2 >"$TMP/plan.out" 2>"$TMP/plan.err" ||
	fail "plan (cheapest): $(cat "$TMP/plan.out" "$TMP/plan.err")"
grep -q '^  1  ap-northeast-1  ' "$TMP/plan.out" || fail "cheapest region first: $(cat "$TMP/plan.out")"
grep -q '^Rationale: .*; prefer cheapest: ap-northeast-1 g5.xlarge 1.21 USD/h before ap-south-1 1.46 USD/h$' "$TMP/plan.out" ||
	fail "plan (cheapest) rationale: $(cat "$TMP/plan.out")"
sed -i 's/prefer: cheapest/prefer: nearest_within(25%)/' "$TMP/cheap.yaml"
pctl --json plan --type g5.xlarge --count 2 >"$TMP/plan.json" || fail "plan (nearest_within) --json"
expect_eq "plan (nearest_within) first region" "$(jget "$TMP/plan.json" 'd["plan"]["steps"][0]["region"]')" ap-south-1
expect_eq "plan (nearest_within) rationale" "$(jget "$TMP/plan.json" 'd["plan"]["rationale"].split("; ")[-1]')" \
	"prefer nearest_within(25%): ap-south-1 g5.xlarge 1.46 USD/h, ap-northeast-1 1.21 USD/h (within 25% of 1.21 USD/h)"
rm -f "$TMP/state/prices"
[ -z "$made_state" ] || rm -rf "$TMP/state"
ok "plan: prefer cheapest and nearest_within(25%) order by price and say so in the rationale"

ctl --json plan --type g5.xlarge --count 3 >"$TMP/plan.json" || fail "plan --json"
expect_eq "plan schema" "$(jget "$TMP/plan.json" '[d["schema"], "error" in d]')" '["gpuburstctl/1", false]'
expect_eq "plan regions" "$(jget "$TMP/plan.json" 'sorted(set(s["region"] for s in d["plan"]["steps"]))')" '["ap-northeast-1", "ap-south-1"]'
expect_eq "geo verdict" "$(jget "$TMP/plan.json" '[d["approval"]["needed"], d["approval"]["rule"]]')" '[true, "geo"]'
expect_eq "geo why" "$(jget "$TMP/plan.json" 'd["approval"]["why"]')" \
	"plan uses ap-northeast-1 outside allowed_geo_regions [ap-south-1]"
expect_eq "plan total" "$(jget "$TMP/plan.json" 'd["plan"]["total"]')" 3
ok "plan --json: a region outside allowed_geo_regions needs approval"

ctl plan --type g5.xlarge --count 2 --home us-east-1 >"$TMP/out" 2>"$TMP/err"
expect_eq "plan for a home in no group" "$?" 23
grep -q 'in no fallback group' "$TMP/err" || fail "plan home error: $(cat "$TMP/err")"
ctl plan --type m7i.xlarge --count 2 >"$TMP/out" 2>"$TMP/err"
expect_eq "plan for a non-GPU type" "$?" 10
ctl --json plan --type m7i.xlarge --count 2 >"$TMP/out" 2>"$TMP/err"
expect_eq "plan --json for a non-GPU type" "$?" 10
expect_eq "plan --json error" "$(jget "$TMP/out" '[sorted(d), d["error"]["code"], d["error"]["message"]]')" \
	'[["error", "schema"], "INVALID", "instance type m7i.xlarge is not in the GPU catalog"]'
grep -q 'not in the GPU catalog' "$TMP/err" || fail "plan --json: the message left stderr"
ok "plan errors: home in no group (23), type not in the catalog (10)"

# a type that is a nodeset's second type picks that nodeset
write_conf "$TMP/two.yaml" "$SECRET_OK" \
	'  - {name: g5b, nodes: "g5b-[1-4]", instance_types: [g6.2xlarge, g6.xlarge], home_region: ap-southeast-1}'
env SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "$TMP/two.yaml" \
	plan --type g6.xlarge --count 2 >"$TMP/out" 2>"$TMP/err" || fail "plan --type g6.xlarge: $(cat "$TMP/out" "$TMP/err")"
grep -q '^Plan for 2 x g6.xlarge, home ap-southeast-1 (nodeset g5b, ' "$TMP/out" ||
	fail "plan for a second type: $(cat "$TMP/out")"
ok "plan: a nodeset's second type picks it"

# ---- plan with the LLM planner (a scripted OpenAI-style endpoint on
# 127.0.0.1): the model's plan names a region outside the fallback group;
# plan shows the heuristic plan and says the proposal was rejected and why
cat >"$TMP/llm.py" <<'PY'
import http.server, json, sys
plan = {"instance_type": "g5.xlarge", "total": 2, "rationale": "Ireland has room.",
        "steps": [{"region": "eu-west-1", "az": "eu-west-1a", "subnet": "subnet-euw1a-1",
                   "batch": 2, "reason": "Ireland"}]}
answer = json.dumps({"id": "x", "object": "chat.completion", "choices": [{"index": 0,
    "finish_reason": "stop", "message": {"role": "assistant", "content": json.dumps(plan)}}]})
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = answer.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
PY
"$PYTHON3" "$TMP/llm.py" "$TMP/llm.port" &
LLM_PID=$!
trap 'kill "$LLM_PID" 2>/dev/null; wait "$LLM_PID" 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/llm.port" ] && break; sleep 0.05; done
[ -s "$TMP/llm.port" ] || fail "the scripted LLM endpoint did not start"
write_conf "$TMP/llm.yaml" "$SECRET_OK" "planner: {kind: llm, llm: {provider: openai, endpoint: 'http://127.0.0.1:$(cat "$TMP/llm.port")', model: m, timeout: 5s}}"
lctl() { env SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "$TMP/llm.yaml" "$@"; }
lctl plan --type g5.xlarge --count 2 >"$TMP/plan.out" 2>"$TMP/plan.err" ||
	fail "plan (llm): $(cat "$TMP/plan.out" "$TMP/plan.err")"
grep -q '^Plan for 2 x g5.xlarge, home ap-southeast-1 (nodeset g5, planner heuristic)' "$TMP/plan.out" ||
	fail "plan (llm) header: $(cat "$TMP/plan.out")"
grep -q '^Planner: llm:openai plan rejected: step 1: region eu-west-1 is outside the allowed set {.*}; using the heuristic plan$' "$TMP/plan.out" ||
	fail "plan (llm) hides the rejection: $(cat "$TMP/plan.out")"
lctl --json plan --type g5.xlarge --count 2 >"$TMP/plan.json" || fail "plan (llm) --json"
expect_eq "plan (llm) --json proposal" "$(jget "$TMP/plan.json" '[d["plan"]["planner"], d["proposal"]["planner"], d["proposal"]["status"], d["proposal"]["reason"].split(" {")[0]]')" \
	'["heuristic", "llm:openai", "rejected", "step 1: region eu-west-1 is outside the allowed set"]'
ctl --json plan --type g5.xlarge --count 2 >"$TMP/plan-h.json" || fail "plan --json (heuristic)"
expect_eq "plan --json proposal without an LLM planner" "$(jget "$TMP/plan-h.json" 'd["proposal"]')" None
# an LLM planner that cannot be set up (its key file is missing) is said too
write_conf "$TMP/llm-nokey.yaml" "$SECRET_OK" "planner: {kind: llm, llm: {provider: openai, endpoint: 'http://127.0.0.1:$(cat "$TMP/llm.port")', model: m, api_key_file: $TMP/no-key}}"
env SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "$TMP/llm-nokey.yaml" plan --type g5.xlarge --count 2 >"$TMP/plan.out" 2>"$TMP/plan.err" ||
	fail "plan (llm without its key): $(cat "$TMP/plan.out" "$TMP/plan.err")"
grep -q "^Planner: llm:openai gave no plan: planner.llm.api_key_file $TMP/no-key: cannot open .*; using the heuristic plan\$" "$TMP/plan.out" ||
	fail "plan (llm without its key) hides it: $(cat "$TMP/plan.out")"
kill "$LLM_PID"
wait "$LLM_PID" 2>/dev/null
ok "plan (llm): a proposal outside the group is shown rejected with why (text, --json), a planner without its key file too"

# ---- read-only commands create nothing: with state_dir under a directory
# that does not exist, plan (which reads the capacity memory and caches
# offerings), the listings, doctor and the previews leave it absent
sed "s#^state_dir: .*#state_dir: $TMP/none/lib/state#" "$TMP/gb.yaml" >"$TMP/ro.yaml"
rctl() { env SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "$TMP/ro.yaml" "$@"; }
rctl plan --type g5.xlarge --count 2 >"$TMP/out" 2>"$TMP/err" || fail "plan without a state file: $(cat "$TMP/out" "$TMP/err")"
grep -q '^Plan for 2 x g5.xlarge, home ap-southeast-1' "$TMP/out" || fail "plan without a state file: $(cat "$TMP/out")"
[ -e "$TMP/none" ] && fail "plan created $(find "$TMP/none" | tr '\n' ' ')"
[ -s "$TMP/err" ] && fail "plan without a state file warned: $(cat "$TMP/err")"
for cmd in "--json plan --type g5.xlarge --count 2" requests instances capacity approvals \
	   doctor "config check" "state vacuum --dry-run" "terminate --all"; do
	# shellcheck disable=SC2086
	rctl $cmd >"$TMP/out" 2>&1
	[ -e "$TMP/none" ] && fail "gpuburstctl $cmd created $(find "$TMP/none" | tr '\n' ' ')"
done
# an existing state file still gets the offerings the preflight learned
mkdir -p "$TMP/none/lib/state"
"$GB_TOP_BUILDDIR/tests/integration/gb_mkstate" "$TMP/none/lib/state/state.db" memory >/dev/null ||
	fail "gb_mkstate memory"
rctl plan --type g5.xlarge --count 2 >"$TMP/out" 2>"$TMP/err" || fail "plan with a state file: $(cat "$TMP/err")"
[ -s "$TMP/err" ] && fail "plan with a state file warned: $(cat "$TMP/err")"
rctl --json capacity >"$TMP/cap.json" || fail "capacity --json"
expect_eq "offerings cached by plan" "$(jget "$TMP/cap.json" 'sorted(o["az"] or "(region)" for o in d["offerings"] if o["region"] == "ap-south-1")')" \
	'["(region)", "ap-south-1a", "ap-south-1b"]'
ok "plan, listings, doctor, previews create no state directory; plan caches offerings in an existing file"

# ---- doctor: the cloud parts pass, Slurm is absent here
mkdir -p "$TMP/state"
chmod 750 "$TMP/state"
ctl doctor >"$TMP/doc.out" 2>"$TMP/doc.err"
rc=$?
[ "$rc" -ne 0 ] || fail "doctor without Slurm passed"
for want in '^ok   config: ' '^ok   state-dir: ' '^ok   credentials: found in the configuration' \
	    '^ok   region ap-south-1: http://127.0.0.1:[0-9]* answered in [0-9.]* s (3 zones)' \
	    '^ok   region ap-northeast-1: ' '^FAIL slurmctld: ' '^[0-9]* checks\? failed$'; do
	grep -q "$want" "$TMP/doc.out" || fail "doctor lacks '$want': $(cat "$TMP/doc.out")"
done
grep -q "$SECRET_OK" "$TMP/doc.out" "$TMP/doc.err" && fail "doctor printed the secret"
ok "doctor: config, state dir, credentials, both regions ok; Slurm FAIL (exit $rc)"

ctl --json doctor >"$TMP/doc.json"
rc=$?
# the report is the document; its first failure is the error, the exit status
expect_eq "doctor json error" "$(jget "$TMP/doc.json" '[d["schema"], d["error"]["exit"], d["error"]["message"].split(":")[0]]')" \
	"[\"gpuburstctl/1\", $rc, \"slurm.conf\"]"
expect_eq "doctor json" "$(jget "$TMP/doc.json" '[d["ok"], sorted({"config", "state-dir", "credentials", "region ap-south-1"} - {c["name"] for c in d["checks"] if c["ok"]})]')" \
	'[false, []]'
expect_eq "doctor json failed names" "$(jget "$TMP/doc.json" '[c["name"] for c in d["checks"] if not c["ok"]]')" \
	'["slurm.conf", "slurmctld"]'

# a wrong secret: the endpoints refuse the signature (14, AUTH)
write_conf "$TMP/bad.yaml" "not-the-secret"
env SLURM_CONF="$TMP/no-slurm.conf" "$CTL" -c "$TMP/bad.yaml" doctor >"$TMP/doc.out" 2>&1
grep -q '^FAIL region ap-south-1: .*' "$TMP/doc.out" || fail "wrong secret not caught: $(cat "$TMP/doc.out")"
grep -q 'not-the-secret' "$TMP/doc.out" && fail "doctor printed the wrong secret"
env SLURM_CONF="$TMP/no-slurm.conf" "$CTL" -c "$TMP/bad.yaml" --json doctor >"$TMP/doc.json"
expect_eq "wrong secret code" "$(jget "$TMP/doc.json" '[c["code"] for c in d["checks"] if c["name"] == "region ap-south-1"]')" '["AUTH"]'
ok "doctor: a wrong secret fails each region with AUTH"

# a world-writable state directory is the first failure: exit 22 (PERM)
chmod 777 "$TMP/state"
write_conf "$TMP/gb2.yaml" "$SECRET_OK"
printf 'SlurmUser=root\nResumeTimeout=600\n' >"$TMP/slurm.conf"
SLURM_CONF="$TMP/slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "$TMP/gb2.yaml" doctor >"$TMP/doc.out" 2>&1
rc=$?
grep -q '^FAIL state-dir: .* is world-writable (mode 0777): chmod 0750' "$TMP/doc.out" || fail "world-writable: $(cat "$TMP/doc.out")"
grep -q '^ok   slurm.conf: .*SlurmUser root, ResumeTimeout 600 s' "$TMP/doc.out" || fail "slurm.conf: $(cat "$TMP/doc.out")"
grep -q '^ok   approval-timeout: approvals wait at most 300 s of ResumeTimeout 600 s' "$TMP/doc.out" || fail "approval-timeout"
grep -q '^FAIL slurm ResumeProgram: not set in slurm.conf' "$TMP/doc.out" || fail "ResumeProgram"
expect_eq "doctor exit (first failure)" "$rc" 22
ok "doctor: world-writable state dir -> exit 22; slurm.conf read; approval timeout checked"

# ---- doctor: RunInstances DryRun with each nodeset's launch parameters
stop_sim
start_sim "$DATA/doctor.yaml" --time-scale 20
chmod 750 "$TMP/state"
AMI1=ami-0a1b2c3d4e5f60001
AMI2=ami-0a1b2c3d4e5f60002
dr_conf() {	# FILE [AMI2 [SG1 [KEY [PROFILE [SUBNET_A [EXTRA_REGIONS]]]]]]
	cat >"$1" <<EOF
cluster_name: t
state_dir: $TMP/state
log: {file: $TMP/gb.log}
cloud:
  endpoint: $ENDPOINT
  connect_timeout: 2s
  request_timeout: 5s
  credentials: {access_key_id: AKIDEXAMPLE, secret_access_key: $SECRET_OK, imds: false}
regions:
  - name: ap-south-1
    ami: $AMI1
    security_groups: [${3:-sg-0a1b2c3d4e5f60001}]
    key_name: ${4:-burst}
    iam_profile: ${5:-gpuburst-node}
    azs: [{name: ap-south-1a, subnets: [${6:-subnet-dr-a}]}, {name: ap-south-1b, subnets: [subnet-dr-b]}]
  - name: ap-northeast-1
    ami: ${2:-$AMI2}
    security_groups: [sg-0a1b2c3d4e5f60002]
    key_name: burst
    iam_profile: gpuburst-node
    azs: [{name: ap-northeast-1a, subnets: [subnet-dr-c]}]
${7:-}
fallback_groups:
  sea: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1, ap-northeast-1${7:+, ap-northeast-2, ap-northeast-3, ap-east-1}]}
nodesets:
  - {name: g5, nodes: "g5-[1-8]", instance_type: g5.xlarge, home_region: ap-southeast-1}
EOF
}
doctor() {	# CONF OUT: doctor with a slurm.conf, so that the cloud fails first
	SLURM_CONF="$TMP/slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "$1" doctor >"$2" 2>"$2.err"
}
instances() { control GET /_sim/state >"$TMP/state.json" && jget "$TMP/state.json" 'len(d["instances"])'; }

dry_runs() { grep -c 'action=RunInstances .*code=DryRunOperation' "$TMP/sim.log"; }

dr_conf "$TMP/dr.yaml"
n0="$(dry_runs)"
doctor "$TMP/dr.yaml" "$TMP/dr.out"
grep -q "^ok   launch ap-south-1 g5: DryRun of g5.xlarge from $AMI1 accepted in subnet-dr-a, subnet-dr-b\$" "$TMP/dr.out" ||
	fail "good launch config: $(cat "$TMP/dr.out")"
grep -q "^ok   launch ap-northeast-1 g5: DryRun of g5.xlarge from $AMI2 accepted in subnet-dr-c\$" "$TMP/dr.out" ||
	fail "good launch config: $(cat "$TMP/dr.out")"
grep -q '^FAIL \(region\|launch\)' "$TMP/dr.out" && fail "a cloud check failed: $(cat "$TMP/dr.out")"
# (libslurm's own complaint about the minimal slurm.conf is there, no progress)
grep -q 'regions\.\.\.' "$TMP/dr.out.err" && fail "progress through a pipe: $(cat "$TMP/dr.out.err")"
expect_eq "instances after doctor" "$(instances)" 0
expect_eq "dry runs (3 subnets)" "$(($(dry_runs) - n0))" 3
SLURM_CONF="$TMP/slurm.conf" "$CTL" -c "$TMP/dr.yaml" --json doctor >"$TMP/dr.json" 2>/dev/null
expect_eq "launch checks in json" \
	"$(jget "$TMP/dr.json" '[(c["name"], c["ok"], c["region"], c["nodeset"], c["ec2_code"]) for c in d["checks"] if c["name"].startswith("launch ")]')" \
	'[["launch ap-south-1 g5", true, "ap-south-1", "g5", "DryRunOperation"], ["launch ap-northeast-1 g5", true, "ap-northeast-1", "g5", "DryRunOperation"]]'
ok "doctor: a good launch configuration passes the DryRun in every subnet (a full AZ too), nothing launched, no progress through a pipe"

# a nodeset with two types: each is dry-run, on a line of its own
dr_conf "$TMP/dr.yaml"
sed -i 's/instance_type: g5.xlarge,/instance_types: [g5.xlarge, g5.2xlarge],/' "$TMP/dr.yaml"
doctor "$TMP/dr.yaml" "$TMP/dr.out"
grep -q "^ok   launch ap-south-1 g5 g5.xlarge: DryRun of g5.xlarge from $AMI1 accepted in subnet-dr-a, subnet-dr-b\$" "$TMP/dr.out" ||
	fail "two types, the first: $(cat "$TMP/dr.out")"
grep -q "^ok   launch ap-south-1 g5 g5.2xlarge: g5.2xlarge is offered in no AZ of ap-south-1 " "$TMP/dr.out" ||
	fail "two types, the second: $(cat "$TMP/dr.out")"
SLURM_CONF="$TMP/slurm.conf" "$CTL" -c "$TMP/dr.yaml" --json doctor >"$TMP/dr.json" 2>/dev/null
expect_eq "two types in json" \
	"$(jget "$TMP/dr.json" '[(c["name"], c["nodeset"], c["instance_type"]) for c in d["checks"] if c["name"].startswith("launch ap-south-1")]')" \
	'[["launch ap-south-1 g5 g5.xlarge", "g5", "g5.xlarge"], ["launch ap-south-1 g5 g5.2xlarge", "g5", "g5.2xlarge"]]'
ok "doctor: each type of a nodeset with two is dry-run and named"

# a region with a bad AMI fails, naming region, nodeset, code and fix; exit 18 (CLOUDCONFIG)
dr_conf "$TMP/dr.yaml" ami-0a1b2c3d4e5f6000f
doctor "$TMP/dr.yaml" "$TMP/dr.out"
rc=$?
grep -q "^ok   launch ap-south-1 g5: " "$TMP/dr.out" || fail "ap-south-1: $(cat "$TMP/dr.out")"
grep -q "^FAIL launch ap-northeast-1 g5: DryRun of g5.xlarge from ami-0a1b2c3d4e5f6000f in subnet subnet-dr-c: RunInstances ap-northeast-1: InvalidAMIID.NotFound: .*; fix: set the ami of region ap-northeast-1 to an image that exists in ap-northeast-1" \
	"$TMP/dr.out" || fail "bad AMI: $(cat "$TMP/dr.out")"
expect_eq "doctor exit with a bad AMI" "$rc" 18
ok "doctor: a bad AMI in ap-northeast-1 fails 'launch ap-northeast-1 g5' with InvalidAMIID.NotFound and the fix (exit 18)"

# subnet, security group, key pair, instance profile (ap-south-1), each by its code
for bad in "subnet:6:subnet-dr-zz:InvalidSubnetID.NotFound:subnet subnet-dr-zz is not in ap-south-1" \
	   "sg:3:sg-0a1b2c3d4e5f6000f:InvalidGroup.NotFound:set the security_groups of region ap-south-1" \
	   "key:4:nobody:InvalidKeyPair.NotFound:import the key pair into ap-south-1" \
	   "profile:5:other-profile:InvalidParameterValue:set the iam_profile of region ap-south-1"; do
	what=${bad%%:*}; rest=${bad#*:}; arg=${rest%%:*}; rest=${rest#*:}
	value=${rest%%:*}; rest=${rest#*:}; code=${rest%%:*}; fix=${rest#*:}
	case $arg in
	3) dr_conf "$TMP/dr.yaml" "$AMI2" "$value" ;;
	4) dr_conf "$TMP/dr.yaml" "$AMI2" sg-0a1b2c3d4e5f60001 "$value" ;;
	5) dr_conf "$TMP/dr.yaml" "$AMI2" sg-0a1b2c3d4e5f60001 burst "$value" ;;
	6) dr_conf "$TMP/dr.yaml" "$AMI2" sg-0a1b2c3d4e5f60001 burst gpuburst-node "$value" ;;
	esac
	SLURM_CONF="$TMP/slurm.conf" "$CTL" -c "$TMP/dr.yaml" --json doctor >"$TMP/dr.json" 2>/dev/null
	expect_eq "bad $what" "$(jget "$TMP/dr.json" '[[c["name"], c["code"], c.get("ec2_code")] for c in d["checks"] if c["name"].startswith("launch ") and not c["ok"]]')" \
		"[[\"launch ap-south-1 g5\", \"CLOUDCONFIG\", \"$code\"]]"
	jget "$TMP/dr.json" '[c["detail"] for c in d["checks"] if not c["ok"]]' | grep -q "fix: $fix" ||
		fail "bad $what: no fix '$fix': $(cat "$TMP/dr.json")"
done
ok "doctor: a bad subnet, security group, key pair or instance profile fails with its EC2 code and fix"

# a missing permission (the simulator's injected UnauthorizedOperation): AUTH, exit 14
dr_conf "$TMP/dr.yaml"
control POST /_sim/fault '{"code": "UnauthorizedOperation", "action": "RunInstances", "region": "ap-northeast-1"}' >/dev/null ||
	fail "control fault"
doctor "$TMP/dr.yaml" "$TMP/dr.out"
rc=$?
grep -q "^FAIL launch ap-northeast-1 g5: .*UnauthorizedOperation: .*; fix: allow these credentials ec2:RunInstances" \
	"$TMP/dr.out" || fail "missing permission: $(cat "$TMP/dr.out")"
grep -q "^ok   launch ap-south-1 g5: " "$TMP/dr.out" || fail "ap-south-1: $(cat "$TMP/dr.out")"
expect_eq "doctor exit without the permission" "$rc" 14
ok "doctor: a missing RunInstances permission fails 'launch ap-northeast-1 g5' with UnauthorizedOperation (exit 14)"

# several unreachable regions: each named as failed, in configuration order
dr_conf "$TMP/dr.yaml" "$AMI2" sg-0a1b2c3d4e5f60001 burst gpuburst-node subnet-dr-a "$(for r in ap-northeast-2 ap-northeast-3 ap-east-1; do
	printf '  - {name: %s, endpoint: "http://127.0.0.1:1", ami: %s, azs: [{name: %sa, subnets: [subnet-%s]}]}\n' "$r" "$AMI1" "$r" "$r"
done)"
doctor "$TMP/dr.yaml" "$TMP/dr.out"
expect_eq "region lines in order" "$(sed -n 's/^\(ok  \|FAIL\) region \([^:]*\):.*/\1 \2/p' "$TMP/dr.out" | tr -s ' ' | tr '\n' ',')" \
	"ok ap-south-1,ok ap-northeast-1,FAIL ap-northeast-2,FAIL ap-northeast-3,FAIL ap-east-1,"
for r in ap-northeast-2 ap-northeast-3 ap-east-1; do
	grep -q "^FAIL region $r: http://127.0.0.1:1: DescribeAvailabilityZones $r: " "$TMP/dr.out" ||
		fail "unreachable $r: $(cat "$TMP/dr.out")"
	grep -q "^.... launch $r " "$TMP/dr.out" && fail "a launch check for unreachable $r"
done
grep -q "^ok   launch ap-south-1 g5: " "$TMP/dr.out" || fail "ap-south-1: $(cat "$TMP/dr.out")"
ok "doctor: three unreachable regions each FAIL, in configuration order, the reachable ones pass"

# on a terminal, stderr shows the progress while a region is slow
if command -v script >/dev/null 2>&1; then
	control POST /_sim/fault '{"kind": "latency", "latency": 10, "action": "DescribeAvailabilityZones", "region": "ap-south-1"}' >/dev/null ||
		fail "control fault"
	dr_conf "$TMP/dr.yaml"
	SLURM_CONF="$TMP/slurm.conf" script -qec "$CTL -c $TMP/dr.yaml doctor >$TMP/dr.out" "$TMP/tty.out" >/dev/null 2>&1
	grep -q 'checking [0-9]/2 regions\.\.\.' "$TMP/tty.out" || fail "no progress on a terminal: $(cat -v "$TMP/tty.out")"
	grep -q "^ok   launch ap-south-1 g5: " "$TMP/dr.out" || fail "tty run: $(cat "$TMP/dr.out")"
	ok "doctor: progress ('checking N/2 regions...') on a terminal's stderr"
else
	echo "# script(1) absent: the terminal progress is not checked"
fi
exit 0

