#!/bin/sh
# cloudsim-awscli.sh - the real AWS CLI (Debian awscli) against
# gpuburst-cloudsim: every case of issue 4 (partial launch, client-token
# idempotency, describe filters and pagination, offerings, terminate, a
# wrongly signed request), plus ICE, quotas and the control interface, and
# --dry-run (botocore's DryRun parameter and its reading of the 412
# DryRunOperation document; a bad AMI, subnet, security group, key pair or
# instance profile named by its EC2 code even in a dry run), Spot
# (--instance-market-options), STS (assume-role, web identity,
# get-caller-identity, a session signing EC2 until it expires), and GPU
# training capacity (describe-instance-types, placement groups,
# describe-security-groups, run-instances --network-interfaces with EFA
# into a cluster group, and EC2's refusals), and capacity reservations
# (describe-capacity-reservations, run-instances
# --capacity-reservation-specification, MarketType capacity-block on the
# simulated clock, describe-capacity-block-offerings; what this CLI cannot
# send is listed as not checked, the rest still runs).

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

# --- describe-spot-price-history: the scenario's Spot price of each pool, as
# botocore parses it (all pages: it must take EC2's empty nextToken as the end)
sph() {	# sph OUTFILE [OPTION...]
	out="$1"
	shift
	awsc ec2 describe-spot-price-history "$@" >"$out" 2>"$TMP/err"
}
sph "$TMP/sph.json" || fail "describe-spot-price-history: $(cat "$TMP/err")"
expect_eq "Spot prices: AZ, type, product, price" \
	"$(jget "$TMP/sph.json" '[(p["AvailabilityZone"], p["InstanceType"], p["ProductDescription"], p["SpotPrice"]) for p in d["SpotPriceHistory"]]')" \
	'[["ap-south-1b", "g6e.xlarge", "Linux/UNIX", "0.600000"]]'
expect_eq "a timestamp botocore read" \
	"$(jget "$TMP/sph.json" 'd["SpotPriceHistory"][0]["Timestamp"][:2]')" 20
sph "$TMP/sph.json" --instance-types g6e.xlarge g6.xlarge --product-descriptions Linux/UNIX \
	--availability-zone ap-south-1b --start-time 2026-01-01T00:00:00Z --page-size 1 ||
	fail "describe-spot-price-history with parameters: $(cat "$TMP/err")"
expect_eq "g6e.xlarge and g6.xlarge of ap-south-1b" \
	"$(jget "$TMP/sph.json" '[p["InstanceType"] for p in d["SpotPriceHistory"]]')" '["g6e.xlarge"]'
sph "$TMP/sph.json" --end-time 2020-01-01T00:00:00Z --filters Name=spot-price,Values='0.6*' ||
	fail "describe-spot-price-history --end-time: $(cat "$TMP/err")"
expect_eq "prices set after --end-time" "$(jget "$TMP/sph.json" 'len(d["SpotPriceHistory"])')" 0
for bad in "--availability-zone ap-south-1z:InvalidParameterValue" \
	   "--instance-types p9.huge:InvalidParameterValue" \
	   "--product-descriptions Linux:InvalidParameterValue" \
	   "--filters Name=state,Values=active:InvalidParameterValue" \
	   "--start-time 2026-01-02T00:00:00Z --end-time 2026-01-01T00:00:00Z:InvalidParameterValue" \
	   "--max-results 1001:InvalidParameterValue" \
	   "--next-token gbsim-nope:InvalidNextToken" \
	   "--dry-run:DryRunOperation"; do
	# shellcheck disable=SC2086
	sph /dev/null ${bad%:*} && fail "describe-spot-price-history ${bad%:*} succeeded"
	grep -q "(${bad##*:}) when calling the DescribeSpotPriceHistory operation" "$TMP/err" ||
		fail "describe-spot-price-history ${bad%:*}: want ${bad##*:}: $(cat "$TMP/err")"
done
ok "describe-spot-price-history: the one Spot pool's price (0.600000, Linux/UNIX) with a timestamp botocore reads, by type, product, AZ, start time and page size, none before --end-time; a bad AZ, type, product, filter, time range or MaxResults InvalidParameterValue, a bad token InvalidNextToken, --dry-run DryRunOperation"

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

# --- GPU training capacity (issue 19), on a simulator of its own
stop_sim
start_sim "$DATA/awscli-gpu.yaml" --manual-clock

