#!/bin/sh
# ctl-creds.sh - cloud.credentials as a site writes it, end to end: gpuburstctl
# doctor and plan against gpuburst-cloudsim's EC2 and STS with
#   - a role assumed with a shared-file profile's keys (role_arn +
#     source_profile), its session name and duration;
#   - a role with an external id (the right one, a wrong one: AccessDenied);
#   - a role reached through a role (a chain of profiles), and its 1 h limit;
#   - web identity (role_arn + web_identity_token_file), and a bad token;
#   - credential_process: a real helper script (its secret nowhere in the
#     output or the log), alone and as the source
#     profile of a role (IAM Roles Anywhere's signing helper set-up), and a
#     helper that prints no credentials;
#   - sts_endpoint missing while cloud.endpoint is set: refused, not guessed.
# The simulator's GET /_sim/sts says which sessions were issued, for which
# role, from which signer, and how many calls each signed.
# Needs python3 (the JSON checks); everything is on 127.0.0.1.
CLOUDSIM_NO_AWS_CLI=yes
. "${srcdir:-.}/cloudsim-lib.sh"

CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
SECRET_OK=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
ROLE=arn:aws:iam::123456789012:role/gpuburst
PARTNER=arn:aws:iam::123456789012:role/gpuburst-partner
WEB=arn:aws:iam::123456789012:role/gpuburst-web
TOKEN=eyJhbGciOiJSUzI1NiJ9.gpuburst-test-token.c2lnbmF0dXJl
T=""
command -v timeout >/dev/null 2>&1 && T="timeout 60"

start_sim "$GB_TOP_SRCDIR/tests/data/cloudsim/roles.yaml"
mkdir -p "$TMP/state" "$TMP/aws"
chmod 750 "$TMP/state"

# write_conf FILE CREDENTIALS_LINES: the credentials block, indented 4
write_conf() {
	cat >"$1" <<EOF
cluster_name: t
state_dir: $TMP/state
log: {file: $TMP/gb.log, level: debug}
cloud:
  endpoint: $ENDPOINT
  connect_timeout: 2s
  request_timeout: 5s
  max_retries: 0
  credentials:
    sts_endpoint: $ENDPOINT
    imds: false
$2
regions:
  - name: ap-south-1
    ami: ami-0123456789abcdef0
    security_groups: [sg-0123456789abcdef0]
    azs: [{name: ap-south-1a, subnets: [subnet-aps1a-1]}]
fallback_groups:
  sea: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1]}
nodesets:
  - {name: g5, nodes: "g5-[1-8]", instance_type: g5.xlarge, home_region: ap-southeast-1}
EOF
}

# ctl CONF OUT CMD...: gpuburstctl without Slurm, an empty environment
# (doctor then fails its slurm.conf check: its other lines are judged)
ctl() {
	conf=$1 out=$2
	shift 2
	env -i PATH=/usr/bin:/bin SLURM_CONF="$TMP/no-slurm.conf" HOME="$TMP/home" \
		$T "$CTL" -c "$conf" "$@" >"$out" 2>"$out.err"
}

# sts EXPR: a Python expression over d, the simulator's GET /_sim/sts
sts() {
	control GET /_sim/sts >"$TMP/sts.json" || fail "GET /_sim/sts"
	jget "$TMP/sts.json" "$1"
}

cat >"$TMP/aws/credentials" <<EOF
[base]
aws_access_key_id = AKIDEXAMPLE
aws_secret_access_key = $SECRET_OK
EOF
cat >"$TMP/aws/config" <<EOF
[profile chain]
role_arn = $ROLE
source_profile = base
role_session_name = ctl-first-hop

[profile rolesanywhere]
credential_process = $TMP/signing-helper --profile-arn "arn:aws:rolesanywhere:ap-south-1:123456789012:profile/PR"
EOF
chmod 600 "$TMP/aws/credentials" "$TMP/aws/config"
FILES="    file: $TMP/aws/credentials
    config_file: $TMP/aws/config"

# ---- a role from a profile's keys
write_conf "$TMP/role.yaml" "$FILES
    role_arn: $ROLE
    source_profile: base
    role_session_name: ctl-doctor
    duration_seconds: 2h"
