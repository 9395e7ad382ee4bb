// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs-server-kunit.ko, part three: the C++ core running in the kernel,
 * built with the module's flags (src/core/params.o and src/core/addr.o, as
 * rtrs-server.ko has them; addr.o through core_shim.cpp, since its
 * functions are C++). The host tests cover the logic; these check that the
 * same objects behave in the kernel, in atomic context too, and that the
 * core's address text is the kernel's own (%pI4, %pI6c, %pI6), which the
 * host tests cannot ask.
 */
#include <kunit/test.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/kernel.h>
#include <linux/prandom.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "core/rtrs_core.h"
#include "core_shim.h"

/* ===== suite rtrs_srv_core ============================================================ */

static void expect_params_ok(struct kunit *test, int chunk, int depth)
{
	char msg[160] = "";

	KUNIT_EXPECT_EQ_MSG(test, rtrs_core_check_params(chunk, depth, msg, sizeof(msg)), 0,
			    "max_chunk_size %d sess_queue_depth %d: %s", chunk, depth, msg);
}

/* Refused with -EINVAL, and the reason names what is wrong. */
static void expect_params_bad(struct kunit *test, int chunk, int depth, const char *why)
{
	char msg[160];

	memset(msg, 0x5a, sizeof(msg));
	KUNIT_EXPECT_EQ_MSG(test, rtrs_core_check_params(chunk, depth, msg, sizeof(msg)), -EINVAL,
			    "max_chunk_size %d sess_queue_depth %d", chunk, depth);
	KUNIT_EXPECT_NOT_NULL_MSG(test, memchr(msg, '\0', sizeof(msg)), "not terminated");
	msg[sizeof(msg) - 1] = '\0';
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(msg, why), "\"%s\" lacks \"%s\"", msg, why);
	KUNIT_EXPECT_NULL_MSG(test, strchr(msg, '\n'), "\"%s\": a newline", msg);
}

/* The defaults and the edges that pass: 8 KiB chunks, 1..32768 buffers, 28 bits in all. */
static void core_check_params_good(struct kunit *test)
{
	expect_params_ok(test, 128 << 10, 512);		/* the module's defaults */
	expect_params_ok(test, 8192, 1);
	expect_params_ok(test, 8192, 32768);		/* 13 + 15 bits */
	expect_params_ok(test, 1 << 20, 256);		/* 20 + 8 */
	expect_params_ok(test, 1 << 28, 1);		/* 28 + 0 */
	expect_params_ok(test, 8192, 3);
}

static void core_check_params_bad(struct kunit *test)
{
	expect_params_bad(test, 4096, 512, "max_chunk_size 4096");
	expect_params_bad(test, 12288, 512, "max_chunk_size 12288");
	expect_params_bad(test, 0, 512, "max_chunk_size 0");
	expect_params_bad(test, -8192, 512, "max_chunk_size -8192");
	expect_params_bad(test, 128 << 10, 0, "sess_queue_depth 0");
	expect_params_bad(test, 128 << 10, -1, "sess_queue_depth -1");
	expect_params_bad(test, 128 << 10, 65536, "sess_queue_depth 65536");
	/* Each fine alone, too many bits together. */
	expect_params_bad(test, 8192, 65535, "29 bits");
	expect_params_bad(test, 8192, 32769, "29 bits");
	expect_params_bad(test, 1 << 29, 1, "29 bits");
	expect_params_bad(test, 1 << 30, 2, "31 bits");
}

