#!/bin/sh
# install-layout.sh - `make install` of etc/ (into a private DESTDIR)
# installs one active way to run reconcile: the systemd timer and service
# (not enabled: a package or `systemctl enable --now` does that), and the
# cron file only as an example under share/gpuburst/examples, never into
# /etc/cron.d (where it would run a second pass next to the timer).
set -u
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gb-install.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok - $*"; }
command -v make >/dev/null || { echo "SKIP: make is missing"; exit 77; }

make -s -C "$GB_TOP_BUILDDIR/etc" install DESTDIR="$TMP/root" >"$TMP/out" 2>&1 ||
	fail "make install: $(cat "$TMP/out")"
prefix=$(sed -n 's/^prefix = //p' "$GB_TOP_BUILDDIR/etc/Makefile")
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$GB_TOP_BUILDDIR/etc/Makefile" | sed "s|\${prefix}|$prefix|")
datadir="$prefix/share"
root="$TMP/root"

found=$(cd "$root" && find . -path '*cron.d*' -type f | sort)
[ "$found" = "./${datadir#/}/gpuburst/examples/cron.d/gpuburst-reconcile" ] ||
	fail "cron files installed: $found"
[ ! -e "$root$sysconfdir/cron.d" ] || fail "$sysconfdir/cron.d installed"
for u in gpuburst-reconcile.timer gpuburst-reconcile.service; do
	[ -f "$root$prefix/lib/systemd/system/$u" ] || fail "$u not installed"
done
grep -q "ExecStart=$prefix/sbin/gpuburstctl reconcile" "$root$prefix/lib/systemd/system/gpuburst-reconcile.service" ||
	fail "service ExecStart: $(grep ExecStart "$root$prefix/lib/systemd/system/gpuburst-reconcile.service")"
ex="$root$datadir/gpuburst/examples/cron.d/gpuburst-reconcile"
grep -q "^\* \* \* \* \* slurm flock -n .* $prefix/sbin/gpuburstctl reconcile >/dev/null\$" "$ex" ||
	fail "cron example line: $(grep -v '^#' "$ex")"
ok "one active mechanism (timer + service under lib/systemd/system); the cron file only as an example"
exit 0
