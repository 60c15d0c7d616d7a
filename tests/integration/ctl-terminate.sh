#!/bin/sh
# ctl-terminate.sh - `gpuburstctl terminate` against gpuburst-cloudsim: the
# two-step confirmation (no --yes: nothing terminated, a token printed; a
# wrong token refused; the right token terminates), --yes for scripts,
# --json, a non-administrator refused, nothing left -> NOTFOUND.  Slurm
# is absent (SLURM_CONF names no file): which jobs run on the nodes is
# unknown, so only --force terminates (the jobs themselves are the e2e
# test 11-terminate-jobs.sh), and the worker's terminate flow records its
# Slurm updates as failed slurm_update events of the request.
# Instances are launched with the AWS CLI and recorded with gb_mkstate,
# as the worker would have.
. "$srcdir/cloudsim-lib.sh"

CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
MK="$GB_TOP_BUILDDIR/tests/integration/gb_mkstate"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed"
[ "$(id -u)" = 0 ] || skip "needs root to run a command as nobody"

start_sim "$GB_TOP_SRCDIR/etc/cloudsim/default.yaml" --time-scale 20
chmod 755 "$TMP"
ctl_conf

ids=$(run_instances 2)
i1=$(echo "$ids" | sed -n 1p)
i2=$(echo "$ids" | sed -n 2p)
"$MK" "$TMP/state/state.db" instance 00000000000000aa ap-south-1 "$i1" g5-1 600 || fail mkstate
"$MK" "$TMP/state/state.db" instance 00000000000000aa ap-south-1 "$i2" g5-2 60 || fail mkstate

# step 1: a preview and a token, nothing terminated, exit 28 (PENDING)
ctl terminate 'g5-[1-3]' >"$TMP/out" 2>"$TMP/err"
rc=$?
cp "$TMP/out" "$TMP/out.preview"
expect_eq "preview exit" "$rc" 28
grep -q "would terminate 2 instances" "$TMP/out" || fail "preview: $(cat "$TMP/out")"
grep -q "$i1" "$TMP/out" && grep -q "$i2" "$TMP/out" || fail "preview lacks the instances"
grep -q "nodes without a live instance (nothing to do): g5-3" "$TMP/out" || fail "preview: g5-3"
token=$(sed -n "s/.*--confirm \([0-9a-f]*\)\$/\1/p" "$TMP/out")
[ ${#token} -eq 10 ] || fail "no token in: $(cat "$TMP/out")"
expect_eq "i1 after preview" "$(state_of "$i1")" running
ok "preview: nothing terminated, token $token, exit 28"

# the same preview as JSON carries the same token
ctl --json terminate 'g5-[1-3]' >"$TMP/out.json"
expect_eq "json exit" "$?" 28
expect_eq "json token" "$(jget "$TMP/out.json" 'd["token"]')" "$token"
expect_eq "json confirmed" "$(jget "$TMP/out.json" 'd["confirmed"]')" False
expect_eq "json instances" "$(jget "$TMP/out.json" 'len(d["instances"])')" 2
expect_eq "json missing" "$(jget "$TMP/out.json" 'd["nodes_without_instance"]')" '["g5-3"]'
expect_eq "json pending" "$(jget "$TMP/out.json" '[d["schema"], d["error"]["code"], d["error"]["exit"], d["error"]["message"]]')" \
	"[\"gpuburstctl/1\", \"PENDING\", 28, \"nothing terminated yet: confirm with --confirm $token within 5 minutes\"]"
ok "preview --json"

# a wrong token: refused, exit 10 (INVALID), nothing terminated
ctl terminate 'g5-[1-3]' --confirm 0123456789 >"$TMP/out" 2>"$TMP/err"
expect_eq "wrong token exit" "$?" 10
grep -q 'does not match' "$TMP/err" || fail "wrong token: $(cat "$TMP/err")"
# a token for another node set does not work either
ctl terminate 'g5-1' --confirm "$token" >"$TMP/out" 2>"$TMP/err"
expect_eq "other set exit" "$?" 10
expect_eq "i1 after wrong token" "$(state_of "$i1")" running
ok "wrong tokens refused"

# a non-administrator: refused before anything, exit 22 (PERM)
setpriv --reuid=nobody --regid=nogroup --clear-groups env SLURM_CONF="$TMP/no-slurm.conf" \
	"$CTL" -c "$TMP/gb.yaml" terminate 'g5-[1-3]' --yes >"$TMP/out" 2>"$TMP/err"
expect_eq "nobody exit" "$?" 22
grep -q 'user nobody' "$TMP/err" || fail "nobody: $(cat "$TMP/err")"
expect_eq "i1 after nobody" "$(state_of "$i1")" running
ok "nobody refused (22)"

# the preview says the jobs are unknown; the right token without --force
# is refused (7, BUSY): nothing terminated
grep -q "jobs on these nodes: unknown (SLURM_CONF=$TMP/no-slurm.conf: No such file" "$TMP/out.preview" ||
	fail "preview jobs: $(cat "$TMP/out.preview")"
expect_eq "json jobs" "$(jget "$TMP/out.json" 'd["jobs"]')" '[]'
jget "$TMP/out.json" 'd["jobs_error"]' | grep -q 'no-slurm.conf' || fail "json jobs_error"
ctl terminate 'g5-[1-3]' --confirm "$token" >"$TMP/out" 2>"$TMP/err"
expect_eq "unknown jobs exit" "$?" 7
grep -q 'cannot tell which jobs run on these nodes (SLURM_CONF=.*not terminated; add --force' "$TMP/err" ||
	fail "unknown jobs: $(cat "$TMP/err")"
expect_eq "i1 after no --force" "$(state_of "$i1")" running
ok "jobs unknown: the token alone refused (7)"

# the right token and --force: terminated (Slurm is absent: a warning only)
ctl terminate 'g5-[1-3]' --confirm "$token" --force >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -eq 0 ] || fail "confirm exit $rc: $(cat "$TMP/out" "$TMP/err")"
grep -q "terminated 2 of 2 instances" "$TMP/out" || fail "confirm: $(cat "$TMP/out")"
for i in "$i1" "$i2"; do
	s=$(state_of "$i")
	case "$s" in shutting-down|terminated) ;; *) fail "$i is $s after terminate" ;; esac