# describe-instance-types: the catalog's figures, filters with wildcards, pages of 5
awsc ec2 describe-instance-types --instance-types g5.12xlarge >"$TMP/it.json" 2>"$TMP/err" ||
	fail "describe-instance-types: $(cat "$TMP/err")"
expect_eq "g5.12xlarge vCPUs, MiB, GPU, count, GPU MiB, total" \
	"$(jget "$TMP/it.json" '[(t["VCpuInfo"]["DefaultVCpus"], t["MemoryInfo"]["SizeInMiB"], g["Name"], g["Count"], g["MemoryInfo"]["SizeInMiB"], t["GpuInfo"]["TotalGpuMemoryInMiB"]) for t in d["InstanceTypes"] for g in t["GpuInfo"]["Gpus"]]')" \
	'[[48, 196608, "A10G", 4, 22888, 91552]]'
expect_eq "g5.12xlarge architecture" \
	"$(jget "$TMP/it.json" 'd["InstanceTypes"][0]["ProcessorInfo"]["SupportedArchitectures"]')" '["x86_64"]'
awsc ec2 describe-instance-types --filters 'Name=instance-type,Values=g5.*,g6?.xlarge' \
	'Name=processor-info.supported-architecture,Values=x86_64' >"$TMP/it.json" 2>"$TMP/err" ||
	fail "describe-instance-types --filters: $(cat "$TMP/err")"
expect_eq "g5.* and g6?.xlarge on x86_64" \
	"$(jget "$TMP/it.json" 'sorted(t["InstanceType"] for t in d["InstanceTypes"])')" \
	'["g5.12xlarge", "g5.16xlarge", "g5.24xlarge", "g5.2xlarge", "g5.48xlarge", "g5.4xlarge", "g5.8xlarge", "g5.xlarge", "g6e.xlarge", "g6f.xlarge"]'
awsc ec2 describe-instance-types --filters 'Name=processor-info.supported-architecture,Values=arm64' \
	>"$TMP/it.json" 2>"$TMP/err" || fail "describe-instance-types arm64: $(cat "$TMP/err")"
expect_eq "arm64 types" "$(jget "$TMP/it.json" 'sorted({t["InstanceType"].split(".")[0] for t in d["InstanceTypes"]})')" \
	'["g5g"]'
awsc --debug ec2 describe-instance-types --filters 'Name=instance-type,Values=g5.*' --page-size 5 \
	>"$TMP/it.json" 2>"$TMP/err" || fail "describe-instance-types --page-size 5: $(cat "$TMP/err")"
expect_eq "g5 types over pages of 5" "$(jget "$TMP/it.json" 'len(d["InstanceTypes"])')" 8
expect_eq "requests with NextToken" "$(grep -c "'NextToken': " "$TMP/err")" 1
awsc ec2 describe-instance-types --max-results 5 --no-paginate >"$TMP/it.json" 2>"$TMP/err" ||
	fail "describe-instance-types --max-results 5: $(cat "$TMP/err")"
expect_eq "one page" "$(jget "$TMP/it.json" 'len(d["InstanceTypes"])')" 5
jget "$TMP/it.json" 'd["NextToken"]' | grep -q '^gbsim1' || fail "no NextToken: $(cat "$TMP/it.json")"
awsc ec2 describe-instance-types --filters Name=gpu-info.name,Values=H100 >/dev/null 2>"$TMP/err" &&
	fail "describe-instance-types with a filter EC2 has not succeeded"
grep -q "InvalidParameterValue.*The filter 'gpu-info.name' is invalid" "$TMP/err" ||
	fail "unknown filter: $(cat "$TMP/err")"
awsc ec2 describe-instance-types --instance-types g5.xlarge g9.huge >/dev/null 2>"$TMP/err" &&
	fail "describe-instance-types of an unknown type succeeded"
grep -q 'InvalidInstanceType.*The following supplied instance types do not exist: \[g9.huge\]' \
	"$TMP/err" || fail "unknown type: $(cat "$TMP/err")"
ok "describe-instance-types: the catalog's figures (g5.12xlarge: 48 vCPUs, 4 A10G), filters with * and ?, 8 g5 types over pages of 5, unknown filter and type refused"

# placement groups: create, duplicate, describe, the region's limit, delete
awsc ec2 create-placement-group --group-name it-cluster --strategy cluster \
	--tag-specifications 'ResourceType=placement-group,Tags=[{Key=gpuburst:job,Value=42}]' \
	>"$TMP/pg.json" 2>"$TMP/err" || fail "create-placement-group: $(cat "$TMP/err")"
