// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs-server-kunit.ko, part one: the glue's sysfs (src/kernel/env_sysfs.c),
 * tested through the files a user sees.
 *
 * The module is made of this file, env_base_kunit.c (src/kernel/env_base.c),
 * core_kunit.c with core_shim.cpp (the C++ core in the kernel), and the C++
 * objects they need, built with the module's own rules (test/kunit/Kbuild).
 * Each glue file is compiled into its test file, the usual KUnit way, and
 * what it calls outside itself is replaced there by a stub that records the
 * call: here rtrs_core_path_show() and rtrs_core_path_store(), the core's
 * side of every file.
 *
 * The class: the glue keeps it in rtrs_glue_class, made by
 * rtrs_glue_sysfs_init() under the name "rtrs-server". The suites put a
 * class of their own there, "rtrs-server-kunit", so that they never meet a
 * loaded rtrs-server.ko; one case (sysfs_glue_class) runs the real
 * rtrs_glue_sysfs_init()/exit(), and only when no rtrs-server class exists
 * (it is skipped, which counts as a failure, if rtrs-server.ko is loaded;
 * guest-run.sh loads this module in a guest where it is not).
 *
 * Every file is read and written through the VFS, as a user would, at
 * /sys/class/rtrs-server-kunit/<session>/paths/<path>/...: the modes, the
 * listing of each folder and the errors are the kernel's, not ours. (The
 * cases run in kernel threads, whose root is init's: sysfs must be mounted
 * at /sys there, as it is in the guest.)
 *
 * The glue's own allocations are counted: its kzalloc() and kfree() are
 * replaced (by macros, for env_sysfs.c alone) with counting versions that
 * can also fail on demand. Every object the glue allocates is freed by a
 * kobject release, which CONFIG_DEBUG_KOBJECT_RELEASE delays by 1-4 s: each
 * case ends by waiting until the count is back to zero, which checks that
 * nothing was left and that no release can run after this module is gone.
 *
 * guest-run.sh expects every case of the KUNIT_CASE lists (list-cases.py).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt	/* as env_sysfs.c has it */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kernfs.h>
#include <linux/kobject.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/version.h>
#include <linux/wait.h>

/* --- the glue's allocations, counted ---------------------------------------- */

static atomic_t glue_allocs = ATOMIC_INIT(0);
static atomic_t glue_frees = ATOMIC_INIT(0);
/* > 0: the glue's allocation number glue_fail_at (counting from 1) fails. */
static atomic_t glue_fail_at = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(glue_freed);

static void *glue_kzalloc(size_t size, gfp_t gfp)
{
	void *p;

	if (atomic_read(&glue_fail_at) > 0 && atomic_dec_return(&glue_fail_at) == 0)
		return NULL;
	p = kzalloc(size, gfp);
	if (p)
		atomic_inc(&glue_allocs);
	return p;
}

static void glue_kfree(const void *p)
{
	if (!p)
		return;
	kfree(p);
	atomic_inc(&glue_frees);
	wake_up_all(&glue_freed);
}

#undef kzalloc
#define kzalloc glue_kzalloc
#define kfree glue_kfree
#include "kernel/env_sysfs.c"
#undef kzalloc
#undef kfree
/* No kzalloc()/kfree() below: test memory comes from kunit_kzalloc(). */

#define KUNIT_CLASS "rtrs-server-kunit"
#define CLASS_DIR "/sys/class/" KUNIT_CLASS

/* Objects the glue allocated and no release has freed yet. */
static int glue_live(void)
{
	return atomic_read(&glue_allocs) - atomic_read(&glue_frees);
}

/*
 * Waits until at most `want` glue objects are alive: releases are delayed
 * by up to 4 s each (CONFIG_DEBUG_KOBJECT_RELEASE), so 15 s is plenty.
 */
static bool wait_glue_live(int want)
{
	return wait_event_timeout(glue_freed, glue_live() <= want, 15 * HZ) > 0 ||
	       glue_live() <= want;
}

/* --- the core's side of the files: recorded ------------------------------------- */

struct core_stub {
	spinlock_t lock;
	int shows, stores;
	void *core_path;
	enum rtrs_core_path_attr attr;
	size_t cap;
	char buf[64];		/* what the last store got */
	size_t len;
	bool buf_terminated;	/* buf[len] was a NUL */
	/* What show writes and returns (ret < 0: the error instead). */
	char text[64];
	int show_ret;
	int store_ret;
	/* Set: the next show or store signals entered, then waits for resume. */
	bool block;
	struct completion entered;
	struct completion resume;
};

static struct core_stub stub;

static void stub_reset(void)
{
	spin_lock_init(&stub.lock);
	stub.shows = 0;
	stub.stores = 0;
	stub.core_path = NULL;
	stub.attr = -1;
	stub.cap = 0;
	stub.buf[0] = '\0';
	stub.len = 0;
	stub.buf_terminated = false;
	strscpy(stub.text, "text\n", sizeof(stub.text));
	stub.show_ret = 0;
	stub.store_ret = 0;
	stub.block = false;
	init_completion(&stub.entered);
	init_completion(&stub.resume);
}

static void stub_maybe_block(void)
{
	bool block;

	spin_lock(&stub.lock);
	block = stub.block;
	stub.block = false;
	spin_unlock(&stub.lock);
	if (block) {
		complete(&stub.entered);
		wait_for_completion(&stub.resume);
	}
}

int rtrs_core_path_show(void *core_path, enum rtrs_core_path_attr attr, char *buf, size_t cap)
{
	int ret;

	spin_lock(&stub.lock);
	stub.shows++;
	stub.core_path = core_path;
	stub.attr = attr;
	stub.cap = cap;
	ret = stub.show_ret < 0 ? stub.show_ret : scnprintf(buf, cap, "%s", stub.text);
	spin_unlock(&stub.lock);
	stub_maybe_block();
	return ret;
}

