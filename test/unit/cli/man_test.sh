#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Checks rtrs-srv(8): groff formats it without a warning, and it documents
# every command, option and exit status that --help does.
# Usage: man_test.sh SOURCE_DIR RTRS_SRV_BINARY
set -eu
top=$1 bin=$2
page=$top/tools/rtrs-srv/rtrs-srv.8
command -v groff >/dev/null || { echo "FAIL: no groff (tools/install-deps.sh installs groff-base)"; exit 1; }
fails=0
warnings=$(groff -man -ww -z "$page" 2>&1) || true
if [ -n "$warnings" ]; then
	echo "FAIL: groff warns about $page:"
	echo "$warnings"
	fails=$((fails + 1))
fi
text=$(MANWIDTH=200 groff -man -Tutf8 -rLL=200n "$page" 2>/dev/null | sed 's/.\x08//g')
for word in list show disconnect reset-stats watch metrics admission close-refused help \
	--json --pretty --sysfs-root --debugfs-root --textfile --interval --count --help --version \
	--params-dir --file --persist --close-refused --modprobe-dir \
	RTRS_SRV_SYSFS RTRS_SRV_DEBUGFS RTRS_SRV_PARAMS RTRS_SRV_MODPROBE_DIR; do
	"$bin" --help | grep -q -- "$word" || { echo "FAIL: --help lacks $word"; fails=$((fails + 1)); }
	printf '%s\n' "$text" | grep -q -- "$word" || { echo "FAIL: the man page lacks $word"; fails=$((fails + 1)); }
done
# The sections that document a command's output in full.
for section in JSON ADMISSION; do
	printf '%s\n' "$text" | grep -qx "$section" ||
		{ echo "FAIL: the man page lacks the section $section"; fails=$((fails + 1)); }
done
# Every admission metric and refusal reason the tool prints.
for word in rtrs_server_admission_refusals_total rtrs_server_admission_allow_list \
	rtrs_server_admission_allow_entries not-allowed allow_list refused; do
	printf '%s\n' "$text" | grep -q -- "$word" || { echo "FAIL: the man page lacks $word"; fails=$((fails + 1)); }
done
for status in 0 1 2 3 4; do
	printf '%s\n' "$text" | grep -Eq "^ +$status +[A-Z]" ||
		{ echo "FAIL: the man page lacks exit status $status"; fails=$((fails + 1)); }
done
echo "man page: $fails failed"
[ "$fails" -eq 0 ]
