// SPDX-License-Identifier: GPL-2.0
// `rtrs-client io`: exactly N reads and N writes over each path of a session,
// at most D in flight per path, round-robin over connections 1..M-1
// (connection 0 serves the info exchange and the heartbeats, as with the
// reference client).
#include <cerrno>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "io.h"
#include "session.h"

namespace rc {

namespace {

// A run fails when no request completes for this long.
constexpr int kStallMs = 60000;
// Per-request problems printed on stderr before going quiet.
constexpr unsigned kMaxReported = 10;

class IoRun {
public:
    IoRun(const IoCmdConfig& cfg, Path& path, IoEngine& eng) : cfg_(cfg), path_(path), eng_(eng) {
        total_ = size_t{cfg.reads} + cfg.writes;
        if (cfg.duration > 0)
            deadline_ = Clock::now() + std::chrono::seconds(cfg.duration);
        chunk_used_.assign(eng.queue_depth(), false);
        slot_op_.assign(eng.slots(), {});
        eng.on_done = [this](unsigned slot, const IoOutcome& out) { done(slot, out); };
    }

    // Fills the free slots with the next requests.
    void submit() {
        while (fatal_.ok() && next_ < total_) {
            if (deadline_ && Clock::now() >= *deadline_) {
                total_ = next_;  // --duration: no more requests
                return;
            }
            const int slot = free_slot();
            if (slot < 0) return;
            const uint32_t chunk = free_chunk();
            if (chunk == UINT32_MAX) return;  // cannot happen: slots <= queue depth
            const bool read = is_read(next_);
            const uint16_t cid = static_cast<uint16_t>(1 + rr_++ % (cfg_.cons - 1));
            Status s = read ? eng_.post_read(slot, cid, chunk, cfg_.size, cfg_.usr_len)
                            : eng_.post_write(slot, cid, chunk, cfg_.size, cfg_.usr_len, next_);
            if (!s.ok()) {
                fatal_ = Status::error(s.err(),
                                       strf("request %zu (%s on chunk %u, con %u): %s", next_,
                                            read ? "read" : "write", chunk, cid, s.msg().c_str()));
                return;
            }
            chunk_used_[chunk] = true;
            slot_op_[slot] = {next_, read};
            ++next_;
        }
    }

    bool finished() const {
        return !fatal_.ok() ||
               ((next_ == total_ || (deadline_ && Clock::now() >= *deadline_)) &&
                eng_.busy_count() == 0);
    }
    unsigned long completed() const { return reads_ + writes_; }
    const Status& fatal() const { return fatal_; }
    unsigned errors() const { return errors_ + eng_.problems(); }

    unsigned long reads() const { return reads_; }
    unsigned long writes() const { return writes_; }
    Path& path() const { return path_; }
    IoEngine& engine() const { return eng_; }

private:
    struct SlotOp {
        size_t seq = 0;
        bool read = false;
    };

    int free_slot() const {
        for (unsigned i = 0; i < eng_.slots(); ++i)
            if (!eng_.busy(i)) return static_cast<int>(i);
        return -1;
    }
    // The lowest free chunk, as the reference client takes its permits.
    uint32_t free_chunk() const {
        for (uint32_t i = 0; i < chunk_used_.size(); ++i)
            if (!chunk_used_[i]) return i;
        return UINT32_MAX;
    }

    void report(const std::string& what) {
        ++errors_;
        if (errors_ <= kMaxReported)
            std::fprintf(stderr, "[%s] %s\n", path_.name().c_str(), what.c_str());
        else if (errors_ == kMaxReported + 1)
            std::fprintf(stderr, "[%s] (further failures not shown)\n", path_.name().c_str());
    }

