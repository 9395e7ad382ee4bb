#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The package test, in the QEMU guest (see test/pkg/run.sh): installs
# rtrs-server-dkms and rtrs-server-tools with dpkg -i, so that DKMS builds
# the module for the booted kernel; checks that the package has nothing of
# the test build in it (no rtrs-null, no fail_function entries: the shipped
# variant, tools/check-module.sh --shipped); loads it with modprobe, and
# rtrs-null.ko of the test build (NULL_KO) on top as the upper layer; opens a
# two-path session with rtrs-client over two soft-RoCE devices; checks
# rtrs-srv against sysfs (list -j field by field, the table, show, the
# errors and their exit statuses, disconnect, reset-stats); unloads; purges
# the packages and checks that nothing is left.
# Usage (inside the guest): guest.sh DEB_DIR CLIENT_BINARY NULL_KO [RESULTS_DIR]
#   NULL_KO: rtrs-null.ko of the test build for the booted kernel
#   (tools/build-module.sh); RESULTS_DIR, if given, gets the dpkg output and
#   DKMS's make.log.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../guest/lib.sh"
debdir=$1 client=$2 null_ko=$3 results=${4:-}
kver=$(uname -r)
class=/sys/class/rtrs-server
session=pkgtest
p1=ip:10.77.0.2@ip:10.77.0.1
p2=ip:10.78.0.2@ip:10.78.0.1
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
log=/tmp/pkgtest
mkdir -p $log
[ -n "$results" ] && [ -d "$results" ] || results=$log

# Stops here: what depends on an earlier step can't run.
abort() {
	fail "$*"
	echo "== giving up"
	finish
	exit 1
}

# expect_status STATUS MESSAGE_REGEX DESCRIPTION COMMAND...: the command exits
# with STATUS and prints a message matching MESSAGE_REGEX on stderr.
expect_status() {
	local want=$1 re=$2 desc=$3 rc
	shift 3
	"$@" >$log/out 2>$log/err
	rc=$?
	if [ $rc -ne "$want" ]; then
		fail "$desc: exit $rc, want $want (stdout: $(cat $log/out); stderr: $(cat $log/err))"
	elif [ ! -s $log/err ]; then
		fail "$desc: exit $rc but no message on stderr"
	elif ! grep -Eq "$re" $log/err; then
		fail "$desc: exit $rc, but the message does not match /$re/: $(cat $log/err)"
	else
		pass "$desc: exit $rc: $(head -n 1 $log/err)"
	fi
}

# run_ok DESCRIPTION COMMAND...: the command succeeds, with nothing on
# stderr; its stdout is left in $log/out.
run_ok() {
	local desc=$1 rc
	shift
	"$@" >$log/out 2>$log/err
	rc=$?
	if [ $rc -eq 0 ] && [ ! -s $log/err ]; then
		pass "$desc"
		return 0
	fi
	fail "$desc: exit $rc (stdout: $(cat $log/out); stderr: $(cat $log/err))"
	return 1
}

# The lines compare-json.py prints count as checks of this script.
compare_json() {
	local line
	while IFS= read -r line; do
		case $line in
		ok:*) pass "json: ${line#ok: }" ;;
		FAIL:*) fail "json: ${line#FAIL: }" ;;
		*) echo "$line" ;;
		esac
	done < <(python3 "$here/compare-json.py" "$class" "$session" "$@" 2>&1)
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
not_installed() { ! dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q " installed"; }

# dkms status -k KVER says "rtrs-server/0.1.0, KVER, x86_64: installed"
# (DKMS 3, Debian 12 on), or "rtrs-server, 0.1.0, KVER, x86_64: installed"
# (DKMS 2, Debian 11).
dkms_installed() {
	dkms status -m rtrs-server -v "$upstream" -k "$kver" 2>/dev/null |
		grep -F -e "rtrs-server/$upstream, $kver, " -e "rtrs-server, $upstream, $kver, " |
		grep -q ": installed"
}