/* A short buffer for the reason: cut and terminated, nothing written past it. */
static void core_check_params_msg_cut(struct kunit *test)
{
	char msg[16];

	memset(msg, 0x5a, sizeof(msg));
	KUNIT_EXPECT_EQ(test, rtrs_core_check_params(4096, 512, msg, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, strlen(msg), (size_t)7);
	KUNIT_EXPECT_EQ(test, msg[8], (char)0x5a);
	memset(msg, 0x5a, sizeof(msg));
	KUNIT_EXPECT_EQ(test, rtrs_core_check_params(4096, 512, msg, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, msg[0], (char)0x5a);	/* room for nothing: nothing written */
}

static void set_ipv4(struct rtrs_core_addr *a, u32 host_order)
{
	memset(a, 0, sizeof(*a));
	a->family = RTRS_CORE_AF_INET;
	a->bytes[0] = host_order >> 24;
	a->bytes[1] = host_order >> 16;
	a->bytes[2] = host_order >> 8;
	a->bytes[3] = host_order;
}

static void set_words(struct rtrs_core_addr *a, u16 family, const u16 w[8])
{
	int i;

	memset(a, 0, sizeof(*a));
	a->family = family;
	for (i = 0; i < 8; i++) {
		a->bytes[2 * i] = w[i] >> 8;
		a->bytes[2 * i + 1] = w[i];
	}
}

static void expect_text(struct kunit *test, const struct rtrs_core_addr *a, const char *want)
{
	char buf[80];
	size_t n;

	memset(buf, 0x5a, sizeof(buf));
	n = rtrs_kunit_format_addr(a, buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf, want);
	KUNIT_EXPECT_EQ(test, n, strlen(want));
}

/* The forms of section 4 of the design, spelled out. */
static void core_format_addr_examples(struct kunit *test)
{
	static const u16 v6[8] = { 0xfd00, 0, 0, 0, 0, 0, 0, 1 };
	static const u16 gid[8] = { 0xfe80, 0, 0, 0, 0x0002, 0xc9ff, 0xfe00, 0x0001 };
	static const u16 zero[8];
	struct rtrs_core_addr a;

	set_ipv4(&a, 0x0a4d0001);
	expect_text(test, &a, "ip:10.77.0.1");
	set_ipv4(&a, 0xffffffff);
	expect_text(test, &a, "ip:255.255.255.255");
	set_words(&a, RTRS_CORE_AF_INET6, v6);
	expect_text(test, &a, "ip:fd00::1");
	set_words(&a, RTRS_CORE_AF_INET6, zero);
	expect_text(test, &a, "ip:::");
	set_words(&a, RTRS_CORE_AF_IB, gid);
	expect_text(test, &a, "gid:fe80:0000:0000:0000:0002:c9ff:fe00:0001");
	memset(&a, 0, sizeof(a));
	a.family = 1;
	expect_text(test, &a, "<unknown address family 1>");
}

/* One address: the core's text against the kernel's, for the family's form. */
static bool same_as_printk(struct kunit *test, const struct rtrs_core_addr *a)
{
	char ours[80], kernel[80];
	size_t n;

	n = rtrs_kunit_format_addr(a, ours, sizeof(ours));
	switch (a->family) {
	case RTRS_CORE_AF_INET:
		snprintf(kernel, sizeof(kernel), "ip:%pI4", a->bytes);
		break;
	case RTRS_CORE_AF_INET6:
		snprintf(kernel, sizeof(kernel), "ip:%pI6c", a->bytes);
		break;
	default:
		snprintf(kernel, sizeof(kernel), "gid:%pI6", a->bytes);
		break;
	}
	KUNIT_EXPECT_STREQ_MSG(test, ours, kernel, "family %u %*ph", a->family, 16, a->bytes);
	KUNIT_EXPECT_EQ(test, n, strlen(kernel));
	return !strcmp(ours, kernel);
}

/*
 * The core's IPv6 compression is its own (the core cannot call the
 * kernel's printf): it must print what %pI6c prints. Addresses with runs of
 * zero groups in every place and length, IPv4-mapped and ISATAP ones, all
 * from a fixed seed; the first mismatch ends the case.
 */
static void core_format_addr_matches_printk(struct kunit *test)
{
	static const u16 special[][8] = {
		{ 0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201 },	/* IPv4-mapped */
		{ 0xfe80, 0, 0, 0, 0, 0x5efe, 0xc000, 0x0201 },	/* ISATAP */
		{ 0xfe80, 0, 0, 0, 0x0200, 0x5efe, 0x0a00, 1 },	/* ISATAP, global */
		{ 0, 0, 0, 0, 0, 0, 0, 1 },
		{ 1, 0, 0, 0, 0, 0, 0, 0 },
		{ 0x2001, 0xdb8, 0, 0, 1, 0, 0, 1 },		/* two equal runs */
		{ 0x2001, 0, 0xdb8, 0, 0, 0, 0, 1 },		/* one lone zero */
		{ 0, 0, 0, 0, 0, 0, 0xffff, 1 },
		{ 0, 0, 0, 0, 0, 0xfffe, 0xc000, 0x0201 },
	};
	struct rnd_state rnd;
	struct rtrs_core_addr a;
	u16 w[8];
	int i, j;

	for (i = 0; i < ARRAY_SIZE(special); i++) {
		set_words(&a, RTRS_CORE_AF_INET6, special[i]);
		if (!same_as_printk(test, &a))
			return;
		a.family = RTRS_CORE_AF_IB;
		if (!same_as_printk(test, &a))
			return;
	}
	prandom_seed_state(&rnd, 0x72747273);
	for (i = 0; i < 20000; i++) {
		u32 r = prandom_u32_state(&rnd);

		/* Each group: zero half the time, else small or any value. */
		for (j = 0; j < 8; j++) {
			u32 g = prandom_u32_state(&rnd);

			w[j] = (g & 1) ? 0 : (g & 2) ? (g >> 16) & 0xf : g >> 16;
		}
		if (r % 16 == 0) {			/* IPv4-mapped */
			memset(w, 0, 10);
			w[5] = 0xffff;
		} else if (r % 16 == 1) {		/* ISATAP */
			w[4] = (r & 32) ? 0x0200 : 0;
			w[5] = 0x5efe;
		}
		set_words(&a, (r & 64) && r % 16 > 1 ? RTRS_CORE_AF_IB : RTRS_CORE_AF_INET6, w);
		if (!same_as_printk(test, &a))
			return;
		set_ipv4(&a, prandom_u32_state(&rnd));
		if (!same_as_printk(test, &a))
			return;
	}
}

/* A short buffer cuts the text, keeps it terminated, writes nothing past cap. */
static void core_format_addr_cut(struct kunit *test)
{
	static const u16 full[8] = { 0xffff, 0xffff, 0xffff, 0xffff,
				     0xffff, 0xffff, 0xffff, 0xffff };
	struct rtrs_core_addr a;
	char buf[16];

	set_words(&a, RTRS_CORE_AF_INET6, full);
	memset(buf, 0x5a, sizeof(buf));
	KUNIT_EXPECT_EQ(test, rtrs_kunit_format_addr(&a, buf, 8), (size_t)7);
	KUNIT_EXPECT_STREQ(test, buf, "ip:ffff");
	KUNIT_EXPECT_EQ(test, buf[8], (char)0x5a);
	memset(buf, 0x5a, sizeof(buf));
	KUNIT_EXPECT_EQ(test, rtrs_kunit_format_addr(&a, buf, 0), (size_t)0);
	KUNIT_EXPECT_EQ(test, buf[0], (char)0x5a);
}

static void core_same_addr(struct kunit *test)
{
	struct rtrs_core_addr a, b;

	set_ipv4(&a, 0x0a4d0002);
	set_ipv4(&b, 0x0a4d0002);
	b.bytes[8] = 0xee;	/* past an IPv4 address: not part of it */
	KUNIT_EXPECT_TRUE(test, rtrs_kunit_same_addr(&a, &b));
	set_ipv4(&b, 0x0a4d0003);
	KUNIT_EXPECT_FALSE(test, rtrs_kunit_same_addr(&a, &b));
	b = a;
	b.family = RTRS_CORE_AF_INET6;
	KUNIT_EXPECT_FALSE(test, rtrs_kunit_same_addr(&a, &b));
	a.family = RTRS_CORE_AF_INET6;
	a.bytes[15] = 1;
	b = a;
	KUNIT_EXPECT_TRUE(test, rtrs_kunit_same_addr(&a, &b));
	b.bytes[15] = 2;
	KUNIT_EXPECT_FALSE(test, rtrs_kunit_same_addr(&a, &b));
}

/* Neither sleeps nor allocates: both run with a spinlock held, interrupts off. */
static void core_atomic_context(struct kunit *test)
{
	static DEFINE_SPINLOCK(lock);
	struct rtrs_core_addr a;
	unsigned long flags;
	char msg[64], text[32];
	int ok, bad;

	set_ipv4(&a, 0x0a4d0001);
	spin_lock_irqsave(&lock, flags);
	ok = rtrs_core_check_params(128 << 10, 512, msg, sizeof(msg));
	bad = rtrs_core_check_params(128 << 10, 0, msg, sizeof(msg));
	rtrs_kunit_format_addr(&a, text, sizeof(text));
	spin_unlock_irqrestore(&lock, flags);
	KUNIT_EXPECT_EQ(test, ok, 0);
	KUNIT_EXPECT_EQ(test, bad, -EINVAL);
	KUNIT_EXPECT_STREQ(test, text, "ip:10.77.0.1");
}

static struct kunit_case core_cases[] = {
	KUNIT_CASE(core_check_params_good),
	KUNIT_CASE(core_check_params_bad),
	KUNIT_CASE(core_check_params_msg_cut),
	KUNIT_CASE(core_format_addr_examples),
	KUNIT_CASE(core_format_addr_matches_printk),
	KUNIT_CASE(core_format_addr_cut),
	KUNIT_CASE(core_same_addr),
	KUNIT_CASE(core_atomic_context),
	{}
};

static struct kunit_suite core_suite = {
	.name = "rtrs_srv_core",
	.test_cases = core_cases,
};

kunit_test_suites(&core_suite);
