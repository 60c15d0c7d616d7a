#!/bin/sh
# ctl-man.sh - the man pages document what the programs know:
#  - every configuration key of the parser (`gpuburstctl config keys --json`,
#    a walk of libconf's key tables) has an entry in gpuburst.yaml(5) with
#    its type, its default (or "required") and an example;
#  - every gpuburstctl subcommand (`gpuburstctl --list-commands`, the
#    command table) has its section in gpuburstctl(8), and every section
#    there is a subcommand;
#  - every exit code (`gpuburstctl --list-exit-codes`, the gb_err.h table)
#    is listed with its name in EXIT STATUS of gpuburstctl(8) and of the
#    three Slurm programs' pages, and nothing else is;
#  - the --json schema version the program prints is the one JSON OUTPUT
#    of gpuburstctl(8) documents;
#  - the pages format without groff warnings;
#  - the pages are the ones made for this build (doc/*.in filled by make):
#    no @placeholder@ is left, and they name this build's directories.
set -u
: "${GB_TOP_BUILDDIR:?}" "${GB_TOP_SRCDIR:?}"
CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
DOC="$GB_TOP_BUILDDIR/doc"
PY="${PYTHON3:-python3}"
"$PY" -c 'import json' 2>/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$CTL" --json config keys >"$tmp/keys.json" || { echo "FAIL: config keys"; exit 1; }
"$CTL" --list-commands >"$tmp/commands" || { echo "FAIL: --list-commands"; exit 1; }
"$CTL" --list-exit-codes >"$tmp/codes" || { echo "FAIL: --list-exit-codes"; exit 1; }

"$PY" - "$tmp/keys.json" "$DOC/gpuburst.yaml.5" <<'PY' || fail=1
import json, re, sys
keys = json.load(open(sys.argv[1]))["keys"]
lines = open(sys.argv[2]).read().split("\n")
# the paragraph of each ".B key" entry that follows a ".TP"
entries = {}
for i, l in enumerate(lines):
    if l.startswith(".B ") and i > 0 and lines[i - 1] == ".TP":
        para = []
        for m in lines[i + 1:]:
            if m.startswith(".TP") or m.startswith(".SH"):
                break
            para.append(m)
        entries[l[3:]] = "\n".join(para)
bad = 0
for k in keys:
    path, typ, dflt = k["key"], k["type"], k["default"]
    p = entries.get(path)
    if p is None:
        print("FAIL: gpuburst.yaml(5) does not document", path); bad += 1; continue
    first = p.split("\n")[0]
    if not first.startswith("\\fI%s\\fR" % typ):
        print("FAIL: %s: type should read \\fI%s\\fR: %r" % (path, typ, first)); bad += 1
    if k["required"]:
        if "required" not in first:
            print("FAIL: %s: not said to be required" % path); bad += 1
    elif dflt is not None and path != "state_dir":   # state_dir: a build setting
        if ("default \\fB%s\\fR" % dflt) not in p:
            print("FAIL: %s: default %s not documented" % (path, dflt)); bad += 1
    elif dflt is None and "default" not in first:
        print("FAIL: %s: says nothing about a default" % path); bad += 1
    if k["values"] and k["values"] not in p:
        print("FAIL: %s: values %s not listed" % (path, k["values"])); bad += 1
    if "Example:" not in p:
        print("FAIL: %s: no example" % path); bad += 1
print("gpuburst.yaml(5): %d keys checked, %d problems" % (len(keys), bad))
sys.exit(1 if bad else 0)
PY

# commands <-> .SS "name" sections of COMMANDS
sed -n '/^\.SH COMMANDS/,/^\.SH /p' "$DOC/gpuburstctl.8" |
	sed -n 's/^\.SS "\(.*\)"$/\1/p' | sort >"$tmp/documented"
sort "$tmp/commands" >"$tmp/known"
if ! cmp -s "$tmp/known" "$tmp/documented"; then
	echo "FAIL: gpuburstctl(8) COMMANDS and the command table differ (< table, > page):"
	diff "$tmp/known" "$tmp/documented"
	fail=1
fi
echo "gpuburstctl(8): $(wc -l <"$tmp/known") commands"

# exit codes: ".B N" then "NAME: ..." in EXIT STATUS, exactly the table
for page in gpuburstctl.8 gpuburst-resume.8 gpuburst-suspend.8 gpuburst-resume-fail.8; do
	sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$DOC/$page" |
		awk '/^\.B [0-9]+$/ { n = $2; getline; sub(/:.*/, ""); print n, $0 }' >"$tmp/page-codes"
	awk '{ print $1, $2 }' "$tmp/codes" >"$tmp/want-codes"
	if ! cmp -s "$tmp/want-codes" "$tmp/page-codes"; then
		echo "FAIL: $page EXIT STATUS differs from gb_err.h (< table, > page):"
		diff "$tmp/want-codes" "$tmp/page-codes" | head -10
		fail=1
	fi
done
echo "exit codes: $(wc -l <"$tmp/codes") in 4 pages"

# the schema of --json: what the program prints is what the page says
schema=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["schema"])' "$tmp/keys.json")
sed -n '/^\.SH JSON OUTPUT/,/^\.SH /p' "$DOC/gpuburstctl.8" | grep -qF "\(dqschema\(dq: \(dq$schema\(dq" ||
	{ echo "FAIL: gpuburstctl(8) JSON OUTPUT does not document \"schema\": \"$schema\""; fail=1; }
echo "json schema: $schema"

# the generated pages: every placeholder filled, this build's paths named
for f in "$DOC"/*.5 "$DOC"/*.8; do
	[ -f "$f" ] || { echo "FAIL: $f missing (run make first)"; exit 1; }
	left=$(grep -n '@[A-Za-z_][A-Za-z_0-9]*@' "$f")
	[ -z "$left" ] || { echo "FAIL: $f: placeholders left: $left"; fail=1; }
done
for page in gpuburst-resume.8 gpuburst-suspend.8 gpuburst-resume-fail.8 gpuburstctl.8; do
	for path in "$GB_PKGLIBEXECDIR/gpuburst-worker" "$GB_SYSCONFDIR/gpuburst/gpuburst.yaml"; do
		grep -qF "$path" "$DOC/$page" ||
			{ echo "FAIL: $page does not name $path"; fail=1; }
	done
done
grep -qF "$GB_PREFIX/" "$DOC/gpuburst-resume.8" ||
	{ echo "FAIL: gpuburst-resume.8 does not name the prefix $GB_PREFIX"; fail=1; }
grep -q '^\.TH [^ ]* 8 "[A-Z][a-z]* [0-9]\{4\}" "gpuburst [0-9][^"]*"' "$DOC/gpuburstctl.8" ||
	{ echo "FAIL: gpuburstctl.8 .TH: $(grep '^\.TH' "$DOC/gpuburstctl.8")"; fail=1; }
echo "man pages: generated for prefix $GB_PREFIX"

# groff warnings, all but "break" (cannot adjust/break a line): the pages
# hold the configured paths, and under a long prefix (make distcheck's) a
# path is wider than what groff can fill around it: layout, not markup
if command -v groff >/dev/null; then
	for f in "$DOC"/*.5 "$DOC"/*.8; do
		out=$(LC_ALL=C.UTF-8 groff -man -ww -Wbreak -z -Tutf8 "$f" 2>&1)
		[ -z "$out" ] || { echo "FAIL: $f: $out"; fail=1; }
	done
fi
exit $fail
