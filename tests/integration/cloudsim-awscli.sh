#!/bin/sh
# cloudsim-awscli.sh - the real AWS CLI (Debian awscli) against
# gpuburst-cloudsim: every case of issue 4 (partial launch, client-token
# idempotency, describe filters and pagination, offerings, terminate, a
# wrongly signed request), plus ICE, quotas and the control interface, and
# --dry-run (botocore's DryRun parameter and its reading of the 412
# DryRunOperation document; a bad AMI, subnet, security group, key pair or
# instance profile named by its EC2 code even in a dry run), Spot
# (--instance-market-options), and STS (assume-role, web identity,
# get-caller-identity, a session signing EC2 until it expires).

. "${srcdir:-.}/cloudsim-lib.sh"

# a manual clock: the CLI takes longer per call than the 200 ms pending delay
start_sim "$DATA/awscli.yaml" --manual-clock
AMI=ami-0123456789abcdef0

run_g5() {	# run_g5 OUTFILE TOKEN [MAXCOUNT]
	awsc ec2 run-instances --image-id "$AMI" --instance-type g5.xlarge \
		--count "1:${3:-5}" --subnet-id subnet-it-a --client-token "$2" \
		--tag-specifications 'ResourceType=instance,Tags=[{Key=gpuburst:node,Value=g5-1},{Key=Project,Value=it}]' \
		>"$1" 2>"$TMP/err"
}

# --- --dry-run: everything a gpuburst launch sends, 412 DryRunOperation, nothing launched
dry_run() {	# dry_run OUTFILE [OPTION...]: run-instances --dry-run, the CLI's stderr in OUTFILE
	out="$1"
	shift
	if awsc --debug ec2 run-instances --dry-run --instance-type g5.xlarge --count 5 \
		--subnet-id subnet-it-a "$@" >/dev/null 2>"$out"; then
		fail "run-instances --dry-run $* succeeded"
	fi
}
dry_run "$TMP/dry.err" --image-id "$AMI" --security-group-ids sg-0123456789abcdef0 \
	--key-name gpuburst --iam-instance-profile Name=gpuburst-node --client-token it-token-1 \
	--user-data '#!/bin/sh' \
	--tag-specifications 'ResourceType=instance,Tags=[{Key=gpuburst:cluster,Value=it}]'
grep -q "'DryRun': 'true'" "$TMP/dry.err" || fail "the CLI did not send DryRun=true"
grep -q '"POST / HTTP/1.1" 412' "$TMP/dry.err" || fail "DryRunOperation was not HTTP 412"
grep -q 'An error occurred (DryRunOperation) when calling the RunInstances operation.*: Request would have succeeded, but DryRun flag is set\.$' \
	"$TMP/dry.err" || fail "want DryRunOperation: $(tail -n 1 "$TMP/dry.err")"
control GET /_sim/state >"$TMP/state.json" || fail "control state"
expect_eq "instances after a dry run" "$(jget "$TMP/state.json" 'len(d["instances"])')" 0
ok "run-instances --dry-run (5 over capacity 3, SG, key, profile, user data, tags): DryRunOperation 412, nothing launched"

for bad in "--image-id ami-0000000000000000a:InvalidAMIID.NotFound" \
	   "--image-id $AMI --subnet-id subnet-it-zz:InvalidSubnetID.NotFound" \
	   "--image-id $AMI --security-group-ids sg-0000000000000000b:InvalidGroup.NotFound" \
	   "--image-id $AMI --key-name nobody:InvalidKeyPair.NotFound" \
	   "--image-id $AMI --iam-instance-profile Name=nobody:InvalidParameterValue" \
	   "--image-id $AMI --instance-type g6e.xlarge:Unsupported"; do
	# shellcheck disable=SC2086
	dry_run "$TMP/dry.err" ${bad%:*}
	grep -q "An error occurred (${bad##*:}) when calling the RunInstances operation" "$TMP/dry.err" ||
		fail "run-instances --dry-run ${bad%:*}: want ${bad##*:}: $(tail -n 1 "$TMP/dry.err")"
	grep -q '"POST / HTTP/1.1" 400' "$TMP/dry.err" || fail "${bad##*:} was not HTTP 400"
