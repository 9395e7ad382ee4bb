// SPDX-License-Identifier: GPL-2.0
// The whole core over the fake kernel, driven by a script of what clients,
// the CM, the hardware, the clock, sysfs and the upper layer do (the
// language is in session_script.h): well-formed and fuzzed connection
// requests, CM events, info requests, immediates, request headers in
// chunks, send completions (ok or failed), the ULP's answers in any order,
// device removals, time. Every input ends as the unit tests end: the server
// closed, the core shut down, and no violation of a kernel rule, no
// warning, nothing left allocated or registered (h::Fixture::finish()).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/rtrs_core.h"
#include "core/wire.h"
#include "fake_env.h"
#include "fake_kernel.h"
#include "fuzz_check.h"
#include "harness.h"
#include "session_script.h"

using fake::k;
using namespace script;

namespace {

// RTRS_FUZZ_TRACE=1: each action and, at the end, the core's log (to see
// what a seed or a crashing input does).
bool g_trace = false;

const char* const kOpNames[kOps] = {
    "NewClient", "Connect", "ConnectAll", "Up", "ConnectRaw", "Establish", "CmEvent",
    "SendInfo", "RecvRaw", "FinishJoin", "Immediate", "Io", "Burst", "Complete",
    "CompleteFail", "CompleteAll", "Answer", "AnswerAll", "UlpMode", "Run", "Advance",
    "Sysfs", "DeviceRemove", "SessApi", "ZeroSend",
};

// The harness checks with EXPECT_*: outside a test a failure is only
// recorded, so it is turned into a crash here.
struct AbortOnFailure : testing::EmptyTestEventListener {
    void OnTestPartResult(const testing::TestPartResult& r) override {
        if (!r.failed()) return;
        std::fprintf(stderr, "harness check failed at %s:%d: %s\n",
                     r.file_name() ? r.file_name() : "?", r.line_number(), r.message());
        std::abort();
    }
};

std::string recent_logs(std::size_t n) {
    const auto& logs = fake_env::state().logs;
    std::string out;
    for (std::size_t i = logs.size() > n ? logs.size() - n : 0; i < logs.size(); ++i)
        out += "  " + logs[i].second + "\n";
    return out;
}

// The upper layer: holds or answers requests, accepts or refuses sessions,
// and keeps what it was told.
struct Ulp {
    int rdma_mode = 0;
    bool refuse_link = false;
    std::uint32_t queue_depth = 0;
    std::vector<rtrs_srv_op*> held;  // requests it has not answered, oldest first
    struct Sess {
        void* sess;
        void* priv;
    };
    std::vector<Sess> sessions;  // CONNECTED and not DISCONNECTED yet

    Sess* find(void* s) {
        for (auto& x : sessions)
            if (x.sess == s) return &x;
        return nullptr;
    }

    int rdma_ev(rtrs_srv_op* op, void* data, std::uint32_t datalen, const void* usr,
                std::uint32_t usrlen) {
        // Read what it is given, as a ULP does: past the chunk is a report.
        unsigned sum = 0;
        for (std::uint32_t i = 0; i < datalen; ++i) sum += static_cast<const std::uint8_t*>(data)[i];
        for (std::uint32_t i = 0; i < usrlen; ++i) sum += static_cast<const std::uint8_t*>(usr)[i];
        (void)sum;
        for (auto* h : held) FUZZ_CHECK(h != op);  // a request it holds, handed over again
        switch (rdma_mode) {
        case 0: held.push_back(op); return 0;
        case 1: rtrs_core_answer(op, 0); return 0;
        case 2: rtrs_core_answer(op, -5); return 0;
        default: return -5;
        }
    }

    int link_ev(void* sess, int ev, void* priv) {
        if (ev == RTRS_CORE_LINK_CONNECTED) {
            FUZZ_CHECK(find(sess) == nullptr);
            if (refuse_link) return -13;
            // What rnbd-server does on CONNECTED.
            char name[256];
            FUZZ_CHECK(rtrs_core_get_path_name(static_cast<rtrs_srv_sess*>(sess), name, sizeof(name)) == 0);
            FUZZ_CHECK(std::strlen(name) > 0);
            FUZZ_CHECK(rtrs_core_get_queue_depth(static_cast<rtrs_srv_sess*>(sess)) ==
                       static_cast<int>(queue_depth));
            rtrs_core_set_sess_priv(static_cast<rtrs_srv_sess*>(sess), this);
            sessions.push_back({sess, this});
            return 0;
        }
        FUZZ_CHECK(ev == RTRS_CORE_LINK_DISCONNECTED);
        Sess* s = find(sess);
        FUZZ_CHECK(s != nullptr);  // DISCONNECTED without CONNECTED
        FUZZ_CHECK(priv == s->priv);
        sessions.erase(sessions.begin() + (s - sessions.data()));
        return 0;
    }

