// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs-server-kunit.ko, part five: how a path's chunks are registered
 * (src/kernel/env_mr.h): a page list (IB_MR_TYPE_MEM_REG) on every device,
 * never IB_MR_TYPE_SG_GAPS, because a list of our chunks has no gap.
 *
 * The cases give the kernel's own page-list mapping, ib_sg_to_pages() (what
 * the page-list registrations of rxe and mlx5 go through, after
 * ib_map_mr_sg() set the page size), lists made as rtrs_env_mr_alloc()
 * makes them (rtrs_glue_chunk_sg()) of chunks from rtrs_env_chunk_alloc()
 * (env_base.c, in env_base_kunit.o), at the addresses the devices use: the
 * physical address (dma-direct, no IOMMU: mlx5 in such a machine) and the
 * kernel address (soft-RoCE). It must take every entry as one page, with
 * nothing left for an SG_GAPS region to do. A list with a gap, made on
 * purpose, shows what it would be for: the mapping stops there.
 */
#include <kunit/test.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "core/env.h"
#include "kernel/env_mr.h"

#define MR_CHUNKS 8

struct mr_pages {
	struct ib_mr mr;
	int n;
	u64 page[MR_CHUNKS + 1];
};

static int mr_set_page(struct ib_mr *mr, u64 addr)
{
	struct mr_pages *p = container_of(mr, struct mr_pages, mr);

	if (p->n == ARRAY_SIZE(p->page))
		return -ENOMEM;
	p->page[p->n++] = addr;
	return 0;
}

/*
 * Maps n entries of size bytes at dma[] with size as the page size (as
 * rtrs_env_mr_alloc() asks): the entries the mapping took, into p.
 */
static int mr_map(struct kunit *test, struct mr_pages *p, const __UINT64_TYPE__ *dma, unsigned int n,
		  u32 size)
{
	struct sg_table sgt;
	int mapped;

	memset(p, 0, sizeof(*p));
	p->mr.page_size = size;
	KUNIT_ASSERT_EQ(test, sg_alloc_table(&sgt, n, GFP_KERNEL), 0);
	rtrs_glue_chunk_sg(sgt.sgl, dma, n, size);
	mapped = ib_sg_to_pages(&p->mr, sgt.sgl, n, NULL, mr_set_page);
	sg_free_table(&sgt);
	return mapped;
}

/* Every chunk size the module takes (8 KiB up; 128 KiB by default), both kinds of address. */
static void mr_chunks_make_a_page_list_without_gaps(struct kunit *test)
{
	void *chunk[MR_CHUNKS];
	__UINT64_TYPE__ dma[MR_CHUNKS];
	struct mr_pages *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	u32 size;
	int kind, i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, RTRS_GLUE_CHUNK_MR_TYPE, IB_MR_TYPE_MEM_REG);
	for (size = SZ_8K; size <= SZ_1M; size <<= 1) {
		for (i = 0; i < MR_CHUNKS; i++) {
			chunk[i] = rtrs_env_chunk_alloc(size);
			KUNIT_ASSERT_NOT_NULL_MSG(test, chunk[i], "size %u", size);
		}
		for (kind = 0; kind < 2; kind++) {
			for (i = 0; i < MR_CHUNKS; i++)
				dma[i] = kind ? (uintptr_t)chunk[i] : virt_to_phys(chunk[i]);
			KUNIT_EXPECT_EQ_MSG(test, mr_map(test, p, dma, MR_CHUNKS, size), MR_CHUNKS,
					    "size %u %s addresses", size, kind ? "kernel" : "physical");
			KUNIT_EXPECT_EQ_MSG(test, p->n, MR_CHUNKS, "size %u: one page a chunk", size);
			for (i = 0; i < p->n && i < MR_CHUNKS; i++)
				KUNIT_EXPECT_EQ_MSG(test, p->page[i], dma[i], "size %u chunk %d", size, i);
			KUNIT_EXPECT_EQ(test, p->mr.iova, dma[0]);
			KUNIT_EXPECT_EQ(test, p->mr.length, (u64)MR_CHUNKS * size);
		}
		for (i = 0; i < MR_CHUNKS; i++)
			rtrs_env_chunk_free(chunk[i], size);
	}
}

/*
 * A list with a gap (made here, never by the module): the fourth entry a
 * page of the machine off a page of the registration. The page-list
 * mapping stops before it; an SG_GAPS region would take it. Chunks out of
 * order or far apart are no gap: each is a page of its own.
 */
static void mr_gap_stops_a_page_list(struct kunit *test)
{
	const u32 size = SZ_128K;
	__UINT64_TYPE__ dma[MR_CHUNKS];
	struct mr_pages *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	for (i = 0; i < MR_CHUNKS; i++)
		dma[i] = SZ_1G + (__UINT64_TYPE__)(MR_CHUNKS - i) * 3 * size;	/* backwards, apart */
	KUNIT_EXPECT_EQ(test, mr_map(test, p, dma, MR_CHUNKS, size), MR_CHUNKS);
	dma[3] += PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, mr_map(test, p, dma, MR_CHUNKS, size), 3);
}

static struct kunit_case mr_cases[] = {
	KUNIT_CASE(mr_chunks_make_a_page_list_without_gaps),
	KUNIT_CASE(mr_gap_stops_a_page_list),
	{}
};

static struct kunit_suite mr_suite = {
	.name = "rtrs_srv_env_mr",
	.test_cases = mr_cases,
};

kunit_test_suites(&mr_suite);
