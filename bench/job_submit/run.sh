#!/bin/bash
# run.sh - job_submit/gpuburst overhead, measured by slurmctld itself.
#
#   bench/job_submit/run.sh [-n JOBS] [-b BUILDDIR] [--budgets] [--readme]
#
# Starts three labs (contrib/lab/gpuburst-lab) on the same nodes and
# partitions: with no job_submit plugin, with job_submit/gpuburst
# (tests/data/plugin/gpuburst.yaml next to slurm.conf), and with
# job_submit/lua running job_submit.lua, the same rules in Lua.  Each gets
# JOBS (default 2000) `sbatch --hold` jobs, the same four kinds in turn (a
# GPU model to route, four GPUs on one node, a GPU job with a home region,
# a CPU-only job), interleaved across the labs; then `sdiag` of each says
# the count and average time slurmctld spent in REQUEST_SUBMIT_BATCH_JOB.
# The default partition is the burst one, so every job is valid without a
# plugin too, and the C and Lua rules must leave the jobs alike.
#
# With --budgets the plugin's configuration also has a price file, three
# policy.budgets (the cluster, user root, partition gpuburst; none of them
# reached) and a spend summary, so every GPU job is estimated and judged;
# every job of every lab then has a 1-hour limit (-t 60).
#
# Needs root, slurm-wlm, munge and a built tree (BUILDDIR, default the
# current directory; not a sanitizer build).  --readme also adds the result
# as a row of the table in bench/README.md.
set -euo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
jobs=2000 build=$PWD readme=0 budgets=0
while [ $# -gt 0 ]; do
	case $1 in
	-n) jobs=$2; shift ;;
	-b) build=$(cd "$2" && pwd); shift ;;
	--readme) readme=1 ;;
	--budgets) budgets=1 ;;
	*) echo "usage: $0 [-n JOBS] [-b BUILDDIR] [--budgets] [--readme]" >&2; exit 2 ;;
	esac
	shift
done
tool=$top/contrib/lab/gpuburst-lab
so=$build/plugins/job_submit_gpuburst/.libs/job_submit_gpuburst.so
[ "$(id -u)" = 0 ] || { echo "run.sh: needs root (the lab runs slurmctld)" >&2; exit 1; }
[ -f "$so" ] || { echo "run.sh: $so not built (-b BUILDDIR)" >&2; exit 1; }
grep -q -- '-fsanitize' "$build/config.log" 2>/dev/null &&
	{ echo "run.sh: $build is a sanitizer build; slurmctld cannot load it" >&2; exit 1; }