ctl "$TMP/role.yaml" "$TMP/role.out" doctor
grep -q "^ok   credentials: .*assume-role $ROLE <- profile base" "$TMP/role.out" ||
	fail "doctor's credentials line: $(cat "$TMP/role.out")"
grep -q '^ok   region ap-south-1: ' "$TMP/role.out" || fail "doctor's region line: $(cat "$TMP/role.out")"
expect_eq "sessions of $ROLE" "$(sts "d['roles']['$ROLE']")" 1
expect_eq "the session's signer" "$(sts "d['sessions'][-1]['source']")" AKIDEXAMPLE
expect_eq "the session's name" "$(sts "d['sessions'][-1]['session_name']")" ctl-doctor
expect_eq "2 h asked" "$(sts "round(d['sessions'][-1]['expires_in'] / 60)")" 120
[ "$(sts "d['sessions'][-1]['calls']")" -ge 2 ] ||
	fail "doctor's EC2 calls were not signed with the session: $(cat "$TMP/sts.json")"
ctl "$TMP/role.yaml" "$TMP/plan.out" plan --type g5.xlarge --count 2 ||
	fail "plan with a role: $(cat "$TMP/plan.out.err")"
grep -q 'ap-south-1a' "$TMP/plan.out" || fail "plan saw no offerings: $(cat "$TMP/plan.out")"
expect_eq "sessions of $ROLE after plan" "$(sts "d['roles']['$ROLE']")" 2
grep -q "$SECRET_OK" "$TMP/gb.log" "$TMP/role.out" "$TMP/role.out.err" && fail "a secret in the output or the log"
ok "role_arn + source_profile: AssumeRole with the profile's keys (session name, 2 h), EC2 signed with the session by doctor and plan"

# ---- the external id
write_conf "$TMP/partner.yaml" "$FILES
    role_arn: $PARTNER
    source_profile: base
    external_id: site-42"
ctl "$TMP/partner.yaml" "$TMP/partner.out" doctor
grep -q "^ok   credentials: .*assume-role $PARTNER <- profile base" "$TMP/partner.out" ||
	fail "doctor with an external id: $(cat "$TMP/partner.out")"
expect_eq "sessions of $PARTNER" "$(sts "d['roles']['$PARTNER']")" 1
write_conf "$TMP/partner-bad.yaml" "$FILES
    role_arn: $PARTNER
    source_profile: base
    external_id: site-43"
ctl "$TMP/partner-bad.yaml" "$TMP/pbad.out" doctor
grep -q "^FAIL credentials: .*STS AssumeRole $PARTNER: AccessDenied: " "$TMP/pbad.out" ||
	fail "a wrong external id: $(cat "$TMP/pbad.out")"
expect_eq "sessions of $PARTNER after the refusal" "$(sts "d['roles']['$PARTNER']")" 1
ok "external_id: the right one assumes the role, a wrong one is AccessDenied naming the role"

# ---- a role through a role
write_conf "$TMP/chain.yaml" "$FILES
    role_arn: $PARTNER
    source_profile: chain
    external_id: site-42
    role_session_name: ctl-second-hop"
ctl "$TMP/chain.yaml" "$TMP/chain.out" doctor
grep -q "^ok   credentials: .*assume-role $PARTNER <- profile chain assume-role $ROLE <- profile base" "$TMP/chain.out" ||
	fail "doctor's chain: $(cat "$TMP/chain.out")"
expect_eq "the first hop" "$(sts "d['sessions'][-2]['session_name']")" ctl-first-hop
expect_eq "the second hop's signer is the first hop" \
	"$(sts "d['sessions'][-1]['source'] == d['sessions'][-2]['access_key_id']")" True
write_conf "$TMP/chain-long.yaml" "$FILES
    role_arn: $ROLE
    source_profile: chain
    duration_seconds: 2h"
ctl "$TMP/chain-long.yaml" "$TMP/clong.out" doctor
grep -q "^FAIL credentials: .*ValidationError: .*1 hour session limit for roles assumed by role chaining" "$TMP/clong.out" ||
	fail "2 h through a chain: $(cat "$TMP/clong.out")"
ok "a role reached through a profile's role: two sessions, the second signed by the first; 2 h refused (role chaining)"

# ---- web identity
printf '%s\n' "$TOKEN" >"$TMP/token"
chmod 600 "$TMP/token"
write_conf "$TMP/web.yaml" "    role_arn: $WEB
    web_identity_token_file: $TMP/token"