done
ok "run-instances --dry-run with a bad AMI, subnet, SG, key, profile or type: its EC2 code (400)"

control POST /_sim/fault '{"code": "UnauthorizedOperation", "action": "RunInstances"}' >/dev/null ||
	fail "control fault"
dry_run "$TMP/dry.err" --image-id "$AMI"
grep -q 'An error occurred (UnauthorizedOperation) when calling the RunInstances operation' \
	"$TMP/dry.err" || fail "want UnauthorizedOperation: $(tail -n 1 "$TMP/dry.err")"
grep -q '"POST / HTTP/1.1" 403' "$TMP/dry.err" || fail "UnauthorizedOperation was not HTTP 403"
ok "run-instances --dry-run without the permission (injected): UnauthorizedOperation 403"

# --- MinCount=1 MaxCount=5 where 3 fit returns 3 (it-token-1 was only dry-run)
run_g5 "$TMP/run1.json" it-token-1 || fail "run-instances: $(cat "$TMP/err")"
expect_eq "instances launched" "$(jget "$TMP/run1.json" 'len(d["Instances"])')" 3
expect_eq "private IPs" "$(jget "$TMP/run1.json" '" ".join(i["PrivateIpAddress"] for i in d["Instances"])')" \
	"127.50.1.4 127.50.1.5 127.50.1.6"
expect_eq "state" "$(jget "$TMP/run1.json" '",".join(sorted(set(i["State"]["Name"] for i in d["Instances"])))')" pending
expect_eq "tags" "$(jget "$TMP/run1.json" 'sorted((t["Key"], t["Value"]) for t in d["Instances"][0]["Tags"])')" \
	'[["Project", "it"], ["gpuburst:node", "g5-1"]]'
RES1="$(jget "$TMP/run1.json" 'd["ReservationId"]')"
IDS1="$(jget "$TMP/run1.json" '" ".join(sorted(i["InstanceId"] for i in d["Instances"]))')"
ok "run-instances --count 1:5 with room for 3 launched 3 ($RES1)"

# --- the same call with the same --client-token returns the same reservation
run_g5 "$TMP/run2.json" it-token-1 || fail "run-instances (retry): $(cat "$TMP/err")"
expect_eq "reservation on retry" "$(jget "$TMP/run2.json" 'd["ReservationId"]')" "$RES1"
expect_eq "instances on retry" \
	"$(jget "$TMP/run2.json" '" ".join(sorted(i["InstanceId"] for i in d["Instances"]))')" "$IDS1"
control GET /_sim/state >"$TMP/state.json" || fail "control state"
expect_eq "instances in the cloud" "$(jget "$TMP/state.json" 'len(d["instances"])')" 3
ok "the same client token returned the same reservation, nothing new launched"

# --- same token, other parameters: IdempotentParameterMismatch
if run_g5 "$TMP/run3.json" it-token-1 4; then fail "a changed request with the same token succeeded"; fi
grep -q IdempotentParameterMismatch "$TMP/err" || fail "want IdempotentParameterMismatch: $(cat "$TMP/err")"
ok "the same token with other parameters is IdempotentParameterMismatch"

# --- the AZ is full: InsufficientInstanceCapacity (HTTP 500) naming ap-south-1b
if awsc --debug ec2 run-instances --image-id "$AMI" --instance-type g5.xlarge --count 1 \
	--subnet-id subnet-it-a >/dev/null 2>"$TMP/err"; then
	fail "run-instances in a full AZ succeeded"
fi
grep -q '"POST / HTTP/1.1" 500' "$TMP/err" || fail "ICE was not HTTP 500"
grep -q "InsufficientInstanceCapacity.*choosing ap-south-1b\." "$TMP/err" ||
	fail "want InsufficientInstanceCapacity naming ap-south-1b: $(grep InsufficientInstanceCapacity "$TMP/err" | tail -1)"
ok "a full AZ gives InsufficientInstanceCapacity (HTTP 500) naming the AZ with room"

# --- describe-instances: filters and pagination
awsc ec2 run-instances --image-id "$AMI" --instance-type g6.xlarge --count 12 \
	--subnet-id subnet-it-a --client-token it-token-2 \
	--tag-specifications 'ResourceType=instance,Tags=[{Key=Project,Value=paging}]' \
	>"$TMP/run4.json" 2>"$TMP/err" || fail "run-instances x12: $(cat "$TMP/err")"
