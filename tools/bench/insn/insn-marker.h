/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The insn-count plugin's marker instruction, once for the plugin that
 * looks for it and the guest programs that run it: xchg %r15,%r15, which
 * no compiler emits, so only these programs execute it.
 */
#ifndef INSN_MARKER_H
#define INSN_MARKER_H

#define INSN_MARKER_BYTES 0x4d, 0x87, 0xff
#define INSN_MARKER_STR_(...) #__VA_ARGS__
#define INSN_MARKER_STR(...) INSN_MARKER_STR_(__VA_ARGS__)

/* runs the marker once (without the plugin it does nothing) */
static inline void insn_marker(void)
{
	__asm__ volatile(".byte " INSN_MARKER_STR(INSN_MARKER_BYTES) ::: "r15", "memory");
}

#endif
