#!/bin/sh
# cloudsim-boot.sh - the boot hook (boot: exec) through the real AWS CLI:
# UserData runs when the instance is running, with exactly the documented
# environment, no shell in between, stdin /dev/null, clean signal state, in
# its own session; terminating the instance SIGTERMs it; the simulator's
# exit stops what is still running.

. "${srcdir:-.}/cloudsim-lib.sh"

BOOT="$TMP/boot"
start_sim "$DATA/boot.yaml" --boot-dir "$BOOT"
AMI=ami-0123456789abcdef0

launch() {	# launch USERDATA-FILE NAME -> instance id
	awsc ec2 run-instances --image-id "$AMI" --instance-type g5.xlarge --count 1 \
		--user-data "file://$1" \
		--tag-specifications "ResourceType=instance,Tags=[{Key=gpuburst:node,Value=g5-$2},{Key=Name,Value=$2}]" \
		>"$TMP/run.json" 2>"$TMP/err" || fail "run-instances: $(cat "$TMP/err")"
	jget "$TMP/run.json" 'd["Instances"][0]["InstanceId"]'
}

# --- a shell script: environment, signals, stdin, log, file mode
cat >"$TMP/ud1" <<'UD'
#!/bin/sh
# Read our own mask with builtins only: while this shell forks a child
# (grep) it blocks every signal for a moment, and a grep reading
# /proc/$$/status then could see that transient mask instead of ours.
while IFS= read -r l; do
	case "$l" in SigBlk:*|SigIgn:*) echo "$l" ;; esac
done </proc/$$/status >signals.txt
readlink /proc/$$/fd/0 >stdin.txt
echo "hello from the boot log"
exec /usr/bin/python3 -c 'import os, json; json.dump(dict(os.environ), open("env.json", "w"))'
UD
ID1="$(launch "$TMP/ud1" first)"
wait_file "$BOOT/$ID1/env.json"
expect_eq "environment" "$(jget "$BOOT/$ID1/env.json" 'sorted((k, v) for k, v in d.items() if k not in ("PWD", "LC_CTYPE"))')" \
	"[[\"GPUBURST_SIM_AMI_LAUNCH_INDEX\", \"0\"], [\"GPUBURST_SIM_AZ\", \"ap-south-1a\"], [\"GPUBURST_SIM_INSTANCE_ID\", \"$ID1\"], [\"GPUBURST_SIM_INSTANCE_TYPE\", \"g5.xlarge\"], [\"GPUBURST_SIM_PRIVATE_IP\", \"127.51.1.4\"], [\"GPUBURST_SIM_REGION\", \"ap-south-1\"], [\"GPUBURST_SIM_TAG_GPUBURST_NODE\", \"g5-first\"], [\"GPUBURST_SIM_TAG_NAME\", \"first\"], [\"PATH\", \"/usr/sbin:/usr/bin:/sbin:/bin\"]]"
expect_eq "signals" "$(tr -d ' \t' <"$BOOT/$ID1/signals.txt" | tr '\n' ' ')" \
	"SigBlk:0000000000000000 SigIgn:0000000000000000 "
expect_eq "stdin" "$(cat "$BOOT/$ID1/stdin.txt")" /dev/null
expect_eq "user-data mode" "$(stat -c %a "$BOOT/$ID1/user-data")" 700
grep -q "hello from the boot log" "$BOOT/$ID1/boot.log" || fail "stdout did not reach boot.log"
ok "UserData ran with the documented environment, empty signal mask, stdin /dev/null, output in boot.log"

# --- a Python script: run by its #! line (no shell adds PWD); new session;
# --- terminate-instances SIGTERMs it
cat >"$TMP/ud2" <<'UD'
#!/usr/bin/python3
import json, os, signal, time
def term(*args):
    open("got-term", "w").write("TERM\n")
    raise SystemExit(0)
signal.signal(signal.SIGTERM, term)
json.dump({"env": dict(os.environ), "pid": os.getpid(), "pgid": os.getpgrp(),
           "sid": os.getsid(0)}, open("proc.json", "w"))
while True:
    time.sleep(0.05)
UD
ID2="$(launch "$TMP/ud2" second)"
wait_file "$BOOT/$ID2/proc.json"
expect_eq "no shell in between" "$(jget "$BOOT/$ID2/proc.json" '"PWD" in d["env"]')" False
PID2="$(jget "$BOOT/$ID2/proc.json" 'd["pid"]')"
expect_eq "own session" "$(jget "$BOOT/$ID2/proc.json" 'd["pid"] == d["pgid"] == d["sid"]')" True
kill -0 "$PID2" 2>/dev/null || fail "the boot process is not running"
awsc ec2 terminate-instances --instance-ids "$ID2" >/dev/null 2>"$TMP/err" ||
	fail "terminate: $(cat "$TMP/err")"
wait_file "$BOOT/$ID2/got-term"
for _ in $(seq 1 200); do
	kill -0 "$PID2" 2>/dev/null || break
	sleep 0.05
done
if kill -0 "$PID2" 2>/dev/null; then fail "the boot process survived terminate-instances"; fi
grep -q "boot stopping instance=$ID2" "$TMP/sim.log" || fail "no 'boot stopping' in the log"
ok "the script ran by its #! line in its own session; terminate-instances stopped it"

# --- one reservation, three instances: each learns its ami-launch-index
cat >"$TMP/ud-idx" <<'UD'
#!/bin/sh
echo "$GPUBURST_SIM_AMI_LAUNCH_INDEX" >index.txt
UD
awsc ec2 run-instances --image-id "$AMI" --instance-type g5.xlarge --count 3 \
	--user-data "file://$TMP/ud-idx" >"$TMP/run.json" 2>"$TMP/err" ||
	fail "run-instances --count 3: $(cat "$TMP/err")"
for k in 0 1 2; do
	id="$(jget "$TMP/run.json" "d['Instances'][$k]['InstanceId']")"
	want="$(jget "$TMP/run.json" "d['Instances'][$k]['AmiLaunchIndex']")"
	wait_file "$BOOT/$id/index.txt"
	expect_eq "launch index of instance $k" "$(cat "$BOOT/$id/index.txt")" "$want"
done
expect_eq "launch indexes" "$(jget "$TMP/run.json" 'sorted(i["AmiLaunchIndex"] for i in d["Instances"])')" "[0, 1, 2]"
ok "each instance of a reservation gets its ami-launch-index in GPUBURST_SIM_AMI_LAUNCH_INDEX"

# --- what still runs when the simulator exits is stopped with it
cat >"$TMP/ud3" <<'UD'
#!/bin/sh
echo $$ >pid
while :; do sleep 0.05; done
UD
ID3="$(launch "$TMP/ud3" third)"
wait_file "$BOOT/$ID3/pid"
PID3="$(cat "$BOOT/$ID3/pid")"
kill -0 "$PID3" 2>/dev/null || fail "the third boot process is not running"
# an instance without UserData boots nothing
awsc ec2 run-instances --image-id "$AMI" --instance-type g5.xlarge --count 1 \
	>"$TMP/run.json" 2>"$TMP/err" || fail "run-instances: $(cat "$TMP/err")"
ID4="$(jget "$TMP/run.json" 'd["Instances"][0]["InstanceId"]')"
stop_sim
if kill -0 "$PID3" 2>/dev/null; then fail "a boot process outlived the simulator"; fi
[ ! -e "$BOOT/$ID4/user-data" ] || fail "an instance without UserData got a script"
ok "boot processes stop with the simulator; no UserData, no boot"