expect_eq "created group" "$(jget "$TMP/pg.json" '[d["PlacementGroup"][k] for k in ("GroupName", "Strategy", "State")]')" \
	'["it-cluster", "cluster", "available"]'
PG_ID="$(jget "$TMP/pg.json" 'd["PlacementGroup"]["GroupId"]')"
case $PG_ID in pg-?????????????????) ;; *) fail "group id '$PG_ID'" ;; esac
awsc ec2 create-placement-group --group-name it-cluster --strategy cluster >/dev/null 2>"$TMP/err" &&
	fail "a second it-cluster succeeded"
grep -q "InvalidPlacementGroup.Duplicate.*The placement group 'it-cluster' already exists." "$TMP/err" ||
	fail "duplicate: $(cat "$TMP/err")"
awsc ec2 create-placement-group --group-name it-spread --strategy spread >/dev/null 2>"$TMP/err" ||
	fail "create-placement-group spread: $(cat "$TMP/err")"
awsc ec2 create-placement-group --group-name it-third --strategy cluster >/dev/null 2>"$TMP/err" &&
	fail "a third group past the limit of 2 succeeded"
grep -q 'PlacementGroupLimitExceeded' "$TMP/err" || fail "limit: $(cat "$TMP/err")"
awsc ec2 describe-placement-groups --filters Name=tag:gpuburst:job,Values=42 >"$TMP/pgs.json" \
	2>"$TMP/err" || fail "describe-placement-groups: $(cat "$TMP/err")"
expect_eq "groups tagged job 42" "$(jget "$TMP/pgs.json" '[(g["GroupName"], g["GroupId"]) for g in d["PlacementGroups"]]')" \
	"[[\"it-cluster\", \"$PG_ID\"]]"
awsc ec2 describe-placement-groups --group-names it-spread >"$TMP/pgs.json" 2>"$TMP/err" ||
	fail "describe-placement-groups --group-names: $(cat "$TMP/err")"
expect_eq "it-spread's strategy" "$(jget "$TMP/pgs.json" 'd["PlacementGroups"][0]["Strategy"]')" spread
awsc ec2 describe-placement-groups --group-names nope >/dev/null 2>"$TMP/err" &&
	fail "describe-placement-groups of an unknown group succeeded"
grep -q "InvalidPlacementGroup.Unknown.*The Placement Group 'nope' is unknown." "$TMP/err" ||
	fail "unknown group: $(cat "$TMP/err")"
awsc ec2 delete-placement-group --group-name it-spread >/dev/null 2>"$TMP/err" ||
	fail "delete-placement-group: $(cat "$TMP/err")"
awsc ec2 delete-placement-group --group-name it-spread >/dev/null 2>"$TMP/err" &&
	fail "deleting it-spread twice succeeded"
grep -q 'InvalidPlacementGroup.Unknown' "$TMP/err" || fail "delete unknown: $(cat "$TMP/err")"
ok "placement groups: create (tags, pg- id), Duplicate, the scenario's limit of 2, describe by tag and name, Unknown, delete"

# describe-security-groups: EFA's self-referencing rule, a group without rules
awsc ec2 describe-security-groups --group-ids sg-0123456789abcdef0 sg-0123456789abcdef1 \
	>"$TMP/sg.json" 2>"$TMP/err" || fail "describe-security-groups: $(cat "$TMP/err")"
expect_eq "ingress of the EFA group" \
	"$(jget "$TMP/sg.json" '[(p["IpProtocol"], [g["GroupId"] for g in p["UserIdGroupPairs"]]) for p in d["SecurityGroups"][0]["IpPermissions"]]')" \
	'[["-1", ["sg-0123456789abcdef0"]]]'
expect_eq "egress of the EFA group" \
	"$(jget "$TMP/sg.json" '[(p["IpProtocol"], [g["GroupId"] for g in p["UserIdGroupPairs"]]) for p in d["SecurityGroups"][0]["IpPermissionsEgress"]]')" \
	'[["-1", ["sg-0123456789abcdef0"]]]'
expect_eq "rules of the other" \
	"$(jget "$TMP/sg.json" '[d["SecurityGroups"][1]["IpPermissions"], d["SecurityGroups"][1]["IpPermissionsEgress"]]')" \
	'[[], []]'
