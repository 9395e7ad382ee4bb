// SPDX-License-Identifier: GPL-2.0
/*
 * insn-count: a QEMU TCG plugin (API version 1, QEMU 7.2) counting the
 * instructions a guest executes, per guest virtual address, in the module
 * area of x86-64 Linux, plus the whole guest's and the kernel's totals.
 *
 * Protocol (doc/benchmarks.md, "Instructions per I/O (insn.sh)"): the
 * guest runs `insn-mark`, which executes the marker instruction
 * `xchg %r15,%r15` (4d 87 ff) in user mode.
 * Each time the marker runs, the plugin writes the counts gathered since the
 * previous marker to OUT/dump-NNNN.txt (NNNN counts markers from 1) and
 * zeroes them. The guest keeps the labels of its markers itself.
 *
 * Counters are plain inline adds (not atomic): boot the counted guest with
 * one vCPU (the plugin refuses more).
 *
 * Arguments: out=DIR (required).
 * The API is declared here (the few calls used), as in QEMU 7.2's
 * include/qemu/qemu-plugin.h; QEMU checks qemu_plugin_version at load.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn-marker.h"

/* --- the QEMU plugin API, version 1 (the part used) --- */
typedef uint64_t qemu_plugin_id_t;
typedef struct {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
						enum qemu_plugin_op op, void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* --- the counters --- */
#define MOD_LO 0xffffffffc0000000ull /* x86-64 module area */
#define MOD_HI 0xffffffffff000000ull
#define KERN_LO 0xffff800000000000ull
#define SLOTS (1u << 21) /* open addressing; never moved, so inline adds may point in */

struct slot {
	uint64_t vaddr; /* 0: free */
	uint64_t count;
};
static struct slot *slots;
static unsigned used;
static uint64_t total, kernel; /* every guest instruction, those at kernel addresses */
static unsigned markers;
static char out_dir[4096];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const unsigned char marker[] = { INSN_MARKER_BYTES }; /* insn-marker.h */

static struct slot *slot_of(uint64_t vaddr)
{
	uint64_t h = vaddr * 0x9e3779b97f4a7c15ull;
	unsigned i = (unsigned)(h >> 43) & (SLOTS - 1);

	for (;;) {
		if (slots[i].vaddr == vaddr)
			return &slots[i];
		if (!slots[i].vaddr) {
			if (used + 1 >= SLOTS / 2)
				return NULL;
			used++;
			slots[i].vaddr = vaddr;
			return &slots[i];
		}
		i = (i + 1) & (SLOTS - 1);
	}
}

/* the marker ran: write what was counted since the last one, zero it */
static void on_marker(unsigned int vcpu, void *udata)
{
	char path[4200], msg[4400];
	FILE *f;
	unsigned i, n = 0;

	(void)vcpu;
	(void)udata;
	pthread_mutex_lock(&lock);
	markers++;
	snprintf(path, sizeof(path), "%s/dump-%04u.txt", out_dir, markers);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "total %" PRIu64 "\nkernel %" PRIu64 "\n", total, kernel);
		for (i = 0; i < SLOTS; i++) {
			if (slots[i].vaddr && slots[i].count) {
				fprintf(f, "%" PRIx64 " %" PRIu64 "\n", slots[i].vaddr, slots[i].count);
				n++;
			}
		}
		fclose(f);
	}
	for (i = 0; i < SLOTS; i++)
		slots[i].count = 0;
	total = kernel = 0;
	pthread_mutex_unlock(&lock);
	snprintf(msg, sizeof(msg), "insn-count: marker %u: %u addresses to %s%s\n", markers, n,
		 path, f ? "" : " (cannot write)");
	qemu_plugin_outs(msg);
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	uint64_t pc = qemu_plugin_tb_vaddr(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &total, n);
	if (pc >= KERN_LO)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &kernel, n);
	pthread_mutex_lock(&lock);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);

		if (va >= MOD_LO && va < MOD_HI) {
			struct slot *s = slot_of(va);

			if (s)
				qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
									   &s->count, 1);
		} else if (va < KERN_LO && qemu_plugin_insn_size(insn) == sizeof(marker) &&
			   !memcmp(qemu_plugin_insn_data(insn), marker, sizeof(marker))) {
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
		}
	}
	pthread_mutex_unlock(&lock);
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	char msg[128];

	(void)id;
	(void)udata;
	snprintf(msg, sizeof(msg), "insn-count: %u markers, %u module addresses seen%s\n", markers,
		 used, used + 1 >= SLOTS / 2 ? " (table full: counts incomplete)" : "");
	qemu_plugin_outs(msg);
}

__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			snprintf(out_dir, sizeof(out_dir), "%s", argv[i] + 4);
	}
	if (!out_dir[0]) {
		qemu_plugin_outs("insn-count: out=DIR is required\n");
		return -1;
	}
	if (!info->system_emulation || info->system.max_vcpus != 1) {
		qemu_plugin_outs("insn-count: counts one vCPU of a system guest (-smp 1)\n");
		return -1;
	}
	slots = calloc(SLOTS, sizeof(*slots));
	if (!slots)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
