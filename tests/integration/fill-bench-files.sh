#!/bin/sh
# fill-bench-files.sh - bench/fill's driver runs any landscape: a scenario
# file of its own (--scenario-file, with the request shape after it) and a
# geography of its own (--conf); bad arguments and bad files are refused
# with what is wrong and where, before any scenario runs.  The landscape
# is bench/fill/landscapes/comes-back.yaml without its capacity events
# (only Tokyo ap-northeast-1d holds anything: 2), at 100 times real time.
set -eu
B=${GB_TOP_BUILDDIR:?} S=${GB_TOP_SRCDIR:?}
FB="$B/bench/fill/fill-bench" SIM="$B/src/cloudsim/gpuburst-cloudsim"
PY=${PYTHON3:-/usr/bin/python3}
[ -x "$FB" ] || { echo "SKIP: $FB is not built (make, then make check)"; exit 77; }
tmp=$(mktemp -d /tmp/gb-fill-files.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0
bad() { echo "FAIL: $*"; exit 1; }
fb() { "$FB" --sim "$SIM" --srcdir "$S" --time-scale 100 --seed-runs 1 "$@"; }

# refused: exit 2, the message, and nothing run
refused() {	# MESSAGE ARGS...
	want=$1
	shift
	rc=0
	fb "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 2 ] || bad "fill-bench $*: exit $rc, want 2"
	grep -qF -- "$want" "$tmp/err" || bad "fill-bench $*: no '$want' in: $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || bad "fill-bench $*: ran something: $(cat "$tmp/out")"
	n=$((n + 1))
}
LAND="$S/bench/fill/landscapes/comes-back.yaml"
refused "--scenario nope: not one of bench/fill/scenarios" --scenario nope
refused "--nodes applies to a --scenario-file" --nodes 3 --scenario-file "$LAND"
refused "--nodes 0: a whole number from 1 to 100" --scenario-file "$LAND" --nodes 0
refused "a second scenario named comes-back" --scenario-file "$LAND" --scenario-file "$LAND"
refused "named like bench/fill/scenarios/ample.yaml" --scenario-file "$S/bench/fill/scenarios/ample.yaml"
refused "--placement is a training job: give --job too" --scenario-file "$LAND" --placement
printf 'regions:\n  ap-southeast-1: [\n' >"$tmp/broken.yaml"
# a good file first: the bad one is still found before anything runs
refused "$tmp/broken.yaml:3:1:" --scenario-file "$LAND" --scenario-file "$tmp/broken.yaml"
refused "No such file" --scenario-file "$tmp/absent.yaml"
refused 'unexpected argument "extra"' --scenario-file "$LAND" extra
refused "--reprobe -1: the re-probe window, seconds from 0 to 86400" --reprobe -1 --scenario-file "$LAND"
refused "--reprobe 1x: the re-probe window" --reprobe 1x --scenario-file "$LAND"

# the landscape without its events (at 100 times real time, 20 simulated
# seconds pass while the simulators start): 12 nodes asked, 2 obtainable
sed '/^capacity_events:/,$d' "$LAND" >"$tmp/still.yaml"
fb --scenario-file "$tmp/still.yaml" --nodes 12 >"$tmp/run" 2>&1 || bad "fill-bench still: $(cat "$tmp/run")"
for w in COLD WARM; do
	grep -q "^== still (12 nodes) $w ==" "$tmp/run" || bad "no $w table: $(cat "$tmp/run")"
done
[ "$(grep -c '^oracle  *2/2 ' "$tmp/run")" = 2 ] || bad "oracle: $(grep '^oracle' "$tmp/run")"
[ "$(grep -c '^default  *2/2 ' "$tmp/run")" = 2 ] || bad "default: $(grep '^default' "$tmp/run")"
grep -q '^fill-bench: [0-9]* s, 0 invariant violation(s)$' "$tmp/run" || bad "violations: $(tail -n 3 "$tmp/run")"
n=$((n + 1))

# re-probes in a window of 300 simulated seconds (3 s here; CI at load 6
# spent 20 on the first run): nothing comes back, so still 2 of 12, but the
# dry pools were asked again (more RunInstances than the single run)
calls() { awk '$1 == "default" { print $3; exit }' "$1"; }
fb --reprobe 300 --scenario-file "$tmp/still.yaml" --nodes 12 >"$tmp/re" 2>&1 || bad "fill-bench --reprobe: $(cat "$tmp/re")"
[ "$(grep -c '^default  *2/2 ' "$tmp/re")" = 2 ] || bad "default with re-probes: $(grep '^default' "$tmp/re")"
[ "$(calls "$tmp/re")" -gt "$(calls "$tmp/run")" ] ||
	bad "re-probes asked nothing more: $(calls "$tmp/re") calls, $(calls "$tmp/run") without"
grep -q '^fill-bench: [0-9]* s, 0 invariant violation(s)$' "$tmp/re" || bad "violations: $(tail -n 3 "$tmp/re")"
n=$((n + 1))

# a geography without Tokyo: nothing is obtainable at the start
"$PY" - "$S/bench/fill/gpuburst.yaml" "$tmp/geo.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text = re.sub(r"  - name: ap-northeast-1\n(    .*\n|      .*\n)*", "", text)
text = text.replace(", ap-northeast-1]", "]")
assert "ap-northeast-1a" not in text, text
open(sys.argv[2], "w").write(text)
PY
fb --conf "$tmp/geo.yaml" --scenario-file "$tmp/still.yaml" --nodes 4 >"$tmp/run" 2>&1 || bad "fill-bench --conf: $(cat "$tmp/run")"
[ "$(grep -c '^oracle  *0/0 ' "$tmp/run")" = 2 ] || bad "oracle without Tokyo: $(grep '^oracle' "$tmp/run")"
grep -q '^default  *0/0 ' "$tmp/run" || bad "default without Tokyo: $(grep '^default' "$tmp/run")"
n=$((n + 1))
echo "fill-bench-files: $n checks"
