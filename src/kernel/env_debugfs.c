// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel environment, part four: what operators may read that is not
 * ABI, in debugfs:
 *   /sys/kernel/debug/rtrs-server/<session>/<client>@<server>/latency
 *   /sys/kernel/debug/rtrs-server/held (what the module holds: glue.h)
 * The file's text comes from the core (rtrs_core_path_show) when it is
 * opened; reads serve that copy. debugfs_create_file() gives the file
 * debugfs's full proxy: debugfs_remove() waits for an open that is running
 * and makes later ones fail, so the core's path is never used after
 * rtrs_env_debugfs_path_del() returned. Without debugfs (not built, or
 * "debugfs=off") every add returns NULL and nothing happens.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/slab.h>

#include "core/env.h"
#include "kernel/glue.h"

static struct dentry *rtrs_glue_debugfs_root;

/* The handles are the folders' dentries. */
static struct dentry *rtrs_glue_dir(struct dentry *parent, const char *name)
{
	struct dentry *d;

	if (!parent)
		return NULL;
	d = debugfs_create_dir(name, parent);
	return IS_ERR_OR_NULL(d) ? NULL : d;
}

struct rtrs_env_debugfs_sess *rtrs_env_debugfs_sess_add(const char *name)
{
	might_sleep();
	return (struct rtrs_env_debugfs_sess *)rtrs_glue_dir(rtrs_glue_debugfs_root, name);
}

void rtrs_env_debugfs_sess_del(struct rtrs_env_debugfs_sess *s)
{
	debugfs_remove((struct dentry *)s);
}

/* A copy of the text, made at open. */
struct rtrs_glue_latency_text {
	size_t len;
	char buf[];
};

static int rtrs_glue_latency_open(struct inode *inode, struct file *file)
{
	struct rtrs_glue_latency_text *t;
	int n;

	t = kmalloc(sizeof(*t) + PAGE_SIZE, GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	n = rtrs_core_path_show(inode->i_private, RTRS_CORE_ATTR_LATENCY, t->buf, PAGE_SIZE);
	t->len = n > 0 ? n : 0;
	file->private_data = t;
	return nonseekable_open(inode, file);
}

static ssize_t rtrs_glue_latency_read(struct file *file, char __user *ubuf, size_t count,
				      loff_t *ppos)
{
	struct rtrs_glue_latency_text *t = file->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, t->buf, t->len);
}

static int rtrs_glue_latency_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static const struct file_operations rtrs_glue_latency_fops = {
	.owner = THIS_MODULE,
	.open = rtrs_glue_latency_open,
	.read = rtrs_glue_latency_read,
	.release = rtrs_glue_latency_release,
};

struct rtrs_env_debugfs_path *rtrs_env_debugfs_path_add(struct rtrs_env_debugfs_sess *s,
							const char *name, void *core_path)
{
	struct dentry *dir, *f;

	might_sleep();
	dir = rtrs_glue_dir((struct dentry *)s, name);
	if (!dir)
		return NULL;
	f = debugfs_create_file("latency", 0400, dir, core_path, &rtrs_glue_latency_fops);
	if (IS_ERR_OR_NULL(f)) {
		debugfs_remove(dir);
		return NULL;
	}
	return (struct rtrs_env_debugfs_path *)dir;
}

/* Waits for opens of its file that are running; none starts after. */
void rtrs_env_debugfs_path_del(struct rtrs_env_debugfs_path *p)
{
	might_sleep();
	debugfs_remove((struct dentry *)p);
}

static int rtrs_glue_held_open(struct inode *inode, struct file *file)
{
	struct rtrs_glue_latency_text *t;

	t = kmalloc(sizeof(*t) + 256, GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->len = rtrs_glue_held_show(t->buf, 256);
	file->private_data = t;
	return nonseekable_open(inode, file);
}

/* A copy made at open, as the latency file. */
static const struct file_operations rtrs_glue_held_fops = {
	.owner = THIS_MODULE,
	.open = rtrs_glue_held_open,
	.read = rtrs_glue_latency_read,
	.release = rtrs_glue_latency_release,
};

void rtrs_glue_debugfs_init(void)
{
	struct dentry *d = debugfs_create_dir("rtrs-server", NULL);

	/* Absent or disabled: every add above returns NULL. */
	rtrs_glue_debugfs_root = IS_ERR_OR_NULL(d) ? NULL : d;
	/* What the module holds: rtrs_glue_held_show(). */
	if (rtrs_glue_debugfs_root)
		debugfs_create_file("held", 0400, rtrs_glue_debugfs_root, NULL,
				    &rtrs_glue_held_fops);
}

void rtrs_glue_debugfs_exit(void)
{
	debugfs_remove(rtrs_glue_debugfs_root);
	rtrs_glue_debugfs_root = NULL;
}
