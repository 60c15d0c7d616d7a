#!/bin/sh
# 30-capacity-ladder.sh - issue 20: a 6-node job (locality none) climbs a
# ladder of [reservations (one ODCR), capacity_blocks (any), on-demand].
# tests/data/cloudsim/e2e-ladder.yaml: an ODCR of 2 in Singapore (home), a
# Capacity Block of 4 in Mumbai ap-south-1b that opens 30 s after the
# simulator starts and ends 100 s later, no on-demand anywhere.
#  - the 2 reserved nodes launch at once, the 4 others when the block opens
#    (the request waits for it: capacity_block_wait), no on-demand call is
#    made meanwhile (the block holds the rest), and the job runs;
#  - Slurm starts no job on the block's nodes whose time limit would reach
#    past the block's end less capacity_block_margin (60 s): a reservation
#    on them from then; a job on the ODCR's nodes still runs;
#  - at end - margin, reconcile drains the block's nodes (POWER_DOWN_ASAP,
#    with a reason naming the block): gpuburst terminates their instances
#    before EC2 would, so no job is lost by surprise.
. "${srcdir:-.}/e2e-lib.sh"
SCENARIO="$GB_TOP_SRCDIR/tests/data/cloudsim/e2e-ladder.yaml"
ODCR=cr-0e2e000000000a001
BLOCK=cr-0e2e000000000b001
RESV="gpuburst_cb_$BLOCK"
RESUME_TIMEOUT=150
SUSPEND_TIME=600
A10G_EXTRA="    locality: none
    capacity:
      - reservations: {ids: [$ODCR]}
      - capacity_blocks: {}
      - on_demand: {}"
POLICY_EXTRA="  capacity_block_margin: 60s
  capacity_block_wait: 2m
  reservation_ttl: 10s"
e2e_start --nodes 6
# simulated time 0 (the block opens at 30 s, ends at 130 s) in epoch seconds
T0=$(control GET /_sim/state | "$PYTHON3" -c 'import json, sys; print(int(json.load(sys.stdin)["epoch"]))') ||
	fail "the simulator's epoch"
since() { echo $(($(date +%s) - T0)); }

J=$(submit -N6 -t 1 -p gpu -w gpu-[1-6] --wrap 'srun hostname; sleep 5')
wait_for 20 "2 instances in $ODCR" \
	'[ "$(sql "SELECT count(*) FROM instances WHERE capacity=\"reservation\" AND capacity_target=\"$ODCR\"")" = 2 ]'
[ "$(since)" -lt 30 ] || fail "the reserved nodes launched at $(since) s, not before the block opened"
ok "2 nodes from the reservation $ODCR at once ($(since) s, the block opens at 30 s)"

wait_for 90 "job $J running" '[ "$(job_state $J)" = RUNNING ]'
R=$(sql "SELECT id FROM requests WHERE job_id=$J AND kind='resume'")
expect_eq "request $R" "$(sql "SELECT state, result, launched FROM requests WHERE id='$R'")" "done|success|6"
expect_eq "nodes by capacity" \
	"$(sql "SELECT group_concat(n, ' ') FROM (SELECT capacity || ':' || capacity_target || ':' || az || ':' || count(*) AS n FROM instances WHERE request_id='$R' AND node IS NOT NULL GROUP BY capacity, capacity_target, az ORDER BY capacity DESC)")" \
	"reservation:$ODCR:ap-southeast-1a:2 capacity-block:$BLOCK:ap-south-1b:4"
expect_eq "attempts (capacity, asked, outcome)" \
	"$(sql "SELECT group_concat(capacity || ':' || asked || ':' || coalesce(error_code, 'ok'), ' ') FROM (SELECT * FROM attempts WHERE request_id='$R' ORDER BY id)")" \
	"reservation:2:ok capacity-block:4:ok"
B_FIRST=$(sql "SELECT min(launched_at) FROM instances WHERE capacity_target='$BLOCK'")
"$PYTHON3" -c "import sys; sys.exit(0 if float('$B_FIRST') >= $T0 + 30 else 1)" ||
	fail "an instance launched into $BLOCK at $B_FIRST, before it opened at $((T0 + 30))"
