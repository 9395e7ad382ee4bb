// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the rtrs-server glue and of the C++ core running in the
 * kernel: rtrs-server-kunit.ko.
 *
 * srv_sysfs.c is compiled into this file (the usual KUnit way to reach static
 * functions), so its show/store functions, attribute tables and kobject types
 * are tested as they are, on fake paths. What it calls outside itself is
 * replaced here: rtrs_srv_close_path() (srv_path.c) records its calls, and
 * rtrs_srv_class (main.c) is a class of our own, "rtrs-server-kunit", so the
 * tests never touch a loaded rtrs-server.ko. The C++ core (src/core, src/rt)
 * and the runtime's kernel side (src/kernel/rt_env.c) are linked in as they
 * are built for rtrs-server.ko.
 *
 * Every case here must also be listed in test/kunit/expected-cases.txt:
 * guest-run.sh counts a case that did not report as a failure.
 */
#include "kernel/srv_sysfs.c"

#include <asm/unaligned.h>
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/kernfs.h>
#include <linux/module.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/version.h>

#include "rt/env.h"

/* --- what srv_sysfs.c needs from the rest of the module ---------------- */

struct class *rtrs_srv_class;

struct class *rtrs_srv_class_create(const char *name)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
	return class_create(THIS_MODULE, name);
#else
	return class_create(name);
#endif
}

static int close_path_calls;
static struct rtrs_srv_path *close_path_last;

/* srv_path.c's teardown, which disconnect_store() starts: recorded only. */
void rtrs_srv_close_path(struct rtrs_srv_path *path)
{
	close_path_calls++;
	close_path_last = path;
}

/* --- a fake path ---------------------------------------------------------- */

struct fake {
	struct ib_device *ib_dev;
	struct rtrs_srv_dev dev;
	struct rtrs_srv_sess *sess;
	struct rtrs_srv_path *path;
	char *page;		/* sysfs hands show() a page; sysfs_emit checks it */
};

static void set_ipv4(struct sockaddr_storage *ss, u32 addr)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(addr);
}

static void set_ipv6(struct sockaddr_storage *ss, const u16 words[8])
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	int i;

	memset(ss, 0, sizeof(*ss));
	sin6->sin6_family = AF_INET6;
	for (i = 0; i < 8; i++)
		sin6->sin6_addr.s6_addr16[i] = htons(words[i]);
}

static void set_gid(struct sockaddr_storage *ss, const u16 words[8])
{
	struct sockaddr_ib *sib = (struct sockaddr_ib *)ss;
	int i;

	memset(ss, 0, sizeof(*ss));
	sib->sib_family = AF_IB;
	for (i = 0; i < 8; i++)
		sib->sib_addr.sib_addr16[i] = cpu_to_be16(words[i]);
}

static const u16 ipv6_2001_db8__1[8] = { 0x2001, 0xdb8, 0, 0, 0, 0, 0, 1 };
static const u16 ipv6_full[8] = { 0xffff, 0xffff, 0xffff, 0xffff,
				  0xffff, 0xffff, 0xffff, 0xffff };
static const u16 gid_example[8] = { 0xfe80, 0, 0, 0, 0x0002, 0xc903, 0x0010, 0x1234 };

/* The path name as srv_path.c builds it: "<client>@<server>". */
static int make_path_name(struct rtrs_srv_path *path)
{
	int n;

	n = rtrs_srv_format_addr((struct sockaddr *)&path->client_addr, path->name,
				 sizeof(path->name));
	n += scnprintf(path->name + n, sizeof(path->name) - n, "@");
	n += rtrs_srv_format_addr((struct sockaddr *)&path->server_addr, path->name + n,
				  sizeof(path->name) - n);
	return n;
}

static int fake_init(struct kunit *test)
{
	struct fake *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f);
	f->ib_dev = kunit_kzalloc(test, sizeof(*f->ib_dev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f->ib_dev);
	f->ib_dev->dev.init_name = "rxe_kunit0";	/* what dev_name() returns */
	f->dev.ib_dev = f->ib_dev;
	f->sess = kunit_kzalloc(test, sizeof(*f->sess), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f->sess);
	strscpy(f->sess->name, "kunit-sess", sizeof(f->sess->name));
	INIT_LIST_HEAD(&f->sess->paths);
	f->path = kunit_kzalloc(test, sizeof(*f->path), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f->path);
	f->path->sess = f->sess;
	f->path->dev = &f->dev;
	f->path->hca_port = 1;
	set_ipv4(&f->path->client_addr, 0xc0a87a0b);	/* 192.168.122.11 */
	set_ipv6(&f->path->server_addr, ipv6_2001_db8__1);
	make_path_name(f->path);
	f->page = (char *)get_zeroed_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f->page);
	close_path_calls = 0;
	close_path_last = NULL;
	test->priv = f;
	return 0;
}

static void fake_exit(struct kunit *test)
{
	struct fake *f = test->priv;

	if (f && f->page)
		free_page((unsigned long)f->page);
}

/* Calls a path attribute's show() the way sysfs does: a fresh page. */
static ssize_t show(struct fake *f, struct kobj_attribute *attr)
{
	memset(f->page, 0x5a, PAGE_SIZE);
	return attr->show(&f->path->kobj, attr, f->page);
}

/* stats/ of a fake path that is not in sysfs: a stats object on the stack. */
static ssize_t show_stats(struct fake *f)
{
	struct rtrs_srv_stats_kobj stats = { .path = f->path };

	memset(f->page, 0x5a, PAGE_SIZE);
	return rdma_attr.show(&stats.kobj, &rdma_attr, f->page);
}

static ssize_t store(struct fake *f, struct kobj_attribute *attr, const char *s, size_t len)
{
	return attr->store(&f->path->kobj, attr, s, len);
}