ctl "$TMP/web.yaml" "$TMP/web.out" doctor
grep -q "^ok   credentials: .*web-identity $WEB" "$TMP/web.out" || fail "doctor's web identity: $(cat "$TMP/web.out")"
expect_eq "the web session's source" "$(sts "d['sessions'][-1]['source']")" web-identity
printf 'eyJhbGciOiJSUzI1NiJ9.revoked.c2ln\n' >"$TMP/token"
ctl "$TMP/web.yaml" "$TMP/webbad.out" doctor
grep -q "^FAIL credentials: .*AssumeRoleWithWebIdentity $WEB: InvalidIdentityToken" "$TMP/webbad.out" ||
	fail "a bad token: $(cat "$TMP/webbad.out")"
grep -q "revoked" "$TMP/gb.log" "$TMP/webbad.out" && fail "the token appears in the output or the log"
ok "web_identity_token_file: AssumeRoleWithWebIdentity, unsigned; a token STS refuses is InvalidIdentityToken, the token never shown"

# ---- credential_process: a real helper
EXP=$("$PYTHON3" -c 'import datetime as d; print((d.datetime.now(d.timezone.utc) + d.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"))')
cat >"$TMP/signing-helper" <<EOF
#!/bin/sh
# what IAM Roles Anywhere's aws_signing_helper credential-process prints
echo "signing-helper: signing with the site certificate (\$# arguments)" >&2
printf '{"Version": 1, "AccessKeyId": "AKIDEXAMPLE", "SecretAccessKey": "%s", "Expiration": "%s"}\n' '$SECRET_OK' '$EXP'
EOF
chmod 700 "$TMP/signing-helper"
write_conf "$TMP/proc.yaml" "    credential_process: [$TMP/signing-helper, credential-process, --role-arn, \"$ROLE\"]"
ctl "$TMP/proc.yaml" "$TMP/proc.out" doctor
grep -q '^ok   credentials: .*credential-process' "$TMP/proc.out" || fail "doctor's process line: $(cat "$TMP/proc.out")"
grep -q "$SECRET_OK" "$TMP/gb.log" "$TMP/proc.out" "$TMP/proc.out.err" && fail "the helper's secret in the output or the log"
write_conf "$TMP/ra.yaml" "$FILES
    role_arn: $ROLE
    source_profile: rolesanywhere"
n0=$(sts "d['roles']['$ROLE']")
ctl "$TMP/ra.yaml" "$TMP/ra.out" doctor
grep -q "^ok   credentials: .*assume-role $ROLE <- profile rolesanywhere credential-process" "$TMP/ra.out" ||
	fail "doctor's Roles Anywhere chain: $(cat "$TMP/ra.out")"
expect_eq "sessions of $ROLE after the Roles Anywhere set-up" "$(sts "d['roles']['$ROLE']")" $((n0 + 1))
printf '#!/bin/sh\necho "{\\"Version\\": 2}"\n' >"$TMP/bad-helper"
chmod 700 "$TMP/bad-helper"
write_conf "$TMP/badproc.yaml" "    credential_process: [$TMP/bad-helper]"
ctl "$TMP/badproc.yaml" "$TMP/badproc.out" doctor
grep -q '^FAIL credentials: .*Version' "$TMP/badproc.out" || fail "a Version 2 helper: $(cat "$TMP/badproc.out")"
ok "credential_process: a helper script (its secret nowhere), alone and as a role's source profile; Version 2 refused"

# ---- no STS endpoint next to a custom EC2 endpoint: not guessed
write_conf "$TMP/nosts.yaml" "$FILES
    role_arn: $ROLE
    source_profile: base"
sed -i '/sts_endpoint:/d' "$TMP/nosts.yaml"
ctl "$TMP/nosts.yaml" "$TMP/nosts.out" config check && fail "config check passed without sts_endpoint"
grep -q 'sts_endpoint' "$TMP/nosts.out" "$TMP/nosts.out.err" ||
	fail "no sts_endpoint: $(cat "$TMP/nosts.out" "$TMP/nosts.out.err")"
ok "a role with cloud.endpoint set and no sts_endpoint is refused by name"

calls=$(sts "d['calls']['AssumeRole'] + d['calls']['AssumeRoleWithWebIdentity']")
echo "# STS answered $calls role requests"
