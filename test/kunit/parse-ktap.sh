#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Checks KUnit results (KTAP) against the list of expected cases. Runs on the
# host or in the guest (POSIX sh + awk).
#
# Usage: parse-ktap.sh EXPECTED KTAP_FILE...
#   EXPECTED   lines "<suite> <case>" ('#' comments allowed)
#   KTAP_FILE  /sys/kernel/debug/kunit/<suite>/results copies, or a kernel
#              log (dmesg, with or without [timestamps])
# Prints one line per case (PASS/FAIL/SKIP/MISSING/UNEXPECTED), then
# "N passed, N failed". A failed, skipped, missing or unlisted case counts as
# failed. Exit status: 0 if none failed, 1 otherwise, 2 on usage errors.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 EXPECTED KTAP_FILE..." >&2; exit 2; }
expected=$1
shift
for f in "$expected" "$@"; do
	[ -r "$f" ] || { echo "parse-ktap: cannot read $f" >&2; exit 2; }
done
awk -v nexp_file="$expected" '
function strip(s) {
	sub(/\r$/, "", s)
	sub(/^<[0-9]+>/, "", s)			# printk level
	sub(/^\[ *[0-9]+\.[0-9]+\] /, "", s)	# printk time
	return s
}
FNR == 1 { suite = "" }
FILENAME == nexp_file {
	if ($0 ~ /^[ \t]*(#|$)/) next
	key = $1 " " $2
	if (!(key in want)) { want[key] = 1; order[++nwant] = key }
	next
}
{
	line = strip($0)
	# A suite starts: "    # Subtest: <suite>" (one level of indentation).
	if (match(line, /^    # Subtest: /)) {
		suite = substr(line, RLENGTH + 1)
		sub(/[ \t].*/, "", suite)
		next
	}
	# A case of it: "    ok 3 <case>" (6.1), "    ok 3 - <case>" (later
	# kernels), "    not ok 3 <case> # SKIP ...". Deeper lines
	# (parameterized subtests) are the case'"'"'s own business.
	if (suite != "" && line ~ /^    (not )?ok [0-9]+ /) {
		rest = line
		sub(/^    /, "", rest)
		st = (rest ~ /^not ok/) ? "FAIL" : "PASS"
		sub(/^(not )?ok [0-9]+ (- )?/, "", rest)
		name = rest
		sub(/[ \t].*/, "", name)
		if (rest ~ /# *SKIP/) st = "SKIP"
		got[suite " " name] = st
		if (!((suite " " name) in seen)) { seen[suite " " name] = 1; gorder[++ngot] = suite " " name }
		next
	}
	# The suite ends: "ok 1 - <suite>" / "ok 1 <suite>" at the top level.
	if (line ~ /^(not )?ok [0-9]+ /) suite = ""
}
END {
	pass = 0; fail = 0; missing = 0
	for (i = 1; i <= nwant; i++) {
		k = order[i]
		split(k, p, " ")
		if (!(k in got)) { printf "MISSING    %s.%s\n", p[1], p[2]; fail++; missing++; continue }
		printf "%-10s %s.%s\n", got[k], p[1], p[2]
		if (got[k] == "PASS") pass++; else fail++
	}
	for (i = 1; i <= ngot; i++) {
		k = gorder[i]
		if (k in want) continue
		split(k, p, " ")
		printf "UNEXPECTED %s.%s (%s; not in %s)\n", p[1], p[2], got[k], nexp_file
		fail++
	}
	if (nwant == 0) { print "parse-ktap: no expected cases in " nexp_file; fail++ }
	printf "%d passed, %d failed", pass, fail
	if (missing) printf " (%d of them missing)", missing
	printf "\n"
	exit fail ? 1 : 0
}
' "$expected" "$@"