awsc ec2 describe-security-groups --group-ids sg-0000000000000000b >/dev/null 2>"$TMP/err" &&
	fail "describe-security-groups of an unknown group succeeded"
grep -q "InvalidGroup.NotFound.*The security group 'sg-0000000000000000b' does not exist" "$TMP/err" ||
	fail "unknown group: $(cat "$TMP/err")"
awsc ec2 describe-security-groups --page-size 5 >"$TMP/sg.json" 2>"$TMP/err" ||
	fail "describe-security-groups --page-size 5: $(cat "$TMP/err")"
expect_eq "the region's groups" "$(jget "$TMP/sg.json" '[g["GroupId"] for g in d["SecurityGroups"]]')" \
	'["sg-0123456789abcdef0", "sg-0123456789abcdef1"]'
ok "describe-security-groups: all traffic from and to itself (EFA's rule), a group without rules, InvalidGroup.NotFound, paged"

# run-instances --network-interfaces: the refusals EC2 makes
EFA0='DeviceIndex=0,NetworkCardIndex=0,InterfaceType=efa,SubnetId=subnet-gpu-a,Groups=sg-0123456789abcdef0,DeleteOnTermination=true'
run_ni() {	# run_ni OUTFILE TYPE COUNT OPTION...
	out="$1" type="$2" n="$3"
	shift 3
	awsc ec2 run-instances --image-id "$AMI" --instance-type "$type" --count "$n" "$@" \
		>"$out" 2>"$TMP/err"
}
refused() {	# refused CODE MESSAGE-REGEX TYPE OPTION...
	code="$1" says="$2" type="$3"
	shift 3
	run_ni "$TMP/ni.json" "$type" 1 "$@" && fail "run-instances $* succeeded"
	grep -q "($code) when calling the RunInstances operation.*: $says" "$TMP/err" ||
		fail "run-instances $*: want $code '$says': $(cat "$TMP/err")"
}
refused InvalidParameterCombination \
	'Network interfaces and an instance-level subnet ID may not be specified on the same request' \
	p5.48xlarge --subnet-id subnet-gpu-a --network-interfaces "$EFA0"
refused InvalidParameterCombination \
	'Network interfaces and an instance-level security groups may not be specified on the same request' \
	p5.48xlarge --security-group-ids sg-0123456789abcdef0 --network-interfaces "$EFA0"
awsc ec2 describe-instance-types --instance-types g6.xlarge >"$TMP/it.json" 2>"$TMP/err" ||
	fail "describe-instance-types g6.xlarge: $(cat "$TMP/err")"
expect_eq "g6.xlarge EFA" "$(jget "$TMP/it.json" 'd["InstanceTypes"][0]["NetworkInfo"]["EfaSupported"]')" False
refused InvalidParameterCombination 'g6.xlarge instances do not support Elastic Fabric Adapters.' \
	g6.xlarge --network-interfaces "$EFA0"
CARDS="$(jget "$TMP/it.json" 'd["InstanceTypes"][0]["NetworkInfo"]["MaximumNetworkCards"]')"
refused InvalidParameterValue "Network card index $CARDS is not valid for instance type g6.xlarge" \
	g6.xlarge --network-interfaces 'DeviceIndex=0,SubnetId=subnet-gpu-a' \
	"DeviceIndex=0,NetworkCardIndex=$CARDS,SubnetId=subnet-gpu-a"
refused InvalidParameterValue 'The network interfaces of an instance must be in one Availability Zone' \
	g6.xlarge --network-interfaces 'DeviceIndex=0,SubnetId=subnet-gpu-a' \
	'DeviceIndex=1,SubnetId=subnet-gpu-b'
refused InvalidGroup.NotFound "The security group 'sg-0000000000000000b' does not exist" \
	g6.xlarge --network-interfaces 'DeviceIndex=0,SubnetId=subnet-gpu-a,Groups=sg-0000000000000000b'
ok "run-instances --network-interfaces: with --subnet-id or --security-group-ids, EFA on a type without, a card past the type's, two AZs, an unknown group: EC2's codes and messages"

# EFA into the cluster group: what the catalog says p5.48xlarge has
awsc ec2 describe-instance-types --filters Name=network-info.efa-supported,Values=true \
	>"$TMP/it.json" 2>"$TMP/err" || fail "describe-instance-types efa-supported: $(cat "$TMP/err")"