static ssize_t store_stats(struct fake *f, const char *s, size_t len)
{
	struct rtrs_srv_stats_kobj stats = { .path = f->path };

	return rdma_attr.store(&stats.kobj, &rdma_attr, s, len);
}

static void set_stats(struct fake *f, u64 rc, u64 rb, u64 wc, u64 wb, int inflight)
{
	atomic64_set(&f->path->stats.read_cnt, rc);
	atomic64_set(&f->path->stats.read_bytes, rb);
	atomic64_set(&f->path->stats.write_cnt, wc);
	atomic64_set(&f->path->stats.write_bytes, wb);
	atomic_set(&f->path->stats.inflight, inflight);
}

/* ===== suite rtrs_srv_sysfs: every path attribute on a fake path ========== */

/* The files of a path and of its stats/ folder, with their modes. */
static void sysfs_attribute_set(struct kunit *test)
{
	static const struct { const char *name; umode_t mode; } want[] = {
		{ "hca_name", 0444 }, { "hca_port", 0444 }, { "src_addr", 0444 },
		{ "dst_addr", 0444 }, { "disconnect", 0644 },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		KUNIT_ASSERT_NOT_NULL(test, rtrs_srv_path_attrs[i]);
		KUNIT_EXPECT_STREQ(test, rtrs_srv_path_attrs[i]->name, want[i].name);
		KUNIT_EXPECT_EQ_MSG(test, rtrs_srv_path_attrs[i]->mode, want[i].mode,
				    "%s", want[i].name);
	}
	KUNIT_EXPECT_NULL(test, rtrs_srv_path_attrs[ARRAY_SIZE(want)]);
	KUNIT_EXPECT_STREQ(test, rtrs_srv_stats_attrs[0]->name, "rdma");
	KUNIT_EXPECT_EQ(test, rtrs_srv_stats_attrs[0]->mode, (umode_t)0644);
	KUNIT_EXPECT_NULL(test, rtrs_srv_stats_attrs[1]);
	KUNIT_EXPECT_PTR_EQ(test, rtrs_srv_path_ktype.default_groups, &rtrs_srv_path_groups[0]);
	KUNIT_EXPECT_PTR_EQ(test, rtrs_srv_stats_ktype.default_groups,
			    &rtrs_srv_stats_groups[0]);
}

static void sysfs_hca_name(struct kunit *test)
{
	struct fake *f = test->priv;

	KUNIT_EXPECT_EQ(test, show(f, &hca_name_attr), (ssize_t)strlen("rxe_kunit0\n"));
	KUNIT_EXPECT_STREQ(test, f->page, "rxe_kunit0\n");
}

static void sysfs_hca_port(struct kunit *test)
{
	struct fake *f = test->priv;

	KUNIT_EXPECT_EQ(test, show(f, &hca_port_attr), (ssize_t)2);
	KUNIT_EXPECT_STREQ(test, f->page, "1\n");
	f->path->hca_port = 255;
	KUNIT_EXPECT_EQ(test, show(f, &hca_port_attr), (ssize_t)4);
	KUNIT_EXPECT_STREQ(test, f->page, "255\n");
}

/* src_addr is the client's end, dst_addr ours. */
static void sysfs_src_addr(struct kunit *test)
{
	struct fake *f = test->priv;

	KUNIT_EXPECT_EQ(test, show(f, &src_addr_attr), (ssize_t)strlen("ip:192.168.122.11\n"));
	KUNIT_EXPECT_STREQ(test, f->page, "ip:192.168.122.11\n");
}

static void sysfs_dst_addr(struct kunit *test)
{
	struct fake *f = test->priv;

	KUNIT_EXPECT_EQ(test, show(f, &dst_addr_attr), (ssize_t)strlen("ip:2001:db8::1\n"));
	KUNIT_EXPECT_STREQ(test, f->page, "ip:2001:db8::1\n");
	set_gid(&f->path->server_addr, gid_example);
	show(f, &dst_addr_attr);
	KUNIT_EXPECT_STREQ(test, f->page, "gid:fe80:0000:0000:0000:0002:c903:0010:1234\n");
}

static void sysfs_disconnect_show(struct kunit *test)
{
	struct fake *f = test->priv;

	KUNIT_EXPECT_EQ(test, show(f, &disconnect_attr),
			(ssize_t)strlen("Usage: echo 1 > disconnect\n"));
	KUNIT_EXPECT_STREQ(test, f->page, "Usage: echo 1 > disconnect\n");
	KUNIT_EXPECT_EQ(test, close_path_calls, 0);
}

static void sysfs_disconnect_store_one(struct kunit *test)
{
	struct fake *f = test->priv;

	KUNIT_EXPECT_EQ(test, store(f, &disconnect_attr, "1", 1), (ssize_t)1);
	KUNIT_EXPECT_EQ(test, close_path_calls, 1);
	KUNIT_EXPECT_PTR_EQ(test, close_path_last, f->path);
	KUNIT_EXPECT_EQ(test, store(f, &disconnect_attr, "1\n", 2), (ssize_t)2);
	KUNIT_EXPECT_EQ(test, close_path_calls, 2);
}

static void sysfs_disconnect_store_invalid(struct kunit *test)
{
	static const char *const bad[] = { "0", "2", "", "\n", "11", "1x", " 1", "1\n\n", "yes" };
	struct fake *f = test->priv;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, store(f, &disconnect_attr, bad[i], strlen(bad[i])),
				    (ssize_t)-EINVAL, "write of \"%s\"", bad[i]);
	KUNIT_EXPECT_EQ(test, close_path_calls, 0);
}

