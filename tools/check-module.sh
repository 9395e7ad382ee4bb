#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Checks a built rtrs-server.ko against its kernel without loading it:
#  - every undefined symbol is exported by that kernel (Module.symvers), so
#    nothing of libstdc++, libgcc or the C++ ABI slipped in;
#  - modinfo shows license, description, version and the four parameters;
#  - it exports the six rtrs_srv_* functions and nothing else.
# Usage: check-module.sh KVER KO
set -eu
kver=$1 ko=$2
symvers=/lib/modules/$kver/build/Module.symvers
fail=0
missing=$(nm -u "$ko" | awk '{print $2}' | while read -r sym; do
	# __fentry__ and friends are exported by vmlinux like any other symbol.
	awk -v s="$sym" '$2 == s { found = 1 } END { exit !found }' "$symvers" || echo "$sym"
done)
if [ -n "$missing" ]; then
	echo "FAIL: undefined symbols that $kver does not export:" $missing >&2
	fail=1
else
	echo "ok: all $(nm -u "$ko" | wc -l) undefined symbols are exports of $kver"
fi
info=$(modinfo "$ko")
for field in license description version vermagic; do
	if ! printf '%s\n' "$info" | grep -q "^$field:"; then
		echo "FAIL: modinfo has no $field" >&2
		fail=1
	fi
done
printf '%s\n' "$info" | grep -q "^license: *GPL$" || { echo "FAIL: license is not GPL" >&2; fail=1; }
printf '%s\n' "$info" | grep -q "^vermagic: *$kver " || { echo "FAIL: vermagic is not $kver" >&2; fail=1; }
for p in always_invalidate:bool max_chunk_size:int sess_queue_depth:int max_chunk_mem_mb:uint signal_interval:uint; do
	name=${p%%:*} type=${p#*:}
	if printf '%s\n' "$info" | grep -Eq "^parm: *$name:.+ \($type\)$"; then
		echo "ok: parameter $name ($type) is described"
	else
		echo "FAIL: modinfo lacks parameter $name of type $type with a description" >&2
		fail=1
	fi
done
# Exactly the six functions of the upstream server API are exported, so that
# the module can share a kernel with upstream's rtrs-core and rtrs-client.
want="rtrs_srv_close rtrs_srv_get_path_name rtrs_srv_get_queue_depth rtrs_srv_open rtrs_srv_resp_rdma rtrs_srv_set_sess_priv"
got=$(nm "$ko" | awk '$3 ~ /^__ksymtab_/ { sub(/^__ksymtab_/, "", $3); print $3 }' | sort | paste -sd' ')
if [ "$got" = "$want" ]; then
	echo "ok: exports exactly: $got"
else
	echo "FAIL: exports are '$got', expected '$want'" >&2
	fail=1
fi
exit $fail