module_files() { ls /lib/modules/*/updates/dkms/rtrs[-_]*.ko* 2>/dev/null; }

echo "== kernel $kver; packages in $debdir"
dkms_deb=$(ls "$debdir"/rtrs-server-dkms_*_all.deb 2>/dev/null)
tools_deb=$(ls "$debdir"/rtrs-server-tools_*_amd64.deb 2>/dev/null)
[ "$(echo "$dkms_deb" | wc -w)" -eq 1 ] || abort "one rtrs-server-dkms .deb in $debdir: '$dkms_deb'"
[ "$(echo "$tools_deb" | wc -w)" -eq 1 ] || abort "one rtrs-server-tools .deb in $debdir: '$tools_deb'"
version=$(dpkg-deb -f "$dkms_deb" Version)
upstream=${version%%-*}
echo "rtrs-server $version: $(basename "$dkms_deb") $(basename "$tools_deb")"
[ -f "$null_ko" ] || abort "rtrs-null.ko of the test build at '$null_ko'"

echo "== the package has nothing of the test build"
dpkg-deb -c "$dkms_deb" >$log/dkms-files
check "rtrs-server-dkms has no rtrs-null source ($(grep -Ec 'src/null|rtrs[-_]null' $log/dkms-files) entries)" \
	sh -c "! grep -Eq 'src/null|rtrs[-_]null' $log/dkms-files"
dpkg-deb --fsys-tarfile "$dkms_deb" | tar -xO --wildcards '*/dkms.conf' >$log/dkms.conf
check "its dkms.conf builds rtrs-server alone" \
	test "$(sed -n 's/^BUILT_MODULE_NAME\[[0-9]*\]="\(.*\)"$/\1/p' $log/dkms.conf)" = rtrs-server
check "its dkms.conf does not ask for the test build" sh -c "! grep -q '^MAKE.*RTRS_TEST_BUILD' $log/dkms.conf"

echo "== before: a clean system"
check "dkms is installed" installed dkms
check "dkms status is empty" test -z "$(dkms status 2>/dev/null)"
check "no rtrs-server module files under /lib/modules/*/updates/dkms" test -z "$(module_files)"
check "no rtrs-srv on PATH" sh -c '! command -v rtrs-srv'

echo "== dpkg -i (DKMS builds the modules)"
# man-db's trigger would rebuild the man page index under TCG for a minute;
# it has nothing to do with this test (the guest's writes are thrown away).
rm -f /var/lib/man-db/auto-update
# DKMS builds for the running kernel and for the newest one that has a
# /boot/config-*. Under TCG each build (and its depmod, which reads every
# module of the kernel) takes minutes, and the newest kernel gets a run of
# its own: so only the running one here, unless RTRS_PKG_ALL_KERNELS=1.
if [ "${RTRS_PKG_ALL_KERNELS:-0}" != 1 ]; then
	mkdir -p /tmp/boot-configs
	for f in /boot/config-*; do
		[ "$f" = "/boot/config-$kver" ] || mv "$f" /tmp/boot-configs/
	done
fi
# Each line of dpkg's output with the time it came (progress on the console).
stamp() {
	local line
	while IFS= read -r line; do printf '%(%T)T %s\n' -1 "$line"; done
}
t0=$SECONDS
DEBIAN_FRONTEND=noninteractive dpkg -i "$dkms_deb" "$tools_deb" 2>&1 | stamp | tee "$results/dpkg-install.log"
rc=${PIPESTATUS[0]}
install_s=$((SECONDS - t0))
for f in /var/lib/dkms/rtrs-server/"$upstream"/*/*/log/make.log; do
	[ -f "$f" ] || continue
	k=$(echo "$f" | cut -d/ -f7)
	cp "$f" "$results/dkms-make-$k.log" 2>/dev/null
	# make.log's second line is the date the build started; its mtime is
	# when make ended.
	start=$(date -d "$(sed -n 2p "$f")" +%s 2>/dev/null) &&
		echo "DKMS build (make) for $k: $(($(stat -c %Y "$f") - start)) s"
done
echo "dpkg -i took $install_s s"
[ "$rc" -eq 0 ] || abort "dpkg -i exits 0 (got $rc; see above)"
pass "dpkg -i of both packages ($install_s s)"
for p in rtrs-server-dkms rtrs-server-tools; do
	check "$p is installed" installed $p
done
check "the sources are in /usr/src/rtrs-server-$upstream" test -f "/usr/src/rtrs-server-$upstream/dkms.conf"
dkms status
check "dkms status: rtrs-server/$upstream installed for $kver" dkms_installed
m=rtrs-server
f=$(ls /lib/modules/"$kver"/updates/dkms/$m.ko* 2>/dev/null)
check "$m: module file under /lib/modules/$kver/updates/dkms ($f)" test -n "$f"
f=$(modinfo -n $m 2>&1)
check "$m: modinfo -n points into updates/dkms ($f)" \
	test "${f#/lib/modules/"$kver"/updates/dkms/}" != "$f"
vm=$(modinfo -F vermagic $m 2>&1)
check "$m: vermagic is $kver ($vm)" test "${vm%% *}" = "$kver"
check "no rtrs-null module file ($(module_files | tr '\n' ' '))" test -z "$(module_files | grep null)"
check "modprobe does not find rtrs-null" sh -c '! modinfo -n rtrs-null >/dev/null 2>&1'
ko=$(ls /lib/modules/"$kver"/updates/dkms/rtrs-server.ko* 2>/dev/null | head -n 1)
case $ko in
*.xz) xz -dc "$ko" >$log/rtrs-server.ko; ko=$log/rtrs-server.ko ;;
*.zst) zstd -qdc "$ko" >$log/rtrs-server.ko; ko=$log/rtrs-server.ko ;;
esac
"$here/../../tools/check-module.sh" --shipped "$kver" "$ko" >$log/check-module 2>&1
rc=$?
sed 's/^/  /' $log/check-module
check "DKMS's rtrs-server.ko is the shipped variant (tools/check-module.sh --shipped, above: exit $rc)" \
	test $rc -eq 0