static void sysfs_stats_show(struct kunit *test)
{
	struct fake *f = test->priv;

	KUNIT_EXPECT_EQ(test, show_stats(f), (ssize_t)strlen("0 0 0 0 0\n"));
	KUNIT_EXPECT_STREQ(test, f->page, "0 0 0 0 0\n");
	set_stats(f, 7, 28672, 3, 1048576, 2);
	KUNIT_EXPECT_EQ(test, show_stats(f), (ssize_t)strlen("7 28672 3 1048576 2\n"));
	KUNIT_EXPECT_STREQ(test, f->page, "7 28672 3 1048576 2\n");
	set_stats(f, U64_MAX, U64_MAX - 1, 1ULL << 32, 0, 65535);
	show_stats(f);
	KUNIT_EXPECT_STREQ(test, f->page,
			   "18446744073709551615 18446744073709551614 4294967296 0 65535\n");
}

/* "1" zeroes the four counters; inflight is not a counter and stays. */
static void sysfs_stats_reset(struct kunit *test)
{
	struct fake *f = test->priv;

	set_stats(f, 7, 28672, 3, 1048576, 2);
	KUNIT_EXPECT_EQ(test, store_stats(f, "1", 1), (ssize_t)1);
	show_stats(f);
	KUNIT_EXPECT_STREQ(test, f->page, "0 0 0 0 2\n");
	set_stats(f, 1, 2, 3, 4, 5);
	KUNIT_EXPECT_EQ(test, store_stats(f, "1\n", 2), (ssize_t)2);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->path->stats.inflight), 5);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->path->stats.write_bytes), 0LL);
}

static void sysfs_stats_store_invalid(struct kunit *test)
{
	static const char *const bad[] = { "0", "0\n", "2", "", "10", "-1" };
	struct fake *f = test->priv;
	int i;

	set_stats(f, 7, 28672, 3, 1048576, 2);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, store_stats(f, bad[i], strlen(bad[i])),
				    (ssize_t)-EINVAL, "write of \"%s\"", bad[i]);
	show_stats(f);
	KUNIT_EXPECT_STREQ(test, f->page, "7 28672 3 1048576 2\n");
}

static struct kunit_case sysfs_cases[] = {
	KUNIT_CASE(sysfs_attribute_set),
	KUNIT_CASE(sysfs_hca_name),
	KUNIT_CASE(sysfs_hca_port),
	KUNIT_CASE(sysfs_src_addr),
	KUNIT_CASE(sysfs_dst_addr),
	KUNIT_CASE(sysfs_disconnect_show),
	KUNIT_CASE(sysfs_disconnect_store_one),
	KUNIT_CASE(sysfs_disconnect_store_invalid),
	KUNIT_CASE(sysfs_stats_show),
	KUNIT_CASE(sysfs_stats_reset),
	KUNIT_CASE(sysfs_stats_store_invalid),
	{}
};

static struct kunit_suite sysfs_suite = {
	.name = "rtrs_srv_sysfs",
	.init = fake_init,
	.exit = fake_exit,
	.test_cases = sysfs_cases,
};

/* ===== suite rtrs_srv_addr: rtrs_srv_format_addr() ======================== */

static void expect_addr(struct kunit *test, const struct sockaddr_storage *ss,
			const char *want)
{
	char buf[128];
	int n;

	memset(buf, 0x5a, sizeof(buf));
	n = rtrs_srv_format_addr((const struct sockaddr *)ss, buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf, want);
	KUNIT_EXPECT_EQ(test, n, (int)strlen(want));
}

static void addr_ipv4(struct kunit *test)
{
	struct sockaddr_storage ss;

	set_ipv4(&ss, 0x0a000001);
	expect_addr(test, &ss, "ip:10.0.0.1");
	set_ipv4(&ss, 0xffffffff);
	expect_addr(test, &ss, "ip:255.255.255.255");
	set_ipv4(&ss, 0);
	expect_addr(test, &ss, "ip:0.0.0.0");
}

