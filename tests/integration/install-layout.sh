#!/bin/sh
# install-layout.sh - what `make install` (into a private DESTDIR) lays out:
#  - every file under the prefix, or under the configured sysconfdir or
#    localstatedir, the job_submit plugin included (LIBDIR/slurm unless
#    --with-slurm-plugindir says otherwise): the list is printed;
#  - one active way to run reconcile: the systemd timer and service (not
#    enabled: a package or `systemctl enable --now` does that), and the cron
#    file only as an example under share/gpuburst/examples, never into
#    /etc/cron.d (where it would run a second pass next to the timer);
#  - the logrotate rules in --with-logrotateddir (default
#    SYSCONFDIR/logrotate.d), the units in --with-systemdunitdir (default
#    PREFIX/lib/systemd/system), none when configured "no";
#  - the shipped price file in PKGDATADIR, where the programs look for it;
#  - man pages filled for the build (no @placeholder@ left) that name its
#    directories: for this build, and for a second configure of doc/ and
#    etc/ with a prefix of the test's own (nothing to compile).
set -u
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gb-install.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok - $*"; }
command -v make >/dev/null || { echo "SKIP: make is missing"; exit 77; }

# make, free of the flags of a `make -jN check` that runs this test (its
# jobserver, its -w Entering-directory lines on stdout)
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "$@"
}

# mkvar BUILDDIR SUBDIR VAR: make's value of VAR there, fully expanded
mkvar() {
	printf 'gb-print-var:\n\t@echo $(%s)\n' "$3" |
		mk -s -C "$1/$2" -f Makefile -f - gb-print-var
}

# install SUBDIRS of build $1 into $2 (DESTDIR)
install_dirs() {
	b=$1 dest=$2; shift 2
	for d in "$@"; do
		mk -s -C "$b/$d" install DESTDIR="$dest" >"$TMP/out" 2>&1 ||
			fail "make -C $d install: $(cat "$TMP/out")"
	done
}

