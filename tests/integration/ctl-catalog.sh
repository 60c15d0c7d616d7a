#!/bin/sh
# ctl-catalog.sh - the GPU catalog: `gpuburstctl catalog` shows the built-in
# catalog when no refresh has run; `catalog refresh` against
# gpuburst-cloudsim pages through DescribeInstanceTypes in every configured
# region, keeps the types with GPUs, writes <state_dir>/catalog, and every
# type of it has the built-in catalog's figures (the simulator serves
# those); the configuration then reads the file (catalog shows its path and
# source); --dry-run writes nothing; a region that does not answer writes
# nothing and names the region; a damaged file fails the configuration with
# its line.  doctor checks EFA's security-group rule for a region with an
# efa nodeset: a group with the self-referencing all-traffic rule passes,
# one without fails naming the group and the fix.
. "$srcdir/cloudsim-lib.sh"

CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
start_sim "$GB_TOP_SRCDIR/tests/data/cloudsim/awscli-gpu.yaml"
write_conf() {	# FILE SG [EXTRA-REGION]
	cat >"$1" <<EOF
cluster_name: t
state_dir: $TMP/state
log: {file: $TMP/gb.log}
cloud:
  endpoint: $ENDPOINT
  connect_timeout: 2s
  request_timeout: 5s
  max_retries: 0
  credentials: {access_key_id: AKIDEXAMPLE, secret_access_key: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, imds: false}
regions:
  - name: ap-south-1
    ami: ami-0123456789abcdef0
    security_groups: [$2]
    azs: [{name: ap-south-1a, subnets: [subnet-gpu-a]}, {name: ap-south-1b, subnets: [subnet-gpu-b]}]
${3:-}
fallback_groups:
  sea: {consumer_regions: [ap-south-1], fallback_regions: [ap-south-1]}
policy: {allowed_families: [p5]}
nodesets:
  - {name: h100, nodes: "h100-[1-8]", instance_type: p5.48xlarge, home_region: ap-south-1, efa: true, placement: cluster}
EOF
}
mkdir -p "$TMP/state"
write_conf "$TMP/gb.yaml" sg-0123456789abcdef0
ctl() { env SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "${CONF:-$TMP/gb.yaml}" "$@"; }

# ---- the built-in catalog
ctl catalog >"$TMP/cat.out" 2>"$TMP/cat.err" || fail "catalog: $(cat "$TMP/cat.out" "$TMP/cat.err")"
grep -q '^catalog: built in, [0-9]* types' "$TMP/cat.out" || fail "catalog header: $(head -2 "$TMP/cat.out")"
grep -Eq '^p5\.48xlarge +192 +2048 GiB +8 h100 +80 GiB x86_64 +yes +32 *$' "$TMP/cat.out" ||
	fail "p5.48xlarge line: $(grep p5.48 "$TMP/cat.out")"
grep -q '^g6f\.large .*1/8 GPU: not launched' "$TMP/cat.out" || fail "g6f.large: $(grep g6f.large "$TMP/cat.out")"
ctl --json catalog >"$TMP/builtin.json" || fail "catalog --json"
expect_eq "built-in source" "$(jget "$TMP/builtin.json" '[d["path"], d["source"]]')" '[null, "built-in"]'
ok "catalog: the built-in catalog, p5.48xlarge 192 vCPUs 2048 GiB 8 h100 with EFA on 32 cards, g6f a share"

# ---- refresh, dry run first
ctl catalog refresh --dry-run >"$TMP/dry.out" 2>&1 || fail "refresh --dry-run: $(cat "$TMP/dry.out")"
grep -q '^would write [0-9]* GPU types ([0-9]* NVIDIA) from DescribeInstanceTypes in ap-south-1$' "$TMP/dry.out" ||
	fail "dry run: $(cat "$TMP/dry.out")"