int rtrs_core_path_store(void *core_path, enum rtrs_core_path_attr attr, const char *buf,
			 size_t len)
{
	int ret;

	spin_lock(&stub.lock);
	stub.stores++;
	stub.core_path = core_path;
	stub.attr = attr;
	stub.len = len;
	memcpy(stub.buf, buf, min(len, sizeof(stub.buf) - 1));
	stub.buf[min(len, sizeof(stub.buf) - 1)] = '\0';
	stub.buf_terminated = buf[len] == '\0';
	ret = stub.store_ret;
	spin_unlock(&stub.lock);
	stub_maybe_block();
	return ret;
}

/* --- files, as a user sees them ---------------------------------------------------- */

static char *fmt_path(struct kunit *test, const char *fmt, ...) __printf(2, 3);
static char *fmt_path(struct kunit *test, const char *fmt, ...)
{
	char *s = kunit_kzalloc(test, PATH_MAX, GFP_KERNEL);
	va_list ap;

	KUNIT_ASSERT_NOT_NULL(test, s);
	va_start(ap, fmt);
	vsnprintf(s, PATH_MAX, fmt, ap);
	va_end(ap);
	return s;
}

static bool exists(const char *name)
{
	struct path p;

	if (kern_path(name, LOOKUP_FOLLOW, &p))
		return false;
	path_put(&p);
	return true;
}

/* The file's mode (type and permissions), or 0 if there is no such file. */
static umode_t mode_of(const char *name)
{
	struct path p;
	umode_t mode;

	if (kern_path(name, LOOKUP_FOLLOW, &p))
		return 0;
	mode = d_inode(p.dentry)->i_mode;
	path_put(&p);
	return mode;
}

/* Reads from the start of an open file into buf (NUL-terminated). */
static ssize_t read_open(struct file *f, char *buf, size_t cap)
{
	loff_t pos = 0;
	ssize_t n = kernel_read(f, buf, cap - 1, &pos);

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

static ssize_t write_open(struct file *f, const char *s)
{
	loff_t pos = 0;

	return kernel_write(f, s, strlen(s), &pos);
}

/* open(), read() and close(): the bytes read or a negative errno. */
static ssize_t read_file(const char *name, char *buf, size_t cap)
{
	struct file *f = filp_open(name, O_RDONLY, 0);
	ssize_t n;

	buf[0] = '\0';
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = read_open(f, buf, cap);
	filp_close(f, NULL);
	return n;
}

static ssize_t write_file(const char *name, const char *s)
{
	struct file *f = filp_open(name, O_WRONLY, 0);
	ssize_t n;

	if (IS_ERR(f))
		return PTR_ERR(f);
	n = write_open(f, s);
	filp_close(f, NULL);
	return n;
}

/* A folder's entries, without "." and "..". */
#define LIST_MAX 16
struct listing {
	struct dir_context ctx;
	int n;
	bool overflow;
	char (*names)[NAME_MAX + 1];	/* LIST_MAX of them */
};

static bool list_one(struct dir_context *ctx, const char *name, int len, loff_t off, u64 ino,
		     unsigned int type)
{
	struct listing *l = container_of(ctx, struct listing, ctx);

	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return true;
	if (l->n == LIST_MAX) {
		l->overflow = true;
		return false;
	}
	scnprintf(l->names[l->n++], NAME_MAX + 1, "%.*s", len, name);
	return true;
}

/* Whether the folder holds exactly these entries (a NULL-terminated list). */
static void expect_listing(struct kunit *test, const char *dir, const char *const *want)
{
	struct listing l = {
		.ctx.actor = list_one,
		.names = kunit_kcalloc(test, LIST_MAX, NAME_MAX + 1, GFP_KERNEL),
	};
	struct file *f;
	int i, j, nwant = 0;

	KUNIT_ASSERT_NOT_NULL(test, l.names);
	f = filp_open(dir, O_RDONLY | O_DIRECTORY, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f), "cannot open %s: %ld", dir, PTR_ERR(f));
	KUNIT_EXPECT_EQ(test, iterate_dir(f, &l.ctx), 0);
	filp_close(f, NULL);
	KUNIT_EXPECT_FALSE(test, l.overflow);
	for (; want[nwant]; nwant++) {
		for (i = 0; i < l.n && strcmp(l.names[i], want[nwant]); i++)
			;
		KUNIT_EXPECT_LT_MSG(test, i, l.n, "%s has no %s", dir, want[nwant]);
	}
	for (j = 0; j < l.n; j++) {
		for (i = 0; want[i] && strcmp(l.names[j], want[i]); i++)
			;
		KUNIT_EXPECT_NOT_NULL_MSG(test, want[i], "%s has %s, which it should not", dir,
					  l.names[j]);
	}
	KUNIT_EXPECT_EQ_MSG(test, l.n, nwant, "entries of %s", dir);
}

/* --- the fixture: what a case added, removed at its end whatever happened ------------------ */

#define FX_MAX 8
struct fx {
	struct rtrs_env_sysfs_sess *sess[FX_MAX];
	struct rtrs_env_sysfs_path *path[FX_MAX];
	struct file *file[FX_MAX];
	char *buf;		/* a page for reads */
	char *core[FX_MAX];	/* distinct pointers to stand for core paths */
	int base;		/* glue objects alive before the case (a leak of an earlier one) */
};

static struct fx *fx_of(struct kunit *test)
{
	return test->priv;
}

/* The case's own glue objects, alive. */
static int live(struct kunit *test)
{
	return glue_live() - fx_of(test)->base;
}

