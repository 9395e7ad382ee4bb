#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Checks a built rtrs-server.ko against its kernel without loading it:
#  - every undefined symbol is exported by that kernel (Module.symvers), so
#    nothing of libstdc++, libgcc or the C++ ABI slipped in;
#  - modinfo shows license, description, version and the four parameters;
#  - it exports the six rtrs_srv_* functions and nothing else: with
#    --upstream, exactly those that upstream's server of the same release
#    exports (its rtrs-srv.c; 5.10's differ from 6.1's), else 6.1's;
#  - it is the variant it should be (Kbuild's RTRS_TEST_BUILD): the test
#    variant (tools/build-module.sh) says so in modinfo (test_build) and, on
#    a kernel with CONFIG_FUNCTION_ERROR_INJECTION, has fail_function entries
#    (section _error_injection_whitelist); with --shipped (what DKMS builds)
#    it has neither, and no rtrs-null.ko lies beside it.
# Usage: check-module.sh [--shipped] [--upstream RTRS_SRV_C] KVER KO
#   KVER  a kernel version, or a series (6.1: the newest installed)
set -eu
shipped=0 upstream=
while [ $# -gt 2 ]; do
	case $1 in
	--shipped) shipped=1; shift ;;
	--upstream) upstream=$2; shift 2 ;;
	*) echo "usage: $0 [--shipped] [--upstream RTRS_SRV_C] KVER KO" >&2; exit 2 ;;
	esac
done
kver=$1 ko=$2
case $kver in *.*.*) ;; *) kver=$("$(dirname "$0")/kernels.sh" --series "$kver") ;; esac
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
if [ -n "$upstream" ]; then
	want=$(sed -n 's/^EXPORT_SYMBOL\(_GPL\)\{0,1\}(\(rtrs_srv_[a-z_]*\));.*/\2/p' "$upstream" | sort | paste -sd' ')
	[ "$(echo "$want" | wc -w)" -eq 6 ] ||
		{ echo "FAIL: $upstream exports '$want', not six rtrs_srv_* functions: not read right" >&2; exit 1; }
	echo "upstream's server of this release exports: $want"
else
	# Upstream's server exports rtrs_srv_get_sess_name up to 5.10 (Debian
	# 11) and rtrs_srv_get_path_name from 6.1 on (its rtrs-srv.c of each).
	name=rtrs_srv_get_path_name
	case $kver in 5.10.*) name=rtrs_srv_get_sess_name ;; esac
	want=$(printf '%s\n' rtrs_srv_close $name rtrs_srv_get_queue_depth rtrs_srv_open \
		rtrs_srv_resp_rdma rtrs_srv_set_sess_priv | sort | paste -sd' ')
fi
got=$(nm "$ko" | awk '$3 ~ /^__ksymtab_/ { sub(/^__ksymtab_/, "", $3); print $3 }' | sort | paste -sd' ')
if [ "$got" = "$want" ]; then
	echo "ok: exports exactly: $got"
else
	echo "FAIL: exports are '$got', expected '$want'" >&2
	fail=1
fi
marker=$(printf '%s\n' "$info" | grep '^test_build:' || true)
entries=$(readelf -SW "$ko" | grep -c ' _error_injection_whitelist ' || true)
config=/lib/modules/$kver/build/.config
if [ $shipped = 1 ]; then
	[ -z "$marker" ] && echo "ok: shipped variant: modinfo has no test_build" ||
		{ echo "FAIL: shipped variant, but modinfo says $marker" >&2; fail=1; }
	[ "$entries" -eq 0 ] && echo "ok: shipped variant: no _error_injection_whitelist section" ||
		{ echo "FAIL: shipped variant, but it has fail_function entries (_error_injection_whitelist)" >&2; fail=1; }
	null=$(ls "$(dirname "$ko")"/rtrs-null.ko* 2>/dev/null || true)
	[ -z "$null" ] && echo "ok: shipped variant: no rtrs-null.ko beside it" ||
		{ echo "FAIL: shipped variant, but $null lies beside it" >&2; fail=1; }
else
	[ -n "$marker" ] && echo "ok: test variant: $marker" ||
		{ echo "FAIL: modinfo has no test_build: not the test variant (make RTRS_TEST_BUILD=1)" >&2; fail=1; }
	if grep -q '^CONFIG_FUNCTION_ERROR_INJECTION=y' "$config" 2>/dev/null; then
		[ "$entries" -eq 1 ] && echo "ok: test variant: fail_function entries (_error_injection_whitelist)" ||
			{ echo "FAIL: test variant without fail_function entries on a kernel that has them" >&2; fail=1; }
	else
		echo "ok: $kver has no CONFIG_FUNCTION_ERROR_INJECTION: no fail_function entries expected"
	fi
fi
exit $fail