# check_man BUILDDIR ROOT: installed pages filled and naming the build's dirs
check_man() {
	b=$1 root=$2
	prefix=$(mkvar "$b" doc prefix)
	mandir=$(mkvar "$b" doc mandir)
	worker="$(mkvar "$b" doc pkglibexecdir)/gpuburst-worker"
	conf="$(mkvar "$b" doc sysconfdir)/gpuburst/gpuburst.yaml"
	n=0
	for f in "$root$mandir"/man5/*.5 "$root$mandir"/man8/*.8; do
		[ -f "$f" ] || fail "no man pages under $mandir: $(cd "$root" && find . -type f)"
		n=$((n + 1))
		left=$(grep -n '@[A-Za-z_][A-Za-z_0-9]*@' "$f") &&
			fail "${f#"$root"}: placeholders left: $left"
	done
	[ "$n" -eq 7 ] || fail "$n man pages installed, expected 7"
	for p in gpuburst-resume gpuburst-suspend gpuburst-resume-fail gpuburstctl; do
		grep -qF "$worker" "$root$mandir/man8/$p.8" || fail "$p.8 does not name $worker"
		grep -qF "$conf" "$root$mandir/man8/$p.8" || fail "$p.8 does not name $conf"
	done
	grep -qF "$(mkvar "$b" doc sysconfdir)/gpuburst/node.yaml" "$root$mandir/man8/gpuburst-node.8" ||
		fail "gpuburst-node.8 does not name its node.yaml"
	grep -qF "$prefix/" "$root$mandir/man8/gpuburst-resume.8" ||
		fail "gpuburst-resume.8 does not name the prefix $prefix"
	ok "$n man pages for prefix $prefix: filled, naming $worker"
}

B=$GB_TOP_BUILDDIR
mk -s -C "$B" install DESTDIR="$TMP/root" >"$TMP/out" 2>&1 ||
	fail "make install: $(cat "$TMP/out")"
prefix=$(mkvar "$B" etc prefix)
sysconfdir=$(mkvar "$B" etc sysconfdir)
datadir=$(mkvar "$B" etc datadir)
sbindir=$(mkvar "$B" etc sbindir)
unitdir=$(mkvar "$B" etc systemdunitdir)
lrdir=$(mkvar "$B" etc logrotateddir)
root="$TMP/root"

found=$(cd "$root" && find . -path '*cron.d*' -type f | sort)
[ "$found" = "./${datadir#/}/gpuburst/examples/cron.d/gpuburst-reconcile" ] ||
	fail "cron files installed: $found"
[ ! -e "$root$sysconfdir/cron.d" ] || fail "$sysconfdir/cron.d installed"
for u in gpuburst-reconcile.timer gpuburst-reconcile.service gpuburst-node.service \
	gpuburst-munge-key.service; do
	[ -f "$root$unitdir/$u" ] || fail "$u not installed in $unitdir"
done
grep -q "ExecStart=$sbindir/gpuburstctl reconcile" "$root$unitdir/gpuburst-reconcile.service" ||
	fail "service ExecStart: $(grep ExecStart "$root$unitdir/gpuburst-reconcile.service")"
grep -qx "ExecStart=$sbindir/gpuburst-node run" "$root$unitdir/gpuburst-node.service" ||
	fail "gpuburst-node.service ExecStart: $(grep ExecStart "$root$unitdir/gpuburst-node.service")"
mk_unit="$root$unitdir/gpuburst-munge-key.service"
grep -qx "ExecStart=$sbindir/gpuburst-node munge-key" "$mk_unit" ||
	fail "gpuburst-munge-key.service ExecStart: $(grep ExecStart "$mk_unit")"
grep -qx "ConditionPathExists=$sysconfdir/gpuburst/node-key.pem" "$mk_unit" ||
	fail "gpuburst-munge-key.service condition: $(grep Condition "$mk_unit")"
grep -qx "Before=munge.service gpuburst-node.service" "$mk_unit" &&
	grep -qx "RequiredBy=munge.service" "$mk_unit" ||
	fail "gpuburst-munge-key.service is not ordered before munged"
[ -f "$root$sysconfdir/gpuburst/node.yaml.example" ] || fail "node.yaml.example not installed"
# the price file shipped (etc/prices), where the programs look while
# state_dir has none
pkgdatadir=$(mkvar "$B" etc pkgdatadir)
cmp -s "$root$pkgdatadir/prices" "$GB_TOP_SRCDIR/etc/prices" ||
	fail "etc/prices not installed as $pkgdatadir/prices"
mkdir "$TMP/st" && printf 'cluster_name: t\nstate_dir: %s\n' "$TMP/st" >"$TMP/p.yaml"
SLURM_CONF="$TMP/no-slurm.conf" "$B/src/gpuburstctl/gpuburstctl" -c "$TMP/p.yaml" prices \
	>"$TMP/out" 2>&1 || fail "gpuburstctl prices: $(cat "$TMP/out")"
grep -qF "none installed at $pkgdatadir/prices:" "$TMP/out" ||
	fail "gpuburstctl does not look for $pkgdatadir/prices: $(cat "$TMP/out")"
ok "the shipped price file installed as $pkgdatadir/prices, where gpuburstctl looks"
# every installed file, and those outside the directories configure was given
localstatedir=$(mkvar "$B" etc localstatedir)
plugindir=$(mkvar "$B" plugins/job_submit_gpuburst SLURM_PLUGINDIR)
(cd "$root" && find . ! -type d | sed 's|^\.||' | sort) >"$TMP/files"
echo "installed ($(wc -l <"$TMP/files") files):"
sed 's/^/  /' "$TMP/files"
outside=$(grep -v -e "^$prefix/" -e "^$sysconfdir/" -e "^$localstatedir/" "$TMP/files")
[ -z "$outside" ] || fail "installed outside $prefix: $outside"
grep -qx "$plugindir/job_submit_gpuburst.so" "$TMP/files" ||
	fail "job_submit_gpuburst.so not in $plugindir"
for p in gpuburst-resume gpuburst-suspend gpuburst-resume-fail gpuburstctl gpuburst-node; do
	grep -qx "$sbindir/$p" "$TMP/files" || fail "$sbindir/$p not installed"
done
ok "nothing outside $prefix (sysconfdir $sysconfdir, localstatedir $localstatedir); plugin in $plugindir"

ex="$root$datadir/gpuburst/examples/cron.d/gpuburst-reconcile"
grep -q "^\* \* \* \* \* slurm flock -n .* $sbindir/gpuburstctl reconcile >/dev/null\$" "$ex" ||
	fail "cron example line: $(grep -v '^#' "$ex")"
ok "one active mechanism (timer + service under $unitdir); the cron file only as an example"
if [ -n "$lrdir" ]; then
	grep -q '^/var/log/gpuburst/\*\.log {$' "$root$lrdir/gpuburst" ||
		fail "logrotate rules not installed in $lrdir"
	ok "logrotate rules in $lrdir"
fi
check_man "$B" "$root"

# The same tree configured with a prefix of our own: doc/ and etc/ only.
if [ -f "$GB_TOP_SRCDIR/config.status" ]; then
	echo "SKIP (part): the source tree is configured in place; a second (VPATH) configure is impossible"
	exit 0
fi
P="$TMP/opt-gb"
eval "set -- $("$B/config.status" --config)"
keep=""
for a in "$@"; do
	case $a in
	--prefix=* | --exec-prefix=* | --*dir=* | --with-slurm-plugindir=* | \
	--with-systemdunitdir=* | --with-logrotateddir=* | --with-state-dir=*) ;;
	*) keep="$keep '$(printf '%s' "$a" | sed "s/'/'\\\\''/g")'" ;;
	esac
done
mkdir "$TMP/b" && cd "$TMP/b" || exit 99
eval "\"\$GB_TOP_SRCDIR/configure\" -q --prefix=\"\$P\" --without-logrotateddir $keep" \
	>"$TMP/conf" 2>&1 ||
	fail "configure --prefix=$P: $(tail -20 "$TMP/conf")"
mk -s -C etc >"$TMP/out" 2>&1 && mk -s -C doc >"$TMP/out" 2>&1 ||
	fail "make doc etc: $(cat "$TMP/out")"
install_dirs "$TMP/b" "$TMP/root2" etc doc
check_man "$TMP/b" "$TMP/root2"
[ -f "$TMP/root2$P/sbin/gpuburstctl" ] && fail "sbin installed from doc/etc?"
grep -q "ExecStart=$P/sbin/gpuburstctl reconcile" \
	"$TMP/root2$(mkvar "$TMP/b" etc systemdunitdir)/gpuburst-reconcile.service" ||
	fail "--prefix=$P: service ExecStart not under the prefix"
[ "$(mkvar "$TMP/b" etc systemdunitdir)" = "$P/lib/systemd/system" ] ||
	fail "--prefix=$P: systemdunitdir $(mkvar "$TMP/b" etc systemdunitdir)"
[ -z "$(cd "$TMP/root2" && find . -path '*logrotate*')" ] ||
	fail "--without-logrotateddir: $(cd "$TMP/root2" && find . -path '*logrotate*')"
ok "--prefix=$P: pages and units name the prefix, units in $P/lib/systemd/system, no logrotate rules"
exit 0