static bool wait_live(struct kunit *test, int want)
{
	return wait_glue_live(fx_of(test)->base + want);
}

static int fx_init(struct kunit *test)
{
	struct fx *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	int i;

	if (!f)
		return -ENOMEM;
	f->buf = kunit_kzalloc(test, PAGE_SIZE + 1, GFP_KERNEL);
	if (!f->buf)
		return -ENOMEM;
	for (i = 0; i < FX_MAX; i++) {
		f->core[i] = kunit_kzalloc(test, 1, GFP_KERNEL);
		if (!f->core[i])
			return -ENOMEM;
	}
	stub_reset();
	atomic_set(&glue_fail_at, 0);
	f->base = glue_live();
	test->priv = f;
	return 0;
}

static void fx_exit(struct kunit *test)
{
	struct fx *f = fx_of(test);
	int i;

	for (i = 0; i < FX_MAX; i++)
		if (f->file[i])
			filp_close(f->file[i], NULL);
	for (i = 0; i < FX_MAX; i++)
		if (f->path[i])
			rtrs_env_sysfs_path_del(f->path[i]);
	for (i = 0; i < FX_MAX; i++)
		if (f->sess[i])
			rtrs_env_sysfs_sess_del(f->sess[i]);
	atomic_set(&glue_fail_at, 0);
	KUNIT_EXPECT_TRUE_MSG(test, wait_live(test, 0),
			      "%d object(s) of the glue not released 15 s after the case",
			      live(test));
}

static struct rtrs_env_sysfs_sess *fx_sess_add(struct kunit *test, int slot, const char *name)
{
	struct fx *f = fx_of(test);

	KUNIT_ASSERT_NULL(test, f->sess[slot]);
	KUNIT_ASSERT_EQ_MSG(test, rtrs_env_sysfs_sess_add(name, &f->sess[slot]), 0,
			    "session %s", name);
	return f->sess[slot];
}

static void fx_sess_del(struct kunit *test, int slot)
{
	struct fx *f = fx_of(test);
	struct rtrs_env_sysfs_sess *s = f->sess[slot];

	f->sess[slot] = NULL;
	rtrs_env_sysfs_sess_del(s);
}

/* A path whose core path is f->core[slot]. */
static struct rtrs_env_sysfs_path *fx_path_add(struct kunit *test, int slot,
					       struct rtrs_env_sysfs_sess *s, const char *name)
{
	struct fx *f = fx_of(test);

	KUNIT_ASSERT_NULL(test, f->path[slot]);
	KUNIT_ASSERT_EQ_MSG(test, rtrs_env_sysfs_path_add(s, name, f->core[slot], &f->path[slot]),
			    0, "path %s", name);
	return f->path[slot];
}

static void fx_path_del(struct kunit *test, int slot)
{
	struct fx *f = fx_of(test);
	struct rtrs_env_sysfs_path *p = f->path[slot];

	f->path[slot] = NULL;
	rtrs_env_sysfs_path_del(p);
}

static struct file *fx_open(struct kunit *test, int slot, const char *name, int flags)
{
	struct fx *f = fx_of(test);
	struct file *file;

	KUNIT_ASSERT_NULL(test, f->file[slot]);
	file = filp_open(name, flags, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "open %s: %ld", name, PTR_ERR(file));
	f->file[slot] = file;
	return file;
}

static void fx_close(struct kunit *test, int slot)
{
	struct fx *f = fx_of(test);

	filp_close(f->file[slot], NULL);
	f->file[slot] = NULL;
}

/* The suites' class, in place of the one rtrs_glue_sysfs_init() makes. */
static int class_suite_init(struct kunit_suite *suite)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
	rtrs_glue_class = class_create(THIS_MODULE, KUNIT_CLASS);
#else
	rtrs_glue_class = class_create(KUNIT_CLASS);
#endif
	return PTR_ERR_OR_ZERO(rtrs_glue_class);
}

static void class_suite_exit(struct kunit_suite *suite)
{
	/* Each case waited for its releases; this is for a case cut short. */
	if (!wait_glue_live(0))
		pr_err("%d object(s) of the glue still alive at the end of %s\n", glue_live(),
		       suite->name);
	class_destroy(rtrs_glue_class);
	rtrs_glue_class = NULL;
}

/* The files of a path, with their core attribute and mode. */
static const struct {
	const char *file;	/* under paths/<path>/ */
	enum rtrs_core_path_attr attr;
	umode_t mode;
} path_files[] = {
	{ "hca_name", RTRS_CORE_ATTR_HCA_NAME, 0444 },
	{ "hca_port", RTRS_CORE_ATTR_HCA_PORT, 0444 },
	{ "src_addr", RTRS_CORE_ATTR_SRC_ADDR, 0444 },
	{ "dst_addr", RTRS_CORE_ATTR_DST_ADDR, 0444 },
	{ "disconnect", RTRS_CORE_ATTR_DISCONNECT, 0644 },
	{ "stats/rdma", RTRS_CORE_ATTR_STATS_RDMA, 0644 },
};

#define PATH_A "ip:10.77.0.2@ip:10.77.0.1"
#define PATH_B "ip:10.77.0.3@ip:10.77.0.1"

/* ===== suite rtrs_srv_sysfs: the files of the ABI and what they reach =========== */

