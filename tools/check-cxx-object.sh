#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fails when a compiled C++ object of the module needs what a kernel module
# cannot give it: static constructors or exit-time destructors (which never
# run in a module), unwind tables, or the C++ runtime library (exceptions,
# RTTI, thread-safe statics, throwing new).
# Usage: check-cxx-object.sh OBJDUMP NM OBJECT [tsan]
#   tsan: a KCSAN kernel's object: the one constructor gcc's thread sanitizer
#   adds to every instrumented object, C ones too (.init_array.00099, calling
#   __tsan_init, which the kernel defines as doing nothing), is allowed
set -eu
objdump=$1 nm=$2 obj=$3 sanitizer=${4:-}
allow='^$'
if [ "$sanitizer" = tsan ] && "$nm" -u "$obj" | grep -qw __tsan_init; then
	allow='^\.init_array\.00099$'
fi
bad=$("$objdump" -h "$obj" | awk '{print $2}' |
	grep -E '^\.(init_array|fini_array|ctors|dtors|eh_frame|gcc_except_table)' | grep -Ev "$allow" || true)
if [ -n "$bad" ]; then
	echo "$obj: forbidden sections (static constructors, destructors or unwind tables):" $bad >&2
	exit 1
fi
bad=$("$nm" -u "$obj" | awk '{print $2}' |
	grep -E '^(__cxa_|__gxx_|_Unwind_|_Zn[wa]|_ZTI|_ZTS|__dynamic_cast|_ZSt)' || true)
if [ -n "$bad" ]; then
	echo "$obj: needs the C++ runtime library:" $bad >&2
	exit 1
fi
