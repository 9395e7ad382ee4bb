// SPDX-License-Identifier: GPL-2.0
// Owning wrappers for the librdmacm and libibverbs objects the client uses.
// Each releases its object when it goes out of scope; a failed release is
// reported on stderr (it means something still uses the object, a bug).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "status.h"

namespace rc {

void report_release_failure(const char* what, int ret);

struct EventChannelDeleter {
    void operator()(rdma_event_channel* ch) const { rdma_destroy_event_channel(ch); }
};
struct CompChannelDeleter {
    void operator()(ibv_comp_channel* ch) const {
        report_release_failure("ibv_destroy_comp_channel", ibv_destroy_comp_channel(ch));
    }
};
struct PdDeleter {
    void operator()(ibv_pd* pd) const {
        report_release_failure("ibv_dealloc_pd", ibv_dealloc_pd(pd));
    }
};
struct CqDeleter {
    void operator()(ibv_cq* cq) const {
        report_release_failure("ibv_destroy_cq", ibv_destroy_cq(cq));
    }
};
struct MrDeleter {
    void operator()(ibv_mr* mr) const { report_release_failure("ibv_dereg_mr", ibv_dereg_mr(mr)); }
};
struct MwDeleter {
    void operator()(ibv_mw* mw) const {
        report_release_failure("ibv_dealloc_mw", ibv_dealloc_mw(mw));
    }
};

using EventChannel = std::unique_ptr<rdma_event_channel, EventChannelDeleter>;
using CompChannel = std::unique_ptr<ibv_comp_channel, CompChannelDeleter>;
using Pd = std::unique_ptr<ibv_pd, PdDeleter>;
using Cq = std::unique_ptr<ibv_cq, CqDeleter>;
using Mr = std::unique_ptr<ibv_mr, MrDeleter>;
using Mw = std::unique_ptr<ibv_mw, MwDeleter>;

// An rdma_cm_id and the QP created on it (rdma_create_qp), released together.
class CmId {
public:
    CmId() = default;
    explicit CmId(rdma_cm_id* id) : id_(id) {}
    CmId(CmId&& o) noexcept : id_(o.id_) { o.id_ = nullptr; }
    CmId& operator=(CmId&& o) noexcept {
        if (this != &o) {
            reset();
            id_ = o.id_;
            o.id_ = nullptr;
        }
        return *this;
    }
    CmId(const CmId&) = delete;
    CmId& operator=(const CmId&) = delete;
    ~CmId() { reset(); }

    rdma_cm_id* get() const { return id_; }
    rdma_cm_id* operator->() const { return id_; }
    explicit operator bool() const { return id_ != nullptr; }
    void reset();

private:
    rdma_cm_id* id_ = nullptr;
};

// A non-blocking event channel.
Expected<EventChannel> make_event_channel();
Expected<CmId> make_cm_id(rdma_event_channel* ch, void* context);
// A non-blocking completion channel.
Expected<CompChannel> make_comp_channel(ibv_context* verbs);
Expected<Pd> make_pd(ibv_context* verbs);
Expected<Cq> make_cq(ibv_context* verbs, int cqe, void* context, ibv_comp_channel* ch);

// Host memory registered for local access (receives and sends), or with
// more access rights (I/O buffers the server RDMA-writes into).
class RegBuf {
public:
    static Expected<RegBuf> make(ibv_pd* pd, size_t size, int access = IBV_ACCESS_LOCAL_WRITE);
    uint8_t* data() { return mem_.data(); }
    size_t size() const { return mem_.size(); }
    uint32_t lkey() const { return mr_->lkey; }
    uint32_t rkey() const { return mr_->rkey; }
    ibv_mr* mr() const { return mr_.get(); }
    uint64_t addr(size_t off) const { return reinterpret_cast<uintptr_t>(mem_.data() + off); }

private:
    std::vector<uint8_t> mem_;
    Mr mr_;
};

}  // namespace rc