/* A session: its folder in the class, with an empty paths/, announced; then gone. */
static void sysfs_session_files(struct kunit *test)
{
	static const char *const none[] = { NULL };
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");

	KUNIT_EXPECT_TRUE(test, S_ISDIR(mode_of(CLASS_DIR "/kunit-sess")));
	KUNIT_EXPECT_TRUE(test, S_ISDIR(mode_of(CLASS_DIR "/kunit-sess/paths")));
	expect_listing(test, CLASS_DIR "/kunit-sess/paths", none);
	KUNIT_EXPECT_STREQ(test, dev_name(&s->dev), "kunit-sess");
	/* The add uevent went out, once paths/ was there. */
	KUNIT_EXPECT_TRUE(test, s->dev.kobj.state_add_uevent_sent != 0);
	KUNIT_EXPECT_FALSE(test, dev_get_uevent_suppress(&s->dev));
	KUNIT_EXPECT_EQ(test, live(test), 1);

	fx_sess_del(test, 0);
	KUNIT_EXPECT_FALSE(test, exists(CLASS_DIR "/kunit-sess"));
	KUNIT_EXPECT_FALSE(test, exists("/sys/devices/virtual/" KUNIT_CLASS "/kunit-sess"));
}

/* A path: exactly the files of the ABI, with their modes; then gone. */
static void sysfs_path_files(struct kunit *test)
{
	static const char *const one[] = { PATH_A, NULL };
	static const char *const none[] = { NULL };
	static const char *const files[] = { "hca_name", "hca_port", "src_addr", "dst_addr",
					     "disconnect", "stats", NULL };
	static const char *const stats[] = { "rdma", NULL };
	const char *dir = CLASS_DIR "/kunit-sess/paths/" PATH_A;
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");
	int i;

	fx_path_add(test, 0, s, PATH_A);
	expect_listing(test, CLASS_DIR "/kunit-sess/paths", one);
	KUNIT_EXPECT_EQ(test, mode_of(dir), (umode_t)(S_IFDIR | 0755));
	expect_listing(test, dir, files);
	KUNIT_EXPECT_EQ(test, mode_of(fmt_path(test, "%s/stats", dir)), (umode_t)(S_IFDIR | 0755));
	expect_listing(test, fmt_path(test, "%s/stats", dir), stats);
	for (i = 0; i < ARRAY_SIZE(path_files); i++)
		KUNIT_EXPECT_EQ_MSG(test, mode_of(fmt_path(test, "%s/%s", dir, path_files[i].file)),
				    (umode_t)(S_IFREG | path_files[i].mode), "%s",
				    path_files[i].file);
	/* Looking is not reading. */
	KUNIT_EXPECT_EQ(test, stub.shows, 0);
	KUNIT_EXPECT_EQ(test, live(test), 3);

	fx_path_del(test, 0);
	KUNIT_EXPECT_FALSE(test, exists(dir));
	expect_listing(test, CLASS_DIR "/kunit-sess/paths", none);
	KUNIT_EXPECT_TRUE(test, exists(CLASS_DIR "/kunit-sess"));
}

/* Each file's show reaches the core with its attribute and its path. */
static void sysfs_show_reaches_core(struct kunit *test)
{
	struct fx *f = fx_of(test);
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");
	int i, slot, calls = 0;

	fx_path_add(test, 0, s, PATH_A);
	fx_path_add(test, 1, s, PATH_B);
	for (slot = 0; slot < 2; slot++) {
		for (i = 0; i < ARRAY_SIZE(path_files); i++) {
			const char *file = fmt_path(test, CLASS_DIR "/kunit-sess/paths/%s/%s",
						    slot ? PATH_B : PATH_A, path_files[i].file);

			scnprintf(stub.text, sizeof(stub.text), "%d:%s\n", slot, path_files[i].file);
			KUNIT_EXPECT_EQ_MSG(test, read_file(file, f->buf, PAGE_SIZE + 1),
					    (ssize_t)strlen(stub.text), "%s", file);
			KUNIT_EXPECT_STREQ(test, f->buf, stub.text);
			KUNIT_EXPECT_EQ(test, stub.shows, ++calls);
			KUNIT_EXPECT_EQ_MSG(test, stub.attr, path_files[i].attr, "%s", file);
			KUNIT_EXPECT_PTR_EQ_MSG(test, stub.core_path, (void *)f->core[slot], "%s",
						file);
			KUNIT_EXPECT_EQ(test, stub.cap, (size_t)PAGE_SIZE);
		}
	}
	KUNIT_EXPECT_EQ(test, stub.stores, 0);
}

/* What the core's show returns is what the reader gets: an error, or nothing. */
static void sysfs_show_error(struct kunit *test)
{
	struct fx *f = fx_of(test);
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");
	const char *file = CLASS_DIR "/kunit-sess/paths/" PATH_A "/hca_name";

	fx_path_add(test, 0, s, PATH_A);
	stub.show_ret = -EIO;
	KUNIT_EXPECT_EQ(test, read_file(file, f->buf, PAGE_SIZE + 1), (ssize_t)-EIO);
	stub.show_ret = -ENOTCONN;
	KUNIT_EXPECT_EQ(test, read_file(CLASS_DIR "/kunit-sess/paths/" PATH_A "/stats/rdma",
					f->buf, PAGE_SIZE + 1), (ssize_t)-ENOTCONN);
	stub.show_ret = 0;
	stub.text[0] = '\0';
	KUNIT_EXPECT_EQ(test, read_file(file, f->buf, PAGE_SIZE + 1), (ssize_t)0);
	KUNIT_EXPECT_EQ(test, stub.shows, 3);
}