    void answer(std::size_t i, int status) {
        rtrs_srv_op* op = held[i];
        held.erase(held.begin() + static_cast<long>(i));
        rtrs_core_answer(op, status);
    }
};

void device_profile(unsigned p) {
    rtrs_env_dev_attrs& a = k().dev_attrs;
    switch (p) {
    case 0: break;  // the fake's default: large queues
    case 1:
        // Connection 0's send queue as small as it may be (9), and few
        // pages per registration: the info response goes in batches.
        a.max_cqe = 522;
        a.max_fast_reg_page_list_len = 3;
        break;
    case 2:
        // Send queues smaller than a deep session's load: requests wait.
        a.max_qp_wr = 520;
        break;
    case 3:
        a.max_qp_wr = 600;
        a.max_cqe = 600;
        a.max_fast_reg_page_list_len = 1;
        a.num_comp_vectors = 0;
        break;
    }
}

// The live connections, in the order they were made.
fake::Con* pick_con(std::uint8_t sel) {
    std::vector<fake::Con*> live;
    for (auto& c : k().cons)
        if (!c->destroyed) live.push_back(c.get());
    return live.empty() ? nullptr : live[sel % live.size()];
}

fake::SysfsPath* pick_path(std::uint8_t sel) {
    std::vector<fake::SysfsPath*> live;
    for (auto& p : k().sysfs_paths)
        if (p->live) live.push_back(p.get());
    return live.empty() ? nullptr : live[sel % live.size()];
}

std::string read_name(Reader& in) {
    std::uint8_t sel = in.u8();
    if (sel != 0xff) return names()[sel % names().size()];
    auto b = in.bytes(in.u8());
    return std::string(b.begin(), b.end());
}

// Writes bytes into a chunk at off, as far as the chunk goes.
void put(std::uint8_t* mem, std::uint64_t chunk_size, std::uint32_t off, const void* p,
         std::size_t n) {
    if (!mem || off >= chunk_size || n == 0) return;
    std::size_t room = static_cast<std::size_t>(chunk_size - off);
    std::memcpy(mem + off, p, n < room ? n : room);
}

// After every action: no rule of the kernel broken and no warning so far,
// and every work request in a send queue refers to memory that is there:
// its local bytes inside one live DMA mapping, its memory region live.
void check_now(const char* after) {
    std::string p = h::problems();
    for (auto& c : k().cons) {
        for (auto& s : c->sends) {
            const rtrs_env_wr& wr = s.wr;
            if (wr.len && !k().cpu_of(wr.addr, wr.len))
                p += "a posted work request's local bytes lie outside every DMA mapping\n";
            if ((wr.op == RTRS_ENV_WR_REG_MR) && !reinterpret_cast<fake::Mr*>(wr.mr)->live)
                p += "a registration of a freed memory region posted\n";
        }
    }
    if (p.empty()) return;
    std::fprintf(stderr, "after %s:\n%sthe core's last log lines:\n%s", after, p.c_str(),
                 recent_logs(40).c_str());
    std::abort();
}

class Session {
public:
    Session(h::Fixture& f, Ulp& ulp) : f_(f), ulp_(ulp) {
        for (int i = 0; i < 4; ++i) slots_[i] = h::client(200 + i, 2, 2 + i, 1);
    }