expect_eq "g6 launched" "$(jget "$TMP/run4.json" 'len(d["Instances"])')" 12
ONE="$(jget "$TMP/run4.json" 'd["Instances"][7]["InstanceId"]')"
count() {	# count FILTER... -> number of instances
	awsc ec2 describe-instances --filters "$@" >"$TMP/desc.json" 2>"$TMP/err" ||
		fail "describe-instances $*: $(cat "$TMP/err")"
	jget "$TMP/desc.json" 'sum(len(r["Instances"]) for r in d["Reservations"])'
}
expect_eq "tag:gpuburst:node=g5-1" "$(count Name=tag:gpuburst:node,Values=g5-1)" 3
expect_eq "tag-key=gpuburst:node" "$(count Name=tag-key,Values=gpuburst:node)" 3
expect_eq "tag:Project=paging" "$(count Name=tag:Project,Values=paging)" 12
expect_eq "instance-id" "$(count Name=instance-id,Values="$ONE")" 1
expect_eq "availability-zone=ap-south-1b" "$(count Name=availability-zone,Values=ap-south-1b)" 0
expect_eq "availability-zone=ap-south-1a" "$(count Name=availability-zone,Values=ap-south-1a)" 15
expect_eq "running before the delay" "$(count Name=instance-state-name,Values=running)" 0
control POST /_sim/time '{"advance": 1}' >/dev/null || fail "control time"
expect_eq "running after 1 s" "$(count Name=instance-state-name,Values=running)" 15
expect_eq "running + tag" "$(count Name=instance-state-name,Values=running Name=tag:Project,Values=it)" 3
ok "describe-instances filters: tag:KEY, tag-key, instance-id, availability-zone, instance-state-name"

pages=0
total=0
token=
while :; do
	if [ -n "$token" ]; then
		awsc ec2 describe-instances --no-paginate --max-results 5 --next-token "$token" \
			>"$TMP/page.json" 2>"$TMP/err" || fail "describe page: $(cat "$TMP/err")"
	else
		awsc ec2 describe-instances --no-paginate --max-results 5 \
			>"$TMP/page.json" 2>"$TMP/err" || fail "describe page: $(cat "$TMP/err")"
	fi
	n="$(jget "$TMP/page.json" 'sum(len(r["Instances"]) for r in d["Reservations"])')"
	jget "$TMP/page.json" '"\n".join(i["InstanceId"] for r in d["Reservations"] for i in r["Instances"])' \
		>>"$TMP/paged-ids"
	pages=$((pages + 1))
	total=$((total + n))
	token="$(jget "$TMP/page.json" 'd.get("NextToken", "")')"
	[ -n "$token" ] || break
	expect_eq "page size" "$n" 5
	[ $pages -lt 10 ] || fail "pagination does not end"
done
expect_eq "pages" "$pages" 3
expect_eq "instances over all pages" "$total" 15
expect_eq "distinct instances over all pages" "$(sort -u "$TMP/paged-ids" | wc -l | tr -d ' ')" 15
# the CLI's own paginator follows NextToken too
calls_before="$(grep -c 'action=DescribeInstances ' "$TMP/sim.log")"
awsc ec2 describe-instances --page-size 5 >"$TMP/all.json" 2>"$TMP/err" || fail "$(cat "$TMP/err")"
expect_eq "paginated total" "$(jget "$TMP/all.json" 'sum(len(r["Instances"]) for r in d["Reservations"])')" 15
calls="$(($(grep -c 'action=DescribeInstances ' "$TMP/sim.log") - calls_before))"
[ "$calls" -ge 3 ] || fail "--page-size 5 made $calls DescribeInstances calls, want >= 3"
ok "describe-instances pagination: MaxResults 5 gives 3 pages of 15 instances, NextToken ends"

# --- describe-instance-type-offerings
awsc ec2 describe-instance-type-offerings --location-type availability-zone \
	--filters Name=instance-type,Values=g6e.xlarge >"$TMP/off.json" 2>"$TMP/err" ||
	fail "offerings: $(cat "$TMP/err")"