/* A write to disconnect or stats/rdma reaches the core as written; success is the count. */
static void sysfs_store_reaches_core(struct kunit *test)
{
	static const char *const writes[] = { "1\n", "1", "anything at all\n" };
	struct fx *f = fx_of(test);
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");
	int i, slot, w, calls = 0;

	fx_path_add(test, 0, s, PATH_A);
	fx_path_add(test, 1, s, PATH_B);
	for (slot = 0; slot < 2; slot++) {
		for (i = 4; i < ARRAY_SIZE(path_files); i++) {
			const char *file = fmt_path(test, CLASS_DIR "/kunit-sess/paths/%s/%s",
						    slot ? PATH_B : PATH_A, path_files[i].file);

			for (w = 0; w < ARRAY_SIZE(writes); w++) {
				KUNIT_EXPECT_EQ_MSG(test, write_file(file, writes[w]),
						    (ssize_t)strlen(writes[w]), "%s", file);
				KUNIT_EXPECT_EQ(test, stub.stores, ++calls);
				KUNIT_EXPECT_EQ_MSG(test, stub.attr, path_files[i].attr, "%s", file);
				KUNIT_EXPECT_PTR_EQ(test, stub.core_path, (void *)f->core[slot]);
				KUNIT_EXPECT_EQ(test, stub.len, strlen(writes[w]));
				KUNIT_EXPECT_STREQ(test, stub.buf, writes[w]);
				KUNIT_EXPECT_TRUE(test, stub.buf_terminated);
			}
		}
	}
	KUNIT_EXPECT_EQ(test, stub.shows, 0);
}

/* The core's error goes back to the writer as it is. */
static void sysfs_store_error(struct kunit *test)
{
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");
	const char *disc = CLASS_DIR "/kunit-sess/paths/" PATH_A "/disconnect";
	const char *rdma = CLASS_DIR "/kunit-sess/paths/" PATH_A "/stats/rdma";

	fx_path_add(test, 0, s, PATH_A);
	stub.store_ret = -EINVAL;
	KUNIT_EXPECT_EQ(test, write_file(disc, "0\n"), (ssize_t)-EINVAL);
	KUNIT_EXPECT_STREQ(test, stub.buf, "0\n");
	KUNIT_EXPECT_EQ(test, write_file(rdma, "2"), (ssize_t)-EINVAL);
	KUNIT_EXPECT_EQ(test, stub.attr, RTRS_CORE_ATTR_STATS_RDMA);
	stub.store_ret = -EBUSY;
	KUNIT_EXPECT_EQ(test, write_file(disc, "1"), (ssize_t)-EBUSY);
	KUNIT_EXPECT_EQ(test, stub.attr, RTRS_CORE_ATTR_DISCONNECT);
	KUNIT_EXPECT_EQ(test, stub.stores, 3);
}

/* The 0444 files cannot be opened for writing, even by root; the core hears nothing. */
static void sysfs_read_only_files(struct kunit *test)
{
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");
	int i;

	fx_path_add(test, 0, s, PATH_A);
	for (i = 0; i < 4; i++) {
		const char *file = fmt_path(test, CLASS_DIR "/kunit-sess/paths/" PATH_A "/%s",
					    path_files[i].file);

		KUNIT_EXPECT_EQ_MSG(test, write_file(file, "1"), (ssize_t)-EACCES, "%s", file);
	}
	KUNIT_EXPECT_EQ(test, stub.stores, 0);
}

/* Two sessions with a path of the same name each: apart, and one goes alone. */
static void sysfs_two_sessions(struct kunit *test)
{
	struct fx *f = fx_of(test);
	struct rtrs_env_sysfs_sess *s1 = fx_sess_add(test, 0, "kunit-one");
	struct rtrs_env_sysfs_sess *s2 = fx_sess_add(test, 1, "kunit-two");

	fx_path_add(test, 0, s1, PATH_A);
	fx_path_add(test, 1, s2, PATH_A);
	KUNIT_EXPECT_GT(test, read_file(CLASS_DIR "/kunit-two/paths/" PATH_A "/hca_port", f->buf,
					PAGE_SIZE + 1), (ssize_t)0);
	KUNIT_EXPECT_PTR_EQ(test, stub.core_path, (void *)f->core[1]);

	fx_path_del(test, 0);
	fx_sess_del(test, 0);
	KUNIT_EXPECT_FALSE(test, exists(CLASS_DIR "/kunit-one"));
	KUNIT_EXPECT_GT(test, read_file(CLASS_DIR "/kunit-two/paths/" PATH_A "/hca_port", f->buf,
					PAGE_SIZE + 1), (ssize_t)0);
	KUNIT_EXPECT_PTR_EQ(test, stub.core_path, (void *)f->core[1]);
}

/*
 * A session deleted and added again at once under the same name (a client
 * that reconnects): a new device each time, while the old one still waits
 * for its release; its files work.
 */
static void sysfs_readd_session(struct kunit *test)
{
	struct fx *f = fx_of(test);
	const char *file = CLASS_DIR "/kunit-again/paths/" PATH_A "/src_addr";
	struct rtrs_env_sysfs_sess *s, *old = NULL;
	int round;

	for (round = 0; round < 3; round++) {
		s = fx_sess_add(test, 0, "kunit-again");
		/* The old one is not freed yet (its release waits): a new one. */
		if (IS_ENABLED(CONFIG_DEBUG_KOBJECT_RELEASE))
			KUNIT_EXPECT_PTR_NE(test, s, old);
		fx_path_add(test, 0, s, PATH_A);
		stub.shows = 0;
		KUNIT_EXPECT_EQ(test, read_file(file, f->buf, PAGE_SIZE + 1),
				(ssize_t)strlen(stub.text));
		KUNIT_EXPECT_EQ(test, stub.shows, 1);
		KUNIT_EXPECT_PTR_EQ(test, stub.core_path, (void *)f->core[0]);
		fx_path_del(test, 0);
		fx_sess_del(test, 0);
		KUNIT_EXPECT_FALSE(test, exists(CLASS_DIR "/kunit-again"));
		old = s;
	}
}