    Op step(Reader& in) {
        const Op op = static_cast<Op>(in.u8() % kOps);
        if (g_trace)
            std::fprintf(stderr, "[%zu logs, %zu held, %zu cons] %s\n",
                         fake_env::state().logs.size(), ulp_.held.size(), k().cons.size(),
                         kOpNames[op]);
        switch (op) {
        case NewClient: {
            h::Client& c = slot(in);
            std::uint8_t tag = in.u8();
            std::uint16_t cid_num = static_cast<std::uint16_t>(1 + in.u8() % 4);
            int addr = in.u8();
            int dev = 1 + in.u8() % 2;
            std::uint8_t flags = in.u8();
            if (flags & 1) {
                c = h::sibling(slots_[(flags >> 1) & 3], tag, addr);
            } else {
                c = h::client(tag, cid_num, addr, dev);
            }
            if (flags & 8) {
                static constexpr std::uint16_t kFamilies[3] = {
                    RTRS_CORE_AF_INET, RTRS_CORE_AF_INET6, RTRS_CORE_AF_IB};
                const std::uint8_t fam = in.u8() % 4;
                c.caddr.family = fam < 3 ? kFamilies[fam] : in.u16();
                for (auto& b : c.caddr.bytes) b = in.u8();
                // As the glue reports an address (rtrs_glue_addr()): the
                // bytes of its family, the rest zero; no bytes for a family
                // it does not know.
                const bool known = c.caddr.family == RTRS_CORE_AF_INET ||
                                   c.caddr.family == RTRS_CORE_AF_INET6 ||
                                   c.caddr.family == RTRS_CORE_AF_IB;
                const std::size_t keep = !known ? 0 : c.caddr.family == RTRS_CORE_AF_INET ? 4 : 16;
                for (std::size_t i = keep; i < sizeof(c.caddr.bytes); ++i) c.caddr.bytes[i] = 0;
            }
            break;
        }
        case Connect: {
            h::Client& c = slot(in);
            std::uint16_t cid = in.u8();
            bool first = in.u8() & 1;
            f_.connect(c, cid, first);
            break;
        }
        case ConnectAll: f_.connect_all(slot(in)); break;
        case Up: {
            h::Client& c = slot(in);
            f_.up(c, read_name(in));
            break;
        }
        case ConnectRaw: connect_raw(in); break;
        case Establish:
            if (fake::Con* c = pick_con(in.u8())) k().cm_event(c, RTRS_CORE_CM_ESTABLISHED);
            break;
        case CmEvent: {
            fake::Con* c = pick_con(in.u8());
            auto ev = static_cast<rtrs_core_cm_event>(in.u8() % 5);
            int status = static_cast<int>(in.u32());
            if (c) k().cm_event(c, ev, status);
            break;
        }
        case SendInfo: {
            h::Client& c = slot(in);
            f_.send_info(c, read_name(in));
            break;
        }
        case RecvRaw: {
            fake::Con* c = pick_con(in.u8());
            std::uint32_t byte_len = in.u16();
            auto bytes = in.bytes(in.u16() % 512);
            if (!c || c->recvs.empty()) break;
            if (rtrs_env_buf* b = c->recvs.front().buf) {
                std::size_t n = bytes.size() < b->len ? bytes.size() : b->len;
                if (n) std::memcpy(b->cpu, bytes.data(), n);
            }
            k().deliver_recv(c, byte_len);
            break;
        }
        case FinishJoin: f_.finish_join(slot(in)); break;
        case Immediate: {
            fake::Con* c = pick_con(in.u8());
            std::uint32_t imm = in.u32();
            if (c) k().deliver_imm(c, imm);
            break;
        }
        case Io: io(in); break;
        case Burst: {
            h::Client& c = slot(in);
            std::uint16_t cid = in.u8();
            std::uint32_t first = in.u16();
            unsigned count = in.u8();
            const bool reads = in.u8() & 1;
            for (unsigned i = 0; i < count; ++i) {
                std::uint8_t* mem = f_.chunk_mem(c, first + i);
                if (!mem || !c.con(cid)) break;
                std::memset(mem, 0x5a, 16);
                if (reads) {
                    wire::RdmaReadHdr r;
                    r.type.set(static_cast<std::uint16_t>(wire::MsgType::Read));
                    r.usr_len.set(8);
                    r.flags.set(wire::kMsgNeedInval);
                    r.sg_cnt.set(1);
                    const wire::SgDesc d = wire::encode_sg_desc({0xC0FFEE000ull, 0x4242 + i, 4096});
                    std::memcpy(mem + 16, &r, sizeof(r));
                    std::memcpy(mem + 16 + sizeof(r), &d, sizeof(d));
                } else {
                    wire::RdmaWrite w;
                    w.type.set(static_cast<std::uint16_t>(wire::MsgType::Write));
                    w.usr_len.set(8);
                    std::memcpy(mem + 16, &w, sizeof(w));
                }
                if (!f_.io_imm(c, cid, first + i, 16)) break;
            }
            break;
        }
        case Complete:
            if (fake::Con* c = pick_con(in.u8())) k().complete_send(c, true);
            break;
        case CompleteFail:
            if (fake::Con* c = pick_con(in.u8())) k().complete_send(c, false);
            break;
        case CompleteAll:
            if (fake::Con* c = pick_con(in.u8())) k().complete_all_sends(c);
            break;
        case Answer: {
            std::uint8_t i = in.u8();
            int status = kStatuses[in.u8() % 8];
            if (!ulp_.held.empty()) ulp_.answer(i % ulp_.held.size(), status);
            break;
        }
        case AnswerAll: {
            int status = kStatuses[in.u8() % 8];
            bool newest_first = in.u8() & 1;
            while (!ulp_.held.empty()) ulp_.answer(newest_first ? ulp_.held.size() - 1 : 0, status);
            break;
        }
        case UlpMode: {
            std::uint8_t m = in.u8();
            ulp_.rdma_mode = m & 3;
            ulp_.refuse_link = (m & 4) != 0;
            break;
        }
        case Run: k().run(); break;
        case Advance: k().advance(std::uint64_t{in.u16()} * 8); break;
        case Sysfs: sysfs(in); break;
        case DeviceRemove:
            rtrs_core_on_device_remove(
                reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x1000 * (1 + in.u8() % 2))));
            break;
        case SessApi: {
            std::uint8_t i = in.u8();
            std::size_t len = 1 + in.u8();
            std::uint8_t p = in.u8();
            if (ulp_.sessions.empty()) break;
            Ulp::Sess& s = ulp_.sessions[i % ulp_.sessions.size()];
            auto* sess = static_cast<rtrs_srv_sess*>(s.sess);
            char buf[257];
            std::memset(buf, 0x7e, sizeof(buf));
            FUZZ_CHECK(rtrs_core_get_path_name(sess, buf, len) == 0);
            FUZZ_CHECK(std::memchr(buf, 0, len) != nullptr);
            FUZZ_CHECK(rtrs_core_get_queue_depth(sess) == static_cast<int>(ulp_.queue_depth));
            s.priv = reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x5000 + p));
            rtrs_core_set_sess_priv(sess, s.priv);
            break;
        }
        case ZeroSend: {
            fake::Con* c = pick_con(in.u8());
            if (!c || c->recvs.empty() || c->drained) break;
            // As the fake delivers a message, but of no bytes: it fits a
            // receive without a buffer too.
            fake::PostedRecv r = c->recvs.front();
            c->recvs.pop_front();
            rtrs_core_wc wc{};
            wc.ok = 1;
            wc.status = "success";
            wc.opcode = RTRS_CORE_WC_RECV;
            wc.byte_len = 0;
            rtrs_core_on_wc(c->core, r.cqe, &wc);
            if (!k().held.empty()) k().violation("a completion returned with a lock held");
            break;
        }
        case kOps: break;
        }
        return op;
    }