expect_eq "g6e AZs" "$(jget "$TMP/off.json" '[o["Location"] for o in d["InstanceTypeOfferings"]]')" \
	'["ap-south-1b"]'
expect_eq "location type" \
	"$(jget "$TMP/off.json" 'd["InstanceTypeOfferings"][0]["LocationType"]')" availability-zone
awsc ec2 describe-instance-type-offerings >"$TMP/off.json" 2>"$TMP/err" || fail "$(cat "$TMP/err")"
expect_eq "region offerings" \
	"$(jget "$TMP/off.json" 'sorted(o["InstanceType"] for o in d["InstanceTypeOfferings"])')" \
	'["g5.xlarge", "g6.xlarge", "g6e.xlarge"]'
REGION=ap-northeast-1 awsc ec2 describe-instance-type-offerings --location-type availability-zone-id \
	>"$TMP/off.json" 2>"$TMP/err" || fail "$(cat "$TMP/err")"
expect_eq "Tokyo offerings" \
	"$(jget "$TMP/off.json" '[(o["InstanceType"], o["Location"]) for o in d["InstanceTypeOfferings"]]')" \
	'[["g6e.xlarge", "apne1-az1"]]'
ok "describe-instance-type-offerings per region, AZ and AZ id, with filters"

# --- g6e is not offered in ap-south-1a: Unsupported
if awsc ec2 run-instances --image-id "$AMI" --instance-type g6e.xlarge --count 1 \
	--subnet-id subnet-it-a >/dev/null 2>"$TMP/err"; then
	fail "an unoffered type launched"
fi
grep -q "Unsupported.*ap-south-1b" "$TMP/err" || fail "want Unsupported: $(cat "$TMP/err")"
ok "an instance type the AZ does not offer is Unsupported"

# --- terminate-instances (--dry-run first: nothing terminated)
# shellcheck disable=SC2086
if awsc ec2 terminate-instances --dry-run --instance-ids $IDS1 >/dev/null 2>"$TMP/err"; then
	fail "terminate-instances --dry-run succeeded"
fi
grep -q 'An error occurred (DryRunOperation) when calling the TerminateInstances operation' "$TMP/err" ||
	fail "want DryRunOperation: $(cat "$TMP/err")"
expect_eq "running after a dry-run terminate" "$(count Name=instance-state-name,Values=running Name=tag:Project,Values=it)" 3
# shellcheck disable=SC2086
awsc ec2 terminate-instances --instance-ids $IDS1 >"$TMP/term.json" 2>"$TMP/err" ||
	fail "terminate: $(cat "$TMP/err")"
expect_eq "terminating" "$(jget "$TMP/term.json" 'sorted(set((i["PreviousState"]["Name"], i["CurrentState"]["Name"], i["CurrentState"]["Code"]) for i in d["TerminatingInstances"]))')" \
	'[["running", "shutting-down", 32]]'
expect_eq "terminated ids" "$(jget "$TMP/term.json" '" ".join(sorted(i["InstanceId"] for i in d["TerminatingInstances"]))')" "$IDS1"
control POST /_sim/time '{"advance": 1}' >/dev/null || fail "control time"
# shellcheck disable=SC2086
awsc ec2 describe-instances --instance-ids $IDS1 >"$TMP/desc.json" 2>"$TMP/err" || fail "$(cat "$TMP/err")"
expect_eq "after shutting down" \
	"$(jget "$TMP/desc.json" 'sorted(set(i["State"]["Name"] for r in d["Reservations"] for i in r["Instances"]))')" \
	'["terminated"]'
run_g5 "$TMP/run5.json" it-token-3 || fail "run-instances after terminate: $(cat "$TMP/err")"
expect_eq "capacity released" "$(jget "$TMP/run5.json" 'len(d["Instances"])')" 3
ok "terminate-instances: --dry-run changes nothing; running -> shutting-down -> terminated, capacity released"

# --- create-tags
awsc ec2 create-tags --resources "$ONE" --tags Key=Name,Value=tagged >/dev/null 2>"$TMP/err" ||
	fail "create-tags: $(cat "$TMP/err")"
expect_eq "tag:Name" "$(count Name=tag:Name,Values=tagged)" 1
ok "create-tags"