/* IPv6 is printed compressed (%pI6c), as the upstream server prints it. */
static void addr_ipv6_compressed(struct kunit *test)
{
	static const u16 loopback[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };
	static const u16 link_local[8] = { 0xfe80, 0, 0, 0, 0x5054, 0xff, 0xfe12, 0x3456 };
	static const u16 middle_run[8] = { 0x2001, 0xdb8, 0, 0, 1, 0, 0, 1 };
	static const u16 mapped[8] = { 0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201 };
	struct sockaddr_storage ss;

	set_ipv6(&ss, ipv6_2001_db8__1);
	expect_addr(test, &ss, "ip:2001:db8::1");
	set_ipv6(&ss, loopback);
	expect_addr(test, &ss, "ip:::1");
	set_ipv6(&ss, link_local);
	expect_addr(test, &ss, "ip:fe80::5054:ff:fe12:3456");
	/* Only the first of two equal runs of zeros is compressed. */
	set_ipv6(&ss, middle_run);
	expect_addr(test, &ss, "ip:2001:db8::1:0:0:1");
	set_ipv6(&ss, mapped);
	expect_addr(test, &ss, "ip:::ffff:192.0.2.1");
	set_ipv6(&ss, ipv6_full);
	expect_addr(test, &ss, "ip:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

/* A GID (AF_IB) is printed in full: 8 groups of 4 digits. */
static void addr_gid(struct kunit *test)
{
	static const u16 zero[8];
	struct sockaddr_storage ss;

	set_gid(&ss, gid_example);
	expect_addr(test, &ss, "gid:fe80:0000:0000:0000:0002:c903:0010:1234");
	set_gid(&ss, zero);
	expect_addr(test, &ss, "gid:0000:0000:0000:0000:0000:0000:0000:0000");
}

static void addr_unknown_family(struct kunit *test)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	expect_addr(test, &ss, "<unknown address family 1>");
}

/* A short buffer cuts the text, keeps it terminated, returns what fit. */
static void addr_truncated(struct kunit *test)
{
	struct sockaddr_storage ss;
	char buf[16];
	int n;

	set_ipv6(&ss, ipv6_full);
	memset(buf, 0x5a, sizeof(buf));
	n = rtrs_srv_format_addr((struct sockaddr *)&ss, buf, 8);
	KUNIT_EXPECT_EQ(test, n, 7);
	KUNIT_EXPECT_STREQ(test, buf, "ip:ffff");
	KUNIT_EXPECT_EQ(test, buf[8], (char)0x5a);
	n = rtrs_srv_format_addr((struct sockaddr *)&ss, buf, 0);
	KUNIT_EXPECT_EQ(test, n, 0);
}

static struct kunit_case addr_cases[] = {
	KUNIT_CASE(addr_ipv4),
	KUNIT_CASE(addr_ipv6_compressed),
	KUNIT_CASE(addr_gid),
	KUNIT_CASE(addr_unknown_family),
	KUNIT_CASE(addr_truncated),
	{}
};

static struct kunit_suite addr_suite = {
	.name = "rtrs_srv_addr",
	.test_cases = addr_cases,
};

/* ===== suite rtrs_srv_names: session and path name limits ================ */

/* The longest addresses on both ends still fit the path's name buffer. */
static void names_path_longest_ipv6(struct kunit *test)
{
	struct rtrs_srv_path *path = kunit_kzalloc(test, sizeof(*path), GFP_KERNEL);
	const char *want = "ip:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
			   "@ip:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, path);
	set_ipv6(&path->client_addr, ipv6_full);
	set_ipv6(&path->server_addr, ipv6_full);
	KUNIT_EXPECT_EQ(test, make_path_name(path), (int)strlen(want));
	KUNIT_EXPECT_STREQ(test, path->name, want);
	KUNIT_EXPECT_LT(test, strlen(want) + 1, sizeof(path->name));
}

static void names_path_longest_gid(struct kunit *test)
{
	struct rtrs_srv_path *path = kunit_kzalloc(test, sizeof(*path), GFP_KERNEL);
	const char *want = "gid:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
			   "@gid:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, path);
	set_gid(&path->client_addr, ipv6_full);
	set_gid(&path->server_addr, ipv6_full);
	KUNIT_EXPECT_EQ(test, make_path_name(path), (int)strlen(want));
	KUNIT_EXPECT_STREQ(test, path->name, want);
	KUNIT_EXPECT_LT(test, strlen(want) + 1, sizeof(path->name));
}

static void names_path_mixed(struct kunit *test)
{
	struct rtrs_srv_path *path = kunit_kzalloc(test, sizeof(*path), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, path);
	set_ipv4(&path->client_addr, 0x0a000002);
	set_ipv6(&path->server_addr, ipv6_2001_db8__1);
	make_path_name(path);
	KUNIT_EXPECT_STREQ(test, path->name, "ip:10.0.0.2@ip:2001:db8::1");
}

/* An info request as the client sends it: type 0, then the NUL-padded name. */
static u8 *info_req(struct kunit *test, const char *name, size_t name_len)
{
	size_t size = rtrs_core_info_req_size();
	u8 *msg = kunit_kzalloc(test, size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, msg);
	KUNIT_ASSERT_LE(test, name_len, size - 2);
	memcpy(msg + 2, name, name_len);
	return msg;
}

/* The longest name a client can send (254 bytes) fits the session's name. */
static void names_session_longest(struct kunit *test)
{
	struct rtrs_srv_sess *sess = kunit_kzalloc(test, sizeof(*sess), GFP_KERNEL);
	char *name = kunit_kzalloc(test, 255, GFP_KERNEL);
	char why[80] = "";
	u8 *msg;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sess);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, name);
	KUNIT_EXPECT_EQ(test, rtrs_core_info_req_size(), (size_t)272);
	memset(name, 'n', 254);
	msg = info_req(test, name, 254);
	KUNIT_EXPECT_EQ_MSG(test, rtrs_core_parse_info_req(msg, 272, sess->name,
							   sizeof(sess->name), why, sizeof(why)),
			    0, "%s", why);
	KUNIT_EXPECT_EQ(test, strlen(sess->name), (size_t)254);
	KUNIT_EXPECT_STREQ(test, sess->name, name);
	KUNIT_EXPECT_EQ(test, sizeof(sess->name), (size_t)RTRS_SRV_NAME_MAX + 1);
}

static void names_session_rejected(struct kunit *test)
{
	char out[RTRS_SRV_NAME_MAX + 1];
	char why[80];
	char *name = kunit_kzalloc(test, 256, GFP_KERNEL);
	u8 *msg;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, name);
	/* 255 bytes and no NUL in the field. */
	memset(name, 'n', 255);
	msg = info_req(test, name, 255);
	KUNIT_EXPECT_EQ(test, rtrs_core_parse_info_req(msg, 272, out, sizeof(out), why,
						       sizeof(why)), -ENAMETOOLONG);
	/* Fits the message, not the caller's buffer. */
	msg = info_req(test, "twenty-bytes-long-ab", 20);
	KUNIT_EXPECT_EQ(test, rtrs_core_parse_info_req(msg, 272, out, 20, why, sizeof(why)),
			-ENAMETOOLONG);
	KUNIT_EXPECT_EQ(test, rtrs_core_parse_info_req(msg, 272, out, 21, why, sizeof(why)), 0);
	/* Names of sysfs objects: no '/', no '.', not empty. */
	msg = info_req(test, "a/b", 3);
	KUNIT_EXPECT_EQ(test, rtrs_core_parse_info_req(msg, 272, out, sizeof(out), why,
						       sizeof(why)), -EINVAL);
	msg = info_req(test, "..", 2);
	KUNIT_EXPECT_EQ(test, rtrs_core_parse_info_req(msg, 272, out, sizeof(out), why,
						       sizeof(why)), -EINVAL);
	msg = info_req(test, "", 0);
	KUNIT_EXPECT_EQ(test, rtrs_core_parse_info_req(msg, 272, out, sizeof(out), why,
						       sizeof(why)), -EINVAL);
	/* Short message. */
	msg = info_req(test, "ok", 2);
	KUNIT_EXPECT_EQ(test, rtrs_core_parse_info_req(msg, 271, out, sizeof(out), why,
						       sizeof(why)), -EBADMSG);
	KUNIT_EXPECT_GT(test, strlen(why), (size_t)0);
}