# Secure Boot: DKMS signs what it builds with its machine owner key (DKMS 3,
# Debian 12 on: whenever it finds the kernel's sign-file; the key
# /var/lib/dkms/mok.key and its certificate mok.pub, made on first use,
# unless /etc/dkms/framework.conf names others), which an operator enrolls
# once (mokutil --import); a kernel in lockdown refuses the module unsigned.
# (DKMS's dpkg output does not say which key it used: the configuration's
# mok_certificate, else its default.)
dkms_v=$(dpkg-query -W -f='${Version}' dkms)
mok=$(sed -n 's/^[[:space:]]*mok_certificate=//p' /etc/dkms/framework.conf \
	/etc/dkms/framework.conf.d/*.conf 2>/dev/null | tail -n 1 | tr -d '"')
mok=${mok:-/var/lib/dkms/mok.pub}
signer=$(modinfo -F signer "$ko" 2>&1)
sig_key=$(modinfo -F sig_key "$ko" 2>&1)
if dpkg --compare-versions "$dkms_v" ge 3; then
	note "DKMS $dkms_v: signer '$signer', key $sig_key; DKMS's certificate: $mok"
	check "DKMS $dkms_v signed rtrs-server.ko ('$signer')" test -n "$signer"
	if [ -f "$mok" ]; then
		serial=$(openssl x509 -inform DER -in "$mok" -noout -serial 2>&1 | sed 's/^serial=//')
		subject=$(openssl x509 -inform DER -in "$mok" -noout -subject -nameopt multiline 2>&1 |
			sed -n 's/^ *commonName *= *//p')
		check "the signer is DKMS's key, $mok ('$subject')" test "$signer" = "$subject"
		# (modinfo prints the serial's bytes, openssl the number: compared
		# without colons and leading zeros)
		k=$(echo "${sig_key//:/}" | tr a-f A-F | sed 's/^0*//')
		s=$(echo "$serial" | tr a-f A-F | sed 's/^0*//')
		check "the signature's key is $mok's serial ($sig_key; $serial)" \
			test -n "$s" -a "$k" = "$s"
	else
		fail "DKMS's certificate $mok is there"
	fi
else
	skip "DKMS $dkms_v signs no module (signing came with DKMS 3): signer '${signer}'"
fi
check "rtrs-srv is /usr/sbin/rtrs-srv" test "$(command -v rtrs-srv)" = /usr/sbin/rtrs-srv
# The metrics timer (node_exporter's textfile collector): installed, not enabled.
check "the metrics service and timer are installed" \
	test -f /lib/systemd/system/rtrs-srv-metrics.service -a -f /lib/systemd/system/rtrs-srv-metrics.timer
check "the metrics timer is not enabled" test ! -e /etc/systemd/system/timers.target.wants/rtrs-srv-metrics.timer
v=$(rtrs-srv --version 2>&1)
case $v in
*" $upstream"*) pass "rtrs-srv --version: $v" ;;
*) fail "rtrs-srv --version says $upstream: $v" ;;
esac
check "the rtrs-srv(8) man page is installed" test -f /usr/share/man/man8/rtrs-srv.8.gz
expect_status 3 "rtrs-server|not loaded|No such" "rtrs-srv list without the module" rtrs-srv list