if [ "$(jget "$TMP/it.json" '"p5.48xlarge" in [t["InstanceType"] for t in d["InstanceTypes"]]')" = True ]; then
	awsc ec2 describe-instance-types --instance-types p5.48xlarge >"$TMP/it.json" 2>"$TMP/err" ||
		fail "describe-instance-types p5.48xlarge: $(cat "$TMP/err")"
	NEFA="$(jget "$TMP/it.json" 'd["InstanceTypes"][0]["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"]')"
	# EFA on card 0, EFA-only on card 1
	run_ni "$TMP/ni.json" p5.48xlarge 2 --placement GroupName=it-cluster --network-interfaces "$EFA0" \
		'DeviceIndex=0,NetworkCardIndex=1,InterfaceType=efa-only,SubnetId=subnet-gpu-a2,Groups=sg-0123456789abcdef0' ||
		fail "run-instances EFA into it-cluster: $(cat "$TMP/err")"
	expect_eq "group, AZ, interfaces (type, card, subnet)" \
		"$(jget "$TMP/ni.json" '[[i["Placement"]["GroupName"], i["Placement"]["AvailabilityZone"], [[n["InterfaceType"], n["Attachment"]["NetworkCardIndex"], n["SubnetId"], [g["GroupId"] for g in n["Groups"]]] for n in i["NetworkInterfaces"]]] for i in d["Instances"]][1]')" \
		'["it-cluster", "ap-south-1a", [["efa", 0, "subnet-gpu-a", ["sg-0123456789abcdef0"]], ["efa-only", 1, "subnet-gpu-a2", ["sg-0123456789abcdef0"]]]]'
	awsc ec2 describe-instances --filters Name=placement-group-name,Values=it-cluster \
		>"$TMP/desc.json" 2>"$TMP/err" || fail "describe-instances: $(cat "$TMP/err")"
	expect_eq "instances in it-cluster" \
		"$(jget "$TMP/desc.json" 'sum(len(r["Instances"]) for r in d["Reservations"])')" 2
	refused InvalidPlacementGroup.InUse \
		"The placement group 'it-cluster' is in use in another availability zone: ap-south-1a" \
		p5.48xlarge --placement GroupName=it-cluster --subnet-id subnet-gpu-b
	refused InsufficientInstanceCapacity 'We currently do not have sufficient p5.48xlarge capacity' \
		p5.48xlarge --placement GroupName=it-cluster
	MANY=""
	for k in $(seq 0 "$NEFA"); do
		MANY="$MANY DeviceIndex=$((k / NEFA)),NetworkCardIndex=$((k % NEFA)),InterfaceType=efa,SubnetId=subnet-gpu-b"
	done
	# shellcheck disable=SC2086
	refused InvalidParameterValue "You have exceeded the maximum number of EFA interfaces ($NEFA)" \
		p5.48xlarge --network-interfaces $MANY
	awsc ec2 delete-placement-group --group-name it-cluster >/dev/null 2>"$TMP/err" &&
		fail "deleting it-cluster with its instances succeeded"
	grep -q "InvalidPlacementGroup.InUse.*The placement group 'it-cluster' is in use and may not be deleted." \
		"$TMP/err" || fail "in use: $(cat "$TMP/err")"
	ok "run-instances --network-interfaces efa + efa-only --placement GroupName=it-cluster: 2 p5.48xlarge in ap-south-1a; another AZ InUse; past the group's capacity ICE; $((NEFA + 1)) EFA interfaces refused; delete-placement-group InUse"
else
	# the catalog has no EFA type yet: p5.48xlarge is the P-bucket extra
	refused InvalidParameterCombination 'p5.48xlarge instances do not support Elastic Fabric Adapters.' \
		p5.48xlarge --placement GroupName=it-cluster --network-interfaces "$EFA0"
	refused InvalidParameterCombination \
		"Placement groups may not be used with instances of type 'p5.48xlarge'." \
		p5.48xlarge --placement GroupName=it-cluster
	ok "run-instances EFA into it-cluster: libconf's catalog has no EFA type yet, so p5.48xlarge's EFA and cluster placement are refused as EC2 refuses them (the launch itself: test_cloudsim_api's fixture catalog)"
fi
refused InvalidPlacementGroup.Unknown "The Placement Group 'nope' is unknown." \
	g6.xlarge --placement GroupName=nope

