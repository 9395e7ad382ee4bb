// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs-server-kunit.ko, part four: the glue of the admission rules
 * (src/kernel/env_admission.c): the load-time parameter and the
 * parameters/admission file.
 *
 * env_admission.c is compiled into this file; the core's side of it
 * (rtrs_core_admission_set(), _show(), _close_refused()) is the stub below,
 * which records what it was given. The module's sysfs does not exist yet
 * when KUnit runs a module's cases (the COMING state), so the file's show()
 * and store() are called as sysfs calls them, with the length of the write;
 * the guest's admission suite writes the real file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt	/* as env_admission.c has it */

#include "kernel/env_admission.c"

#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

/* --- the core's side: recorded ---------------------------------------------------- */

static struct {
	int sets;
	char text[128];		/* what the last set got, its len bytes */
	size_t len;
	int set_ret;
} adm_stub;

int rtrs_core_admission_set(const char *text, __SIZE_TYPE__ len, char *msg, __SIZE_TYPE__ cap)
{
	adm_stub.sets++;
	adm_stub.len = len;
	memcpy(adm_stub.text, text, min(len, sizeof(adm_stub.text)));
	if (adm_stub.set_ret)
		strscpy(msg, "line 1: refused by the stub (not a problem)", cap);
	return adm_stub.set_ret;
}

int rtrs_core_admission_show(char *buf, __SIZE_TYPE__ cap)
{
	return scnprintf(buf, cap, "# shown by the stub\n");
}

int rtrs_core_admission_close_refused(void)
{
	return 0;
}

static int adm_init(struct kunit *test)
{
	memset(&adm_stub, 0, sizeof(adm_stub));
	KUNIT_ASSERT_FALSE(test, rtrs_glue_admission_live);
	KUNIT_ASSERT_NULL(test, rtrs_glue_admission_at_load);
	return 0;
}

/* Whatever a case did, the glue is left stopped, with nothing kept. */
static void adm_exit(struct kunit *test)
{
	rtrs_glue_admission_stop();
	rtrs_glue_admission_param_free(NULL);
}

/* A write as sysfs hands it over: the bytes and their count. */
static ssize_t adm_write(const char *text, size_t count)
{
	return rtrs_glue_admission_store(&rtrs_glue_admission_attr, NULL, text, count);
}

/* ===== the file ================================================================== */

/* A write reaches the core whole: its bytes and its length, nothing else. */
static void admission_write_reaches_core_whole(struct kunit *test)
{
	static const char rules[] = "allow 10.77.0.2\nlimit sessions=8\n";

	KUNIT_ASSERT_EQ(test, rtrs_glue_admission_start(), 0);
	KUNIT_EXPECT_EQ(test, adm_write(rules, strlen(rules)), (ssize_t)strlen(rules));
	KUNIT_ASSERT_EQ(test, adm_stub.sets, 1);
	KUNIT_EXPECT_EQ(test, adm_stub.len, strlen(rules));
	KUNIT_EXPECT_EQ(test, memcmp(adm_stub.text, rules, strlen(rules)), 0);
	/* Refused by the core: its error, and the write fails. */
	adm_stub.set_ret = -EINVAL;
	KUNIT_EXPECT_EQ(test, adm_write(rules, strlen(rules)), (ssize_t)-EINVAL);
}

/*
 * A write with a NUL byte (issue 38's two, and one with a NUL at its end)
 * reaches the core whole, past the NUL, with its length: the core refuses
 * it as a bad text (its own tests). Cut at the NUL, as a parameter's set()
 * saw it, the first made the allow-list one address, the second turned it
 * off.
 */
static void admission_write_with_nul_reaches_core_whole(struct kunit *test)
{
	static const char widen[] = "allow 10.77.0.2\0allow 0.0.0.0/0";
	static const char unlist[] = "limit sessions=8\0allow 10.77.0.2";
	static const char trailing[] = "allow 10.77.0.2\n\0";
	const char *const texts[] = { widen, unlist, trailing };
	const size_t lens[] = { sizeof(widen) - 1, sizeof(unlist) - 1, sizeof(trailing) - 1 };
	int i;

	KUNIT_ASSERT_EQ(test, rtrs_glue_admission_start(), 0);
	adm_stub.set_ret = -EINVAL;	/* as the core answers a NUL */
	for (i = 0; i < ARRAY_SIZE(texts); i++) {
		KUNIT_EXPECT_EQ(test, adm_write(texts[i], lens[i]), (ssize_t)-EINVAL);
		KUNIT_ASSERT_EQ(test, adm_stub.sets, i + 1);
		KUNIT_EXPECT_EQ_MSG(test, adm_stub.len, lens[i], "text %d", i);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(adm_stub.text, texts[i], lens[i]), 0, "text %d", i);
	}
}

/*
 * sysfs hands a store at most a page of one write: a page may have been
 * cut, and is refused; one byte less is taken.
 */