echo "== modprobe"
check "modprobe rtrs-server" modprobe rtrs-server
check "$class exists" test -d $class
srcv=$(modinfo -F srcversion rtrs-server 2>/dev/null)
check "the loaded rtrs_server is the DKMS one (srcversion $srcv)" \
	test -n "$srcv" -a "$(cat /sys/module/rtrs_server/srcversion 2>/dev/null)" = "$srcv"
check "insmod rtrs-null.ko of the test build, on the DKMS module" insmod "$null_ko"
check "rtrs_null is loaded" test -d /sys/module/rtrs_null
run_ok "rtrs-srv list with no sessions" rtrs-srv list
run_ok "rtrs-srv list -j with no sessions" rtrs-srv list -j
check "list -j with no sessions is []" test "$(cat $log/out)" = "[]"

echo "== network: dummy0/rxe0 10.77.0.0/24, dummy1/rxe1 10.78.0.0/24"
rxe_up || abort "soft-RoCE on dummy0 and dummy1 (rxe_up)"
rdma link show

echo "== a two-path session"
"$client" connect --session $session --server 10.77.0.1 --src 10.77.0.2 \
	--server 10.78.0.1 --src 10.78.0.2 --hold 1800 >$log/client.out 2>$log/client.err &
cpid=$!
# Until both paths are up, or the client has ended.
wait_for 60 paths_up_or_end $log/client.out 2 $cpid
cat $log/client.out
if ! [ "$(grep -c ' up: ' $log/client.out)" -ge 2 ]; then
	cat $log/client.err
	abort "the client brings both paths up"
fi
pass "the client brings both paths up"
check "path $p1 in sysfs" wait_exists "$class/$session/paths/$p1/stats/rdma" 30
check "path $p2 in sysfs" wait_exists "$class/$session/paths/$p2/stats/rdma" 30

echo "== rtrs-srv list -j against sysfs"
compare_json "$p1=rxe0" "$p2=rxe1"

echo "== rtrs-srv list, show"
if run_ok "rtrs-srv list" rtrs-srv list; then
	cat $log/out
	check "list: the header" grep -Eq '^SESSION +PATH +HCA +READS +WRITES +INFLIGHT' $log/out
	check "list: $p1 on rxe0/1" grep -Eq "^$session +$p1 +rxe0/1 " $log/out
	check "list: $p2 on rxe1/1" grep -Eq "^$session +$p2 +rxe1/1 " $log/out
	check "list: two rows and the header" test "$(wc -l <$log/out)" -eq 3
fi
if run_ok "rtrs-srv show $session" rtrs-srv show $session; then
	cat $log/out
	check "show: the session" grep -qx "session: $session" $log/out
	check "show: two paths" grep -Eqx "paths: +2" $log/out
	check "show: $p1" grep -qx "path: $p1" $log/out
	check "show: $p2" grep -qx "path: $p2" $log/out
	check "show: the client's address" grep -Eq "src_addr: +ip:10.77.0.2 \(client\)" $log/out
	check "show: the server's address" grep -Eq "dst_addr: +ip:10.78.0.1 \(server\)" $log/out
fi

echo "== errors"
expect_status 3 "nosuch" "show nosuch" rtrs-srv show nosuch
expect_status 3 "nosuchpath" "disconnect $session nosuchpath" rtrs-srv disconnect $session nosuchpath
expect_status 3 "nosuch" "disconnect nosuch x" rtrs-srv disconnect nosuch x
expect_status 3 "nosuch" "reset-stats nosuch" rtrs-srv reset-stats nosuch
expect_status 3 "nosuchpath" "reset-stats $session nosuchpath" rtrs-srv reset-stats $session nosuchpath
expect_status 2 "." "disconnect with no path (usage)" rtrs-srv disconnect $session
expect_status 2 "." "an unknown command (usage)" rtrs-srv frobnicate
expect_status 4 "[Pp]ermission|root" "disconnect as nobody" "${nobody[@]}" rtrs-srv disconnect $session "$p1"
expect_status 4 "[Pp]ermission|root" "reset-stats as nobody" "${nobody[@]}" rtrs-srv reset-stats $session
run_ok "list as nobody (reading needs no root)" "${nobody[@]}" rtrs-srv list -j
check "both paths are still there" \
	test -d "$class/$session/paths/$p1" -a -d "$class/$session/paths/$p2"

