/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How a path's chunks are registered (env_rdma.c, rtrs_env_mr_alloc()):
 * the kind of memory region, and the list of the chunks it is given. The
 * KUnit module maps such lists with the kernel's own page-list mapping
 * (test/kunit/env_mr_kunit.c).
 *
 * A page list (IB_MR_TYPE_MEM_REG) on every device, also on those that can
 * register lists with gaps (IBK_SG_GAPS_REG; IB_DEVICE_SG_GAPS_REG before
 * 6.0: mlx5), for which upstream's RTRS asks for IB_MR_TYPE_SG_GAPS since
 * 7.0 (7.2's rtrs-srv.c: the chunks of a registration go through one
 * ib_dma_map_sg(), and an IOMMU may merge them). A gap is a list entry that
 * starts or ends inside a page of the registration: a page list cannot
 * take one (the mapping, ib_sg_to_pages() for rxe and for mlx5's page
 * lists, stops there), an SG_GAPS region can (mlx5 describes it with a KLM
 * entry, address, length and key, per list entry instead of an MTT entry
 * per page). Ours has none: each chunk is one entry of the chunk's size,
 * the registration's page size is the chunk size, and each chunk's DMA
 * address is aligned to it (a chunk is alloc_pages() of its order, so its
 * physical and kernel addresses are; dma-direct maps a chunk at its
 * physical address, 6.1's dma-iommu at an IOVA aligned to the power of two
 * of its size, soft-RoCE uses the kernel address; each chunk is mapped on
 * its own, so nothing is merged). So every entry is one whole page of the
 * registration, which a page list takes as it is.
 */
#ifndef RTRS_KERNEL_ENV_MR_H
#define RTRS_KERNEL_ENV_MR_H

#include <linux/scatterlist.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#define RTRS_GLUE_CHUNK_MR_TYPE IB_MR_TYPE_MEM_REG

/*
 * sgl (n entries, chained or not): chunk i as entry i, at its DMA address
 * dma[i], size bytes; mapped with size as the page size.
 */
static inline void rtrs_glue_chunk_sg(struct scatterlist *sgl, const __UINT64_TYPE__ *dma,
				      unsigned int n, u32 size)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sg(sgl, sg, n, i) {
		sg_dma_address(sg) = dma[i];
		sg_dma_len(sg) = size;
	}
}

#endif /* RTRS_KERNEL_ENV_MR_H */
