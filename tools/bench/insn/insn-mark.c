// SPDX-License-Identifier: GPL-2.0
/*
 * insn-mark: runs the marker instruction of the insn-count plugin once
 * (xchg %r15,%r15: the plugin dumps and zeroes its counts). Without the
 * plugin it does nothing.
 */
int main(void)
{
	__asm__ volatile(".byte 0x4d, 0x87, 0xff" ::: "r15", "memory");
	return 0;
}
