#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A checkout under /tmp works like any other: copies this checkout's files to
# a new folder under /tmp and, from there, boots a guest with the copy's
# tools/vm/run-guest, a command script of the copy and a results folder
# under /tmp too. In the guest the command checks that it runs in the copy,
# reads a file of it, and writes a result the host then reads.
# Then checks that run-guest refuses a folder the guest cannot see (/run),
# before booting, with one line that says so.
# Usage: tmp-checkout.sh SOURCE_TOP [KVER]
set -euo pipefail
src=$(cd "$1" && pwd)
kver=${2:-$("$src/tools/kernels.sh" | awk "NR == 1")}
tmp=$(mktemp -d /tmp/rtrs-checkout.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
copy=$tmp/rtrs
mkdir -p "$copy"
(cd "$src" && tar -cf - tools test) | tar -xf - -C "$copy"
token="checkout-$$-$RANDOM"
echo "$token" >"$copy/token"
cat >"$copy/in-guest.sh" <<'GUEST'
#!/bin/bash
set -eu
[ "$(pwd -P)" = "$(cd "$(dirname "$0")" && pwd -P)" ] || { echo "runs in $(pwd -P), not in the checkout"; exit 1; }
cat token >"$1/token-seen"
echo "guest read the checkout under $(pwd -P)"
GUEST
chmod +x "$copy/in-guest.sh"
fail=0
cd "$copy"
if ! tools/vm/run-guest --kver "$kver" --out "$tmp/out" -- ./in-guest.sh "$tmp/out" >"$tmp/run.log" 2>&1; then
	tail -n 30 "$tmp/run.log"
	echo "FAIL: a guest command from a checkout under /tmp failed"
	fail=1
elif [ "$(cat "$tmp/out/token-seen" 2>/dev/null)" != "$token" ]; then
	echo "FAIL: the guest did not read the checkout's file (got '$(cat "$tmp/out/token-seen" 2>/dev/null)')"
	fail=1
else
	grep 'guest read the checkout' "$tmp/out/console.log" | tr -d '\r'
	echo "ok: run-guest from $copy, results in $tmp/out"
fi

# A folder the guest has no view of is refused before any boot.
start=$SECONDS
if tools/vm/run-guest --kver "$kver" --out /run/rtrs-checkout-test -- true >"$tmp/refuse.log" 2>&1; then
	echo "FAIL: run-guest accepted a results folder under /run"
	fail=1
elif ! grep -q '/run/rtrs-checkout-test is not visible in the guest' "$tmp/refuse.log"; then
	echo "FAIL: run-guest refused /run without saying why:"; cat "$tmp/refuse.log"
	fail=1
elif [ -e /run/rtrs-checkout-test ]; then
	echo "FAIL: run-guest created /run/rtrs-checkout-test before refusing it"
	fail=1
else
	echo "ok: refused in $((SECONDS - start)) s: $(cat "$tmp/refuse.log")"
fi
exit $fail
