#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Module signatures, in a boot of the debug kernel with module.sig_enforce=1
# (what a server with Secure Boot gets from its lockdown): the kernel
# trusts one test key (tools/debug-kernel: certs/signing_key.x509 of its
# build) and test/debug/run.sh signed our modules with it
# (tools/debug-kernel/sign.sh). Checks that the boot enforces signatures;
# that the same rtrs-server.ko without its signature, and signed by a key
# the kernel does not trust, are refused with the kernel's error
# (EKEYREJECTED, "Loading of unsigned module is rejected", "... module with
# unavailable key ..."), leaving nothing loaded; that the signed one names
# the test key as its signer, loads, and rtrs-null (signed) on top of it.
# The suites after this one in the same boot (ABI, I/O, admission) load
# the same signed modules.
# Usage (inside the guest): signing.sh MODULE_DIR
#   MODULE_DIR: rtrs-server.ko and rtrs-null.ko (signed),
#   unsigned/rtrs-server.ko, other-key/rtrs-server.ko (test/debug/run.sh module)
set -u
. "$(dirname "$0")/../guest/lib.sh"
moddir=$1
class=/sys/class/rtrs-server
kver=$(uname -r)
cert=/lib/modules/$kver/build/certs/signing_key.x509
work=/tmp/signing
fresh_dir $work

for f in "$moddir/rtrs-server.ko" "$moddir/rtrs-null.ko" "$moddir/unsigned/rtrs-server.ko" \
	"$moddir/other-key/rtrs-server.ko" "$cert"; do
	[ -f "$f" ] || { echo "FAIL: no $f"; exit 1; }
done

step "the boot enforces module signatures"
enforce=$(cat /sys/module/module/parameters/sig_enforce 2>&1)
check "sig_enforce is Y ($enforce; the command line: $(grep -o 'module.sig_enforce=[^ ]*' /proc/cmdline))" \
	test "$enforce" = Y

# The key the kernel trusts: its certificate's subject and serial number,
# which a module's signature names (modinfo's signer and sig_key).
subject=$(openssl x509 -inform DER -in "$cert" -noout -subject -nameopt multiline |
	sed -n 's/^ *commonName *= *//p')
serial=$(openssl x509 -inform DER -in "$cert" -noout -serial | sed 's/^serial=//')
note "the kernel's test key: '$subject', serial $serial"
[ -n "$subject" ] && [ -n "$serial" ] || { echo "FAIL: cannot read $cert"; exit 1; }
# sig_key is printed as colon-separated bytes, openssl's serial as one hex
# number: compared without colons and leading zeros.
shopt -s extglob
hexnum() { local h=${1//:/}; h=${h^^}; h=${h##+(0)}; echo "${h:-0}"; }

step "what the three copies of rtrs-server.ko carry"
signer=$(modinfo -F signer "$moddir/rtrs-server.ko")
sig_key=$(modinfo -F sig_key "$moddir/rtrs-server.ko")
check "the signed module's signer is the test key ('$signer')" test "$signer" = "$subject"
check "the signed module's key is the test key's serial ($sig_key)" \
	test "$(hexnum "$sig_key")" = "$(hexnum "$serial")"
check "its hash is sha256 ($(modinfo -F sig_hashalgo "$moddir/rtrs-server.ko"))" \
	test "$(modinfo -F sig_hashalgo "$moddir/rtrs-server.ko")" = sha256
check "rtrs-null.ko is signed by the test key too" \
	test "$(modinfo -F signer "$moddir/rtrs-null.ko")" = "$subject"
check "unsigned/rtrs-server.ko has no signature ($(modinfo -F signer "$moddir/unsigned/rtrs-server.ko"))" \
	test -z "$(modinfo -F signer "$moddir/unsigned/rtrs-server.ko")"
check "it is the same module (srcversion)" test "$(modinfo -F srcversion "$moddir/unsigned/rtrs-server.ko")" = \
	"$(modinfo -F srcversion "$moddir/rtrs-server.ko")"
other=$(modinfo -F signer "$moddir/other-key/rtrs-server.ko")
check "other-key/rtrs-server.ko is signed by another key ('$other')" \
	test -n "$other" -a "$other" != "$subject"

# refused KO LOG_LINE WHAT: insmod fails with the kernel's
# EKEYREJECTED, LOG_LINE appears once more in the kernel log, and nothing
# of the module is loaded.
refused() {
	local ko=$1 line=$2 what=$3 before rc
	before=$(log_count "$line")
	insmod "$ko" >$work/out 2>$work/err
	rc=$?
	note "insmod: exit $rc: $(cat $work/err)"
	check "$what: insmod fails" test $rc -ne 0
	check "$what: with the kernel's EKEYREJECTED ('Key was rejected by service')" \
		grep -q 'Key was rejected by service' $work/err
	check "$what: the kernel log says '$line'" test "$(log_count "$line")" -eq $((before + 1))
	check "$what: rtrs_server is not loaded" test ! -e /sys/module/rtrs_server
	check "$what: no $class" test ! -e $class
	[ -d /sys/module/rtrs_server ] && rmmod rtrs_server
}

step "the module's dependencies (the kernel's own modules, signed at its build)"
check "load_deps ($(modinfo -F depends "$moddir/rtrs-server.ko"))" load_deps "$moddir/rtrs-server.ko"

step "rtrs-server.ko without its signature"
refused "$moddir/unsigned/rtrs-server.ko" "Loading of unsigned module is rejected" "unsigned"

step "rtrs-server.ko signed by a key the kernel does not trust"
refused "$moddir/other-key/rtrs-server.ko" "Loading of module with unavailable key is rejected" "another key"

step "rtrs-server.ko and rtrs-null.ko signed by the test key"
if insmod "$moddir/rtrs-server.ko" 2>$work/err; then
	pass "insmod of the signed rtrs-server.ko"
else
	fail "insmod of the signed rtrs-server.ko: $(cat $work/err)"
fi
check "$class exists" test -d $class
taint=$(cat /sys/module/rtrs_server/taint 2>/dev/null)
check "rtrs_server is loaded, its taint flags without E (unsigned) ('$taint')" \
	test -d /sys/module/rtrs_server -a "${taint/E/}" = "$taint"
check "insmod of the signed rtrs-null.ko" insmod "$moddir/rtrs-null.ko"
check "unload rtrs_null and rtrs_server" servers_down
check "$class gone" test ! -e $class

finish
