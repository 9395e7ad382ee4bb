// SPDX-License-Identifier: GPL-2.0
#include "bad.h"

#include <cstdio>
#include <cstring>

#include <arpa/inet.h>
#include <functional>
#include <map>
#include <memory>

#include "io.h"
#include "loop.h"
#include "path.h"
#include "uuid.h"

namespace rc {

namespace {

// How long the server gets to react to an info request or an immediate.
constexpr int kReactMs = 10000;

struct Ctx {
    const BadConfig& cfg;
    Loop& loop;

    PathConfig path_config(uint16_t cid_num, const std::string& session) const {
        PathConfig pc;
        pc.src = cfg.src;
        pc.dst = cfg.dst;
        pc.port = cfg.port;
        pc.session = session;
        pc.paths_uuid = random_uuid();
        pc.sess_uuid = random_uuid();
        pc.cid_num = cid_num;
        pc.first_conn = true;
        pc.verbose = cfg.verbose;
        return pc;
    }
};

void print_result(const std::string& what) { std::printf("result: %s\n", what.c_str()); }

std::string describe(const ConnOutcome& out) {
    if (out.kind == ConnOutcome::Kind::Accepted) return "accepted";
    if (out.has_rtrs_data) return strf("rejected errno=%d", out.server_errno);
    return strf("rejected cm_status=%d", out.cm_status);
}

// The request as the reference client sends it, changed by edit.
std::vector<uint8_t> edited_conn_req(const Path& path,
                                     const std::function<void(wire::ConnReq&)>& edit) {
    std::vector<uint8_t> bytes = path.conn_req(0);
    wire::ConnReq m;
    std::memcpy(&m, bytes.data(), sizeof(m));
    edit(m);
    std::memcpy(bytes.data(), &m, sizeof(m));
    return bytes;
}

// One connection request; the server accepts or rejects it.
Status conn_case(Ctx& c, uint16_t cid, uint16_t cid_num, bool first_conn,
                 const std::function<void(wire::ConnReq&)>& edit,
                 size_t send_len = sizeof(wire::ConnReq)) {
    PathConfig pc = c.path_config(cid_num, c.cfg.session);
    pc.first_conn = first_conn;
    Path path(c.loop, pc);
    std::vector<uint8_t> req = edited_conn_req(path, [&](wire::ConnReq& m) {
        m.cid.set(cid);
        if (edit) edit(m);
    });
    req.resize(send_len);
    auto out = path.connect(cid, req);
    if (!out.ok()) return out.status();
    print_result(describe(out.value()));
    path.close();
    return {};
}

std::vector<uint8_t> info_req(uint16_t type, const uint8_t* name, size_t len) {
    wire::InfoReq m;
    std::memset(&m, 0, sizeof(m));
    m.type.set(type);
    std::memcpy(m.pathname, name, len < sizeof(m.pathname) ? len : sizeof(m.pathname));
    std::vector<uint8_t> out(sizeof(m));
    std::memcpy(out.data(), &m, sizeof(m));
    return out;
}

std::vector<uint8_t> info_req(const std::string& name,
                              uint16_t type = static_cast<uint16_t>(wire::MsgType::InfoReq)) {
    return info_req(type, reinterpret_cast<const uint8_t*>(name.data()), name.size());
}

std::string describe(const InfoOutcome& out) {
    switch (out.kind) {
        case InfoOutcome::Kind::Answered: return "answered";
        case InfoOutcome::Kind::Closed: return "closed";
        case InfoOutcome::Kind::Timeout: return "timeout";
    }
    return "?";
}

// Connects cids [0, connect) of a path of cid_num connections, all of which
// must be accepted (else the reject is the result), then sends req as the
// info request.
Status info_case(Ctx& c, const std::vector<uint8_t>& req, uint16_t cid_num = 1,
                 uint16_t connect = 1) {
    Path path(c.loop, c.path_config(cid_num, c.cfg.session));
    for (uint16_t cid = 0; cid < connect; ++cid) {
        auto out = path.connect(cid, path.conn_req(cid));
        if (!out.ok()) return out.status();
        if (out->kind != ConnOutcome::Kind::Accepted) {
            print_result(describe(out.value()));
            return {};
        }
    }
    auto info = path.info_exchange(req, kReactMs);
    if (!info.ok()) return info.status();
    print_result(describe(info.value()));
    path.close();
    return {};
}

Status name_taken(Ctx& c) {
    Path first(c.loop, c.path_config(2, c.cfg.session));
    if (Status s = first.open(); !s.ok())
        return Status::error(s.err(), "the first session failed: " + s.msg());
    if (c.cfg.verbose) std::fprintf(stderr, "first session up: %s\n", first.summary().c_str());
    Path second(c.loop, c.path_config(1, c.cfg.session));
    auto out = second.connect(0, second.conn_req(0));
    if (!out.ok()) return out.status();
    std::string result;
    if (out->kind != ConnOutcome::Kind::Accepted) {
        result = describe(out.value());
    } else {
        auto info = second.info_exchange(info_req(c.cfg.session), kReactMs);
        if (!info.ok()) return info.status();
        result = describe(info.value());
    }
    // Give a wrongly closed first session a moment to show.
    Status s = c.loop.run_for(500);
    if (!s.ok()) return s;
    print_result(result + " first=" + (first.lost() ? "closed" : "up"));
    second.close();
    first.close();
    return {};
}

Status unknown_imm(Ctx& c) {
    Path path(c.loop, c.path_config(2, c.cfg.session));
    if (Status s = path.open(); !s.ok()) return s;
    if (c.cfg.verbose) std::fprintf(stderr, "%s\n", path.summary().c_str());
    // Type 5 is no immediate type of the protocol.
    if (Status s = path.send_imm(0, (5u << wire::kImmPayloadBits) | 0x123); !s.ok()) return s;
    Status s = c.loop.wait_for([&path] { return path.lost(); }, kReactMs, "the server to react");
    if (!s.ok() && s.err() != ETIMEDOUT) return s;
    // Surviving the unknown immediate is reported as "accepted".
    print_result(path.lost() ? "closed" : "accepted");
    path.close();
    return {};
}

// --- hostile I/O: a good path, then one malformed request on connection 1 ---

// The hostile request's data and the follow-up write's.
constexpr uint32_t kIoData = 4096;
constexpr uint16_t kIoUsr = 16;

// What a case sends, given the engine of an up path: either a request the
// engine tracks (posted on slot 0, chunk 0, connection 1), or a bare
// immediate the server cannot match to a chunk (imm_only).
struct IoHostile {
    bool imm_only = false;
    uint32_t imm = 0;
};
using IoBuild = std::function<Expected<IoHostile>(IoEngine&)>;

template <class T>
rt::Bytes bytes_of(const T& v) {
    return rt::Bytes(reinterpret_cast<const uint8_t*>(&v), sizeof(v));
}

// A read header for slot 0 with these descriptors, then posted as the
// reference client places a read: [user header][RdmaReadHdr][SgDesc...] at
// offset kIoData of chunk 0.
Expected<IoHostile> post_hostile_read(IoEngine& e, std::vector<wire::SgDescFields> descs) {
    std::vector<uint8_t> hdr(sizeof(wire::RdmaReadHdr) + descs.size() * sizeof(wire::SgDesc));
    auto n = wire::encode_rdma_read(rt::MutBytes(hdr.data(), hdr.size()), kIoUsr, 0,
                                    rt::Span<const wire::SgDescFields>(descs.data(), descs.size()));
    if (!n.ok()) return Status::error(n.error(), "encode_rdma_read");
    std::memset(e.read_area(0), kReadFill, kIoData);
    if (Status s =
            e.post_request(0, 1, 0, kIoData, false, kIoUsr, rt::Bytes(hdr.data(), n.value()));
        !s.ok())
        return s;
    return IoHostile{};
}

const std::map<std::string, IoBuild>& io_cases() {
    static const std::map<std::string, IoBuild> table = {
        {"io-chunk-out-of-range",
         [](IoEngine& e) -> Expected<IoHostile> {
             // The first chunk id past the session's: it fits the
             // immediate's chunk bits only if the queue depth is not a
             // power of two.
             const uint32_t id = e.queue_depth();
             if (id >= (1u << e.chunk_bits()))
                 return Status::error(
                     EINVAL, strf("queue depth %u is a power of two: every chunk id the immediate "
                                  "can carry exists (load the server with another "
                                  "sess_queue_depth, e.g. 500)",
                                  id));
             return IoHostile{true, e.req_imm(id, sizeof(wire::RdmaWrite))};
         }},
        {"io-offset-out-of-range",
         [](IoEngine& e) -> Expected<IoHostile> {
             const uint32_t off = e.chunk_size();
             if (off >= (1u << wire::offset_bits(e.chunk_bits())))
                 return Status::error(EINVAL, strf("offset %u does not fit the immediate", off));
             return IoHostile{true, e.req_imm(0, off)};
         }},
        {"io-usr-len-past",
         [](IoEngine& e) -> Expected<IoHostile> {
             // A write whose header claims one byte more of user header
             // than lies in front of it.
             wire::RdmaWrite h;
             auto n =
                 wire::encode_rdma_write(rt::MutBytes(reinterpret_cast<uint8_t*>(&h), sizeof(h)),
                                         static_cast<uint16_t>(kIoData + kIoUsr + 1));
             if (!n.ok()) return Status::error(n.error(), "encode_rdma_write");
             if (Status s = e.post_request(0, 1, 0, kIoData, true, kIoUsr, bytes_of(h)); !s.ok())
                 return s;
             return IoHostile{};
         }},
        {"io-header-past-chunk",
         [](IoEngine& e) -> Expected<IoHostile> {
             // A write header at chunk_size - 2: its type fits (and is all
             // that is written), its usr_len would lie past the chunk.
             wire::MsgHdr h;
             h.type.set(static_cast<uint16_t>(wire::MsgType::Write));
             if (Status s =
                     e.post_request(0, 1, 0, e.chunk_size() - sizeof(h), false, 0, bytes_of(h));
                 !s.ok())
                 return s;
             return IoHostile{};
         }},
        {"io-too-many-desc",
         [](IoEngine& e) {
             return post_hostile_read(e,
                                      {e.read_desc(0, kIoData / 2), e.read_desc(0, kIoData / 2)});
         }},
        {"io-read-too-long",
         [](IoEngine& e) { return post_hostile_read(e, {e.read_desc(0, e.chunk_size() + 1)}); }},
        {"io-read-zero-len", [](IoEngine& e) { return post_hostile_read(e, {e.read_desc(0, 0)}); }},
        {"io-unknown-type",
         [](IoEngine& e) -> Expected<IoHostile> {
             // A write in every respect but its type, 7.
             wire::RdmaWrite h;
             auto n = wire::encode_rdma_write(
                 rt::MutBytes(reinterpret_cast<uint8_t*>(&h), sizeof(h)), kIoUsr);
             if (!n.ok()) return Status::error(n.error(), "encode_rdma_write");
             h.type.set(7);
             if (Status s = e.post_request(0, 1, 0, kIoData, true, kIoUsr, bytes_of(h)); !s.ok())
                 return s;
             return IoHostile{};
         }},
    };
    return table;
}

// Waits for the answer of the request in flight, or for the path to close.
// Returns "answered errno=-N" / "closed" / "timeout".
Expected<std::string> io_wait(Ctx& c, Path& path, std::optional<IoOutcome>& answer) {
    Status s = c.loop.wait_for([&] { return answer.has_value() || path.lost(); }, kReactMs,
                               "the server to react");
    if (!s.ok() && s.err() != ETIMEDOUT) return s;
    if (answer) return strf("answered errno=%d", -static_cast<int>(answer->err));
    return std::string(path.lost() ? "closed" : "timeout");
}

// What an I/O case does on its path: sends, waits, prints the outcome.
using IoBody = std::function<Status(Path&, IoEngine&, std::optional<IoOutcome>& answer)>;

// The setting of every I/O case: a path of two connections with an I/O
// engine of one chunk whose answers land in `answer`; after the body the
// path is held (--hold) unless lost, then closed.
Status with_io_path(Ctx& c, const IoBody& body) {
    PathConfig pc = c.path_config(2, c.cfg.session);
    pc.io_depth = 2;
    Path path(c.loop, pc);
    if (Status s = path.open(); !s.ok()) return s;
    if (c.cfg.verbose) std::fprintf(stderr, "%s\n", path.summary().c_str());
    Status st;
    {
        IoEngine eng(path);
        if (Status s = eng.init(1, kIoData + kIoUsr + 64, kIoData); !s.ok()) return s;
        std::optional<IoOutcome> answer;
        eng.on_done = [&answer](unsigned, const IoOutcome& o) { answer = o; };
        if (Status s = body(path, eng, answer); !s.ok()) return s;
        if (c.cfg.hold > 0 && !path.lost()) {
            if (c.cfg.verbose) std::fprintf(stderr, "holding the path for %ld s\n", c.cfg.hold);
            st = c.loop.wait_for([&path] { return path.lost(); },
                                 static_cast<int>(c.cfg.hold * 1000), "the end of the hold time");
            // SIGINT/SIGTERM end the hold early, as for connect and io.
            if (st.err() == ETIMEDOUT || st.err() == EINTR) st = {};
        }
        path.set_io_sink(nullptr);
    }
    path.close();
    return st;
}

Status io_case(Ctx& c, const IoBuild& build) {
    return with_io_path(c, [&c, &build](Path& path, IoEngine& eng, std::optional<IoOutcome>& answer) -> Status {
        auto h = build(eng);
        if (!h.ok()) return h.status();
        if (h->imm_only) {
            if (Status s = path.send_imm(1, h->imm); !s.ok()) return s;
        }
        auto result = io_wait(c, path, answer);
        if (!result.ok()) return result.status();
        print_result(result.value());
        if (answer && !path.lost()) {
            // The path must still work, on the same chunk (with the new rkey
            // the answer brought, when the server sends them).
            answer.reset();
            std::string after;
            if (Status s = eng.post_write(0, 1, 0, kIoData, kIoUsr, 0); !s.ok()) {
                after = "cannot post: " + s.msg();
            } else {
                auto r = io_wait(c, path, answer);
                if (!r.ok()) return r.status();
                after = answer && answer->err == 0 ? "write ok" : "write " + r.value();
            }
            if (eng.problems()) after += strf(" (%u protocol violations)", eng.problems());
            std::printf("after: %s\n", after.c_str());
        }
        return {};
    });
}

// A second request on a chunk whose first request is still in flight: a
// good write to chunk 0, and right behind it, in the same post on the same
// connection (before the server can have answered), a bare immediate naming
// chunk 0 again. A server that invalidates a chunk's registration on
// arrival (always_invalidate) still has the first request then; one that
// answers at once in the completion may have answered it already.
// "closed": the server closed the path; "accepted": it served both (the
// second response counts as a protocol violation here: no request awaited
// it).
Status busy_chunk(Ctx& c) {
    return with_io_path(c, [&c](Path& path, IoEngine& eng, std::optional<IoOutcome>& answer) -> Status {
        eng.chase_next_with(eng.req_imm(0, kIoData + kIoUsr));
        if (Status s = eng.post_write(0, 1, 0, kIoData, kIoUsr, 0); !s.ok()) return s;
        Status s = c.loop.wait_for([&path] { return path.lost(); }, kReactMs, "the server to react");
        if (!s.ok() && s.err() != ETIMEDOUT) return s;
        if (path.lost())
            print_result("closed");
        else
            print_result(strf("accepted (first %s, %u protocol violations)",
                              answer ? strf("answered errno=%d", -static_cast<int>(answer->err)).c_str()
                                     : "unanswered",
                              eng.problems()));
        return {};
    });
}

// FAILURES.md row 24: I/O that reaches the server before its answer to the
// info request, i.e. before the ULP may have been told of the session.
//
// The path sends the info request and at once, without waiting for the
// answer, a zero-length RDMA write with immediate IoReq(chunk 0, kIoData +
// kIoUsr) on connection 1. A chunk never written holds zeros (a request of
// type 0, which the server refuses before any ULP call), so with rejoin
// chunk 0 holds a valid request already: a first path A (first address
// pair) opens the session and writes to chunk 0 (answered); a second path B
// (the second pair) makes all its connections; A disconnects, and the
// session's DISCONNECTED reaches the ULP while B keeps the session; then B
// sends its info request and the immediate. A ULP that delays its
// CONNECTED handling (rtrs-null link_delay_ms) makes the window wide.
//
// "result: closed" (the server closed the path), "result: io answered
// before the info response errno=-N" / "... after ..." (the order in which
// the client saw the two), "result: info answered, io unanswered", or
// "result: timeout" (neither within kReactMs).
class ImmSink final : public IoSink {
public:
    explicit ImmSink(Path& path) : path_(path) {}
    void on_io_recv(Con&, const ibv_wc& wc, const uint8_t*) override {
        // An RDMA write with immediate, or (always_invalidate) a send with
        // immediate carrying the chunk's new rkey.
        const bool imm_in = wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM ||
                            (wc.opcode == IBV_WC_RECV && (wc.wc_flags & IBV_WC_WITH_IMM));
        if (answered || !imm_in) return;
        const wire::Imm imm = wire::imm_decode(ntohl(wc.imm_data));
        if (!imm.is(wire::ImmType::IoRsp) && !imm.is(wire::ImmType::IoRspWithInv)) return;
        answered = true;
        before_info = !path_.info_answered();
        err = static_cast<int>((imm.payload >> wire::kIoRspMsgIdBits) & wire::kIoRspErrnoMask);
    }
    void on_io_sent(Con&, uint64_t, const ibv_wc&) override {}
    bool answered = false, before_info = false;
    int err = 0;

private:
    Path& path_;
};

// How long A's close is given to reach the ULP (its DISCONNECTED) before B
// goes on: the server's close work runs at once; 3 s is plenty even on the
// debug kernel.
constexpr int kCloseSettleMs = 3000;
// Between the info request and the immediate (see io_before_info).
constexpr int kImmAfterInfoMs = 500;

Status io_before_info(Ctx& c, bool rejoin) {
    const wire::Uuid paths_uuid = random_uuid();
    std::unique_ptr<Path> a;
    if (rejoin) {
        if (!c.cfg.dst2) return Status::error(EINVAL, "this case needs a second --server (path B)");
        PathConfig pa = c.path_config(2, c.cfg.session);
        pa.paths_uuid = paths_uuid;
        pa.io_depth = 2;
        a = std::make_unique<Path>(c.loop, pa);
        if (Status s = a->open(); !s.ok()) return Status::error(s.err(), "path A: " + s.msg(), s.kind());
        if (c.cfg.verbose) std::fprintf(stderr, "A: %s\n", a->summary().c_str());
        IoEngine eng(*a);
        if (Status s = eng.init(1, kIoData + kIoUsr + 64, kIoData); !s.ok()) return s;
        std::optional<IoOutcome> answer;
        eng.on_done = [&answer](unsigned, const IoOutcome& o) { answer = o; };
        if (Status s = eng.post_write(0, 1, 0, kIoData, kIoUsr, 0); !s.ok()) return s;
        Status w = c.loop.wait_for([&] { return answer.has_value() || a->lost(); }, kReactMs,
                                   "path A's write");
        if (!answer || answer->err != 0)
            return Status::error(EIO, answer ? strf("path A's write failed: errno %d",
                                                    -static_cast<int>(answer->err))
                                             : "path A's write was not answered: " + w.msg());
        a->set_io_sink(nullptr);
    }
    PathConfig pb = c.path_config(2, c.cfg.session);
    pb.paths_uuid = paths_uuid;
    pb.io_depth = 2;
    if (rejoin) {
        pb.src = c.cfg.src2;
        pb.dst = *c.cfg.dst2;
        pb.first_conn = false;  // a later path of the session (see README.md)
    }
    Path b(c.loop, pb);
    if (Status s = b.connect_all(); !s.ok()) return Status::error(s.err(), "path B: " + s.msg(), s.kind());
    if (rejoin) {
        a->close();
        if (Status s = c.loop.run_for(kCloseSettleMs); !s.ok()) return s;
        if (b.lost()) {
            print_result("closed before the info request (" + b.lost_reason() + ")");
            return {};
        }
        if (c.cfg.verbose) std::fprintf(stderr, "A closed; B sends its info request and an I/O immediate\n");
    }
    ImmSink sink(b);
    b.set_io_sink(&sink);
    if (Status s = b.send_info(info_req(c.cfg.session)); !s.ok()) return s;
    // The immediate goes on connection 1, the info request on 0: two queue
    // pairs, whose arrivals the server may handle in either order. Sent at
    // once, the immediate can be handled before the info request has been
    // read (seen once on 5.10: the path closed, still unnamed, before the
    // ULP's CONNECTED began), and the window this case is about (the ULP's
    // CONNECTED under way, 3 s with rtrs-null's link_delay_ms) is missed.
    // A pause well inside that window lets the info request be read first.
    if (Status s = c.loop.run_for(kImmAfterInfoMs); !s.ok()) return s;
    const uint32_t imm = wire::imm_encode(
        wire::ImmType::IoReq,
        wire::io_req_payload(0, kIoData + kIoUsr, wire::chunk_bits(b.params().queue_depth)));
    if (Status s = b.send_imm(1, imm); !s.ok()) return s;
    Status s = c.loop.wait_for([&] { return (sink.answered && b.info_answered()) || b.lost(); },
                               kReactMs, "the server to react");
    if (!s.ok() && s.err() != ETIMEDOUT) return s;
    // Where the request was while the server held back its answer: an
    // acknowledged write has reached the server's queue pair, so one
    // acknowledged before the info response came while the server had not
    // yet answered the info request (it answers once the ULP's CONNECTED
    // returned).
    const std::optional<bool> acked = b.imm_acked_before_info(1);
    std::printf("io: %s\n", !acked    ? "the request was not acknowledged"
                             : *acked ? "the request reached the server before the info response"
                                      : "the request reached the server after the info response");
    std::string result;
    if (sink.answered)
        result = strf("io answered %s the info response errno=%d",
                      sink.before_info ? "before" : "after", -sink.err);
    else if (b.lost())
        result = "closed";
    else if (b.info_answered())
        result = "info answered, io unanswered";
    else
        result = "timeout";
    print_result(result);
    b.set_io_sink(nullptr);
    b.close();
    return {};
}

using CaseFn = std::function<Status(Ctx&)>;

const std::map<std::string, CaseFn>& cases() {
    static const std::map<std::string, CaseFn> table = {
        // The IB CM pads private data to its fixed size (56 bytes here), so
        // over RoCE the server sees the 8 bytes followed by zeros.
        {"short-private-data", [](Ctx& c) { return conn_case(c, 0, 1, true, nullptr, 8); }},
        {"bad-magic",
         [](Ctx& c) {
             return conn_case(c, 0, 1, true,
                              [](wire::ConnReq& m) { m.magic.set(wire::kMagic ^ 0x0101); });
         }},
        {"bad-major",
         [](Ctx& c) {
             return conn_case(c, 0, 1, true, [](wire::ConnReq& m) {
                 m.version.set(
                     static_cast<uint16_t>(((wire::kProtoMajor + 1) << 8) | wire::kProtoMinor));
             });
         }},
        {"other-minor",
         [](Ctx& c) {
             return conn_case(c, 0, 1, true, [](wire::ConnReq& m) {
                 m.version.set(
                     static_cast<uint16_t>((wire::kProtoMajor << 8) | (wire::kProtoMinor + 7)));
             });
         }},
        {"cid-ge-cid-num", [](Ctx& c) { return conn_case(c, 1, 1, true, nullptr); }},
        {"cid-num-zero", [](Ctx& c) { return conn_case(c, 0, 0, true, nullptr); }},
        {"cid-num-too-big",
         [](Ctx& c) {
             return conn_case(c, 0, static_cast<uint16_t>(wire::kMaxCidNum + 1), true, nullptr);
         }},
        {"not-first-conn", [](Ctx& c) { return conn_case(c, 0, 1, false, nullptr); }},
        {"info-empty-name", [](Ctx& c) { return info_case(c, info_req("")); }},
        {"info-unterminated-name",
         [](Ctx& c) {
             // All 255 name bytes used, no NUL among them (the reserved
             // bytes after them stay zero).
             return info_case(c, info_req(std::string(wire::kNameMax, 'u')));
         }},
        {"info-slash-name", [](Ctx& c) { return info_case(c, info_req(c.cfg.session + "/x")); }},
        {"info-dot-name", [](Ctx& c) { return info_case(c, info_req(c.cfg.session + ".x")); }},
        {"info-wrong-type",
         [](Ctx& c) {
             return info_case(
                 c, info_req(c.cfg.session, static_cast<uint16_t>(wire::MsgType::InfoRsp)));
         }},
        {"info-before-all-cons",
         [](Ctx& c) { return info_case(c, info_req(c.cfg.session), 2, 1); }},
        {"name-taken", name_taken},
        {"unknown-imm", unknown_imm},
        {"io-busy-chunk", busy_chunk},
        {"io-before-info", [](Ctx& c) { return io_before_info(c, false); }},
        {"io-before-info-rejoin", [](Ctx& c) { return io_before_info(c, true); }},
    };
    static const std::map<std::string, CaseFn> all = [] {
        std::map<std::string, CaseFn> t = table;
        for (const auto& [name, build] : io_cases())
            t.emplace(name, [build](Ctx& c) { return io_case(c, build); });
        return t;
    }();
    return all;
}

}  // namespace

const std::vector<std::string>& bad_case_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto& [name, fn] : cases()) v.push_back(name);
        return v;
    }();
    return names;
}

Status run_bad_case(const BadConfig& cfg) {
    auto it = cases().find(cfg.which);
    if (it == cases().end()) return Status::error(EINVAL, "unknown case '" + cfg.which + "'");
    auto loop = Loop::create();
    if (!loop.ok()) return loop.status();
    Ctx c{cfg, *loop.value()};
    return it->second(c);
}

}  // namespace rc