    void done(unsigned slot, const IoOutcome& out) {
        const SlotOp op = slot_op_[slot];
        chunk_used_[out.chunk] = false;
        (op.read ? reads_ : writes_)++;
        const char* kind = op.read ? "read" : "write";
        if (out.err) {
            report(strf("request %zu (%s on chunk %u, con %u) failed: errno -%u (%s)", op.seq, kind,
                        out.chunk, out.cid, out.err, errno_name(int(out.err)).c_str()));
        } else if (op.read) {
            // The bytes after the descriptor's length must be untouched;
            // with --verify-zero, the data must be zeros (rtrs-null).
            const size_t past = eng_.first_not(slot, cfg_.size, cfg_.size + kReadGuard, kReadFill);
            if (past != SIZE_MAX)
                report(
                    strf("request %zu (read of %u bytes on chunk %u, con %u): the server wrote "
                         "past the descriptor's length (byte %zu is 0x%02x)",
                         op.seq, cfg_.size, out.chunk, out.cid, past, eng_.read_area(slot)[past]));
            const size_t bad = cfg_.verify_zero ? eng_.first_not(slot, 0, cfg_.size, 0) : SIZE_MAX;
            if (bad != SIZE_MAX)
                report(
                    strf("request %zu (read of %u bytes on chunk %u, con %u): byte %zu is 0x%02x, "
                         "not 0%s",
                         op.seq, cfg_.size, out.chunk, out.cid, bad, eng_.read_area(slot)[bad],
                         eng_.read_area(slot)[bad] == kReadFill ? " (never written)" : ""));
        }
        submit();
    }

    // Writes and reads alternate while both last, then the rest of the
    // more numerous kind: request n is a read if...
    bool is_read(size_t n) const {
        const size_t both = 2 * size_t{cfg_.reads < cfg_.writes ? cfg_.reads : cfg_.writes};
        return n < both ? n % 2 == 1 : cfg_.reads > cfg_.writes;
    }