static void admission_write_of_a_page_refused(struct kunit *test)
{
	char *text = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, text);
	memset(text, '#', PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, rtrs_glue_admission_start(), 0);
	KUNIT_EXPECT_EQ(test, adm_write(text, PAGE_SIZE), (ssize_t)-EINVAL);
	KUNIT_EXPECT_EQ(test, adm_stub.sets, 0);
	KUNIT_EXPECT_EQ(test, adm_write(text, PAGE_SIZE - 1), (ssize_t)(PAGE_SIZE - 1));
	KUNIT_EXPECT_EQ(test, adm_stub.sets, 1);
	KUNIT_EXPECT_EQ(test, adm_stub.len, (size_t)(PAGE_SIZE - 1));
}

/* Before start and after stop, a write reaches nothing and keeps nothing. */
static void admission_write_outside_init_exit(struct kunit *test)
{
	static const char rules[] = "allow 10.77.0.2\n";
	char buf[64];

	KUNIT_EXPECT_EQ(test, adm_write(rules, strlen(rules)), (ssize_t)-ENXIO);
	KUNIT_ASSERT_EQ(test, rtrs_glue_admission_start(), 0);
	KUNIT_EXPECT_GT(test, rtrs_glue_admission_show(&rtrs_glue_admission_attr, NULL, buf), 0);
	rtrs_glue_admission_stop();
	KUNIT_EXPECT_EQ(test, adm_write(rules, strlen(rules)), (ssize_t)-ENXIO);
	KUNIT_EXPECT_EQ(test, rtrs_glue_admission_show(&rtrs_glue_admission_attr, NULL, buf), 0);
	KUNIT_EXPECT_EQ(test, adm_stub.sets, 0);
	KUNIT_EXPECT_NULL(test, rtrs_glue_admission_at_load);
}

/* ===== the parameter ============================================================ */

/* The rules given at load are kept for init, which puts them in effect and frees them. */
static void admission_at_load_applied_by_init(struct kunit *test)
{
	const struct kernel_param_ops *ops = &rtrs_glue_admission_param_ops;

	KUNIT_ASSERT_EQ(test, ops->set("allow 10.77.0.0/24", NULL), 0);
	KUNIT_ASSERT_NOT_NULL(test, rtrs_glue_admission_at_load);
	KUNIT_ASSERT_EQ(test, rtrs_glue_admission_start(), 0);
	KUNIT_EXPECT_EQ(test, adm_stub.sets, 1);
	KUNIT_EXPECT_EQ(test, adm_stub.len, strlen("allow 10.77.0.0/24"));
	KUNIT_EXPECT_NULL(test, rtrs_glue_admission_at_load);
	/* Refused at load: init fails, and nothing is kept either. */
	rtrs_glue_admission_stop();
	adm_stub.set_ret = -EINVAL;
	KUNIT_ASSERT_EQ(test, ops->set("allow 10.0.0.1/8", NULL), 0);
	KUNIT_EXPECT_EQ(test, rtrs_glue_admission_start(), -EINVAL);
	KUNIT_EXPECT_FALSE(test, rtrs_glue_admission_live);
	KUNIT_EXPECT_NULL(test, rtrs_glue_admission_at_load);
}

/*
 * A load that fails before init (another parameter refused, by the loader
 * or by init's checks) never reaches rtrs_glue_admission_start(): the
 * loader's call of the parameter's free() gives the text back.
 */
static void admission_at_load_freed_without_init(struct kunit *test)
{
	const struct kernel_param_ops *ops = &rtrs_glue_admission_param_ops;

	KUNIT_ASSERT_NOT_NULL(test, ops->free);
	KUNIT_ASSERT_EQ(test, ops->set("allow 10.77.0.2", NULL), 0);
	KUNIT_ASSERT_EQ(test, ops->set("allow 10.77.0.3", NULL), 0);	/* given twice: the last */
	KUNIT_ASSERT_NOT_NULL(test, rtrs_glue_admission_at_load);
	KUNIT_EXPECT_STREQ(test, rtrs_glue_admission_at_load, "allow 10.77.0.3");
	ops->free(NULL);
	KUNIT_EXPECT_NULL(test, rtrs_glue_admission_at_load);
}

static struct kunit_case admission_cases[] = {
	KUNIT_CASE(admission_write_reaches_core_whole),
	KUNIT_CASE(admission_write_with_nul_reaches_core_whole),
	KUNIT_CASE(admission_write_of_a_page_refused),
	KUNIT_CASE(admission_write_outside_init_exit),
	KUNIT_CASE(admission_at_load_applied_by_init),
	KUNIT_CASE(admission_at_load_freed_without_init),
	{}
};

static struct kunit_suite admission_suite = {
	.name = "rtrs_srv_env_admission",
	.init = adm_init,
	.exit = adm_exit,
	.test_cases = admission_cases,
};

kunit_test_suites(&admission_suite);