# --- Spot: --instance-market-options as the CLI sends it; a pool and a quota of its own
spot() {	# spot OUTFILE MARKET-OPTIONS
	awsc ec2 run-instances --image-id "$AMI" --instance-type g6e.xlarge --count 1 \
		--subnet-id subnet-it-b --instance-market-options "$2" >"$1" 2>"$TMP/err"
}
if spot "$TMP/spot.json" 'MarketType=spot,SpotOptions={MaxPrice=0.5}'; then
	fail "a Spot MaxPrice under the price launched"
fi
grep -q 'An error occurred (SpotMaxPriceTooLow).*price of 0.5 is lower than .* price of 0.6\.' "$TMP/err" ||
	fail "want SpotMaxPriceTooLow: $(cat "$TMP/err")"
if spot "$TMP/spot.json" 'MarketType=spot,SpotOptions={SpotInstanceType=one-time,InstanceInterruptionBehavior=stop}'; then
	fail "a one-time Spot request with InstanceInterruptionBehavior stop launched"
fi
grep -q 'An error occurred (InvalidParameterCombination)' "$TMP/err" ||
	fail "want InvalidParameterCombination: $(cat "$TMP/err")"
spot "$TMP/spot.json" 'MarketType=spot,SpotOptions={MaxPrice=0.75,SpotInstanceType=one-time,InstanceInterruptionBehavior=terminate}' ||
	fail "a Spot launch: $(cat "$TMP/err")"
expect_eq "Spot lifecycle" "$(jget "$TMP/spot.json" 'd["Instances"][0]["InstanceLifecycle"]')" spot
expect_eq "Spot request id" \
	"$(jget "$TMP/spot.json" 'd["Instances"][0]["SpotInstanceRequestId"][:4]')" sir-
expect_eq "instance-lifecycle=spot" "$(count Name=instance-lifecycle,Values=spot)" 1
if spot "$TMP/spot.json" 'MarketType=spot'; then fail "a second Spot instance fit a pool of 1"; fi
grep -q 'An error occurred (InsufficientInstanceCapacity).*There is no Spot capacity available that matches your request\.' \
	"$TMP/err" || fail "want the Spot ICE: $(cat "$TMP/err")"
control GET /_sim/state >"$TMP/state.json" || fail "control state"
expect_eq "Spot pool of ap-south-1b" \
	"$(jget "$TMP/state.json" '[(p["instance_type"], p["used"], p["total"]) for r in d["regions"] for z in r["azs"] if z["name"] == "ap-south-1b" for p in z["spot_pools"]]')" \
	'[["g6e.xlarge", 1, 1]]'
expect_eq "On-Demand g6e.xlarge of ap-south-1b" \
	"$(jget "$TMP/state.json" '[p["used"] for r in d["regions"] for z in r["azs"] if z["name"] == "ap-south-1b" for p in z["pools"] if p["instance_type"] == "g6e.xlarge"]')" \
	'[0]'
ok "Spot: SpotMaxPriceTooLow, InvalidParameterCombination, a launch with instanceLifecycle spot from the Spot pool only, then the Spot ICE"

# --- MetadataOptions.InstanceMetadataTags as botocore sends it, and the
# instance metadata service: the instance (by its address) reads its tags
if awsc ec2 run-instances --image-id "$AMI" --instance-type g6.xlarge --count 1 \
	--subnet-id subnet-it-a --metadata-options InstanceMetadataTags=on >/dev/null 2>"$TMP/err"; then
	fail "InstanceMetadataTags=on was accepted"
fi
grep -q 'An error occurred (InvalidParameterValue).*InstanceMetadataTags' "$TMP/err" ||
	fail "want InvalidParameterValue naming InstanceMetadataTags: $(cat "$TMP/err")"
awsc ec2 run-instances --image-id "$AMI" --instance-type g6.xlarge --count 1 \
	--subnet-id subnet-it-a --metadata-options InstanceMetadataTags=enabled >"$TMP/md.json" 2>"$TMP/err" ||
	fail "run-instances --metadata-options: $(cat "$TMP/err")"
