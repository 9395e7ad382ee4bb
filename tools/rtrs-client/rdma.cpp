// SPDX-License-Identifier: GPL-2.0
#include "rdma.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rc {

void report_release_failure(const char* what, int ret) {
    if (ret == 0) return;
    // verbs return the errno, librdmacm -1 with errno set.
    const int err = ret > 0 ? ret : errno;
    std::fprintf(stderr, "warning: %s failed: %s\n", what, std::strerror(err));
}

void CmId::reset() {
    if (!id_) return;
    if (id_->qp) rdma_destroy_qp(id_);
    report_release_failure("rdma_destroy_id", rdma_destroy_id(id_));
    id_ = nullptr;
}

static Status set_nonblock(int fd, const char* what) {
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return sys_error(errno, what);
    return {};
}

Expected<EventChannel> make_event_channel() {
    EventChannel ch(rdma_create_event_channel());
    if (!ch)
        return sys_error(
            errno, "rdma_create_event_channel (is rdma_ucm loaded? /dev/infiniband/rdma_cm?)");
    if (Status s = set_nonblock(ch->fd, "fcntl(event channel)"); !s.ok()) return s;
    return ch;
}

Expected<CmId> make_cm_id(rdma_event_channel* ch, void* context) {
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(ch, &id, context, RDMA_PS_TCP)) return sys_error(errno, "rdma_create_id");
    return CmId(id);
}

Expected<CompChannel> make_comp_channel(ibv_context* verbs) {
    CompChannel ch(ibv_create_comp_channel(verbs));
    if (!ch) return sys_error(errno, "ibv_create_comp_channel");
    if (Status s = set_nonblock(ch->fd, "fcntl(completion channel)"); !s.ok()) return s;
    return ch;
}

Expected<Pd> make_pd(ibv_context* verbs) {
    Pd pd(ibv_alloc_pd(verbs));
    if (!pd) return sys_error(errno, "ibv_alloc_pd");
    return pd;
}

Expected<Cq> make_cq(ibv_context* verbs, int cqe, void* context, ibv_comp_channel* ch) {
    Cq cq(ibv_create_cq(verbs, cqe, context, ch, 0));
    if (!cq) return sys_error(errno, strf("ibv_create_cq(%d entries)", cqe));
    if (int ret = ibv_req_notify_cq(cq.get(), 0)) return sys_error(ret, "ibv_req_notify_cq");
    return cq;
}

Expected<RegBuf> RegBuf::make(ibv_pd* pd, size_t size, int access) {
    RegBuf b;
    b.mem_.assign(size ? size : 1, 0);
    b.mr_.reset(ibv_reg_mr(pd, b.mem_.data(), b.mem_.size(), access));
    if (!b.mr_) return sys_error(errno, strf("ibv_reg_mr(%zu bytes)", size));
    return b;
}

}  // namespace rc