/* A path deleted and added again under the same name in the same session. */
static void sysfs_readd_path(struct kunit *test)
{
	struct fx *f = fx_of(test);
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");
	const char *file = CLASS_DIR "/kunit-sess/paths/" PATH_A "/dst_addr";
	int round;

	for (round = 0; round < 3; round++) {
		fx_path_add(test, round % 2, s, PATH_A);
		KUNIT_EXPECT_GT(test, read_file(file, f->buf, PAGE_SIZE + 1), (ssize_t)0);
		KUNIT_EXPECT_PTR_EQ(test, stub.core_path, (void *)f->core[round % 2]);
		fx_path_del(test, round % 2);
		KUNIT_EXPECT_FALSE(test, exists(file));
	}
}

/* No memory for the session: -ENOMEM, nothing in sysfs, and the next try works. */
static void sysfs_sess_add_enomem(struct kunit *test)
{
	struct rtrs_env_sysfs_sess *s = NULL;

	atomic_set(&glue_fail_at, 1);
	KUNIT_EXPECT_EQ(test, rtrs_env_sysfs_sess_add("kunit-sess", &s), -ENOMEM);
	KUNIT_EXPECT_NULL(test, s);
	KUNIT_EXPECT_FALSE(test, exists(CLASS_DIR "/kunit-sess"));
	KUNIT_EXPECT_EQ(test, live(test), 0);
	fx_sess_add(test, 0, "kunit-sess");
	KUNIT_EXPECT_TRUE(test, exists(CLASS_DIR "/kunit-sess/paths"));
}

/*
 * No memory for the path, then none for its stats/: -ENOMEM, the session as
 * it was (its other path untouched), nothing left once the releases ran,
 * and the same name can be added afterwards.
 */
static void sysfs_path_add_enomem(struct kunit *test)
{
	static const char *const only_b[] = { PATH_B, NULL };
	struct fx *f = fx_of(test);
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");
	struct rtrs_env_sysfs_path *p = NULL;
	int fail;

	fx_path_add(test, 1, s, PATH_B);
	for (fail = 1; fail <= 2; fail++) {
		atomic_set(&glue_fail_at, fail);
		KUNIT_EXPECT_EQ_MSG(test, rtrs_env_sysfs_path_add(s, PATH_A, f->core[0], &p),
				    -ENOMEM, "allocation %d failing", fail);
		KUNIT_EXPECT_NULL(test, p);
		KUNIT_EXPECT_EQ(test, atomic_read(&glue_fail_at), 0);
		expect_listing(test, CLASS_DIR "/kunit-sess/paths", only_b);
		/* The session and path B: 1 + 2. */
		KUNIT_EXPECT_TRUE_MSG(test, wait_live(test, 3), "%d alive", live(test));
	}
	KUNIT_EXPECT_GT(test, read_file(CLASS_DIR "/kunit-sess/paths/" PATH_B "/hca_name",
					f->buf, PAGE_SIZE + 1), (ssize_t)0);
	fx_path_add(test, 0, s, PATH_A);
	KUNIT_EXPECT_GT(test, read_file(CLASS_DIR "/kunit-sess/paths/" PATH_A "/stats/rdma",
					f->buf, PAGE_SIZE + 1), (ssize_t)0);
	KUNIT_EXPECT_PTR_EQ(test, stub.core_path, (void *)f->core[0]);
	KUNIT_EXPECT_EQ(test, stub.shows, 2);
}

/* The longest names the core makes: a 254-byte session, a path of two full GIDs. */
static void sysfs_longest_names(struct kunit *test)
{
	struct fx *f = fx_of(test);
	const char *path = "gid:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
			   "@gid:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
	char *name = kunit_kzalloc(test, 255, GFP_KERNEL);
	struct rtrs_env_sysfs_sess *s;

	KUNIT_ASSERT_NOT_NULL(test, name);
	memset(name, 's', 254);
	s = fx_sess_add(test, 0, name);
	fx_path_add(test, 0, s, path);
	KUNIT_EXPECT_EQ(test, strlen(dev_name(&s->dev)), (size_t)254);
	KUNIT_EXPECT_GT(test, read_file(fmt_path(test, CLASS_DIR "/%s/paths/%s/stats/rdma", name,
						 path), f->buf, PAGE_SIZE + 1), (ssize_t)0);
	KUNIT_EXPECT_EQ(test, stub.attr, RTRS_CORE_ATTR_STATS_RDMA);
}

/*
 * The glue's own class setup: rtrs_glue_sysfs_init() makes /sys/class/rtrs-server,
 * sessions go there, rtrs_glue_sysfs_exit() removes it. Not with
 * rtrs-server.ko loaded: the name is taken then.
 */
static void sysfs_glue_class(struct kunit *test)
{
	struct class *ours = rtrs_glue_class;
	struct fx *f = fx_of(test);
	int err;

	if (exists("/sys/class/rtrs-server"))
		kunit_skip(test, "rtrs-server.ko is loaded: its class name is taken");
	err = rtrs_glue_sysfs_init();
	if (err) {
		rtrs_glue_class = ours;
		KUNIT_FAIL(test, "rtrs_glue_sysfs_init: %d", err);
		return;
	}
	KUNIT_EXPECT_PTR_NE(test, rtrs_glue_class, ours);
	KUNIT_EXPECT_TRUE(test, S_ISDIR(mode_of("/sys/class/rtrs-server")));
	if (rtrs_env_sysfs_sess_add("kunit-real", &f->sess[0]) == 0) {
		KUNIT_EXPECT_TRUE(test, S_ISDIR(mode_of("/sys/class/rtrs-server/kunit-real/paths")));
		fx_sess_del(test, 0);
	} else {
		KUNIT_FAIL(test, "cannot add a session to the rtrs-server class");
	}
	/* The device's release runs while the class is gone: it needs nothing of it. */
	rtrs_glue_sysfs_exit();
	rtrs_glue_class = ours;
	KUNIT_EXPECT_FALSE(test, exists("/sys/class/rtrs-server"));
	KUNIT_EXPECT_TRUE(test, wait_live(test, 0));
}

