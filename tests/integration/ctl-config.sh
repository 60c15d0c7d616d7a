#!/bin/sh
# ctl-config.sh - `gpuburstctl config check` over every case of
# tests/data/conf: valid cases print their expected summary and exit 0;
# invalid ones print exactly their expected errors to stderr and exit 3
# (GB_E_CONFIG); --json carries the same errors and the error document
# (stderr unchanged); usage errors exit 2.
set -u
ctl="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
data="$GB_TOP_SRCDIR/tests/data/conf"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
bad() { echo "FAIL: $*"; fail=1; }

run_case() {	# DIR: runs the CLI in DIR with the case's env; sets rc
	(
		cd "$1" || exit 99
		unset GPUBURST_ENV GPUBURST_CONF
		if [ -f env ]; then
			while IFS= read -r kv; do export "$kv"; done < env
		fi
		shift
		"$ctl" -c input.yaml "$@" > "$tmp/out" 2> "$tmp/err"
	)
	rc=$?
}

for d in "$data"/valid/*/; do
	n=$((n + 1))
	run_case "$d" config check
	sed "s|@GB_STATE_DIR@|$GB_STATE_DIR|g" "$d/expected" > "$tmp/want"
	[ "$rc" -eq 0 ] || bad "valid $(basename "$d"): exit $rc: $(cat "$tmp/err")"
	cmp -s "$tmp/want" "$tmp/out" || { bad "valid $(basename "$d"): summary differs"; diff "$tmp/want" "$tmp/out" | head -5; }
	[ -s "$tmp/err" ] && bad "valid $(basename "$d"): wrote to stderr"
done

for d in "$data"/invalid/*/; do
	n=$((n + 1))
	name=$(basename "$d")
	run_case "$d" config check
	[ "$rc" -eq 3 ] || bad "invalid $name: exit $rc, want 3 (GB_E_CONFIG)"
	lines=$(grep -c '' "$d/expected")
	{ cat "$d/expected"
	  if [ "$lines" -eq 1 ]; then echo "gpuburstctl: input.yaml: 1 error"
	  else echo "gpuburstctl: input.yaml: $lines errors"; fi; } > "$tmp/want"
	cmp -s "$tmp/want" "$tmp/err" || { bad "invalid $name: stderr differs"; diff "$tmp/want" "$tmp/err" | head -5; }
	[ -s "$tmp/out" ] && bad "invalid $name: wrote to stdout"

	run_case "$d" --json config check
	[ "$rc" -eq 3 ] || bad "invalid $name --json: exit $rc"
	cmp -s "$tmp/want" "$tmp/err" || { bad "invalid $name --json: stderr differs"; diff "$tmp/want" "$tmp/err" | head -5; }
	"${PYTHON3:-python3}" - "$tmp/out" "$d/expected" <<'PY' || bad "invalid $name: --json output"
import json, sys
doc = json.load(open(sys.argv[1]))
want = open(sys.argv[2]).read().splitlines()
assert doc["schema"] == "gpuburstctl/1", doc
assert doc["ok"] is False, doc
assert doc["path"] == "input.yaml", doc
assert doc["errors"] == want, (doc["errors"], want)
e = doc["error"]
assert e["code"] == "CONFIG" and e["exit"] == 3, e
assert e["message"] == want[0] + ("" if len(want) == 1 else " (and %d more)" % (len(want) - 1)), e
PY
done

# the shipped example passes
"$ctl" -c "$GB_TOP_SRCDIR/etc/gpuburst.yaml.example" config check > "$tmp/out" 2>&1 ||
	bad "etc/gpuburst.yaml.example does not pass: $(cat "$tmp/out")"
n=$((n + 1))

# usage errors exit 2 (GB_E_USAGE) and say what is wrong
usage() {
	want=$1; shift
	"$ctl" "$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	n=$((n + 1))
	[ "$rc" -eq 2 ] || bad "gpuburstctl $*: exit $rc, want 2"
	grep -q -- "$want" "$tmp/err" || bad "gpuburstctl $*: stderr lacks '$want': $(cat "$tmp/err")"
}
usage 'unknown command "frobnicate"' frobnicate
usage 'config needs a subcommand' config
usage 'unknown config subcommand "lint"' config lint
usage 'unexpected argument "extra"' config check extra
usage 'invalid option "--bogus"' --bogus config check
usage 'missing argument for option "-c"' -c
"$ctl" --help | grep -q '^Usage: gpuburstctl' || bad "--help"

# a file that is not there: the error names it
"$ctl" -c "$tmp/nope.yaml" config check > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -ne 0 ] || bad "missing file: exit 0"
grep -q "nope.yaml" "$tmp/err" || bad "missing file: error does not name it"

echo "ctl-config: $n cases"
exit $fail
