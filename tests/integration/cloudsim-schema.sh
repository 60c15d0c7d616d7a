#!/bin/sh
# cloudsim-schema.sh - the parameters gpuburst-cloudsim enforces (its
# --dump-schema) against botocore's EC2 model, read at test time from
# python3-botocore: every accepted name exists in the model with a
# compatible type and enum; requests serialized by botocore's EC2 serializer
# and signed by botocore are accepted and use every accepted name; misspelled
# names, bad values and missing parameters get EC2's error codes; botocore's
# parser finds in the answers every Instance member EC2's samples have;
# the same for STS against botocore's STS model (cloudsim_schema.py does
# the work).  Skips (77) without python3-botocore.

CLOUDSIM_NO_AWS_CLI=yes
. "${srcdir:-.}/cloudsim-lib.sh"

"$PYTHON3" -c 'import botocore.serialize, botocore.auth, botocore.parsers' 2>/dev/null ||
	skip "$PYTHON3 cannot import botocore (Debian: apt-get install python3-botocore)"

"$CLOUDSIM" --dump-schema >"$TMP/schema.json" 2>"$TMP/err" ||
	fail "--dump-schema: $(cat "$TMP/err")"
"$PYTHON3" -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/schema.json" ||
	fail "--dump-schema printed no JSON"
ok "--dump-schema prints the schema as JSON"

start_sim "$DATA/schema.yaml"
rc=0
"$PYTHON3" "${srcdir:-.}/cloudsim_schema.py" "$TMP/schema.json" "$ENDPOINT" \
	"$GB_TOP_SRCDIR/tests/data/ec2" || rc=$?
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || fail "cloudsim_schema.py: exit $rc"
grep -q 'status=400 code=UnknownParameter' "$TMP/sim.log" || fail "the log lacks the refusals"
ok "botocore's model, serializer, signer and parser agree with the simulator"