echo "== disconnect $p1"
# rtrs-client ends the whole session as soon as the server closes one of its
# paths (it exits 3), which would take $p2 away too. Stopped, it doesn't
# notice: what is left in sysfs is the server's doing alone. But the server
# drops a path that stays silent for 6 heartbeat periods of 5 s, so all that
# needs $p2 comes first, and the time since the stop is shown.
kill -STOP $cpid
t_stop=$(now)
if run_ok "rtrs-srv disconnect $session $p1" rtrs-srv disconnect $session "$p1"; then
	cat $log/out
	check "disconnect says what it did" grep -q "disconnecting" $log/out
fi
check "$p1 goes away" wait_gone "$class/$session/paths/$p1" 20
echo "($(elapsed "$t_stop" "" 0) s after the stop)"
sleep 1
check "$p2 stays ($(elapsed "$t_stop" "" 0) s after the stop)" test -d "$class/$session/paths/$p2"
check "the session stays" test -d "$class/$session"
if run_ok "rtrs-srv reset-stats $session" rtrs-srv reset-stats $session; then
	cat $log/out
	check "reset-stats: $p2 reset, and only it" \
		test "$(cat $log/out)" = "reset the counters of path \"$p2\" of session \"$session\""
fi
run_ok "rtrs-srv reset-stats $session $p2" rtrs-srv reset-stats $session "$p2"
st=$(cat "$class/$session/paths/$p2/stats/rdma" 2>&1)
check "$p2's counters are 0 after reset-stats ($st)" test "${st% *}" = "0 0 0 0"
compare_json "$p2=rxe1"
check "$p2 is still there ($(elapsed "$t_stop" "" 0) s after the stop)" test -d "$class/$session/paths/$p2"
kill -CONT $cpid

echo "== stopping the client"
kill -TERM $cpid 2>/dev/null
wait_pid $cpid 30
if kill -0 $cpid 2>/dev/null; then
	fail "the client exits on SIGTERM"
	kill -KILL $cpid
fi
wait $cpid
echo "client exit status $? (3: it saw $p1 closed)"
check "the session goes away" wait_gone "$class/$session" 30
run_ok "rtrs-srv list -j: no sessions" rtrs-srv list -j
check "list -j is [] again" test "$(cat $log/out)" = "[]"

echo "== modprobe -r"
check "rmmod rtrs_null" rmmod rtrs_null
check "modprobe -r rtrs-server" modprobe -r rtrs-server
check "$class gone" test ! -e $class
check "no rtrs module loaded" sh -c '! lsmod | grep -q "^rtrs_"'

echo "== dpkg -P"
t0=$SECONDS
DEBIAN_FRONTEND=noninteractive dpkg -P rtrs-server-tools rtrs-server-dkms 2>&1 | stamp | tee "$results/dpkg-purge.log"
rc=${PIPESTATUS[0]}
check "dpkg -P of both packages ($((SECONDS - t0)) s)" test "$rc" -eq 0
for p in rtrs-server-dkms rtrs-server-tools; do
	check "$p is gone" not_installed $p
done
check "dkms status is empty ($(dkms status 2>/dev/null))" test -z "$(dkms status 2>/dev/null)"
check "no module files left ($(module_files | tr '\n' ' '))" test -z "$(module_files)"
check "no /var/lib/dkms/rtrs-server" test ! -e /var/lib/dkms/rtrs-server
check "no /usr/src/rtrs-server-$upstream" test ! -e "/usr/src/rtrs-server-$upstream"
check "modprobe no longer finds rtrs-server" sh -c '! modinfo -n rtrs-server >/dev/null 2>&1'
check "no rtrs-srv on PATH" sh -c '! command -v rtrs-srv'
check "no metrics timer left" test ! -e /lib/systemd/system/rtrs-srv-metrics.timer

echo "== dpkg -i took $install_s s (with DKMS's build and depmod); the whole script $SECONDS s"
finish