done
ctl --json instances --alive >"$TMP/alive.json"
expect_eq "alive after" "$(jget "$TMP/alive.json" 'len(d["instances"])')" 0
ctl --json requests --kind terminate >"$TMP/req.json"
expect_eq "terminate request" "$(jget "$TMP/req.json" '[r["state"] + "/" + r["result"] for r in d["requests"]]')" '["done/success"]'
ok "right token: 2 instances terminated, request recorded"

# the worker's terminate flow: the request's timeline has its slurm_update
# events; Slurm is absent here, so they record the attempt and its error
# (the nodes set DOWN and their addresses cleared, as the worker would)
req=$(sed -n 's/^request \([0-9a-f]*\): .*/\1/p' "$TMP/out")
[ -n "$req" ] || fail "no request id in: $(cat "$TMP/out")"
grep -q "warning: 4 node updates not made in Slurm (gpuburstctl requests show $req): SLURM_CONF=" "$TMP/err" ||
	fail "no Slurm warning: $(cat "$TMP/err")"
ctl --json requests show "$req" >"$TMP/show.json" 2>"$TMP/err" || fail "requests show: $(cat "$TMP/err")"
expect_eq "slurm_update events" "$(jget "$TMP/show.json" '[(j["action"], j["nodes"], j["count"], j["failed"], j["error"].startswith("SLURM_CONF=")) for j in (json.loads(e["detail"]) for e in d["events"] if e["kind"] == "slurm_update")]')" \
	'[["down", "g5-[1-2]", 2, 2, true], ["clear_addr", "g5-[1-2]", 2, 2, true]]'
ctl requests show "$req" >"$TMP/show.txt" 2>"$TMP/err" || fail "requests show: $(cat "$TMP/err")"
grep -q 'slurm_update.*"action":"clear_addr"' "$TMP/show.txt" || fail "timeline: $(cat "$TMP/show.txt")"
ok "CLI terminate: slurm_update events in the request's timeline"

# nothing left: exit 8 (NOTFOUND)
ctl terminate --all --yes >"$TMP/out" 2>"$TMP/err"
expect_eq "nothing left exit" "$?" 8
ctl --json terminate --all --yes >"$TMP/out.json" 2>"$TMP/err"
expect_eq "nothing left --json exit" "$?" 8
expect_eq "nothing left --json" "$(jget "$TMP/out.json" '[sorted(d), d["error"]["code"], d["error"]["exit"]]')" \
	'[["error", "schema"], "NOTFOUND", 8]'
ok "nothing to terminate (8)"

# --yes for scripts, --all, --json
i3=$(run_instances 1)
"$MK" "$TMP/state/state.db" instance 00000000000000bb ap-south-1 "$i3" g5-4 10 || fail mkstate
ctl terminate --all --yes >"$TMP/out" 2>"$TMP/err"
expect_eq "--yes without --force, jobs unknown" "$?" 7
ctl --json terminate --all --yes --force --reason "end of test" >"$TMP/out.json" 2>"$TMP/err"
expect_eq "--yes exit" "$?" 0
expect_eq "--yes terminated" "$(jget "$TMP/out.json" 'd["terminated"]')" 1
expect_eq "--yes confirmed" "$(jget "$TMP/out.json" 'd["confirmed"]')" True
expect_eq "--yes no error" "$(jget "$TMP/out.json" '[d["schema"], "error" in d]')" '["gpuburstctl/1", false]'
grep -q 'terminate_cli req=.* by=root uid=0 instances=1 reason="terminated by root: end of test"' "$TMP/gb.log" ||
	fail "log line: $(cat "$TMP/gb.log")"
ok "--all --yes --force --json"

# usage errors (2)
for args in "terminate" "terminate --all g5-1" "terminate g5-1 --yes --confirm x" \
	    "terminate g5-[1" "terminate g5-1 extra"; do
	# shellcheck disable=SC2086
	ctl $args >"$TMP/out" 2>"$TMP/err"
	expect_eq "usage: $args" "$?" 2
done
ok "usage errors exit 2"
exit 0