# --- capacity reservations and Capacity Blocks (issue 20), on a simulator of its own
stop_sim
start_sim "$DATA/capacity.yaml" --manual-clock
CR0=cr-0123456789abcdef0 CR1=cr-0123456789abcdef1 CB2=cr-0123456789abcdef2 CB3=cr-0123456789abcdef3
unchecked=""

awsc ec2 describe-capacity-reservations >"$TMP/cr.json" 2>"$TMP/err" ||
	fail "describe-capacity-reservations: $(cat "$TMP/err")"
expect_eq "reservations: id, type, AZ, state, total, available, match" \
	"$(jget "$TMP/cr.json" '[(c["CapacityReservationId"], c["InstanceType"], c["AvailabilityZone"], c["State"], c["TotalInstanceCount"], c["AvailableInstanceCount"], c["InstanceMatchCriteria"]) for c in d["CapacityReservations"]]')" \
	"[[\"$CR0\", \"g5.xlarge\", \"ap-south-1a\", \"active\", 2, 2, \"targeted\"], [\"$CR1\", \"g6.xlarge\", \"ap-south-1b\", \"active\", 1, 1, \"open\"], [\"$CB2\", \"p5.48xlarge\", \"ap-south-1a\", \"active\", 2, 2, \"targeted\"], [\"$CB3\", \"p5.48xlarge\", \"ap-south-1b\", \"scheduled\", 4, 0, \"targeted\"]]"
expect_eq "platform, tenancy, end date type, ARN of $CR0" \
	"$(jget "$TMP/cr.json" '[(c["InstancePlatform"], c["Tenancy"], c["EndDateType"], c["CapacityReservationArn"]) for c in d["CapacityReservations"][:1]]')" \
	"[[\"Linux/UNIX\", \"default\", \"unlimited\", \"arn:aws:ec2:ap-south-1:123456789012:capacity-reservation/$CR0\"]]"
if jget "$TMP/cr.json" 'd["CapacityReservations"][2]["ReservationType"]' >"$TMP/rt" 2>/dev/null; then
	expect_eq "reservation type of $CB2" "$(cat "$TMP/rt")" capacity-block
else
	unchecked="$unchecked ReservationType(this CLI's model lacks it)"
fi
awsc ec2 describe-capacity-reservations --filters Name=state,Values=scheduled \
	Name=instance-type,Values=p5.48xlarge >"$TMP/cr.json" 2>"$TMP/err" ||
	fail "describe-capacity-reservations --filters: $(cat "$TMP/err")"
expect_eq "scheduled p5.48xlarge" \
	"$(jget "$TMP/cr.json" '[c["CapacityReservationId"] for c in d["CapacityReservations"]]')" "[\"$CB3\"]"
calls_before="$(grep -c 'action=DescribeCapacityReservations ' "$TMP/sim.log")"
awsc ec2 describe-capacity-reservations --page-size 3 >"$TMP/cr.json" 2>"$TMP/err" ||
	fail "describe-capacity-reservations --page-size 3: $(cat "$TMP/err")"
calls="$(($(grep -c 'action=DescribeCapacityReservations ' "$TMP/sim.log") - calls_before))"
expect_eq "all pages of 3 (reservations, calls)" \
	"$(jget "$TMP/cr.json" 'len(d["CapacityReservations"])') $calls" "4 2"
for bad in "cr-0123456789abcdef9:InvalidCapacityReservationId.NotFound" \
	   "cr-42:InvalidCapacityReservationId.Malformed"; do
	awsc ec2 describe-capacity-reservations --capacity-reservation-ids "${bad%:*}" \
		>/dev/null 2>"$TMP/err" && fail "describe-capacity-reservations ${bad%:*} succeeded"
	grep -q "(${bad##*:}) when calling the DescribeCapacityReservations" "$TMP/err" ||
		fail "describe-capacity-reservations ${bad%:*}: want ${bad##*:}: $(cat "$TMP/err")"
done
ok "describe-capacity-reservations: 4 reservations with EC2's members, state on the simulated clock, filters state and instance-type, two pages of 3 (--page-size), NotFound and Malformed ids"

target() {	# target ID: the --capacity-reservation-specification of a targeted launch
	echo "CapacityReservationTarget={CapacityReservationId=$1}"
}
awsc ec2 run-instances --image-id "$AMI" --instance-type g5.xlarge --count 1:5 \
	--capacity-reservation-specification "$(target "$CR0")" >"$TMP/run.json" 2>"$TMP/err" ||
	fail "run-instances into $CR0: $(cat "$TMP/err")"