static struct kunit_case names_cases[] = {
	KUNIT_CASE(names_path_longest_ipv6),
	KUNIT_CASE(names_path_longest_gid),
	KUNIT_CASE(names_path_mixed),
	KUNIT_CASE(names_session_longest),
	KUNIT_CASE(names_session_rejected),
	{}
};

static struct kunit_suite names_suite = {
	.name = "rtrs_srv_names",
	.test_cases = names_cases,
};

/* ===== suite rtrs_srv_core: the C++ core's C interface, in the kernel ===== */

static void core_parse_one(struct kunit *test)
{
	static const char *const bad[] = { "0", "2", "", "\n", "11", "1x", " 1", "1\n\n", "1 " };
	int i;

	KUNIT_EXPECT_EQ(test, rtrs_core_parse_one("1", 1), 0);
	KUNIT_EXPECT_EQ(test, rtrs_core_parse_one("1\n", 2), 0);
	/* Only len bytes count: sysfs buffers are not always terminated there. */
	KUNIT_EXPECT_EQ(test, rtrs_core_parse_one("1xyz", 1), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, rtrs_core_parse_one(bad[i], strlen(bad[i])), -EINVAL,
				    "\"%s\"", bad[i]);
}

static void core_format_rdma_stats(struct kunit *test)
{
	char buf[64];
	char tiny[8];
	int n;

	n = rtrs_core_format_rdma_stats(buf, sizeof(buf), 1, 512, 2, 1024, 3);
	KUNIT_EXPECT_STREQ(test, buf, "1 512 2 1024 3\n");
	KUNIT_EXPECT_EQ(test, n, (int)strlen(buf));
	n = rtrs_core_format_rdma_stats(buf, sizeof(buf), U64_MAX, 0, 0, 0, -1);
	KUNIT_EXPECT_STREQ(test, buf, "18446744073709551615 0 0 0 -1\n");
	/* Cut, terminated, never past the end. */
	memset(tiny, 0x5a, sizeof(tiny));
	n = rtrs_core_format_rdma_stats(tiny, 6, 123456, 1, 1, 1, 1);
	KUNIT_EXPECT_EQ(test, n, 5);
	KUNIT_EXPECT_STREQ(test, tiny, "12345");
	KUNIT_EXPECT_EQ(test, tiny[6], (char)0x5a);
}

static void core_check_params(struct kunit *test)
{
	char msg[160];

	KUNIT_EXPECT_EQ(test, rtrs_core_check_params(128 << 10, 512, msg, sizeof(msg)), 0);
	KUNIT_EXPECT_EQ(test, rtrs_core_check_params(8192, 32768, msg, sizeof(msg)), 0);
	KUNIT_EXPECT_EQ(test, rtrs_core_check_params(4096, 512, msg, sizeof(msg)), -EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(msg, "max_chunk_size 4096"));
	KUNIT_EXPECT_EQ(test, rtrs_core_check_params(12288, 512, msg, sizeof(msg)), -EINVAL);
	KUNIT_EXPECT_EQ(test, rtrs_core_check_params(128 << 10, 0, msg, sizeof(msg)), -EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(msg, "sess_queue_depth 0"));
	KUNIT_EXPECT_EQ(test, rtrs_core_check_params(128 << 10, 65536, msg, sizeof(msg)), -EINVAL);
	/* 16 bits of chunk id and 13 of offset: one more than the 28 there are. */
	KUNIT_EXPECT_EQ(test, rtrs_core_check_params(8192, 65535, msg, sizeof(msg)), -EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(msg, "29 bits"));
}

static void core_conn_req(struct kunit *test)
{
	struct rtrs_core_conn_req req;
	u8 *pd = kunit_kzalloc(test, 56, GFP_KERNEL);
	char why[96];
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pd);
	put_unaligned_le16(0x1bbd, pd + 2);	/* magic */
	put_unaligned_le16(0x0200, pd + 4);	/* version 2.0 */
	put_unaligned_le16(1, pd + 6);		/* cid */
	put_unaligned_le16(2, pd + 8);		/* cid_num */
	put_unaligned_le16(7, pd + 10);		/* recon_cnt */
	for (i = 0; i < 16; i++) {
		pd[12 + i] = i;
		pd[28 + i] = 0xf0 + i;
	}
	pd[44] = 1;				/* first connection */
	KUNIT_ASSERT_EQ_MSG(test, rtrs_core_parse_conn_req(pd, 56, &req, why, sizeof(why)), 0,
			    "%s", why);
	KUNIT_EXPECT_EQ(test, req.version, 0x0200);
	KUNIT_EXPECT_EQ(test, req.cid, 1);
	KUNIT_EXPECT_EQ(test, req.cid_num, 2);
	KUNIT_EXPECT_EQ(test, req.recon_cnt, 7);
	KUNIT_EXPECT_EQ(test, req.sess_uuid[15], 15);
	KUNIT_EXPECT_EQ(test, req.paths_uuid[0], 0xf0);
	KUNIT_EXPECT_EQ(test, req.first_conn, 1);
	/* One byte short; a wrong magic; cid past cid_num. */
	KUNIT_EXPECT_LT(test, rtrs_core_parse_conn_req(pd, 55, &req, why, sizeof(why)), 0);
	KUNIT_EXPECT_GT(test, strlen(why), (size_t)0);
	put_unaligned_le16(2, pd + 6);
	KUNIT_EXPECT_LT(test, rtrs_core_parse_conn_req(pd, 56, &req, why, sizeof(why)), 0);
	put_unaligned_le16(1, pd + 6);
	put_unaligned_le16(0x1bbe, pd + 2);
	KUNIT_EXPECT_LT(test, rtrs_core_parse_conn_req(pd, 56, &req, why, sizeof(why)), 0);
}

