# ctl-lib.sh - sourced by the ctl-*.sh tests that run gpuburstctl on a state
# file built by gb_mkstate: the programs, python3 (skip without it), a
# private directory removed at exit (0755: the non-administrator checks run
# as nobody), and the counters bad/ok.
set -u
: "${GB_TOP_BUILDDIR:?}" "${GB_TOP_SRCDIR:?}"
CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
MK="$GB_TOP_BUILDDIR/tests/integration/gb_mkstate"
PY="${PYTHON3:-python3}"
"$PY" -c 'import json' 2>/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
fail=0
n=0
bad() { echo "FAIL: $*"; fail=1; }
ok() { n=$((n + 1)); }

# conf_mumbai NODES: the cloud part of these tests' configurations: Mumbai
# (one AZ, one subnet) as the fallback of Singapore's consumers, and
# nodeset g5 (g5-[1-NODES], g5.xlarge, homed in Singapore) last, so that a
# caller may list more nodesets after it
conf_mumbai() {
	cat <<EOF
regions:
  - name: ap-south-1
    ami: ami-1
    azs: [{name: ap-south-1a, subnets: [subnet-1]}]
fallback_groups:
  g: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1]}
nodesets:
  - {name: g5, nodes: "g5-[1-$1]", instance_type: g5.xlarge, home_region: ap-southeast-1}
EOF
}
