#!/bin/sh
# ctl-agent.sh - `gpuburstctl reconcile` against gpuburst-cloudsim and what the
# instances' agent (gpuburst-node) wrote in their gpuburst:agent tag: the tag
# kept on each record and shown by `instances` and `requests show`; an
# instance tagged unhealthy (its node never got the agent's Slurm reason)
# has its offering remembered as dry once, is terminated and its record
# closed with the reason; a second pass does nothing again.  Slurm is absent
# (SLURM_CONF names no file): the node part is skipped (exit 29, PARTIAL)
# and NOTICE from Slurm's reasons is tests/unit/test_reconcile.c's.
# Instances are launched with the AWS CLI, tagged as the agent would, and
# recorded with gb_mkstate, as the worker would have.
. "$srcdir/cloudsim-lib.sh"

CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
MK="$GB_TOP_BUILDDIR/tests/integration/gb_mkstate"

start_sim "$GB_TOP_SRCDIR/etc/cloudsim/default.yaml" --time-scale 20
ctl_conf

# launch N: instance ids tagged for cluster t, one per line
launch() {
	run_instances "$1" \
		--tag-specifications 'ResourceType=instance,Tags=[{Key=gpuburst:cluster,Value=t}]'
}
# agent ID TEXT: what gpuburst-node writes on its own instance
agent() {
	tags=$("$PYTHON3" -c 'import json, sys
print(json.dumps([{"Key": "gpuburst:agent", "Value": sys.argv[1]}]))' "$2")
	awsc ec2 create-tags --resources "$1" --tags "$tags" || fail "create-tags $1"
}

mkdir -p "$TMP/state"
req=$("$MK" "$TMP/state/state.db" running 'g5-[1-3]') || fail "mkstate running"
ids=$(launch 3)
i1=$(echo "$ids" | sed -n 1p)
i2=$(echo "$ids" | sed -n 2p)
i3=$(echo "$ids" | sed -n 3p)
for n in 1 2 3; do
	id=$(echo "$ids" | sed -n ${n}p)
	"$MK" "$TMP/state/state.db" instance "$req" ap-south-1 "$id" "g5-$n" 120 ap-south-1a spot ||
		fail mkstate
done
agent "$i1" "ok: GPU check passed (4 x NVIDIA A10G); slurmd started as node g5-1"
agent "$i2" "unhealthy: nvidia-smi: 3 GPUs, expected 4"
ok "3 spot instances recorded; i2 tagged unhealthy, i1 ok, i3 untagged"

# a dry run decides, changes nothing (not even the tags on the records)
ctl reconcile --dry-run >"$TMP/out" 2>"$TMP/err"
expect_eq "dry run exit (no Slurm)" "$?" 29
grep -q "^notice  *ap-south-1#$i2  *g5-2  *would  *tag \"unhealthy: nvidia-smi: 3 GPUs, expected 4\" and no Slurm reason: offering ap-south-1/ap-south-1a g5.xlarge spot dry" "$TMP/out" ||
	fail "dry run: $(cat "$TMP/out")"
grep -q 'notice 1, held 0, spot 0), dry run: nothing changed' "$TMP/out" || fail "dry run summary: $(cat "$TMP/out")"
expect_eq "i2 after the dry run" "$(state_of "$i2")" running
ctl --json instances >"$TMP/inst.json" || fail "instances"
expect_eq "no tag kept by a dry run" "$(jget "$TMP/inst.json" '[i["agent"] for i in d["instances"]]')" '[null, null, null]'
ok "reconcile --dry-run: would notice i2, nothing changed"

# the pass: i2 terminated, its offering dry once, the tags kept
ctl --json reconcile >"$TMP/rec.json" 2>"$TMP/err"
expect_eq "reconcile exit (no Slurm)" "$?" 29
expect_eq "notice action" "$(jget "$TMP/rec.json" '[(a["action"], a["target"], a["node"], a["done"], a["error"]) for a in d["actions"]]')" \
	"[[\"notice\", \"ap-south-1#$i2\", \"g5-2\", true, null]]"
s=$(state_of "$i2")
case "$s" in shutting-down|terminated) ;; *) fail "$i2 is $s after reconcile" ;; esac
expect_eq "i1 still" "$(state_of "$i1")" running
ctl --json instances >"$TMP/inst.json" || fail "instances"
expect_eq "records" "$(jget "$TMP/inst.json" '[(i["instance_id"] == x, i["state"], i["agent"], i["noticed_at"] is not None, i["reason"]) for i, x in zip(d["instances"], ["'"$i1"'", "'"$i2"'", "'"$i3"'"])]')" \
	'[[true, "running", "ok: GPU check passed (4 x NVIDIA A10G); slurmd started as node g5-1", false, null], [true, "terminated", "unhealthy: nvidia-smi: 3 GPUs, expected 4", true, "unhealthy (reconcile): nvidia-smi: 3 GPUs, expected 4"], [true, "running", null, false, null]]'