MD_ID="$(jget "$TMP/md.json" 'd["Instances"][0]["InstanceId"]')"
MD_IP="$(jget "$TMP/md.json" 'd["Instances"][0]["PrivateIpAddress"]')"
IMDS_TAG="$GB_TOP_SRCDIR/contrib/lab/imds-tag"
rc=0; "$PYTHON3" "$IMDS_TAG" "$ENDPOINT" "$MD_IP" gpuburst:node 0.5 >"$TMP/tag.out" 2>&1 || rc=$?
expect_eq "imds-tag before the tag (exit status)" "$rc" 1
awsc ec2 create-tags --resources "$MD_ID" --tags Key=gpuburst:node,Value=g6-1 >/dev/null 2>"$TMP/err" ||
	fail "create-tags: $(cat "$TMP/err")"
expect_eq "tag from the IMDS" "$("$PYTHON3" "$IMDS_TAG" "$ENDPOINT" "$MD_IP" gpuburst:node 5)" g6-1
rc=0; "$PYTHON3" "$IMDS_TAG" "$ENDPOINT" 127.0.0.1 gpuburst:node 0.5 >/dev/null 2>&1 || rc=$?
expect_eq "imds-tag from an address that is no instance (exit status)" "$rc" 1
expect_eq "IMDS without a token" "$("$PYTHON3" -c 'import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), source_address=(sys.argv[2], 0))
c.request("GET", "/latest/meta-data/instance-id"); print(c.getresponse().status)' "${ENDPOINT##*:}" "$MD_IP")" 401
ok "InstanceMetadataTags: only enabled/disabled; the instance reads its CreateTags tag from the IMDS (IMDSv2), others get nothing"

# --- a wrongly signed request is refused
if SECRET=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEz awsc --debug ec2 describe-instances \
	>/dev/null 2>"$TMP/err"; then
	fail "a request signed with the wrong secret succeeded"
fi
grep -q '"POST / HTTP/1.1" 403' "$TMP/err" || fail "a bad signature was not HTTP 403"
grep -q 'An error occurred (SignatureDoesNotMatch)' "$TMP/err" || fail "want SignatureDoesNotMatch"
if AKID=AKIDNOTKNOWN awsc ec2 describe-instances >/dev/null 2>"$TMP/err"; then
	fail "an unknown access key succeeded"
fi
grep -q 'An error occurred (AuthFailure)' "$TMP/err" || fail "want AuthFailure: $(cat "$TMP/err")"
if REGION=eu-west-3 awsc ec2 describe-instances >/dev/null 2>"$TMP/err"; then
	fail "a region outside the scenario succeeded"
fi
grep -q 'An error occurred (AuthFailure)' "$TMP/err" || fail "want AuthFailure: $(cat "$TMP/err")"
grep -q 'status=403 code=SignatureDoesNotMatch' "$TMP/sim.log" || fail "the log lacks the refusal"
ok "wrong signature: SignatureDoesNotMatch (403); unknown key or region: AuthFailure"

# --- STS: the AWS CLI assumes the scenario's roles, signs EC2 and STS with
# the session, and is refused once the STS clock passes its expiration
ROLE=arn:aws:iam::123456789012:role/gpuburst
PARTNER=arn:aws:iam::123456789012:role/gpuburst-partner
awsc sts get-caller-identity >"$TMP/who.json" 2>"$TMP/err" || fail "get-caller-identity: $(cat "$TMP/err")"
expect_eq "the long-term key's account" "$(jget "$TMP/who.json" "d['Account']")" 123456789012
awsc sts assume-role --role-arn "$ROLE" --role-session-name cli-1 --duration-seconds 7200 \
	>"$TMP/ar.json" 2>"$TMP/err" || fail "assume-role: $(cat "$TMP/err")"
S_AKID=$(jget "$TMP/ar.json" "d['Credentials']['AccessKeyId']")
S_SECRET=$(jget "$TMP/ar.json" "d['Credentials']['SecretAccessKey']")
S_TOKEN=$(jget "$TMP/ar.json" "d['Credentials']['SessionToken']")
case $S_AKID in ASIA????????????????) ;; *) fail "session key '$S_AKID'" ;; esac
expect_eq "the assumed role user" "$(jget "$TMP/ar.json" "d['AssumedRoleUser']['Arn']")" \
	arn:aws:sts::123456789012:assumed-role/gpuburst/cli-1
