#!/bin/sh
# ctl-cloud.sh - `gpuburstctl plan` and `gpuburstctl doctor` against
# gpuburst-cloudsim: the plan for a type, count and home region (pools in
# distance order, the approval verdict by size and by geography, JSON);
# doctor's checks one per line, JSON, the exit status of the first failed
# check, a wrong secret and a world-writable state directory caught, no
# secret printed.
. "$srcdir/cloudsim-lib.sh"

CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
start_sim "$GB_TOP_SRCDIR/etc/cloudsim/default.yaml" --time-scale 20
SECRET_OK=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
write_conf() {	# FILE SECRET [EXTRA]
	cat >"$1" <<EOF
cluster_name: t
environment: prod
state_dir: $TMP/state
log: {file: $TMP/gb.log}
cloud:
  endpoint: $ENDPOINT
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
}
write_conf "$TMP/gb.yaml" "$SECRET_OK" "policy: {allowed_geo_regions: [ap-south-1]}"
ctl() { env -u SLURM_CONF AWS_EC2_METADATA_DISABLED=true "$CTL" -c "$TMP/gb.yaml" "$@"; }

# ---- plan
ctl plan --type g5.xlarge --count 12 --home ap-southeast-1 >"$TMP/plan.out" 2>"$TMP/plan.err" ||
	fail "plan: $(cat "$TMP/plan.out" "$TMP/plan.err")"
grep -q '^Plan for 12 x g5.xlarge, home ap-southeast-1 (nodeset g5, planner heuristic)' "$TMP/plan.out" ||
	fail "plan header: $(cat "$TMP/plan.out")"
grep -q '^  1  ap-south-1  ' "$TMP/plan.out" || fail "nearest region first: $(cat "$TMP/plan.out")"
grep -q '^Approval: needed (12 nodes for job 1 > prod threshold 10)' "$TMP/plan.out" || fail "size verdict"
ok "plan: pools nearest first, approval needed by size"

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
env -u SLURM_CONF "$CTL" -c "$TMP/bad.yaml" doctor >"$TMP/doc.out" 2>&1
grep -q '^FAIL region ap-south-1: .*' "$TMP/doc.out" || fail "wrong secret not caught: $(cat "$TMP/doc.out")"
grep -q 'not-the-secret' "$TMP/doc.out" && fail "doctor printed the wrong secret"
env -u SLURM_CONF "$CTL" -c "$TMP/bad.yaml" --json doctor >"$TMP/doc.json"
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
exit 0