    const IoCmdConfig& cfg_;
    Path& path_;
    IoEngine& eng_;
    size_t total_ = 0;
    std::optional<Clock::time_point> deadline_;  // --duration
    size_t next_ = 0;
    unsigned rr_ = 0;
    std::vector<bool> chunk_used_;
    std::vector<SlotOp> slot_op_;
    unsigned long reads_ = 0, writes_ = 0;
    unsigned errors_ = 0;
    Status fatal_;
};

}  // namespace

std::string summary(const char* what, unsigned long reads, unsigned long writes, uint32_t size,
                    unsigned errors) {
    return strf("%s: reads %lu (%llu bytes) writes %lu (%llu bytes) errors %u", what, reads,
                static_cast<unsigned long long>(reads) * size, writes,
                static_cast<unsigned long long>(writes) * size, errors);
}

Status run_io(const IoCmdConfig& cfg) {
    if (cfg.cons < 2)
        return Status::error(EINVAL, "io needs --cons 2 or more (connection 0 carries no I/O)");
    if (cfg.depth == 0) return Status::error(EINVAL, "--qd must be at least 1");
    if (cfg.paths.empty()) return Status::error(EINVAL, "io needs a path");
    auto loop = Loop::create();
    if (!loop.ok()) return loop.status();
    SessionConfig sc;
    sc.name = cfg.session;
    for (const auto& e : cfg.paths) sc.paths.push_back({e.src, e.dst, std::nullopt});
    sc.port = cfg.port;
    sc.cons = cfg.cons;
    sc.verbose = cfg.verbose;
    sc.io_depth = cfg.depth;
    sc.ack_timeout = cfg.ack_timeout;
    Session session(*loop.value(), sc);
    Status st = session.open();
    if (!st.ok()) {
        session.close();
        return st;
    }
    // Every path of a session has the same parameters.
    const wire::ConnRspFields& p = session.paths()[0]->params();
    const uint64_t chunk = p.chunk_size();
    const uint64_t need =
        uint64_t{cfg.size} + cfg.usr_len +
        (cfg.reads ? sizeof(wire::RdmaReadHdr) + sizeof(wire::SgDesc) : sizeof(wire::RdmaWrite));
    if (cfg.size > p.max_io_size || need > chunk) {
        session.close();
        return Status::error(EMSGSIZE, strf("%u bytes of data and a %u-byte user header do not fit "
                                            "(max_io_size %u, chunk size %llu)",
                                            cfg.size, cfg.usr_len, p.max_io_size,
                                            static_cast<unsigned long long>(chunk)));
    }
    uint32_t depth = cfg.depth;
    if (depth > p.queue_depth) {
        std::fprintf(stderr, "rtrs-client: --qd %u is above the queue depth %u: using %u\n", depth,
                     p.queue_depth, p.queue_depth);
        depth = p.queue_depth;
    }
    {
        std::vector<std::unique_ptr<IoEngine>> engines;
        std::vector<std::unique_ptr<IoRun>> runs;
        for (const auto& path : session.paths()) {
            engines.push_back(std::make_unique<IoEngine>(*path));
            st = engines.back()->init(depth, need, cfg.size, cfg.need_inval);
            if (!st.ok()) break;
        }
        if (!st.ok()) {
            for (const auto& path : session.paths()) path->set_io_sink(nullptr);
            engines.clear();
            session.close();
            return st;
        }
        if (cfg.verbose)
            std::fprintf(
                stderr,
                "io: %u reads and %u writes of %u bytes (user header %u) on each of %zu path(s), "
                "up to %u in flight over connections 1..%u; %s%s\n",
                cfg.reads, cfg.writes, cfg.size, cfg.usr_len, engines.size(), depth, cfg.cons - 1,
                engines[0]->new_rkey() ? "new rkey with every response (kMsgNewRkey)"
                                       : "plain responses",
                cfg.need_inval ? "; reads through memory windows, with NEED_INVAL" : "");
        for (size_t i = 0; i < engines.size(); ++i)
            runs.push_back(std::make_unique<IoRun>(cfg, *session.paths()[i], *engines[i]));
        for (auto& r : runs) r->submit();
        Loop& lp = *loop.value();
        auto all_finished = [&runs] {
            for (auto& r : runs)
                if (!r->finished()) return false;
            return true;
        };
        auto any_lost = [&runs] {
            for (auto& r : runs)
                if (r->path().lost()) return true;
            return false;
        };
        auto completed = [&runs] {
            unsigned long n = 0;
            for (auto& r : runs) n += r->completed();
            return n;
        };
        unsigned long last = completed();
        auto last_progress = Clock::now();
        while (!all_finished() && !any_lost()) {
            Status w = lp.wait_for([&] { return all_finished() || any_lost(); }, 1000,
                                   "the responses");
            if (!w.ok() && w.err() != ETIMEDOUT) {
                st = w;
                break;
            }
            if (completed() != last) {
                last = completed();
                last_progress = Clock::now();
            } else if (Clock::now() - last_progress > std::chrono::milliseconds(kStallMs)) {
                unsigned busy = 0;
                for (auto& e : engines) busy += e->busy_count();
                st = Status::error(ETIMEDOUT, strf("no response for %d s (%u requests in flight)",
                                                   kStallMs / 1000, busy));
                break;
            }
        }
        unsigned long reads = 0, writes = 0;
        unsigned errors = 0;
        for (auto& r : runs) {
            reads += r->reads();
            writes += r->writes();
            errors += r->errors();
            if (runs.size() > 1)
                std::printf("%s\n", summary(("io path " + r->path().name()).c_str(), r->reads(),
                                            r->writes(), cfg.size, r->errors())
                                        .c_str());
        }
        std::printf("%s\n", summary("io", reads, writes, cfg.size, errors).c_str());
        for (auto& r : runs) {
            if (st.ok() && r->path().lost())
                st = Status::error(ECONNRESET,
                                   "path " + r->path().name() +
                                       " lost during I/O: " + r->path().lost_reason(),
                                   Failure::Closed);
            if (st.ok() && !r->fatal().ok()) st = r->fatal();
        }
        if (st.ok() && errors)
            st = Status::error(EIO, strf("%u requests failed or broke the protocol", errors));
        if (st.ok() && cfg.hold > 0) {
            if (cfg.verbose) std::fprintf(stderr, "holding the session for %ld s\n", cfg.hold);
            st = session.hold(static_cast<int>(cfg.hold));
        }
        // The engines (and their registrations) go before the paths' PDs.
        for (const auto& path : session.paths()) path->set_io_sink(nullptr);
        runs.clear();
        engines.clear();
    }
    session.close();
    return st;
}

}  // namespace rc
