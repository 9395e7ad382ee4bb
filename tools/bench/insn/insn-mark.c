// SPDX-License-Identifier: GPL-2.0
/*
 * insn-mark: runs the marker instruction of the insn-count plugin once
 * (xchg %r15,%r15: the plugin dumps and zeroes its counts). Without the
 * plugin it does nothing.
 */
#include "insn-marker.h"

int main(void)
{
	insn_marker();
	return 0;
}
