// SPDX-License-Identifier: GPL-2.0
#include "loop.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace rc {

Expected<std::unique_ptr<Loop>> Loop::create() {
    std::unique_ptr<Loop> loop(new Loop);
    auto ch = make_event_channel();
    if (!ch.ok()) return ch.status();
    loop->ch_ = std::move(ch.value());
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &set, nullptr) < 0) return sys_error(errno, "sigprocmask");
    loop->sigfd_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (loop->sigfd_ < 0) return sys_error(errno, "signalfd");
    return loop;
}

Loop::~Loop() {
    if (sigfd_ >= 0) close(sigfd_);
}

void Loop::add(int fd, CqHandler* h) { sources_.push_back({fd, h}); }

void Loop::remove(CqHandler* h) {
    sources_.erase(std::remove_if(sources_.begin(), sources_.end(),
                                  [h](const Source& s) { return s.handler == h; }),
                   sources_.end());
}

void Loop::turn(int max_wait_ms) {
    std::vector<pollfd> fds;
    fds.push_back({ch_->fd, POLLIN, 0});
    fds.push_back({sigfd_, POLLIN, 0});
    for (const Source& s : sources_) fds.push_back({s.fd, POLLIN, 0});
    const int n = poll(fds.data(), fds.size(), max_wait_ms);
    if (n < 0 && errno != EINTR) std::perror("poll");
    if (n > 0) {
        if (fds[1].revents) {
            signalfd_siginfo si;
            while (read(sigfd_, &si, sizeof(si)) == sizeof(si)) interrupted_ = true;
        }
        if (fds[0].revents) {
            rdma_cm_event* ev = nullptr;
            while (rdma_get_cm_event(ch_.get(), &ev) == 0) {
                if (ev->id && ev->id->context)
                    static_cast<CmHandler*>(ev->id->context)->on_cm_event(*ev);
                rdma_ack_cm_event(ev);
            }
        }
        // The handlers may remove sources: look each one up again.
        for (size_t i = 2; i < fds.size(); ++i) {
            if (!fds[i].revents) continue;
            for (const Source& s : sources_)
                if (s.fd == fds[i].fd) {
                    s.handler->on_cq_ready();
                    break;
                }
        }
    }
    const auto now = Clock::now();
    const std::vector<Source> snapshot = sources_;
    for (const Source& s : snapshot) s.handler->tick(now);
}

Status Loop::wait_for(const std::function<bool()>& done, int timeout_ms, const char* what) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    stopped_ = false;
    while (!done() && !stopped_) {
        if (interrupted_)
            return Status::error(EINTR, strf("interrupted while waiting for %s", what));
        int wait_ms = 100;
        if (timeout_ms >= 0) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now())
                    .count();
            if (left <= 0) return Status::error(ETIMEDOUT, strf("timed out waiting for %s", what));
            wait_ms = static_cast<int>(std::min<long long>(left, wait_ms));
        }
        turn(wait_ms);
    }
    return {};
}

Status Loop::run_for(int timeout_ms) {
    Status s = wait_for([] { return false; }, timeout_ms, "the end of the hold time");
    if (s.err() == ETIMEDOUT) return {};
    return s;
}

}  // namespace rc