AKID=$S_AKID SECRET=$S_SECRET TOKEN=$S_TOKEN awsc sts get-caller-identity >"$TMP/who.json" \
	2>"$TMP/err" || fail "get-caller-identity with the session: $(cat "$TMP/err")"
expect_eq "the session's identity" "$(jget "$TMP/who.json" "d['Arn']")" \
	arn:aws:sts::123456789012:assumed-role/gpuburst/cli-1
AKID=$S_AKID SECRET=$S_SECRET TOKEN=$S_TOKEN awsc ec2 describe-availability-zones \
	>/dev/null 2>"$TMP/err" || fail "EC2 with the session: $(cat "$TMP/err")"
AKID=$S_AKID SECRET=$S_SECRET awsc ec2 describe-availability-zones >/dev/null 2>"$TMP/err" &&
	fail "EC2 with the session key and no token succeeded"
grep -q 'An error occurred (AuthFailure)' "$TMP/err" || fail "no token: $(cat "$TMP/err")"
AKID=$S_AKID SECRET=$S_SECRET TOKEN=$S_TOKEN awsc sts assume-role --role-arn "$ROLE" \
	--role-session-name cli-2 --duration-seconds 7200 >/dev/null 2>"$TMP/err" &&
	fail "2 h through role chaining succeeded"
grep -q 'An error occurred (ValidationError).*role chaining' "$TMP/err" || fail "chaining: $(cat "$TMP/err")"
awsc sts assume-role --role-arn "$PARTNER" --role-session-name cli-3 >/dev/null 2>"$TMP/err" &&
	fail "the partner role without its external id succeeded"
grep -q 'An error occurred (AccessDenied)' "$TMP/err" || fail "no external id: $(cat "$TMP/err")"
awsc sts assume-role --role-arn "$PARTNER" --role-session-name cli-3 --external-id site-42 \
	>/dev/null 2>"$TMP/err" || fail "the partner role with its external id: $(cat "$TMP/err")"
awsc --no-sign-request sts assume-role-with-web-identity --role-arn \
	arn:aws:iam::123456789012:role/gpuburst-web --role-session-name cli-web \
	--web-identity-token eyJhbGciOiJSUzI1NiJ9.gpuburst-test-token.c2lnbmF0dXJl \
	>"$TMP/web.json" 2>"$TMP/err" || fail "assume-role-with-web-identity: $(cat "$TMP/err")"
jget "$TMP/web.json" "d['Credentials']['Expiration']" | grep -q . || fail "no Expiration: $(cat "$TMP/web.json")"
control POST /_sim/time '{"advance": 7300}' >/dev/null || fail "control time"
AKID=$S_AKID SECRET=$S_SECRET TOKEN=$S_TOKEN awsc sts get-caller-identity >/dev/null 2>"$TMP/err" &&
	fail "an expired session succeeded at STS"
grep -q 'An error occurred (ExpiredToken)' "$TMP/err" || fail "expired at STS: $(cat "$TMP/err")"
AKID=$S_AKID SECRET=$S_SECRET TOKEN=$S_TOKEN awsc ec2 describe-availability-zones >/dev/null 2>"$TMP/err" &&
	fail "an expired session succeeded at EC2"
grep -q 'An error occurred (RequestExpired)' "$TMP/err" || fail "expired at EC2: $(cat "$TMP/err")"
control GET /_sim/sts >"$TMP/sts.json" || fail "GET /_sim/sts"
expect_eq "sessions of the gpuburst role" "$(jget "$TMP/sts.json" "d['roles']['$ROLE']")" 1
expect_eq "requests signed by the first session" "$(jget "$TMP/sts.json" "d['sessions'][0]['calls']")" 3
ok "STS: assume-role (session key, secret, token), get-caller-identity and EC2 with the session; no token AuthFailure; chaining past 1 h and a missing external id refused; web identity unsigned; expired: ExpiredToken (STS), RequestExpired (EC2)"

# --- the simulator stops on SIGTERM and removes its pid file
stop_sim
[ ! -e "$TMP/pid" ] || fail "the pid file is still there"
ok "SIGTERM stops the simulator and removes the pid file"