private:
    h::Client& slot(Reader& in) { return slots_[in.u8() & 3]; }

    void connect_raw(Reader& in) {
        h::Client& c = slot(in);
        std::uint8_t mode = in.u8();
        std::vector<std::uint8_t> priv;
        if (mode & 0x80) {
            priv = in.bytes(mode & 0x7f);
        } else {
            std::uint16_t cid = in.u8();
            bool first = in.u8() & 1;
            priv = h::conn_req(c, cid, first);
            for (int i = 0; i < (mode & 7); ++i) {
                std::uint8_t pos = in.u8();
                std::uint8_t val = in.u8();
                priv[pos % priv.size()] = val;
            }
            std::uint8_t len = in.u8();
            if (len) priv.resize(len);  // shorter, or zero-padded as the CM pads
        }
        int ret = 0;
        k().connect(k().listener_server, priv, c.caddr, c.saddr, c.ib_dev, &ret);
    }

    void io(Reader& in) {
        h::Client& c = slot(in);
        std::uint16_t cid = in.u8();
        std::uint32_t id = in.u16();
        std::uint32_t off = in.u16();
        const std::uint8_t sel = in.u8();
        const std::uint8_t kind = sel & 3;
        std::uint8_t* mem = f_.chunk_mem(c, id);
        const std::uint64_t cs = c.chunk_size;
        // Bit 7: the offset counts back from the chunk's end (headers
        // that run past it).
        if ((sel & 0x80) && off <= cs) off = static_cast<std::uint32_t>(cs - off);
        switch (kind) {
        case 0: {
            wire::RdmaWrite w;
            w.type.set(static_cast<std::uint16_t>(wire::MsgType::Write));
            w.usr_len.set(in.u16());
            put(mem, cs, off, &w, sizeof(w));
            break;
        }
        case 1: {
            wire::RdmaReadHdr r;
            r.type.set(static_cast<std::uint16_t>(wire::MsgType::Read));
            r.usr_len.set(in.u16());
            r.flags.set(in.u16());
            std::uint8_t n = in.u8() % 3;
            r.sg_cnt.set(n);
            put(mem, cs, off, &r, sizeof(r));
            for (std::uint8_t i = 0; i < n; ++i) {
                wire::SgDesc d;
                d.addr.set(0xC0FFEE000ull + i * 0x100000ull);
                d.key.set(in.u32());
                d.len.set(in.u32());
                put(mem, cs, off + static_cast<std::uint32_t>(sizeof(r) + i * sizeof(d)), &d,
                    sizeof(d));
            }
            break;
        }
        case 2: {
            auto b = in.bytes(in.u8());
            put(mem, cs, off, b.data(), b.size());
            break;
        }
        default: break;  // whatever the chunk holds from before
        }
        if (c.con(cid)) f_.io_imm(c, cid, id, off);
    }

    void sysfs(Reader& in) {
        fake::SysfsPath* p = pick_path(in.u8());
        auto attr = static_cast<rtrs_core_path_attr>(in.u8() % 6);
        std::uint8_t t = in.u8();
        std::string text;
        if (t & 0x80) {
            if (!p) return;
            char buf[4096];
            int n = rtrs_core_path_show(p->core_path, attr, buf, sizeof(buf));
            FUZZ_CHECK(n > 0 && n < static_cast<int>(sizeof(buf)) && buf[n - 1] == '\n');
            FUZZ_CHECK(std::strlen(buf) == static_cast<std::size_t>(n));
            return;
        }
        if (t == 0x7f) {
            auto b = in.bytes(in.u8());
            text.assign(b.begin(), b.end());
        } else {
            text = texts()[t % texts().size()];
        }
        if (!p) return;
        int r = rtrs_core_path_store(p->core_path, attr, text.data(), text.size());
        FUZZ_CHECK(r == 0 || r == -22);
    }

    h::Fixture& f_;
    Ulp& ulp_;
    h::Client slots_[4];
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    testing::UnitTest::GetInstance()->listeners().Append(new AbortOnFailure);
    g_trace = std::getenv("RTRS_FUZZ_TRACE") != nullptr;
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Reader in(data, size);
    const std::uint8_t cfg = in.u8();
    h::Opts o;
    o.always_invalidate = (cfg & 1) != 0;
    o.queue_depth = kQueueDepths[(cfg >> 1) & 7];
    o.chunk_size = kChunkSizes[(cfg >> 4) & 3];
    o.chunk_mem_mb = 1 + in.u8() % 16;
    const std::uint16_t fail = in.u16();
    o.fail_at = fail ? fail - 1 : -1;

    Ulp ulp;
    ulp.queue_depth = o.queue_depth;
    {
        h::Fixture f(o);
        device_profile(cfg >> 6);
        k().ulp.rdma_ev = [&ulp](void*, rtrs_srv_op* op, void* d, std::uint32_t dl, const void* u,
                                 std::uint32_t ul) { return ulp.rdma_ev(op, d, dl, u, ul); };
        k().ulp.link_ev = [&ulp](void* sess, int ev, void* priv) { return ulp.link_ev(sess, ev, priv); };
        // While the core waits (a server close, a device removal), the
        // ULP's I/O completes: one answer at a time.
        k().on_wait = [&ulp] {
            if (!ulp.held.empty()) ulp.answer(0, 0);
        };
        if (f.srv) {
            Session s(f, ulp);
            for (int steps = 0; !in.done() && steps < 4096; ++steps) {
                const Op op = s.step(in);
                check_now(op < kOps ? kOpNames[op] : "?");
            }
        }
        f.finish(false);
        if (g_trace) {
            std::fprintf(stderr, "the core's log:\n%s", recent_logs(100000).c_str());
            std::fprintf(stderr, "requests handed to the ULP: %zu\n", f.ops_seen());
        }
        std::string p = h::problems();
        for (auto& l : k().leftovers()) p += "left over: " + l + "\n";
        if (!p.empty()) {
            std::fprintf(stderr, "the core left trouble behind:\n%s\nits last log lines:\n%s",
                         p.c_str(), recent_logs(40).c_str());
            std::abort();
        }
        FUZZ_CHECK(ulp.held.empty());      // a request nobody waited for
        FUZZ_CHECK(ulp.sessions.empty());  // a session never DISCONNECTED
        // Everything the fake recorded goes now rather than with the next
        // input: libFuzzer looks for leaks (running the input once more)
        // whenever an input allocated more than it freed.
        k() = fake::Kernel{};
        fake_env::reset();
    }
    return 0;
}