static struct kunit_case sysfs_cases[] = {
	KUNIT_CASE(sysfs_session_files),
	KUNIT_CASE(sysfs_path_files),
	KUNIT_CASE(sysfs_show_reaches_core),
	KUNIT_CASE(sysfs_show_error),
	KUNIT_CASE(sysfs_store_reaches_core),
	KUNIT_CASE(sysfs_store_error),
	KUNIT_CASE(sysfs_read_only_files),
	KUNIT_CASE(sysfs_two_sessions),
	KUNIT_CASE(sysfs_readd_session),
	KUNIT_CASE(sysfs_readd_path),
	KUNIT_CASE(sysfs_sess_add_enomem),
	KUNIT_CASE(sysfs_path_add_enomem),
	KUNIT_CASE(sysfs_longest_names),
	KUNIT_CASE(sysfs_glue_class),
	{}
};

static struct kunit_suite sysfs_suite = {
	.name = "rtrs_srv_sysfs",
	.suite_init = class_suite_init,
	.suite_exit = class_suite_exit,
	.init = fx_init,
	.exit = fx_exit,
	.test_cases = sysfs_cases,
};

/* ===== suite rtrs_srv_sysfs_lifetime: files held open, removal under way ======== */

/*
 * Files held open across rtrs_env_sysfs_path_del(): from its return on,
 * reads and writes fail with ENODEV and the core hears nothing, however long
 * the files stay open; the kobjects are freed by their releases meanwhile
 * (KASAN watches the memory), and closing afterwards is harmless.
 */
static void lifetime_open_files_across_del(struct kunit *test)
{
	struct fx *f = fx_of(test);
	const char *dir = CLASS_DIR "/kunit-sess/paths/" PATH_A;
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");
	struct file *name, *disc, *rdma;

	fx_path_add(test, 0, s, PATH_A);
	name = fx_open(test, 0, fmt_path(test, "%s/hca_name", dir), O_RDONLY);
	disc = fx_open(test, 1, fmt_path(test, "%s/disconnect", dir), O_RDWR);
	rdma = fx_open(test, 2, fmt_path(test, "%s/stats/rdma", dir), O_RDWR);
	KUNIT_EXPECT_GT(test, read_open(name, f->buf, PAGE_SIZE + 1), (ssize_t)0);
	KUNIT_EXPECT_GT(test, read_open(disc, f->buf, PAGE_SIZE + 1), (ssize_t)0);
	KUNIT_EXPECT_EQ(test, write_open(rdma, "1\n"), (ssize_t)2);
	KUNIT_EXPECT_EQ(test, stub.shows, 2);
	KUNIT_EXPECT_EQ(test, stub.stores, 1);

	fx_path_del(test, 0);
	KUNIT_EXPECT_EQ(test, read_open(name, f->buf, PAGE_SIZE + 1), (ssize_t)-ENODEV);
	KUNIT_EXPECT_EQ(test, read_open(disc, f->buf, PAGE_SIZE + 1), (ssize_t)-ENODEV);
	KUNIT_EXPECT_EQ(test, write_open(disc, "1"), (ssize_t)-ENODEV);
	KUNIT_EXPECT_EQ(test, read_open(rdma, f->buf, PAGE_SIZE + 1), (ssize_t)-ENODEV);
	KUNIT_EXPECT_EQ(test, write_open(rdma, "1"), (ssize_t)-ENODEV);
	/* The path's kobjects are released with the files still open. */
	KUNIT_EXPECT_TRUE_MSG(test, wait_live(test, 1), "%d alive", live(test));
	KUNIT_EXPECT_EQ(test, read_open(name, f->buf, PAGE_SIZE + 1), (ssize_t)-ENODEV);
	KUNIT_EXPECT_EQ(test, write_open(disc, "1"), (ssize_t)-ENODEV);
	/* And the session's, too. */
	fx_sess_del(test, 0);
	KUNIT_EXPECT_TRUE_MSG(test, wait_live(test, 0), "%d alive", live(test));
	KUNIT_EXPECT_EQ(test, read_open(rdma, f->buf, PAGE_SIZE + 1), (ssize_t)-ENODEV);
	fx_close(test, 0);
	fx_close(test, 1);
	fx_close(test, 2);
	KUNIT_EXPECT_EQ(test, stub.shows, 2);
	KUNIT_EXPECT_EQ(test, stub.stores, 1);
}

/* A reference to the path's kernfs nodes held across its removal and release. */
static void lifetime_kernfs_ref_across_del(struct kunit *test)
{
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");
	struct rtrs_env_sysfs_path *p = fx_path_add(test, 0, s, PATH_A);
	struct kernfs_node *dir, *file;

	dir = p->kobj.sd;
	kernfs_get(dir);
	file = kernfs_find_and_get(dir, "disconnect");
	KUNIT_EXPECT_NOT_NULL(test, file);
	fx_path_del(test, 0);
	fx_sess_del(test, 0);
	KUNIT_EXPECT_TRUE_MSG(test, wait_live(test, 0), "%d alive", live(test));
	/* The nodes outlive the kobjects; they are only names now. */
	KUNIT_EXPECT_STREQ(test, dir->name, PATH_A);
	KUNIT_EXPECT_NULL(test, kernfs_find_and_get(dir, "hca_name"));
	if (file)
		kernfs_put(file);
	kernfs_put(dir);
	KUNIT_EXPECT_EQ(test, stub.shows + stub.stores, 0);
}

/* A read or write of a file in a thread of its own, to block in the core. */
struct io_thread {
	const char *file;
	const char *write;	/* NULL: read */
	char buf[64];
	ssize_t ret;
	struct completion done;
};

