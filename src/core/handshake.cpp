// SPDX-License-Identifier: GPL-2.0
// The info handshake's own state: the response's buffer, its bytes, and
// posting it (the path's part is path_info.cpp).
#include "core/handshake.h"

#include "core/connection.h"
#include "core/path.h"
#include "core/request.h"
#include "core/wire.h"
#include "rt/array.h"

namespace core {

int Handshake::setup(void* owner, rtrs_env_dev* dev, rt::u32 mrs) {
    cqe_.owner = owner;
    cqe_.kind = kCqeInfo;
    return rtrs_env_buf_alloc(dev, static_cast<rt::u32>(wire::info_rsp_size(mrs)),
                              RTRS_ENV_DMA_TO_DEVICE, &rsp_);
}

void Handshake::free_response(rtrs_env_dev* dev) {
    if (rsp_.cpu) rtrs_env_buf_free(dev, &rsp_);
}

bool Handshake::encode_response(rtrs_env_dev* dev, rt::Span<const Mr> mrs) {
    const rt::u32 n_mrs = static_cast<rt::u32>(mrs.size());
    const Mr* m = mrs.data();
    auto descs = rt::Array<wire::SgDescFields>::make(rt::Gfp::kernel, n_mrs);
    if (!descs.ok()) return false;
    for (rt::u32 i = 0; i < n_mrs; ++i) {
        descs.value()[i].addr = m[i].info.iova;
        descs.value()[i].key = m[i].info.rkey;
        descs.value()[i].len = static_cast<rt::u32>(m[i].info.length);
    }
    auto n = wire::encode_info_rsp(
        rt::MutBytes(static_cast<rt::u8*>(rsp_.cpu), rsp_.len),
        rt::Span<const wire::SgDescFields>(descs.value().data(), n_mrs));
    if (!n.ok()) return false;
    rtrs_env_buf_sync_for_device(dev, &rsp_);
    return true;
}

int Handshake::post_locked(Connection& c0, rt::Span<const Mr> mrs, const char** what) {
    const rt::u32 n_mrs = static_cast<rt::u32>(mrs.size());
    while (next_mr_ < n_mrs) {
        rt::u32 n = n_mrs - next_mr_;
        if (n > RTRS_ENV_MAX_CHAIN) n = RTRS_ENV_MAX_CHAIN;
        if (!c0.room(n)) return 0;
        rtrs_env_wr wrs[RTRS_ENV_MAX_CHAIN] = {};
        for (rt::u32 i = 0; i < n; ++i) {
            const Mr& m = mrs.data()[next_mr_ + i];
            wrs[i].op = RTRS_ENV_WR_REG_MR;
            wrs[i].mr = m.mr;
            wrs[i].mr_key = m.info.rkey;
            wrs[i].cqe = &cqe_;
        }
        wrs[n - 1].signaled = 1;
        int err = c0.post(wrs, n);
        if (err) {
            *what = "post the registrations";
            return err;
        }
        next_mr_ += n;
    }
    if (sent_) return 0;
    if (!c0.room(1)) return 0;
    rtrs_env_wr send{};
    send.op = RTRS_ENV_WR_SEND;
    send.addr = rsp_.dma;
    send.len = rsp_.len;
    send.signaled = 1;
    send.cqe = &cqe_;
    int err = c0.post(&send, 1);
    if (err) {
        *what = "send the info response";
        return err;
    }
    sent_ = true;
    return 0;
}

}  // namespace core