static void core_imm(struct kunit *test)
{
	u32 imm = rtrs_core_imm(RTRS_CORE_IMM_IO_RSP, 0x0abcdef);

	KUNIT_EXPECT_EQ(test, rtrs_core_imm_type(imm), RTRS_CORE_IMM_IO_RSP);
	KUNIT_EXPECT_EQ(test, rtrs_core_imm_payload(imm), 0x0abcdefu);
	imm = rtrs_core_imm(RTRS_CORE_IMM_HB_ACK, 0);
	KUNIT_EXPECT_EQ(test, rtrs_core_imm_type(imm), RTRS_CORE_IMM_HB_ACK);
	KUNIT_EXPECT_EQ(test, rtrs_core_imm_payload(imm), 0u);
}

/* The core neither sleeps nor allocates here: callable with a spinlock held. */
static void core_atomic_context(struct kunit *test)
{
	static DEFINE_SPINLOCK(lock);
	unsigned long flags;
	char buf[64];
	int one, n;

	spin_lock_irqsave(&lock, flags);
	one = rtrs_core_parse_one("1\n", 2);
	n = rtrs_core_format_rdma_stats(buf, sizeof(buf), 1, 2, 3, 4, 5);
	spin_unlock_irqrestore(&lock, flags);
	KUNIT_EXPECT_EQ(test, one, 0);
	KUNIT_EXPECT_EQ(test, n, 10);
	KUNIT_EXPECT_STREQ(test, buf, "1 2 3 4 5\n");
}

