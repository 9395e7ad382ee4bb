#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Admission, in the guest (issue 26; README "Who may connect"): our
# rtrs-server with rtrs-null and the userspace client, and upstream's
# rnbd-client where the peers are given:
#   - rules given at load (insmod, and modprobe with modprobe.d after a
#     reload) are in effect before anything listens;
#   - a client from an address not on the allow-list is refused with
#     ECONNREFUSED and leaves nothing behind (the held counts, no folder in
#     the class, no QP of ours), while an allowed client on the same server
#     is served; a name its entry does not list is refused at the info
#     request;
#   - past the rate (a flood of connections from one address) EAGAIN, while
#     a client from another address still gets in; past a session limit
#     EDQUOT;
#   - new rules leave what is connected; admission_close closes what they
#     refuse and nothing else;
#   - refusals counted per reason in the parameter, a trace event each,
#     log lines per address and reason; a path closed by the rules is a
#     path_down (and sess_down) trace event with reason=admission;
#   - a write the module cannot see whole (a NUL byte in it, or a whole
#     page, which sysfs may have cut) is refused and changes nothing;
#   - a load refused by another parameter keeps nothing of the rules given
#     (kmemleak, on the debug kernel, at the end of its boot);
#   - upstream's rnbd-client, refused, reports the server's errno and maps
#     nothing;
#   - rtrs-srv shows the rules and the refusals (table, JSON, metrics).
# Usage: guest-run.sh MODULE_DIR CLIENT [PEERS_DIR|-] [RTRS_SRV|-]
set -uo pipefail
moddir=$1 client=$2 peers=${3:--} rtrs_srv=${4:--}
# shellcheck source=test/fault/lib.sh
. "$(dirname "$0")/../fault/lib.sh" || exit 2
params=/sys/module/rtrs_server/parameters
work=/tmp/admission
fresh_dir $work
problems0=$(problem_count)
cli3=10.77.0.3