ok "job $J: 2 reserved + 4 from the block once it opened, no on-demand call, one request"

# --- the block's nodes take no job that would outlast it
BNODES=$(sql "SELECT group_concat(node, ',') FROM (SELECT node FROM instances WHERE capacity_target='$BLOCK' AND node IS NOT NULL ORDER BY node)")
ONODE=$(sql "SELECT min(node) FROM instances WHERE capacity_target='$ODCR'")
wait_for 30 "reservation $RESV" 'lab scontrol show reservation "$RESV" >"$TMP/resv.out" 2>&1'
grep -q "Flags=.*MAINT" "$TMP/resv.out" || fail "$RESV: $(cat "$TMP/resv.out")"
for n in $(echo "$BNODES" | tr ',' ' '); do
	lab scontrol show hostnames "$(sed -n 's/.*Nodes=\([^ ]*\).*/\1/p' "$TMP/resv.out")" | grep -qx "$n" ||
		fail "$RESV does not hold $n: $(cat "$TMP/resv.out")"
done
ok "Slurm reservation $RESV on $BNODES from the block's end less the margin"
wait_for 60 "job $J completed" '[ "$(job_state $J)" = COMPLETED ]'
B1=${BNODES%%,*}
K=$(submit -N1 -t 5 -p gpu -w "$B1" --wrap 'hostname')
L=$(submit -N1 -t 1 -p gpu -w "$ONODE" --wrap 'hostname')
wait_for 30 "job $L on $ONODE completed" '[ "$(job_state $L)" = COMPLETED ]'
expect_eq "job $K (5 min) on $B1" "$(job_state $K)" PENDING
ok "a 5-minute job waits rather than run on $B1 into the block's end; a 1-minute one ran on $ONODE"

# --- end - margin: drained, and gone before EC2 ends the block
wait_for 90 "end of the block less the margin" '[ "$(since)" -ge 72 ]'
ctl reconcile >"$TMP/rec.out" 2>&1 || fail "reconcile: $(cat "$TMP/rec.out")"
grep -q "^block .*power_down_asap nodes: gpuburst: capacity block $BLOCK ends " "$TMP/rec.out" ||
	fail "reconcile did not drain the block's nodes: $(cat "$TMP/rec.out")"
expect_eq "drained" "$(sql "SELECT count(*) FROM events WHERE kind='reconcile' AND detail LIKE '%power_down_asap nodes: gpuburst: capacity block $BLOCK ends %'")" 1
for n in $(echo "$BNODES" | tr ',' ' '); do	# drained, or already on its way down
	st=$(node_field "$n" State)
	case "$st" in
	*DRAIN*|*POWERING_DOWN*|*POWERED_DOWN*) ;;
	*) fail "$n: $st after reconcile" ;;
	esac
done
for n in $(echo "$BNODES" | tr ',' ' '); do
	wait_for 40 "$n powered down" 'state_is '$n' POWERED_DOWN'
done
[ "$(since)" -lt 130 ] || fail "the block's nodes went at $(since) s, not before its end (130 s)"
expect_eq "the block's instances" \
	"$(sql "SELECT group_concat(DISTINCT state) FROM instances WHERE capacity_target='$BLOCK'")" terminated
expect_eq "the reservation's instances" \
	"$(sql "SELECT group_concat(DISTINCT state) FROM instances WHERE capacity_target='$ODCR'")" running
ok "at the block's end less 60 s its nodes were drained with the reason and powered down by $(since) s: gpuburst ended them before EC2 (130 s)"

lab scancel "$K"
ctl reconcile >"$TMP/rec2.out" 2>&1 || fail "reconcile: $(cat "$TMP/rec2.out")"
lab scontrol show reservation "$RESV" >/dev/null 2>&1 && fail "$RESV still there"
ok "no live node in $BLOCK: reconcile deleted $RESV"