expect_eq "launched into $CR0 (MaxCount 5), AZ" \
	"$(jget "$TMP/run.json" '[len(d["Instances"]), sorted(set(i["Placement"]["AvailabilityZone"] for i in d["Instances"]))]')" \
	'[2, ["ap-south-1a"]]'
CR0_IDS="$(jget "$TMP/run.json" '" ".join(i["InstanceId"] for i in d["Instances"])')"
awsc ec2 run-instances --image-id "$AMI" --instance-type g5.xlarge --count 1 \
	--capacity-reservation-specification "$(target "$CR0")" >/dev/null 2>"$TMP/err" &&
	fail "a third instance in $CR0 launched"
grep -q "(ReservationCapacityExceeded) when calling the RunInstances" "$TMP/err" ||
	fail "want ReservationCapacityExceeded: $(cat "$TMP/err")"
awsc ec2 run-instances --image-id "$AMI" --instance-type g6.xlarge --count 1 \
	--capacity-reservation-specification "$(target "$CR0")" >/dev/null 2>"$TMP/err" &&
	fail "g6.xlarge into the g5.xlarge reservation launched"
grep -q "(InvalidParameterCombination).*does not match the instance type g5.xlarge" "$TMP/err" ||
	fail "want the type mismatch: $(cat "$TMP/err")"
# shellcheck disable=SC2086
awsc ec2 terminate-instances --instance-ids $CR0_IDS >/dev/null 2>"$TMP/err" ||
	fail "terminate-instances: $(cat "$TMP/err")"
control POST /_sim/time '{"advance": 2}' >/dev/null || fail "control time"
awsc ec2 describe-capacity-reservations --capacity-reservation-ids "$CR0" >"$TMP/cr.json" 2>"$TMP/err" ||
	fail "describe-capacity-reservations: $(cat "$TMP/err")"
expect_eq "available in $CR0 after terminating" \
	"$(jget "$TMP/cr.json" 'd["CapacityReservations"][0]["AvailableInstanceCount"]')" 2
GROUP=arn:aws:resource-groups:ap-south-1:123456789012:group/it
awsc ec2 run-instances --image-id "$AMI" --instance-type g5.xlarge --count 1 \
	--capacity-reservation-specification "CapacityReservationTarget={CapacityReservationResourceGroupArn=$GROUP}" \
	>"$TMP/run.json" 2>"$TMP/err" || fail "run-instances into $GROUP: $(cat "$TMP/err")"
expect_eq "reservation of the launch into $GROUP" \
	"$(jget "$TMP/run.json" 'd["Instances"][0]["CapacityReservationId"]')" "$CR0"
ok "run-instances --capacity-reservation-specification CapacityReservationTarget: 2 of MaxCount 5 in $CR0's AZ, the third ReservationCapacityExceeded, another type InvalidParameterCombination; terminated instances give their slots back; a resource group's launch goes to $CR0"

awsc ec2 run-instances --image-id "$AMI" --instance-type g6.xlarge --count 2 \
	>"$TMP/run.json" 2>"$TMP/err" || fail "run-instances g6.xlarge: $(cat "$TMP/err")"
awsc ec2 describe-capacity-reservations --capacity-reservation-ids "$CR1" >"$TMP/cr.json" 2>"$TMP/err" ||
	fail "describe-capacity-reservations: $(cat "$TMP/err")"
expect_eq "open $CR1 used by an untargeted launch (AZ, available)" \
	"$(jget "$TMP/run.json" 'd["Instances"][0]["Placement"]["AvailabilityZone"]') $(jget "$TMP/cr.json" 'd["CapacityReservations"][0]["AvailableInstanceCount"]')" \
	"ap-south-1b 0"
awsc ec2 run-instances --image-id "$AMI" --instance-type g6.xlarge --count 1 \
	--capacity-reservation-specification CapacityReservationPreference=capacity-reservations-only \
	>/dev/null 2>"$TMP/err" && fail "capacity-reservations-only launched with $CR1 full"
grep -q "(ReservationCapacityExceeded)" "$TMP/err" || fail "want ReservationCapacityExceeded: $(cat "$TMP/err")"
ok "run-instances without a target: the open $CR1 first (1 of 2 in it); capacity-reservations-only with it full refused"