rules() { cat $params/admission; }
# rules_are LINE...: the rules in effect (below the refusals' line) are these.
rules_are() { test "$(rules | tail -n +2)" = "$(printf '%s\n' "$@")"; }
set_rules() { printf '%s\n' "$1" >$params/admission; }
# refused REASON: the count of that reason in the parameter's first line.
refused() { rules | head -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# attempt NAME SERVER SRC [ARGS...]: one open of the client (it leaves as
# soon as its paths are up); prints its exit status and its first line of
# outcome ("path ... up: ..." or "rejected: ...").
attempt() {
	local name=$1 dst=$2 src=$3 out rc
	shift 3
	out=$("$client" connect --session "$name" --server "$dst" --src "$src" --exit-after-up \
		--quiet "$@" 2>>$work/client.err)
	rc=$?
	echo "$rc $(echo "$out" | grep -m1 -E '^(path .* up:|rejected)')"
}
# our_qps: how many QPs of ours there are (prints nothing, false, when
# rdma resource show fails: no count is not a count of 0).
our_qps() {
	local out
	out=$(rdma resource show qp 2>/dev/null) || return 1
	grep -c 'comm \[rtrs' <<<"$out" || true
}
no_qp_of_ours() { local n; n=$(our_qps) && [ "$n" -eq 0 ]; }
# refused_with REGEX CMD...: CMD fails, and what it says on stderr matches
# REGEX (the errno's text: a failure for another cause does not count).
# EINVAL is "Invalid argument", or kmod's insmod's "Invalid parameters".
einval='Invalid (argument|parameters)'
refused_with() {
	local want=$1 err
	shift
	err=$("$@" 2>&1 >/dev/null) && { echo "   (it succeeded)"; return 1; }
	[[ $err =~ $want ]] && return 0
	echo "   (it failed otherwise: $err)"
	return 1
}

step "soft-RoCE (and $cli3 on dummy0); rtrs-server with rules given at load"
rxe_up || { echo "FAIL: rxe setup"; exit 1; }
ip addr add $cli3/24 dev dummy0
wait_gids rxe0:0000:0000:0000:0000:0000:ffff:0a4d:0003 || { echo "FAIL: no GID for $cli3"; exit 1; }
at_load="allow $cli names=alpha,beta;allow $cli3;limit sessions=2"
servers_up "admission=\"$at_load\"" || { echo "FAIL: cannot load the modules"; exit 1; }
rules | sed 's/^/   /'
check "the rules given at load are in effect" \
	rules_are "allow $cli/32 names=alpha,beta" "allow $cli3/32" "limit sessions=2"
check "parameters/admission: read and written by root (0644)" test "$(stat -c %a $params/admission)" = 644
check "unloaded for the next load" servers_down
mark="admission: a bad text at load"
log_mark "$mark"
check "a bad text at load fails the load with EINVAL" \
	refused_with "$einval" insmod "$moddir/rtrs-server.ko" 'admission="allow 10.0.0.1/8"'
check "and leaves the module unloaded" test ! -e /sys/module/rtrs_server
check "saying why" log_has_after "$mark" "admission rules refused at load: line 1: "
# The rules given with a parameter the module refuses before it reads them
# (max_chunk_size, in init), or with one the loader itself cannot parse:
# either way the text kept for init is freed (the debug kernel's kmemleak
# scans at the end of the boot would see it otherwise).
check "rules with a max_chunk_size refused: the load fails" \
	sh -c "! insmod $moddir/rtrs-server.ko 'admission=\"allow $cli\"' max_chunk_size=4096 2>/dev/null"
check "rules with an always_invalidate the loader cannot parse: the load fails" \
	sh -c "! insmod $moddir/rtrs-server.ko 'admission=\"allow $cli\"' always_invalidate=maybe 2>/dev/null"
check "and leave the module unloaded" test ! -e /sys/module/rtrs_server
servers_up "admission=\"$at_load\"" || { echo "FAIL: cannot load the modules again"; exit 1; }

tracefs_up || { echo "FAIL: no tracefs"; exit 1; }
tracing=/sys/kernel/tracing
for e in conn_refused path_down sess_down; do
	echo 1 >$tracing/events/rtrs_server/$e/enable
done
: >$tracing/trace

step "an address not on the list is refused; an allowed one is served"
mark="admission: an address not on the list"
log_mark "$mark"
got=$(attempt alpha $srv2 $cli2)
check "$cli2 (not on the list): refused ECONNREFUSED ($got)" test "$got" = "2 rejected: errno -111 (ECONNREFUSED)"
check "the refusal logged with its address" \
	log_has_after "$mark" "connection request refused: the client's address is not on the allow-list (ip:$cli2)"
check "nothing of it is held (sessions, paths, connections, MRs, chunks)" held_zero 5
check "no folder in the class" class_empty
check "no QP of ours ($(our_qps || echo 'rdma resource show failed'))" no_qp_of_ours
check "a conn_refused trace event with errno -111" grep -q "conn_refused: path=ip:$cli2@ip:$srv2 err=-111 " $tracing/trace
"$client" connect --session alpha --server $srv --src $cli --quiet >$work/alpha.out 2>>$work/client.err &
alpha=$!
check "$cli (on the list) serves session alpha" wait_line $work/alpha.out ' up: ' 20
check "alpha's folder in the class" test -d $class/alpha/paths/$p1
check "not-allowed counted once" test "$(refused not-allowed)" = 1

step "a name the address's entry does not list is refused at the info request"
mark="admission: a name not listed"
log_mark "$mark"
got=$(attempt gamma $srv $cli)
check "gamma from $cli: its path closed (exit 3: $got)" test "${got%% *}" = 3
check "logged as a name not allowed" \
	log_has_after "$mark" "bad info request: the session name is not allowed for the client's address ('gamma')"
check "closed as 'admission policy'" log_has_after "$mark" "closing path $p1 (admission policy)"
check "no folder gamma" test ! -e $class/gamma
check "a path_down trace event with reason=admission" \
	grep -q "path_down: sess=[^ ]* path=$p1 reason=admission was_up=0$" $tracing/trace
check "name counted once" test "$(refused name)" = 1

step "a session limit: EDQUOT past it"
got=$(attempt beta $srv $cli)
check "beta, $cli's second session: served ($got)" test "${got%% *}" = 0
"$client" connect --session beta --server $srv --src $cli --quiet >$work/beta.out 2>>$work/client.err &
beta=$!
wait_line $work/beta.out ' up: ' 20
got=$(attempt alpha2 $srv $cli --paths-uuid "$(new_uuid)")
check "a third session of $cli: refused EDQUOT ($got)" test "$got" = "2 rejected: errno -122 (EDQUOT)"
check "sessions counted once" test "$(refused sessions)" = 1

step "new rules: a rate for $cli, what is up stays"
# (one token a minute: the bucket does not refill during the flood, however
# slowly the guest makes its connections; with 2/s it did on the debug
# kernel, and no request was refused)
check "new rules taken at once" set_rules "allow 10.77.0.0/24; limit rate=1/m burst=4"
check "alpha stays" test -d $class/alpha/paths/$p1
mark="admission: a bad text written"
log_mark "$mark"
check "a bad text is refused (EINVAL), the rules stay" \
	refused_with "$einval" bash -c "printf 'allow 10.77.0.1/16\n' >$params/admission"
check "the kernel log says why" log_has_after "$mark" "admission rules refused: line 1: "
check "the rules in effect unchanged" rules_are "allow 10.77.0.0/24" "limit rate=1/m burst=4"
# A write with a NUL in it is taken whole and refused, as any bad text (a
# parameter's set() saw the text up to the NUL: the first turned the
# allow-list into one address, the second turned it off).
nul_refusals=$(log_count "admission rules refused: line 1: a NUL byte")
check "allow, a NUL, allow 0.0.0.0/0: refused (EINVAL)" \
	refused_with "$einval" bash -c "printf 'allow 10.77.0.2\\0allow 0.0.0.0/0' >$params/admission"
check "the log says why" log_has "admission rules refused: line 1: a NUL byte" $((nul_refusals + 1))
check "the rules in effect unchanged" rules_are "allow 10.77.0.0/24" "limit rate=1/m burst=4"
check "limit, a NUL, allow: refused (EINVAL)" \
	sh -c "! printf 'limit sessions=8\\0allow 10.77.0.2' >$params/admission"
check "the rules in effect unchanged" rules_are "allow 10.77.0.0/24" "limit rate=1/m burst=4"
check "a trailing NUL alone: refused too" sh -c "! printf 'allow 10.77.0.2\\0' >$params/admission"
check "each of the three logged" log_has "admission rules refused: line 1: a NUL byte" $((nul_refusals + 3))
check "the rules in effect unchanged" rules_are "allow 10.77.0.0/24" "limit rate=1/m burst=4"
# sysfs hands a store at most a page of one write: a write of a page may
# have been longer (here a comment of 4096 bytes in one write, which taken
# would mean 'no rules': every address allowed).
check "a write of a whole page (4096 bytes): refused (EINVAL)" \
	sh -c "! head -c 4096 /dev/zero | tr '\\0' '#' |
		dd of=$params/admission bs=4096 count=1 iflag=fullblock status=none 2>/dev/null"
check "the log says why" log_has "admission rules refused: a write of 4096 bytes or more may have been cut" 1
check "the rules in effect unchanged" rules_are "allow 10.77.0.0/24" "limit rate=1/m burst=4"
# One path of 8 connections, made as fast as the client can: past the
# bucket's 4 the requests are refused.
mark="admission: a flood past the rate"
log_mark "$mark"
got=$(attempt flood $srv $cli --cons 8)
check "a path of 8 connections from $cli: refused EAGAIN ($got)" test "$got" = "2 rejected: errno -11 (EAGAIN)"
check "the rate refusal logged" \
	log_has_after "$mark" "refused: the client's address asks to connect faster than its rate limit allows (ip:$cli)"
got=$(attempt other $srv $cli3)
check "meanwhile $cli3 gets in ($got)" test "${got%% *}" = 0
check "rate counted" test "$(refused rate)" -ge 1

step "admission_close: what the rules refuse now goes, the rest stays"
set_rules "allow $cli names=beta"
check "alpha stays under the new rules until asked" test -d $class/alpha
mark="admission: admission_close"
log_mark "$mark"
check "admission_close taken" sh -c "echo 1 >$params/admission_close"
check "alpha's path closed" wait_gone $class/alpha 10
check "closed as 'admission policy'" log_has_after "$mark" "alpha: closing path $p1 (admission policy)"
check "a path_down trace event with reason=admission" \
	grep -q "path_down: sess=alpha path=$p1 reason=admission was_up=1$" $tracing/trace
check "and sess_down with reason=admission" grep -q "sess_down: sess=alpha reason=admission$" $tracing/trace
check "no reason without its name in the trace" sh -c "! grep 'reason=0x' $tracing/trace"
check "beta stays" test -d $class/beta/paths/$p1
rc=none
wait_pid $alpha 30 && { wait $alpha; rc=$?; }
check "the client of alpha saw its path closed by the server (exit 3: $rc)" test "$rc" = 3
check "admission_close takes only 1 (EINVAL)" \
	refused_with "$einval" bash -c "echo 0 >$params/admission_close"
kill $beta 2>/dev/null
wait $alpha $beta 2>/dev/null
check "beta gone when its client left" wait_class_empty 20
check "nothing held after" held_zero 10

if [ "$rtrs_srv" != - ]; then
	step "rtrs-srv: the rules and the refusals"
	check "rtrs-srv admission set" "$rtrs_srv" admission set "allow 10.77.0.0/24 names=a,b;" \
		"allow fd00::/64; limit sessions=4 rate=10/m"
	check "in effect" rules_are "allow 10.77.0.0/24 names=a,b" "allow fd00::/64" \
		"limit sessions=4 rate=10/m burst=10"
	"$rtrs_srv" admission | sed 's/^/   /'
	"$rtrs_srv" admission -j >$work/admission.json
	check "rtrs-srv admission -j: the allow-list" \
		grep -qF '"allow":[{"network":"10.77.0.0/24","family":"ipv4","names":["a","b"]}' $work/admission.json
	check "rtrs-srv admission -j: the refusals" \
		grep -qF "\"refused\":{\"not-allowed\":$(refused not-allowed)," $work/admission.json
	"$rtrs_srv" admission set 'allow 10.0.0.1/8' 2>$work/bad.err
	rc=$?
	check "rtrs-srv refuses a bad text itself, writing nothing (exit 2, its own check: $rc)" test "$rc" = 2
	check "with the module's own words" grep -qF "line 1: " $work/bad.err
	check "the rules unchanged" rules_are "allow 10.77.0.0/24 names=a,b" \
		"allow fd00::/64" "limit sessions=4 rate=10/m burst=10"
	"$rtrs_srv" metrics >$work/metrics.txt
	check "metrics: the not-allowed refusals ($(refused not-allowed))" \
		grep -qx "rtrs_server_admission_refusals_total{reason=\"not-allowed\"} $(refused not-allowed)" $work/metrics.txt
	check "metrics: the rate refusals ($(refused rate))" \
		grep -qx "rtrs_server_admission_refusals_total{reason=\"rate\"} $(refused rate)" $work/metrics.txt
else
	skip "rtrs-srv not given: its admission command is not run here"
fi

if [ "$peers" != - ]; then
	step "upstream rnbd-client, refused, reports the server's errno and maps nothing"
	servers_down || { echo "FAIL: cannot unload"; exit 1; }
	modprobe null_blk || exit 1
	insmod_deps "$moddir/rtrs-server.ko" "admission=\"allow $cli\"" &&
		insmod "$peers/rnbd-against/rnbd-server.ko" &&
		insmod "$peers/src/rtrs/rtrs-core.ko" &&
		insmod "$peers/src/rtrs/rtrs-client.ko" &&
		insmod "$peers/src/rnbd/rnbd-client.ko" || { echo "FAIL: cannot load rnbd"; exit 1; }
	before=$(rnbd_devices)
	err=$( (echo "sessname=refused path=ip:$cli2@ip:$srv2 device_path=/dev/nullb0" \
		>/sys/devices/virtual/rnbd-client/ctl/map_device) 2>&1)
	check "the map fails with the server's errno (${err##*: })" test "${err##*: }" = "Connection refused"
	check "no rnbd device made" test "$(rnbd_devices)" = "$before"
	check "no session in our class" class_empty
	dev=$(map allowed /dev/nullb0)
	check "an allowed path maps ($dev)" test -b "$dev"
	check "its session in our class" test -d $class/allowed
	[ -b "$dev" ] && echo normal >"/sys/block/${dev#/dev/}/rnbd/unmap_device"
	check "unmapped" wait_class_empty 20
	for m in rnbd_client rtrs_client rtrs_core rnbd_server; do rmmod $m || fail "rmmod $m"; done
else
	skip "no peers given (the debug kernel's boot): upstream rnbd-client's refusal is not run here"
fi

step "persistent rules: modprobe.d, read when the module is loaded again"
servers_down || { echo "FAIL: cannot unload"; exit 1; }
kver=$(uname -r)
mods=$work/modules
mkdir -p $mods/lib/modules/$kver/extra
cp "$moddir/rtrs-server.ko" $mods/lib/modules/$kver/extra/
depmod -b $mods "$kver"
conf=/etc/modprobe.d/rtrs-server-admission.conf
load_deps "$moddir/rtrs-server.ko"
if [ "$rtrs_srv" != - ]; then
	insmod "$moddir/rtrs-server.ko" &&
		check "rtrs-srv admission set --persist" "$rtrs_srv" admission set --persist "allow $cli3; limit paths=2"
	sed 's/^/   /' $conf
	rmmod rtrs_server
else
	echo "options rtrs_server admission=\"allow $cli3; limit paths=2\"" >$conf
fi
check "modprobe loads it" modprobe -d $mods rtrs-server
check "the rules from modprobe.d are in effect" rules_are "allow $cli3/32" "limit paths=2"
if [ "$rtrs_srv" != - ]; then
	check "back to the default, persisted" "$rtrs_srv" admission set --persist ""
	check "which removes the file" test ! -e $conf
	check "in effect" rules_are "# no allow rule: every address may connect" "# no limit"
fi
rm -f $conf
check "unloaded" rmmod rtrs_server
for e in conn_refused path_down sess_down; do
	f=$tracing/events/rtrs_server/$e/enable
	[ -e "$f" ] && echo 0 >"$f"
done

no_new_problems "$problems0" "the admission suite"
finish