/* The runtime's allocator (rt_env.c), which the C++ side allocates with. */
static void core_env_alloc(struct kunit *test)
{
	static DEFINE_SPINLOCK(lock);
	unsigned char *p, *q;
	int i, nonzero = 0;

	p = rtrs_env_alloc(200, RTRS_ENV_GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	for (i = 0; i < 200; i++)
		nonzero |= p[i];
	KUNIT_EXPECT_EQ(test, nonzero, 0);
	rtrs_env_free(p);
	spin_lock(&lock);
	q = rtrs_env_alloc(64, RTRS_ENV_GFP_ATOMIC);
	spin_unlock(&lock);
	KUNIT_EXPECT_NOT_NULL(test, q);
	rtrs_env_free(q);
	rtrs_env_free(NULL);
}

static struct kunit_case core_cases[] = {
	KUNIT_CASE(core_parse_one),
	KUNIT_CASE(core_format_rdma_stats),
	KUNIT_CASE(core_check_params),
	KUNIT_CASE(core_conn_req),
	KUNIT_CASE(core_imm),
	KUNIT_CASE(core_atomic_context),
	KUNIT_CASE(core_env_alloc),
	{}
};

static struct kunit_suite core_suite = {
	.name = "rtrs_srv_core",
	.test_cases = core_cases,
};

/* ===== suite rtrs_srv_lifetime: sysfs objects, added and torn down ======== */

static int lifetime_suite_init(struct kunit_suite *suite)
{
	rtrs_srv_class = rtrs_srv_class_create("rtrs-server-kunit");
	return PTR_ERR_OR_ZERO(rtrs_srv_class);
}

static void lifetime_suite_exit(struct kunit_suite *suite)
{
	class_destroy(rtrs_srv_class);
}

/* A session as srv_path.c makes one: freed by put_device() once initialized. */
static struct rtrs_srv_sess *new_sess(struct kunit *test, const char *name)
{
	struct rtrs_srv_sess *sess = kzalloc(sizeof(*sess), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sess);
	strscpy(sess->name, name, sizeof(sess->name));
	INIT_LIST_HEAD(&sess->paths);
	rtrs_srv_sysfs_init_sess(sess);
	return sess;
}

/* A path as srv_path.c makes one: freed by its kobject's last put. */
static struct rtrs_srv_path *new_path(struct kunit *test, struct rtrs_srv_sess *sess,
				      struct rtrs_srv_dev *dev, u32 client_ip)
{
	struct rtrs_srv_path *path = kzalloc(sizeof(*path), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, path);
	rtrs_srv_sysfs_init_path(path);
	path->sess = sess;
	path->dev = dev;
	path->hca_port = 1;
	set_ipv4(&path->client_addr, client_ip);
	set_ipv4(&path->server_addr, 0x0a000001);
	make_path_name(path);
	list_add_tail(&path->entry, &sess->paths);
	sess->paths_num++;
	return path;
}

static void drop_path(struct kunit *test, struct rtrs_srv_path *path)
{
	list_del(&path->entry);
	path->sess->paths_num--;
	/* Nothing else holds the path: this put must free it. */
	KUNIT_EXPECT_EQ(test, kref_read(&path->kobj.kref), 1U);
	rtrs_srv_sysfs_put_path(path);
}

static void drop_sess(struct kunit *test, struct rtrs_srv_sess *sess)
{
	KUNIT_EXPECT_TRUE(test, list_empty(&sess->paths));
	KUNIT_EXPECT_FALSE(test, sess->dev_added);
	KUNIT_EXPECT_EQ(test, kref_read(&sess->dev.kobj.kref), 1U);
	put_device(&sess->dev);
}

static struct rtrs_srv_dev *new_dev(struct kunit *test)
{
	struct rtrs_srv_dev *dev = kunit_kzalloc(test, sizeof(*dev), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, dev);
	dev->ib_dev = kunit_kzalloc(test, sizeof(*dev->ib_dev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dev->ib_dev);
	dev->ib_dev->dev.init_name = "rxe_kunit0";
	return dev;
}

/* Whether sysfs has a file or folder name under kobj's folder. */
static bool in_sysfs(struct kobject *kobj, const char *name)
{
	struct kernfs_node *kn;

	if (!kobj->sd)
		return false;
	kn = kernfs_find_and_get(kobj->sd, name);
	if (!kn)
		return false;
	kernfs_put(kn);
	return true;
}

/*
 * Reads a file of kobj's folder the way sysfs does: the attribute that the
 * kernfs node carries, through the kobject type's sysfs_ops.
 */
static ssize_t sysfs_read(struct kunit *test, struct kobject *kobj, const char *name,
			  char *page)
{
	struct kernfs_node *kn = kernfs_find_and_get(kobj->sd, name);
	ssize_t n;

	KUNIT_ASSERT_NOT_NULL_MSG(test, kn, "no file %s", name);
	memset(page, 0, PAGE_SIZE);
	n = kobj->ktype->sysfs_ops->show(kobj, kn->priv, page);
	kernfs_put(kn);
	return n;
}

static ssize_t sysfs_write(struct kunit *test, struct kobject *kobj, const char *name,
			   const char *s)
{
	struct kernfs_node *kn = kernfs_find_and_get(kobj->sd, name);
	ssize_t n;

	KUNIT_ASSERT_NOT_NULL_MSG(test, kn, "no file %s", name);
	n = kobj->ktype->sysfs_ops->store(kobj, kn->priv, s, strlen(s));
	kernfs_put(kn);
	return n;
}

/* One path: its session appears with it and goes with it; all is freed. */
static void lifetime_one_path(struct kunit *test)
{
	struct rtrs_srv_dev *dev = new_dev(test);
	struct rtrs_srv_sess *sess = new_sess(test, "kunit-one");
	struct rtrs_srv_path *path = new_path(test, sess, dev, 0x0a000002);
	char *page = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	struct kobject *paths;

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_EQ(test, rtrs_srv_sysfs_add_path(path), 0);
	KUNIT_EXPECT_TRUE(test, sess->dev_added);
	KUNIT_EXPECT_TRUE(test, path->kobj_added);
	KUNIT_EXPECT_NOT_NULL(test, path->stats_kobj);
	KUNIT_EXPECT_STREQ(test, dev_name(&sess->dev), "kunit-one");
	paths = sess->paths_kobj;
	KUNIT_ASSERT_NOT_NULL(test, paths);
	KUNIT_EXPECT_TRUE(test, in_sysfs(&sess->dev.kobj, "paths"));
	KUNIT_EXPECT_TRUE(test, in_sysfs(paths, "ip:10.0.0.2@ip:10.0.0.1"));
	KUNIT_EXPECT_TRUE(test, in_sysfs(&path->kobj, "hca_name"));
	KUNIT_EXPECT_TRUE(test, in_sysfs(&path->kobj, "hca_port"));
	KUNIT_EXPECT_TRUE(test, in_sysfs(&path->kobj, "src_addr"));
	KUNIT_EXPECT_TRUE(test, in_sysfs(&path->kobj, "dst_addr"));
	KUNIT_EXPECT_TRUE(test, in_sysfs(&path->kobj, "disconnect"));
	KUNIT_EXPECT_TRUE(test, in_sysfs(&path->kobj, "stats"));
	KUNIT_EXPECT_TRUE(test, in_sysfs(&path->stats_kobj->kobj, "rdma"));

	/* The files as sysfs reads and writes them. */
	sysfs_read(test, &path->kobj, "hca_name", page);
	KUNIT_EXPECT_STREQ(test, page, "rxe_kunit0\n");
	sysfs_read(test, &path->kobj, "src_addr", page);
	KUNIT_EXPECT_STREQ(test, page, "ip:10.0.0.2\n");
	sysfs_read(test, &path->kobj, "dst_addr", page);
	KUNIT_EXPECT_STREQ(test, page, "ip:10.0.0.1\n");
	atomic64_set(&path->stats.read_cnt, 9);
	atomic_set(&path->stats.inflight, 1);
	sysfs_read(test, &path->stats_kobj->kobj, "rdma", page);
	KUNIT_EXPECT_STREQ(test, page, "9 0 0 0 1\n");
	KUNIT_EXPECT_EQ(test, sysfs_write(test, &path->stats_kobj->kobj, "rdma", "1\n"), (ssize_t)2);
	sysfs_read(test, &path->stats_kobj->kobj, "rdma", page);
	KUNIT_EXPECT_STREQ(test, page, "0 0 0 0 1\n");
	close_path_calls = 0;
	KUNIT_EXPECT_EQ(test, sysfs_write(test, &path->kobj, "disconnect", "1"), (ssize_t)1);
	KUNIT_EXPECT_EQ(test, close_path_calls, 1);

	rtrs_srv_sysfs_remove_path(path);
	KUNIT_EXPECT_FALSE(test, path->kobj_added);
	KUNIT_EXPECT_NULL(test, path->stats_kobj);
	KUNIT_EXPECT_FALSE(test, sess->dev_added);
	KUNIT_EXPECT_NULL(test, sess->paths_kobj);
	KUNIT_EXPECT_NULL(test, path->kobj.sd);
	drop_path(test, path);
	drop_sess(test, sess);
}

/* Two paths: the session stays until the last one is removed. */
static void lifetime_two_paths(struct kunit *test)
{
	struct rtrs_srv_dev *dev = new_dev(test);
	struct rtrs_srv_sess *sess = new_sess(test, "kunit-two");
	struct rtrs_srv_path *a = new_path(test, sess, dev, 0x0a000002);
	struct rtrs_srv_path *b = new_path(test, sess, dev, 0x0a000003);

	KUNIT_ASSERT_EQ(test, rtrs_srv_sysfs_add_path(a), 0);
	KUNIT_ASSERT_EQ(test, rtrs_srv_sysfs_add_path(b), 0);
	KUNIT_EXPECT_TRUE(test, in_sysfs(sess->paths_kobj, "ip:10.0.0.2@ip:10.0.0.1"));
	KUNIT_EXPECT_TRUE(test, in_sysfs(sess->paths_kobj, "ip:10.0.0.3@ip:10.0.0.1"));

	rtrs_srv_sysfs_remove_path(a);
	KUNIT_EXPECT_TRUE(test, sess->dev_added);
	KUNIT_EXPECT_FALSE(test, in_sysfs(sess->paths_kobj, "ip:10.0.0.2@ip:10.0.0.1"));
	KUNIT_EXPECT_TRUE(test, in_sysfs(sess->paths_kobj, "ip:10.0.0.3@ip:10.0.0.1"));
	/* A removed path can be put while another one is still in sysfs. */
	drop_path(test, a);

	rtrs_srv_sysfs_remove_path(b);
	KUNIT_EXPECT_FALSE(test, sess->dev_added);
	/* Removing twice is harmless (close_work and an add error may both). */
	rtrs_srv_sysfs_remove_path(b);
	drop_path(test, b);
	drop_sess(test, sess);
}

/* The error paths of srv_path.c: put without ever being added. */
static void lifetime_never_added(struct kunit *test)
{
	struct rtrs_srv_dev *dev = new_dev(test);
	struct rtrs_srv_sess *sess = new_sess(test, "kunit-never");
	struct rtrs_srv_path *path = new_path(test, sess, dev, 0x0a000002);

	KUNIT_EXPECT_FALSE(test, sess->dev_added);
	rtrs_srv_sysfs_remove_path(path);
	drop_path(test, path);
	drop_sess(test, sess);
}

/* The longest session name and path name sysfs will get. */
static void lifetime_longest_names(struct kunit *test)
{
	struct rtrs_srv_dev *dev = new_dev(test);
	char name[RTRS_SRV_NAME_MAX];
	struct rtrs_srv_sess *sess;
	struct rtrs_srv_path *path;

	memset(name, 's', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';	/* 254 bytes, the protocol's limit */
	sess = new_sess(test, name);
	path = new_path(test, sess, dev, 0);
	set_ipv6(&path->client_addr, ipv6_full);
	set_ipv6(&path->server_addr, ipv6_full);
	make_path_name(path);

	KUNIT_ASSERT_EQ(test, rtrs_srv_sysfs_add_path(path), 0);
	KUNIT_EXPECT_TRUE(test, in_sysfs(sess->paths_kobj, path->name));
	KUNIT_EXPECT_EQ(test, strlen(dev_name(&sess->dev)), (size_t)254);
	rtrs_srv_sysfs_remove_path(path);
	drop_path(test, path);
	drop_sess(test, sess);
}

/* The same session can come back after its last path went (a reconnect). */
static void lifetime_readd_session(struct kunit *test)
{
	struct rtrs_srv_dev *dev = new_dev(test);
	struct rtrs_srv_sess *sess = new_sess(test, "kunit-again");
	struct rtrs_srv_path *a = new_path(test, sess, dev, 0x0a000002);
	struct rtrs_srv_path *b;

	KUNIT_ASSERT_EQ(test, rtrs_srv_sysfs_add_path(a), 0);
	rtrs_srv_sysfs_remove_path(a);
	drop_path(test, a);
	KUNIT_EXPECT_FALSE(test, sess->dev_added);

	b = new_path(test, sess, dev, 0x0a000002);
	KUNIT_ASSERT_EQ(test, rtrs_srv_sysfs_add_path(b), 0);
	KUNIT_EXPECT_TRUE(test, sess->dev_added);
	KUNIT_EXPECT_TRUE(test, in_sysfs(sess->paths_kobj, "ip:10.0.0.2@ip:10.0.0.1"));
	rtrs_srv_sysfs_remove_path(b);
	drop_path(test, b);
	drop_sess(test, sess);
}

static struct kunit_case lifetime_cases[] = {
	KUNIT_CASE(lifetime_one_path),
	KUNIT_CASE(lifetime_two_paths),
	KUNIT_CASE(lifetime_never_added),
	KUNIT_CASE(lifetime_longest_names),
	KUNIT_CASE(lifetime_readd_session),
	{}
};

static struct kunit_suite lifetime_suite = {
	.name = "rtrs_srv_lifetime",
	.suite_init = lifetime_suite_init,
	.suite_exit = lifetime_suite_exit,
	.test_cases = lifetime_cases,
};

kunit_test_suites(&sysfs_suite, &addr_suite, &names_suite, &core_suite, &lifetime_suite);

MODULE_DESCRIPTION("KUnit tests of rtrs-server's sysfs glue and C++ core");
MODULE_LICENSE("GPL");
