#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Checks the bash completion of rtrs-srv against a fake sysfs tree: what
# _rtrs_srv puts in COMPREPLY for a command line typed so far.
# Usage: completion_test.sh SOURCE_DIR [RTRS_SRV_BINARY]
set -eu
top=$1
command -v bash >/dev/null || { echo "FAIL: no bash"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtrs-srv-completion.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$(sh "$top/test/unit/cli/make-fake-tree.sh" "$tmp")
mkdir -p "$root/odd:name \"q\"/paths/ip:10.0.0.9@ip:10.0.0.1"

exec bash -c '
set -u
. "$1/tools/rtrs-srv/rtrs-srv.bash-completion"
root=$2
fails=0 passes=0
# check LINE EXPECTED...: completing at the end of LINE gives EXPECTED.
check() {
	local line=$1
	shift
	COMP_LINE=$line COMP_POINT=${#line}
	COMPREPLY=()
	_rtrs_srv
	local got expected
	got=$(printf "%s|" "${COMPREPLY[@]}")
	expected=$(printf "%s|" "$@")
	if [ "$got" = "$expected" ]; then
		passes=$((passes + 1))
	else
		echo "FAIL: [$line]"
		echo "   got:      $got"
		echo "   expected: $expected"
		fails=$((fails + 1))
	fi
}
export RTRS_SRV_SYSFS=$root
check "rtrs-srv " list show disconnect reset-stats watch metrics admission help
check "rtrs-srv re" reset-stats
check "rtrs-srv -j l" list
check "rtrs-srv --" --json --pretty --sysfs-root --debugfs-root --help --version
check "rtrs-srv metrics --t" --textfile
check "rtrs-srv metrics --p" --pretty --params-dir
check "rtrs-srv a" admission
check "rtrs-srv admission " show set close-refused
check "rtrs-srv -j admission s" show set
check "rtrs-srv admission c" close-refused
check "rtrs-srv admission --pa" --params-dir
check "rtrs-srv admission set --p" --pretty --params-dir --persist
check "rtrs-srv admission set --c" --close-refused
check "rtrs-srv admission set --persist --m" --modprobe-dir
check "rtrs-srv admission set --f" --file
check "rtrs-srv admission show --p" --pretty --params-dir
: >"$root/../rules.txt"
check "rtrs-srv admission set -f $root/../rul" "$root/../rules.txt"
check "rtrs-srv admission set --file $root/../rul" "$root/../rules.txt"
check "rtrs-srv --params-dir $root/../rul"
check "rtrs-srv --params-dir $root/le" "$root/legacy"
check "rtrs-srv admission set --modprobe-dir $root/le" "$root/legacy"
check "rtrs-srv --params-dir /nonexistent admission " show set close-refused
check "rtrs-srv admission set allow "
check "rtrs-srv admission show "
check "rtrs-srv watch --i" --interval
check "rtrs-srv watch -i 1 --c" --count
check "rtrs-srv help d" disconnect
check "rtrs-srv show " "backup\\ 1" legacy "odd:name\\ \\\"q\\\"" vm-images
check "rtrs-srv show b" "backup\\ 1"
check "rtrs-srv show \"b" "backup 1"
check "rtrs-srv show '\''odd" "odd:name \"q\""
check "rtrs-srv show odd:n" "name\\ \\\"q\\\""
check "rtrs-srv show x" 
check "rtrs-srv disconnect backup\\ 1 " ip:10.77.0.2@ip:10.77.0.1 ip:10.77.1.2@ip:10.77.1.1
check "rtrs-srv disconnect \"backup 1\" i" ip:10.77.0.2@ip:10.77.0.1 ip:10.77.1.2@ip:10.77.1.1
# readline keeps what comes before the last ":" of the word
check "rtrs-srv reset-stats \"backup 1\" ip:10.77.1.2@ip:" 10.77.1.1
check "rtrs-srv reset-stats vm-images ip:fd00::" 2@ip:fd00::1
check "rtrs-srv reset-stats odd:name\\ \\\"q\\\" " ip:10.0.0.9@ip:10.0.0.1
check "rtrs-srv reset-stats legacy ip:10.77.0.3@ip:10.77.0.1 "
check "rtrs-srv list " 
check "rtrs-srv --sysfs-root /nonexistent show " 
check "rtrs-srv --sysfs-root $root show l" legacy
check "rtrs-srv show -- " "backup\\ 1" legacy "odd:name\\ \\\"q\\\"" vm-images
unset RTRS_SRV_SYSFS
check "rtrs-srv --sysfs-root=$root show v" vm-images
echo "completion: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
' completion_test "$top" "$root"