T=$(mktemp -d /tmp/gb-bench-js.XXXXXX)
chmod 755 "$T"
LAB= labs=()
cleanup() {
	for L in "${labs[@]}" $LAB; do "$tool" stop --dir "$L" --purge >/dev/null 2>&1; done
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/plugins"
cp "$so" "$T/plugins/"
# the plugin's configuration: the lab tests' one, with budgets if asked
gbconf=$T/gpuburst.yaml
cp "$top/tests/data/plugin/gpuburst.yaml" "$gbconf"
limit=()
if [ "$budgets" = 1 ]; then
	limit=(-t 60)
	mkdir -p "$T/state"
	chmod 755 "$T/state"
	awk -v sd="$T/state" '
		{ print }
		/^cluster_name:/ { print "state_dir: " sd }
		/^policy:/ {
			print "  budgets:"
			print "    everyone: {monthly: 1000000}"
			print "    root: {user: root, monthly: 1000000, per_job: 100000}"
			print "    burst: {partition: gpuburst, monthly: 1000000}"
		}' "$top/tests/data/plugin/gpuburst.yaml" > "$gbconf"
	{
		printf '%s\n' "gpuburst-prices 1" "refreshed 2026-12-01T00:00:00Z" "source bench"
		for r in ap-south-1 ap-northeast-1 ap-northeast-3; do
			printf '%s g5.xlarge on-demand 1.006\n%s g5.12xlarge on-demand 5.672\n' "$r" "$r"
			printf '%s g6.xlarge on-demand 0.805\n%s g6e.xlarge on-demand 1.861\n' "$r" "$r"
		done
	} > "$T/state/prices"
	printf '%s\n' "gpuburst-spend 1" "refreshed $(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		"source $(date -u +%Y-%m)" "cluster - 10" "partition gpuburst 5" "user root 5" \
		> "$T/state/spend"
fi
printf '#!/bin/sh\nexit 0\n' > "$T/noop"
chmod 755 "$T/noop"
p=$("$tool" free-ports 11)
cat > "$T/nodes.conf" <<NODES
NodeName=g5-[1-4] Port=[$p-$((p + 3))] CPUs=1 RealMemory=500 State=CLOUD Feature=g5.xlarge Gres=gpu:a10g:1
NodeName=g5q-[1-2] Port=[$((p + 4))-$((p + 5))] CPUs=1 RealMemory=500 State=CLOUD Feature=g5.12xlarge Gres=gpu:a10g:4
NodeName=g6-[1-2] Port=[$((p + 6))-$((p + 7))] CPUs=1 RealMemory=500 State=CLOUD Feature=g6.xlarge Gres=gpu:l4:1
NodeName=tk-[1-2] Port=[$((p + 8))-$((p + 9))] CPUs=1 RealMemory=500 State=CLOUD Feature=g6e.xlarge Gres=gpu:l40s:1
NodeName=cpu-1 Port=$((p + 10)) CPUs=1 RealMemory=500 State=CLOUD
PartitionName=gpuburst Nodes=g5-[1-4],g5q-[1-2],g6-[1-2] Default=YES MaxTime=INFINITE State=UP
PartitionName=tokyo Nodes=tk-[1-2] MaxTime=INFINITE State=UP
PartitionName=cpu Nodes=cpu-1 MaxTime=INFINITE State=UP
NODES

# The submitter runs inside one lab's namespace (the three labs' name
# lookup files are alike) and sends job i to each lab in turn, rotating
# the order: the three slurmctlds see the same moments of this shared
# machine, so its background load cannot favour one of them.
cat > "$T/submit.sh" <<'SUBMIT'
#!/bin/bash
# submit.sh N CONF... [-- SBATCH-ARGS]: N held jobs per slurm.conf, four
# kinds in turn, each with SBATCH-ARGS; prints how many submissions failed
# per CONF
n=$1
shift
extra=()
confs=()
while [ $# -gt 0 ]; do
	[ "$1" = -- ] && { shift; extra=("$@"); break; }
	confs+=("$1")
	shift
done
declare -a failed
for ((i = 0; i < n; i++)); do
	case $((i % 4)) in
	0) args=(--gres=gpu:a10g:1) ;;
	1) args=(--gpus=a10g:4 -N 1) ;;
	2) args=(--gres=gpu:l4:1 --comment=gpuburst:home=ap-northeast-1) ;;
	3) args=(-p cpu) ;;
	esac
	for ((k = 0; k < ${#confs[@]}; k++)); do
		c=$(((i + k) % ${#confs[@]}))
		SLURM_CONF=${confs[$c]} sbatch --hold --wrap true "${args[@]}" "${extra[@]}" \
			> /dev/null 2>&1 || failed[$c]=$((${failed[$c]:-0} + 1))
	done
done
for ((c = 0; c < ${#confs[@]}; c++)); do echo "${failed[$c]:-0}"; done
SUBMIT
chmod 755 "$T/submit.sh"

modes=(none gpuburst lua)
declare -A res failed
labs=()
for mode in "${modes[@]}"; do
	LAB=$T/lab-$mode
	labs+=("$LAB")
	plugin=""
	mkdir -p "$LAB/etc"
	case $mode in
	gpuburst) plugin=gpuburst
		cp "$gbconf" "$LAB/etc/gpuburst.yaml" ;;
	lua) plugin=lua
		cp "$here/job_submit.lua" "$LAB/etc/job_submit.lua" ;;
	esac
	env -u GPUBURST_CONF -u GPUBURST_ENV "$tool" start --dir "$LAB" --fresh \
		--nodes-conf "$T/nodes.conf" --resume-program "$T/noop" \
		--suspend-program "$T/noop" --resume-fail-program "$T/noop" \
		--plugin-dir "$T/plugins" ${plugin:+--job-submit "$plugin"} \
		--extra SlurmctldDebug=info > "$T/start-$mode.out" 2>&1 || {
		cat "$T/start-$mode.out" >&2
		tail -20 "$LAB/log/slurmctld.log" >&2
		exit 1
	}
done
LAB=
grep -q 'job_submit/gpuburst: loaded' "$T/lab-gpuburst/log/slurmctld.log" ||
	{ echo "run.sh: job_submit/gpuburst did not load" >&2; exit 1; }

t0=$(date +%s.%N)
mapfile -t fails < <(cd "$T/lab-none/jobs" && "$tool" sh --dir "$T/lab-none" \
	"$T/submit.sh" "$jobs" "${labs[@]/%//etc/slurm.conf}" -- "${limit[@]}")
t1=$(date +%s.%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
echo "run.sh: $((3 * jobs)) submissions took $wall s" >&2

for k in "${!modes[@]}"; do
	mode=${modes[$k]}
	L=$T/lab-$mode
	# REQUEST_SUBMIT_BATCH_JOB  ( 4003) count:2000   ave_time:713    total_time:1427039
	res[$mode]=$("$tool" sh --dir "$L" sdiag |
		sed -En 's/^[[:space:]]*REQUEST_SUBMIT_BATCH_JOB .*count:([0-9]+) +ave_time:([0-9]+) +total_time:([0-9]+).*/\1 \2 \3/p')
	[ -n "${res[$mode]}" ] || { echo "run.sh: no sdiag line for $mode" >&2; exit 1; }
	failed[$mode]=${fails[$k]}
	echo "run.sh: $mode: count ave_us total_us = ${res[$mode]}, failed ${fails[$k]}" >&2
	# what the jobs became: the C and Lua rules must agree
	"$tool" sh --dir "$L" squeue -h -o '%P %f %j' | sort | uniq -c > "$T/outcome-$mode"
done
for L in "${labs[@]}"; do "$tool" stop --dir "$L" --purge > /dev/null; done
labs=()

if ! cmp -s "$T/outcome-gpuburst" "$T/outcome-lua"; then
	echo "run.sh: the Lua script and the plugin routed the jobs differently:" >&2
	diff "$T/outcome-gpuburst" "$T/outcome-lua" >&2
	exit 1
fi
echo "run.sh: jobs after routing (count, partition, features), the same with gpuburst and lua:" >&2
sed 's/^/run.sh:   /' "$T/outcome-gpuburst" >&2
base=$(echo "${res[none]}" | awk '{print $2}')
table=$(
	echo "| JobSubmitPlugins | jobs | failed | REQUEST_SUBMIT_BATCH_JOB ave_time (us) | vs none |"
	echo "|---|---:|---:|---:|---:|"
	for mode in "${modes[@]}"; do
		set -- ${res[$mode]}
		case $mode in
		none) name="(none)" ;;
		gpuburst) name="gpuburst" ;;
		lua) name="lua (bench/job_submit/job_submit.lua, same rules)" ;;
		esac
		printf '| %s | %s | %s | %s | %+.1f%% |\n' "$name" "$1" "${failed[$mode]}" "$2" \
			"$(awk -v a="$2" -v b="$base" 'BEGIN { print (a - b) * 100 / b }')"
	done
)
echo "$table"
loop=$build/bench/job_submit/route-loop
[ -x "$loop" ] && "$loop" "$gbconf" 2000000
if [ "$readme" = 1 ]; then
	# one row into the results table of bench/README.md (above the marker)
	readme_md=$top/bench/README.md
	marker='<!-- bench/job_submit: new rows above -->'
	grep -qF "$marker" "$readme_md" ||
		{ echo "run.sh: no '$marker' line in $readme_md" >&2; exit 1; }
	commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo -)
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	load=$(cut -d' ' -f1 /proc/loadavg)
	row=$(
		set -- ${res[none]}; n=$1 none=$2
		set -- ${res[gpuburst]}; gb=$2
		set -- ${res[lua]}; lua=$2
		tag=$commit
		[ "$budgets" = 1 ] && tag="$commit, budgets"
		awk -v d="$(date -u +%Y-%m-%d)" -v c="$tag" -v m="$(nproc)-CPU $cpu, load $load" \
		    -v n="$n" -v f="${failed[none]}/${failed[gpuburst]}/${failed[lua]}" \
		    -v a="$none" -v b="$gb" -v l="$lua" -v v="$(slurmctld -V | awk '{print $2}')" 'BEGIN {
			printf "| %s | %s | %s | %s | %s | %s | %d | %d (%+.1f%%) | %d (%+.1f%%) |\n",
				d, c, m, v, n, f, a, b, (b - a) * 100 / a, l, (l - a) * 100 / a }'
	)
	awk -v m="$marker" -v r="$row" '$0 == m { print r } { print }' "$readme_md" > "$T/readme" &&
		cat "$T/readme" > "$readme_md"
	echo "run.sh: added to $readme_md: $row" >&2
fi