if awsc ec2 run-instances help 2>/dev/null | grep -q capacity-block; then
	cb_run() {	# cb_run OUTFILE ID
		awsc ec2 run-instances --image-id "$AMI" --instance-type p5.48xlarge --count 2 \
			--instance-market-options MarketType=capacity-block \
			--capacity-reservation-specification "$(target "$2")" >"$1" 2>"$TMP/err"
	}
	cb_run "$TMP/cb.json" "$CB3" && fail "launched into the scheduled $CB3"
	grep -q "(InvalidParameterValue).*$CB3 is scheduled" "$TMP/err" ||
		fail "want $CB3 scheduled: $(cat "$TMP/err")"
	cb_run "$TMP/cb.json" "$CB2" || fail "run-instances into $CB2: $(cat "$TMP/err")"
	CB_IDS="$(jget "$TMP/cb.json" '" ".join(i["InstanceId"] for i in d["Instances"])')"
	awsc ec2 run-instances --image-id "$AMI" --instance-type p5.48xlarge --count 1 \
		--capacity-reservation-specification "$(target "$CB2")" >/dev/null 2>"$TMP/err" &&
		fail "a Capacity Block launch without MarketType capacity-block succeeded"
	grep -q "(InvalidParameterCombination)" "$TMP/err" || fail "want InvalidParameterCombination: $(cat "$TMP/err")"
	control POST /_sim/time '{"advance": 3600}' >/dev/null || fail "control time"
	# shellcheck disable=SC2086
	awsc ec2 describe-instances --instance-ids $CB_IDS >"$TMP/d.json" 2>"$TMP/err" ||
		fail "describe-instances: $(cat "$TMP/err")"
	expect_eq "instances of $CB2 at its end: state, reason" \
		"$(jget "$TMP/d.json" 'sorted(set((i["State"]["Name"], i["StateReason"]["Code"]) for r in d["Reservations"] for i in r["Instances"]))')" \
		'[["terminated", "Server.ScheduledStop"]]'
	awsc ec2 describe-capacity-reservations --capacity-reservation-ids "$CB2" >"$TMP/cr.json" 2>"$TMP/err" ||
		fail "describe-capacity-reservations: $(cat "$TMP/err")"
	expect_eq "state of $CB2 after its end" "$(jget "$TMP/cr.json" 'd["CapacityReservations"][0]["State"]')" expired
	ok "run-instances --instance-market-options MarketType=capacity-block: the scheduled $CB3 refused, 2 in $CB2, without the market type refused; at $CB2's end its instances are terminated (Server.ScheduledStop) and it is expired"
else
	unchecked="$unchecked run-instances-MarketType=capacity-block"
fi

if awsc ec2 describe-capacity-block-offerings help >/dev/null 2>&1; then
	awsc ec2 describe-capacity-block-offerings --instance-type p5.48xlarge --instance-count 2 \
		--capacity-duration-hours 48 >"$TMP/cbo.json" 2>"$TMP/err" ||
		fail "describe-capacity-block-offerings: $(cat "$TMP/err")"
	expect_eq "offerings: type, AZ, count, hours, fee, currency" \
		"$(jget "$TMP/cbo.json" '[(o["InstanceType"], o["AvailabilityZone"], o["InstanceCount"], o["CapacityBlockDurationHours"], o["UpfrontFee"], o["CurrencyCode"]) for o in d["CapacityBlockOfferings"]]')" \
		'[["p5.48xlarge", "ap-south-1b", 2, 48, "3931.20", "USD"]]'
	awsc ec2 describe-capacity-block-offerings --instance-type p5.48xlarge --instance-count 2 \
		--capacity-duration-hours 30 >/dev/null 2>"$TMP/err" && fail "30 hours accepted"
	grep -q "(InvalidParameterValue)" "$TMP/err" || fail "want InvalidParameterValue: $(cat "$TMP/err")"
	ok "describe-capacity-block-offerings: the one 48-hour offering of 2 p5.48xlarge; 30 hours InvalidParameterValue"
else
	unchecked="$unchecked describe-capacity-block-offerings"
fi
[ -z "$unchecked" ] || echo "# not checked ($("$AWS" --version 2>&1 | cut -d" " -f1) lacks them):$unchecked"

# --- the simulator stops on SIGTERM and removes its pid file
stop_sim
[ ! -e "$TMP/pid" ] || fail "the pid file is still there"
ok "SIGTERM stops the simulator and removes the pid file"
