#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Module signatures for the debug kernel (tools/debug-kernel/build.sh), whose
# boots run with module.sig_enforce=1: it trusts one test key, made by its
# build (certs/signing_key.pem and .x509 in the build folder), and refuses a
# module without a valid signature by a key it trusts. Signs with the
# kernel's own scripts/sign-file and the hash of its .config.
#
# Usage: sign.sh KO...                 sign each module with the test key,
#                                      in place; one already signed is left
#                                      as it is (a rebuild that changed
#                                      nothing signs nothing)
#        sign.sh --key PEM CERT KO...  the same with another key (PEM: the
#                                      private key; CERT its certificate)
#        sign.sh --unsigned KO OUT     write KO without its signature to OUT
#        sign.sh --new-key PEM CERT    make a throwaway key that the kernel
#                                      does not trust (if PEM is not there)
# The debug kernel must be built (build.sh --check).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "sign.sh: $*" >&2; exit 1; }
marker='~Module signature appended~'

env=$("$here/build.sh" --check 2>/dev/null) || die "the debug kernel is not built (tools/debug-kernel/build.sh)"
eval "$env"
kbuild=$RTRS_DEBUG_KERNEL_BUILD
sign_file=$kbuild/scripts/sign-file
hash=$(sed -n 's/^CONFIG_MODULE_SIG_HASH="\(.*\)"$/\1/p' "$kbuild/.config")
[ -n "$hash" ] || die "the debug kernel has no CONFIG_MODULE_SIG_HASH (no module signing)"
[ -x "$sign_file" ] || die "no $sign_file"

signed() { tail -c 28 "$1" | cmp -s - <(printf '%s\n' "$marker"); }

# The appended signature: the PKCS#7 message, then a 12-byte trailer whose
# last 4 bytes are the message's length (big-endian), then the marker.
strip_signature() { # KO OUT
	local size tail sig_len
	size=$(stat -c %s "$1")
	tail=$(tail -c 32 "$1" | head -c 4 | od -An -tu1 | tr -s ' ')
	read -r a b c d <<<"$tail"
	sig_len=$(((a << 24) | (b << 16) | (c << 8) | d))
	[ "$sig_len" -gt 0 ] && [ "$sig_len" -lt "$size" ] || die "$1: bad signature length $sig_len"
	head -c $((size - 28 - 12 - sig_len)) "$1" >"$2.tmp"
	mv -f "$2.tmp" "$2"
}

key=$kbuild/certs/signing_key.pem cert=$kbuild/certs/signing_key.x509
case "${1:-}" in
--unsigned)
	[ $# -eq 3 ] || die "usage: sign.sh --unsigned KO OUT"
	if signed "$2"; then strip_signature "$2" "$3"; else cp -f "$2" "$3"; fi
	signed "$3" && die "$3 is still signed"
	exit 0 ;;
--new-key)
	[ $# -eq 3 ] || die "usage: sign.sh --new-key PEM CERT"
	[ -s "$2" ] && [ -s "$3" ] && exit 0
	openssl req -new -nodes -utf8 -x509 -days 36500 -batch -newkey rsa:2048 -"$hash" \
		-subj "/CN=rtrs-server untrusted test key (not a secret)" \
		-keyout "$2" -outform DER -out "$3" 2>/dev/null || die "openssl could not make a key"
	exit 0 ;;
--key)
	[ $# -ge 4 ] || die "usage: sign.sh --key PEM CERT KO..."
	key=$2 cert=$3
	shift 3 ;;
'' | -*) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac

for ko in "$@"; do
	[ -f "$ko" ] || die "no module $ko"
	signed "$ko" && continue
	"$sign_file" "$hash" "$key" "$cert" "$ko" || die "sign-file failed on $ko"
	signed "$ko" || die "$ko: sign-file left no signature"
	echo "signed $ko ($hash, $(basename "$cert"))"
done
