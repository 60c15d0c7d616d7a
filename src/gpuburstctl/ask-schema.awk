# ask-schema.awk - what `gpuburstctl ask` knows of the state file, taken from
# doc/state-schema.md at build time, so that the model's prompt and the
# columns a query may read are the page itself and cannot drift from it:
#
#   awk -v out=c -f ask-schema.awk doc/state-schema.md > ask_schema.c
#       ctl_ask_schema_doc: the sections from "## Conventions" up to
#       "## Example queries" (conventions, the state machine, the tables)
#       as one C string; ctl_ask_columns: "table.column" of every column
#       the "## Tables" section documents, NULL-ended
#   awk -v out=columns -f ask-schema.awk doc/state-schema.md
#       those columns, one a line (tests/integration/ctl-ask.sh compares
#       them with the schema of a real state file)
#
# A table is a "### `name`: ..." heading of "## Tables"; its columns are the
# backquoted names in the first cell of each row of its markdown tables
# ("| `region`, `az` | meaning |"), the header and rule rows left out.
# POSIX awk (mawk, gawk, busybox).

BEGIN {
	if (out != "c" && out != "columns") {
		print "ask-schema.awk: -v out=c or -v out=columns" > "/dev/stderr"
		exit 2
	}
	keep = 0; tables = 0; table = ""; n = 0; ndoc = 0
}

/^## / {
	section = substr($0, 4)
	if (section == "Conventions")
		keep = 1
	if (section == "Example queries")
		keep = 0
	tables = section == "Tables"
	table = ""
}

keep { doc[++ndoc] = $0 }

tables && /^### `[a-z_0-9]+`/ {
	table = $2
	gsub(/[`:]/, "", table)
}

tables && table != "" && /^\| *`/ {
	cell = $0
	sub(/^\| */, "", cell)
	sub(/ *\|.*$/, "", cell)
	while (match(cell, /`[a-z_0-9]+`/)) {
		col[++n] = table "." substr(cell, RSTART + 1, RLENGTH - 2)
		cell = substr(cell, RSTART + RLENGTH)
	}
}

# [s] as the inside of a C string literal
function c_text(s,    i, c, r) {
	r = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\")
			r = r "\\\\"
		else if (c == "\"")
			r = r "\\\""
		else if (c == "\t")
			r = r "\\t"
		else
			r = r c
	}
	return r
}

END {
	if (n == 0 || ndoc == 0) {
		print "ask-schema.awk: no \"## Tables\" section with columns in " FILENAME > "/dev/stderr"
		exit 1
	}
	if (out == "columns") {
		for (i = 1; i <= n; i++)
			print col[i]
		exit 0
	}
	print "/* Generated from doc/state-schema.md by src/gpuburstctl/ask-schema.awk: do not edit. */"
	print "#include \"config.h\""
	print ""
	print "#include <stddef.h>"
	print ""
	print "#include \"ctl.h\""
	print ""
	print "const char ctl_ask_schema_doc[] ="
	for (i = 1; i <= ndoc; i++)
		print "\t\"" c_text(doc[i]) "\\n\"" (i == ndoc ? ";" : "")
	print ""
	print "const char *const ctl_ask_columns[] = {"
	for (i = 1; i <= n; i++)
		print "\t\"" col[i] "\","
	print "\tNULL"
	print "};"
}
