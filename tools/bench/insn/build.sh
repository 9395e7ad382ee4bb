#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build.sh DIR: the insn-count plugin (DIR/insn-count.so) and the guest's
# marker programs (DIR/insn-mark; DIR/insn-markd, the two-host mode's; static:
# the guest runs the host's binaries).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$1/insn-count.so" "$here/insn-count.c"
gcc -O2 -Wall -Wextra -Werror -static -o "$1/insn-mark" "$here/insn-mark.c"
gcc -O2 -Wall -Wextra -Werror -static -o "$1/insn-markd" "$here/insn-markd.c"