static int io_thread_fn(void *arg)
{
	struct io_thread *t = arg;

	if (t->write)
		t->ret = write_file(t->file, t->write);
	else
		t->ret = read_file(t->file, t->buf, sizeof(t->buf));
	complete(&t->done);
	return 0;
}

struct del_thread {
	struct rtrs_env_sysfs_path *path;
	struct completion done;
};

static int del_thread_fn(void *arg)
{
	struct del_thread *t = arg;

	rtrs_env_sysfs_path_del(t->path);
	complete(&t->done);
	return 0;
}

/*
 * rtrs_env_sysfs_path_del() returns only once a show or store running in the
 * core has returned: the core may free its path as soon as del returns.
 */
static void del_waits_for(struct kunit *test, const char *file, const char *write)
{
	struct rtrs_env_sysfs_sess *s = fx_sess_add(test, 0, "kunit-sess");
	struct io_thread *io = kunit_kzalloc(test, sizeof(*io), GFP_KERNEL);
	struct del_thread *del = kunit_kzalloc(test, sizeof(*del), GFP_KERNEL);
	struct task_struct *task;

	KUNIT_ASSERT_NOT_NULL(test, io);
	KUNIT_ASSERT_NOT_NULL(test, del);
	fx_path_add(test, 0, s, PATH_A);
	io->file = fmt_path(test, CLASS_DIR "/kunit-sess/paths/" PATH_A "/%s", file);
	io->write = write;
	init_completion(&io->done);
	init_completion(&del->done);
	stub.block = true;
	task = kthread_run(io_thread_fn, io, "kunit-sysfs-io");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	/* From here on the threads must be waited for: no assertion may end the case. */
	if (!wait_for_completion_timeout(&stub.entered, 30 * HZ)) {
		KUNIT_FAIL(test, "the %s never reached the core", write ? "write" : "read");
		stub.block = false;
		wait_for_completion(&io->done);
		return;
	}
	del->path = fx_of(test)->path[0];
	fx_of(test)->path[0] = NULL;
	task = kthread_run(del_thread_fn, del, "kunit-sysfs-del");
	if (IS_ERR(task)) {
		KUNIT_FAIL(test, "cannot start a thread: %ld", PTR_ERR(task));
		complete(&stub.resume);
		wait_for_completion(&io->done);
		rtrs_env_sysfs_path_del(del->path);
		return;
	}
	KUNIT_EXPECT_EQ_MSG(test, wait_for_completion_timeout(&del->done, HZ / 2), 0UL,
			    "path_del returned while a %s was in the core",
			    write ? "store" : "show");
	complete(&stub.resume);
	wait_for_completion(&del->done);
	wait_for_completion(&io->done);
	/* The operation that was under way finished normally. */
	if (write) {
		KUNIT_EXPECT_EQ(test, io->ret, (ssize_t)strlen(write));
		KUNIT_EXPECT_EQ(test, stub.stores, 1);
	} else {
		KUNIT_EXPECT_EQ(test, io->ret, (ssize_t)strlen(stub.text));
		KUNIT_EXPECT_STREQ(test, io->buf, stub.text);
		KUNIT_EXPECT_EQ(test, stub.shows, 1);
	}
	KUNIT_EXPECT_FALSE(test, exists(io->file));
}

static void lifetime_del_waits_for_show(struct kunit *test)
{
	del_waits_for(test, "src_addr", NULL);
}

static void lifetime_del_waits_for_store(struct kunit *test)
{
	del_waits_for(test, "disconnect", "1\n");
}

static void lifetime_del_waits_for_stats_store(struct kunit *test)
{
	del_waits_for(test, "stats/rdma", "1\n");
}

/*
 * The kobjects are freed by their releases, never by the del calls: under
 * CONFIG_DEBUG_KOBJECT_RELEASE, which delays each release by a second or
 * more, nothing is freed when rtrs_env_sysfs_path_del()/sess_del() return.
 */
static void lifetime_freed_by_release(struct kunit *test)
{
	struct rtrs_env_sysfs_sess *s;
	int frees;

	if (!IS_ENABLED(CONFIG_DEBUG_KOBJECT_RELEASE))
		kunit_skip(test, "needs CONFIG_DEBUG_KOBJECT_RELEASE");
	s = fx_sess_add(test, 0, "kunit-sess");
	fx_path_add(test, 0, s, PATH_A);
	frees = atomic_read(&glue_frees);
	fx_path_del(test, 0);
	fx_sess_del(test, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&glue_frees), frees);
	KUNIT_EXPECT_TRUE_MSG(test, wait_live(test, 0), "%d alive", live(test));
	KUNIT_EXPECT_EQ(test, atomic_read(&glue_frees), frees + 3);
}

static struct kunit_case lifetime_cases[] = {
	KUNIT_CASE(lifetime_open_files_across_del),
	KUNIT_CASE(lifetime_kernfs_ref_across_del),
	KUNIT_CASE(lifetime_del_waits_for_show),
	KUNIT_CASE(lifetime_del_waits_for_store),
	KUNIT_CASE(lifetime_del_waits_for_stats_store),
	KUNIT_CASE(lifetime_freed_by_release),
	{}
};

static struct kunit_suite lifetime_suite = {
	.name = "rtrs_srv_sysfs_lifetime",
	.suite_init = class_suite_init,
	.suite_exit = class_suite_exit,
	.init = fx_init,
	.exit = fx_exit,
	.test_cases = lifetime_cases,
};

kunit_test_suites(&sysfs_suite, &lifetime_suite);

MODULE_DESCRIPTION("KUnit tests of rtrs-server's kernel glue and of its C++ core in the kernel");
MODULE_LICENSE("GPL");
