// SPDX-License-Identifier: GPL-2.0
// A path's info handshake, what of it is not the path's: whether the
// client's info request came and how long it was, and our answer (its
// buffer, its completion, and how far posting it got: the registrations in
// batches as connection 0's send queue has room, then the send).
//
// The path decides (path_info.cpp: the checks of the request, the state,
// when to post); this class keeps the handshake's own state and its rules:
//
//   the arrival (received_locked(), note_request_locked()) and the posting
//     (post_locked()): under the path's io lock, which the annotations name
//   request_len(): written under the io lock at the arrival, read by the
//     info work under the server lock only, after the arrival queued it:
//     not guarded
//   the buffer and the completion (setup(), encode_response(),
//     free_response()): made by the path's setup(), before the path is
//     known, written once before anything is posted: not guarded
#pragma once

#include "core/connection.h"
#include "core/env.h"
#include "core/lock.h"
#include "core/rtrs_core.h"
#include "rt/span.h"
#include "rt/types.h"

namespace core {

class Connection;
struct Mr;  // a registration of the path's chunks (core/path_chunks.h)

class Handshake {
public:
    explicit Handshake(PathIoLock& path) : path_(&path) {}
    Handshake(const Handshake&) = delete;
    Handshake& operator=(const Handshake&) = delete;

    // Path::setup(): the completion (owner: the path, the cqe's owner in
    // on_wc) and the response's buffer for mrs registrations; the env's
    // error when there is no memory for it.
    int setup(void* owner, rtrs_env_dev* dev, rt::u32 mrs);
    // Frees the buffer (if setup() made it).
    void free_response(rtrs_env_dev* dev);

    // The info request's arrival: whether one came already; that one came,
    // byte_len long.
    bool received_locked() const REQUIRES(path_->io_lock()) { return received_; }
    void note_request_locked(rt::u32 byte_len) REQUIRES(path_->io_lock()) {
        received_ = true;
        len_ = byte_len;
    }
    rt::u32 request_len() const { return len_; }

    // The response's bytes: one descriptor per registration, in chunk
    // order. Once, before anything is posted.
    bool encode_response(rtrs_env_dev* dev, rt::Span<const Mr> mrs);
    // Posts what connection 0's send queue has room for, from where the
    // last call stopped: the registrations, then the response. 0 (also
    // when it stopped for room: the next completion calls it again), or
    // the error of the post that failed, with what it was in *what.
    int post_locked(Connection& c0, rt::Span<const Mr> mrs, const char** what)
        REQUIRES(path_->io_lock(), c0.lock());

private:
    PathIoLock* path_;
    bool received_ GUARDED_BY(path_->io_lock()) = false;
    rt::u32 len_ = 0;  // (not guarded: see above)
    // The response: registrations posted so far, then the send.
    rt::u32 next_mr_ GUARDED_BY(path_->io_lock()) = 0;
    bool sent_ GUARDED_BY(path_->io_lock()) = false;
    // (set by setup(), then unchanged: not guarded)
    rtrs_core_cqe cqe_{};
    rtrs_env_buf rsp_{};
};

}  // namespace core