[ ! -e "$TMP/state/catalog" ] || fail "--dry-run wrote $TMP/state/catalog"
ctl catalog refresh >"$TMP/ref.out" 2>&1 || fail "refresh: $(cat "$TMP/ref.out")"
grep -q "^wrote [0-9]* GPU types" "$TMP/ref.out" || fail "refresh: $(cat "$TMP/ref.out")"
[ -f "$TMP/state/catalog" ] || fail "no catalog file"
expect_eq "catalog file mode" "$(stat -c %a "$TMP/state/catalog")" 644
head -1 "$TMP/state/catalog" | grep -q '^gpuburst-catalog 1$' || fail "header: $(head -1 "$TMP/state/catalog")"
pages=$(grep -c "action=DescribeInstanceTypes" "$TMP/sim.log")
[ "$pages" -ge 2 ] || fail "refresh and its dry run made $pages DescribeInstanceTypes calls"
ctl --json catalog >"$TMP/fresh.json" || fail "catalog --json after refresh"
expect_eq "refreshed source" "$(jget "$TMP/fresh.json" '[d["path"], d["source"]]')" \
	"[\"$TMP/state/catalog\", \"DescribeInstanceTypes in ap-south-1\"]"
"$PYTHON3" - "$TMP/builtin.json" "$TMP/fresh.json" <<'PYEOF' || fail "refreshed figures differ from the built-in catalog"
import json, sys
b = {t["name"]: t for t in json.load(open(sys.argv[1]))["types"]}
f = {t["name"]: t for t in json.load(open(sys.argv[2]))["types"]}
keys = ("vcpus", "memory_mib", "gpus", "gpu_model", "gpu_name", "gpu_memory_mib", "gpu_maker",
        "arch", "efa", "efa_max_interfaces", "network_cards", "max_interfaces",
        "cluster_placement", "gpu_fraction")
bad = [(n, k, b[n][k], f.get(n, {}).get(k)) for n in b for k in keys
       if f.get(n, {}).get(k) != b[n][k]]
for x in bad[:10]:
    print("differs:", x)
if set(f) != set(b):
    print("types only on one side:", sorted(set(f) ^ set(b)))
sys.exit(1 if bad or set(f) != set(b) else 0)
PYEOF
ok "catalog refresh: $(jget "$TMP/fresh.json" 'len(d["types"])') GPU types in $pages calls, the built-in catalog's figures, 0644, read back by the configuration"

# ---- a region that does not answer: nothing written
cp "$TMP/state/catalog" "$TMP/catalog.good"
write_conf "$TMP/gb2.yaml" sg-0123456789abcdef0 "  - name: eu-west-3
    ami: ami-3
    endpoint: http://127.0.0.1:1
    azs: [{name: eu-west-3a, subnets: [subnet-x]}]"
CONF="$TMP/gb2.yaml" ctl catalog refresh >"$TMP/down.out" 2>&1 && fail "refresh with a dead region succeeded"
grep -q "catalog refresh: DescribeInstanceTypes in eu-west-3: .*(nothing written)" "$TMP/down.out" ||
	fail "dead region message: $(cat "$TMP/down.out")"
cmp -s "$TMP/state/catalog" "$TMP/catalog.good" || fail "the catalog changed after a failed refresh"
ok "catalog refresh: a region that does not answer is named and nothing is written"

# ---- a damaged file fails the configuration, naming the line
printf 'g5.xlarge g5 4 oops\n' >>"$TMP/state/catalog"
ctl config check >"$TMP/bad.out" 2>&1 && fail "config check accepted a damaged catalog"
grep -q "catalog $TMP/state/catalog:[0-9]*:" "$TMP/bad.out" || fail "damaged catalog message: $(cat "$TMP/bad.out")"
cp "$TMP/catalog.good" "$TMP/state/catalog"
ok "a damaged catalog file fails the configuration with its file and line"

# ---- doctor: EFA's security-group rule
ctl doctor >"$TMP/doc.out" 2>&1
grep -q "efa: a security group of ap-south-1 allows all traffic from and to itself (nodeset h100)" \
	"$TMP/doc.out" || fail "doctor efa ok: $(cat "$TMP/doc.out")"
grep -q "DryRun of p5.48xlarge from ami-0123456789abcdef0 accepted" "$TMP/doc.out" ||
	fail "doctor's EFA DryRun: $(cat "$TMP/doc.out")"
write_conf "$TMP/gb3.yaml" sg-0123456789abcdef1
CONF="$TMP/gb3.yaml" ctl doctor >"$TMP/doc3.out" 2>&1 && fail "doctor passed a group without EFA's rule"
grep -q "efa (nodeset h100): no security group of region ap-south-1 allows all traffic from and to itself (sg-0123456789abcdef1); fix: add" \
	"$TMP/doc3.out" || fail "doctor efa failure: $(cat "$TMP/doc3.out")"
ok "doctor: EFA's self-referencing rule found in one group and missing in another, with the fix"
