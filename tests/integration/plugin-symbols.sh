#!/bin/bash
# plugin-symbols.sh - job_submit_gpuburst.so exports exactly the plugin
# symbols, needs no library that could block, exit or talk to the network
# (no libslurm: slurmctld provides slurm_*), and every slurm_* symbol it
# needs is one that slurmctld's libslurmfull exports.
set -u
so="$GB_TOP_BUILDDIR/plugins/job_submit_gpuburst/.libs/job_submit_gpuburst.so"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
for b in nm readelf; do
	command -v $b >/dev/null || { echo "SKIP: $b is missing (binutils)"; exit 77; }
done
[ -f "$so" ] || { echo "ERROR: $so was not built"; exit 99; }

got=$(nm -D --defined-only "$so" | awk '{print $3}' | sort | tr '\n' ' ')
want="fini init job_modify job_submit plugin_name plugin_type plugin_version "
[ "$got" = "$want" ] || bad "exported symbols: '$got', want '$want'"

needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for lib in $needed; do
	case $lib in
	libc.so.*|libm.so.*|libyaml-0.so.*) ;;
	libasan.so.*|libubsan.so.*) [ -n "${GB_SAN_CFLAGS:-}" ] || bad "needs $lib" ;;
	*) bad "needs $lib (only libc, libm and libyaml are allowed)" ;;
	esac
done

full=$(ls /usr/lib/*/slurm-wlm/libslurmfull.so /usr/lib*/slurm/libslurmfull.so 2>/dev/null | head -1)
if [ -n "$full" ]; then
	for s in $(nm -D --undefined-only "$so" | awk '$2 ~ /^slurm_/ {print $2}'); do
		nm -D --defined-only "$full" | awk '{print $3}' | grep -qx "$s" ||
			bad "$s is not exported by $full"
	done
else
	echo "note: libslurmfull.so not found; undefined slurm_* symbols not checked"
fi

[ "$fail" = 0 ] && echo "PASS: exports $want; needs $(echo $needed)"
exit $fail