ctl --json capacity >"$TMP/cap.json" || fail "capacity"
expect_eq "spot pool cooling" "$(jget "$TMP/cap.json" '[(p["az"], p["capacity"], p["cooling"]) for p in d["capacity"]]')" \
	'[["ap-south-1a", "spot", true]]'
ok "reconcile: i2 terminated (record closed with the reason), spot pool of ap-south-1a cooling, tags kept"

# shown by instances (the state word) and requests show (the whole tag)
ctl instances >"$TMP/out" || fail "instances"
grep -q "^NODE .* REQUEST  *AGENT\$" "$TMP/out" || fail "instances header: $(cat "$TMP/out")"
grep -q "^g5-1  *$i1 .* $req  *ok\$" "$TMP/out" || fail "instances g5-1: $(cat "$TMP/out")"
grep -q "^g5-2  *$i2 .* $req  *unhealthy\$" "$TMP/out" || fail "instances g5-2: $(cat "$TMP/out")"
grep -q "^g5-3  *$i3 .* $req  *-\$" "$TMP/out" || fail "instances g5-3: $(cat "$TMP/out")"
ctl requests show "$req" >"$TMP/out" || fail "requests show"
grep -q "^  agent $i1: ok: GPU check passed (4 x NVIDIA A10G); slurmd started as node g5-1\$" "$TMP/out" ||
	fail "requests show i1: $(cat "$TMP/out")"
grep -q "^  agent $i2: unhealthy: nvidia-smi: 3 GPUs, expected 4 (offering noticed dry 20" "$TMP/out" ||
	fail "requests show i2: $(cat "$TMP/out")"
ctl --json requests show "$req" >"$TMP/show.json" || fail "requests show --json"
expect_eq "notice event" "$(jget "$TMP/show.json" '[(j["action"], j["target"], j["done"]) for j in (json.loads(e["detail"]) for e in d["events"] if e["kind"] == "reconcile")]')" \
	"[[\"notice\", \"ap-south-1#$i2\", true]]"
ok "instances, requests show: the agent's tag per instance, the notice event"

# once: a later tag change and a second pass do not notice again
agent "$i1" "interrupted: spot terminate at 2026-12-06T12:34:56Z; drained; requeued 4711"
ctl --json reconcile >"$TMP/rec2.json" 2>"$TMP/err"
expect_eq "second pass exit" "$?" 29
expect_eq "second pass actions" "$(jget "$TMP/rec2.json" '[a["action"] for a in d["actions"]]')" '[]'
ctl --json instances --node g5-1 >"$TMP/inst.json" || fail "instances"
expect_eq "i1 tag followed" "$(jget "$TMP/inst.json" 'd["instances"][0]["agent"]')" \
	"interrupted: spot terminate at 2026-12-06T12:34:56Z; drained; requeued 4711"
ctl --json requests show "$req" >"$TMP/show.json" || fail "requests show --json"
expect_eq "still one notice event" "$(jget "$TMP/show.json" 'len([e for e in d["events"] if e["kind"] == "reconcile"])')" 1
grep -q "reconcile action=notice target=ap-south-1#$i2 node=g5-2 " "$TMP/gb.log" || fail "log: $(cat "$TMP/gb.log")"
ok "second pass: nothing again; i1's new tag kept"
exit 0
