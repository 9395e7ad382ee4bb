// SPDX-License-Identifier: GPL-2.0
#include "explore.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "core/connection.h"
#include "core/rtrs_core.h"
#include "core/wire.h"
#include "fake_env.h"
#include "fake_kernel.h"
#include "harness.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace ex {

// --- choices -----------------------------------------------------------------------

Chooser Chooser::seeded(std::uint64_t seed) {
    Chooser c;
    c.mode_ = Mode::Random;
    c.seed_ = seed;
    c.rng_.seed(seed);
    return c;
}

Chooser Chooser::replaying(std::vector<int> choices) {
    Chooser c;
    c.mode_ = Mode::Replay;
    c.forced_ = std::move(choices);
    return c;
}

Chooser Chooser::prefixed(std::vector<int> prefix) { return replaying(std::move(prefix)); }

int Chooser::pick(const std::vector<int>& weights) {
    const int n = static_cast<int>(weights.size());
    int idx = 0;
    if (mode_ == Mode::Random) {
        long total = 0;
        for (int w : weights) total += w;
        long r = total > 0 ? static_cast<long>(rng_() % static_cast<std::uint64_t>(total)) : 0;
        for (idx = 0; idx < n - 1; ++idx) {
            if (r < weights[static_cast<std::size_t>(idx)]) break;
            r -= weights[static_cast<std::size_t>(idx)];
        }
    } else if (taken_.size() < forced_.size()) {
        idx = std::min(forced_[taken_.size()], n - 1);
    }
    taken_.push_back(idx);
    options_.push_back(n);
    return idx;
}

bool Chooser::coin(int percent) {
    int idx = 0;
    if (mode_ == Mode::Random)
        idx = static_cast<int>(rng_() % 100) < percent ? 1 : 0;
    else if (taken_.size() < forced_.size())
        idx = std::min(forced_[taken_.size()], 1);
    taken_.push_back(idx);
    options_.push_back(2);
    return idx == 1;
}

namespace {

using fake::k;

rtrs_env_ulp* ulp_handle() { return reinterpret_cast<rtrs_env_ulp*>(std::uintptr_t{1}); }

void* dev_ptr(int d) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x1000 * (d + 1))); }

// A client path: one path of one of the client's sessions, over its
// attempts to connect.
struct CPath {
    int sess = 0;
    int index = 0;
    int dev = 0;
    h::Client c;
    enum class St { Idle, Connecting, Up, Down } st = St::Idle;
    int next_cid = 0;
    std::vector<bool> established;
    bool info_sent = false;
    bool dead = false;       // the client's host died: it answers nothing
    bool leaving = false;    // the client disconnects this attempt's connections
    std::vector<int> busy;   // per chunk: the request in flight, or -1
    std::vector<fake::Cm*> attempt;  // this attempt's cm_ids, by cid
    int attempts = 0;
};

// What runs now (an action, or a call of the fake the explorer is in).
struct Ctx {
    enum Kind { Top, Wait, Work, Completion, Cm, Sysfs, Connect, Answer } kind = Top;
    const void* path = nullptr;  // the core path it is about, if any
    const fake::Con* con = nullptr;
};

struct Action {
    std::string name;
    int weight = 1;
    Ctx ctx;
    bool blocking = false;  // waits (a device removal, a server close): top level only
    std::function<void()> fn;
};

class World;
World* g_world = nullptr;

class World {
public:
    World(const Scenario& s, Chooser& ch) : s_(s), ch_(ch) {}
    Result go();
    [[maybe_unused]] void print_now();  // (ASan's death callback)

private:
    // --- building blocks ---
    void fail(const std::string& why) {
        if (r_.ok) {
            r_.ok = false;
            r_.failure = why;
            event("FAILED: " + why);
        }
    }
    void event(const std::string& what) {
        r_.events.push_back(std::string(static_cast<std::size_t>(depth_ * 2), ' ') + what);
    }
    void check();
    void exec(Action& a);
    std::vector<Action> actions(bool top);
    bool injectable(const Action& a) const;
    void on_preempt(const char* where);
    bool on_wait_step();
    void watch_client();
    const void* path_of(const fake::Con* c) const {
        auto it = con_path_.find(c);
        return it == con_path_.end() ? nullptr : it->second;
    }
    CPath* cpath_of(const fake::Con* c) {
        auto it = con_cpath_.find(c);
        return it == con_cpath_.end() ? nullptr : &paths_[static_cast<std::size_t>(it->second)];
    }
    void* server() const { return k().listeners.empty() ? nullptr : k().listeners.back(); }
    bool listening() const { return server() != nullptr; }

    // --- the client ---
    void add_client_actions(std::vector<Action>& out);
    void connect(CPath& p);
    void send_info(CPath& p);
    void send_io(CPath& p, int cid, int chunk, bool read);
    void went_down(CPath& p, const char* why);
    std::uint8_t* chunk_mem(CPath& p, int chunk);
    void on_post(fake::Con* c, const rtrs_env_wr& wr);

    // --- the ULP ---
    int on_rdma_ev(rtrs_srv_op* op);
    int on_link_ev(void* sess, int ev);

    // --- start, end ---
    void open();
    void finish();

    const Scenario& s_;
    Chooser& ch_;
    Result r_;
    rtrs_srv_ctx* srv_ = nullptr;
    int opens_ = 0;
    int depth_ = 0;
    int injected_ = 0;  // frames run at a preemption point, now
    int steps_ = 0;
    int actions_run_ = 0;
    bool ending_ = false;
    std::vector<Ctx> active_;
    std::vector<CPath> paths_;
    std::map<const fake::Con*, const void*> con_path_;
    std::map<const fake::Con*, int> con_cpath_;
    int requests_left_ = 0;
    int request_no_ = 0;
    int removals_left_ = 0;
    bool closed_midway_ = false;
    // The ULP's side.
    enum class Link { Connecting, Connected };
    std::map<void*, Link> sessions_;           // told CONNECTED (and not yet DISCONNECTED)
    struct Given {
        void* sess;
        int no;  // its arrival at the ULP: its name in the events
    };
    std::map<rtrs_srv_op*, Given> outstanding_;  // given, not answered
    std::vector<rtrs_srv_op*> held_;            // to answer later, in arrival order
    // The events name a request by its arrival at the ULP and a work item's
    // owner by the fake kernel's number for it, never by an address: freed
    // memory is reused in a different order in each run (and not at all
    // under ASan), so names from addresses made a replay differ (-O1 builds).
    int arrivals_ = 0;
    static std::string name(int no) { return "#" + std::to_string(no); }
};

// --- the ULP ----------------------------------------------------------------------

int World::on_rdma_ev(rtrs_srv_op* op) {
    void* sess = k().events.empty() ? nullptr : k().events.back().sess;
    auto it = sessions_.find(sess);
    if (it == sessions_.end() || it->second != Link::Connected)
        fail("a request reached the ULP outside CONNECTED .. DISCONNECTED of its session");
    if (outstanding_.count(op)) fail("a request given to the ULP twice before its answer");
    const int no = ++arrivals_;
    event("  ULP: request " + name(no));
    // Now and then the ULP fails it at once (the server answers it then).
    if (!ending_ && ch_.coin(4)) {
        event("  ULP: refuses the request (-EIO)");
        return -5;
    }
    outstanding_[op] = Given{sess, no};
    // rnbd answers inside the callback when it fails to submit: so may we.
    if (!ending_ && ch_.coin(20)) {
        outstanding_.erase(op);
        event("  ULP: answers inline");
        ++r_.answered;
        rtrs_core_answer(op, 0);
        return 0;
    }
    held_.push_back(op);
    return 0;
}

int World::on_link_ev(void* sess, int ev) {
    if (ev == RTRS_CORE_LINK_CONNECTED) {
        if (sessions_.count(sess)) fail("CONNECTED twice for one session");
        sessions_[sess] = Link::Connecting;
        if (s_.ulp_refuses && !ending_ && ch_.coin(15)) {
            event("  ULP: refuses CONNECTED");
            sessions_.erase(sess);
            return -22;
        }
        event("  ULP: CONNECTED");
        sessions_[sess] = Link::Connected;
        return 0;
    }
    if (ev == RTRS_CORE_LINK_DISCONNECTED) {
        auto it = sessions_.find(sess);
        if (it == sessions_.end() || it->second != Link::Connected)
            fail("DISCONNECTED without CONNECTED (or twice)");
        for (auto& o : outstanding_)
            if (o.second.sess == sess) {
                fail("DISCONNECTED while the ULP still holds a request of the session");
                break;
            }
        sessions_.erase(sess);
        event("  ULP: DISCONNECTED");
    }
    return 0;
}

// --- the client --------------------------------------------------------------------

std::uint8_t* World::chunk_mem(CPath& p, int chunk) {
    std::uint64_t skip = static_cast<std::uint64_t>(chunk);
    for (auto& d : p.c.descs) {
        std::uint64_t n = p.c.chunk_size ? d.len / p.c.chunk_size : 0;
        if (skip < n)
            return k().cpu_of(d.addr + skip * p.c.chunk_size, static_cast<std::uint32_t>(p.c.chunk_size));
        skip -= n;
    }
    return nullptr;
}

void World::went_down(CPath& p, const char* why) {
    if (p.st == CPath::St::Down || p.st == CPath::St::Idle) return;
    event("  client: path " + std::to_string(p.index) + " down (" + why + ")");
    p.st = CPath::St::Down;
    std::fill(p.busy.begin(), p.busy.end(), -1);  // failed over, or failed
}

// What the server posted, as the client receives it.
void World::on_post(fake::Con* c, const rtrs_env_wr& wr) {
    CPath* p = cpath_of(c);
    if (!p || p->st == CPath::St::Down || p->st == CPath::St::Idle) return;
    if (std::find(p->attempt.begin(), p->attempt.end(), c->cm) == p->attempt.end()) return;
    if (wr.op == RTRS_ENV_WR_SEND && p->st == CPath::St::Connecting && c->cm == p->attempt[0]) {
        std::uint8_t* m = k().cpu_of(wr.addr, wr.len);
        if (!m) {
            fail("the info response is not in a mapped buffer");
            return;
        }
        auto d = wire::parse_info_rsp(rt::Bytes(m, wr.len));
        if (!d.ok()) {
            fail("the client cannot read the info response");
            return;
        }
        p->c.descs.clear();
        for (std::size_t i = 0; i < d.value().count(); ++i) p->c.descs.push_back(d.value().at(i));
        p->st = CPath::St::Up;
        ++r_.paths_up;
        return;
    }
    if (wr.op != RTRS_ENV_WR_SEND_IMM && wr.op != RTRS_ENV_WR_RDMA_WRITE_IMM) return;
    const wire::Imm imm = wire::imm_decode(wr.imm);
    if (!imm.is(wire::ImmType::IoRsp) && !imm.is(wire::ImmType::IoRspWithInv)) return;
    const wire::IoRsp rsp = wire::io_rsp_decode(imm.payload);
    if (p->st != CPath::St::Up) {
        fail("a response on a path the client does not have up yet");
        return;
    }
    if (rsp.msg_id >= p->busy.size() || p->busy[rsp.msg_id] < 0) {
        fail("a response for chunk " + std::to_string(rsp.msg_id) + ", which has no request in flight");
        return;
    }
    p->busy[rsp.msg_id] = -1;
}

void World::connect(CPath& p) {
    void* srv = server();
    if (p.st == CPath::St::Idle) {
        p.st = CPath::St::Connecting;
        p.next_cid = 0;
        p.info_sent = false;
        p.leaving = false;
        p.attempt.assign(p.c.cid_num, nullptr);
        p.established.assign(p.c.cid_num, false);
        p.c.cms.assign(p.c.cid_num, nullptr);
        p.c.descs.clear();
        ++p.attempts;
    }
    // The first path of a session says so; another, while one is up, not.
    bool first = true;
    for (auto& o : paths_)
        if (&o != &p && o.sess == p.sess && o.st == CPath::St::Up) first = false;
    const auto cid = static_cast<std::uint16_t>(p.next_cid);
    int ret = -1;
    fake::Cm* cm = k().connect(srv, h::conn_req(p.c, cid, first), p.c.caddr, p.c.saddr,
                               p.c.ib_dev, &ret);
    p.attempt[cid] = cm;
    p.c.cms[cid] = cm;
    if (ret != 0 || !cm->accepted || !cm->con) {
        went_down(p, "a connection refused");
        return;
    }
    con_cpath_[cm->con] = p.index;
    con_path_[cm->con] = &static_cast<core::Connection*>(cm->con->core)->path();
    auto rsp = wire::parse_conn_rsp(rt::Bytes(cm->priv.data(), cm->priv.size()));
    if (!rsp.ok()) {
        fail("the client cannot read the connection response");
        return;
    }
    p.c.queue_depth = rsp.value().queue_depth;
    p.c.chunk_size = rsp.value().chunk_size();
    p.busy.assign(p.c.queue_depth, -1);
    ++p.next_cid;
}

void World::send_info(CPath& p) {
    fake::Con* c0 = p.attempt[0]->con;
    rtrs_env_buf* buf = c0->recvs.front().buf;
    std::vector<std::uint8_t> msg(sizeof(wire::InfoReq), 0);
    const std::string name = "s" + std::to_string(p.sess);
    auto n = wire::encode_info_req(rt::MutBytes(msg.data(), msg.size()),
                                   rt::Bytes(reinterpret_cast<const std::uint8_t*>(name.data()), name.size()));
    if (!n.ok()) {
        fail("cannot encode the info request");
        return;
    }
    std::memcpy(buf->cpu, msg.data(), std::min<std::size_t>(msg.size(), buf->len));
    p.info_sent = true;
    k().deliver_recv(c0, static_cast<std::uint32_t>(msg.size()));
}

void World::send_io(CPath& p, int cid, int chunk, bool read) {
    std::uint8_t* mem = chunk_mem(p, chunk);
    if (!mem) {
        fail("the client's chunk is not mapped at the server");
        return;
    }
    const std::uint32_t data = static_cast<std::uint32_t>(8 * (request_no_ % 5));
    const std::uint16_t usr = static_cast<std::uint16_t>(4 * (request_no_ % 3));
    std::uint32_t off;
    if (read) {
        off = usr;
        wire::SgDescFields d{0xC0FFEE000ull + static_cast<std::uint64_t>(chunk) * 4096, 0x4242, data ? data : 512};
        auto n = wire::encode_rdma_read(rt::MutBytes(mem + off, p.c.chunk_size - off), usr, 0,
                                        rt::Span<const wire::SgDescFields>(&d, 1));
        if (!n.ok()) return fail("cannot encode a read");
    } else {
        off = data + usr;
        auto n = wire::encode_rdma_write(rt::MutBytes(mem + off, p.c.chunk_size - off), usr);
        if (!n.ok()) return fail("cannot encode a write");
    }
    const std::uint32_t payload =
        wire::io_req_payload(static_cast<std::uint32_t>(chunk), off, wire::chunk_bits(p.c.queue_depth));
    p.busy[static_cast<std::size_t>(chunk)] = request_no_++;
    --requests_left_;
    if (!k().deliver_imm(p.attempt[static_cast<std::size_t>(cid)]->con,
                         wire::imm_encode(wire::ImmType::IoReq, payload)))
        p.busy[static_cast<std::size_t>(chunk)] = -1;
}

// The client notices what the server did to its connections.
void World::watch_client() {
    for (auto& p : paths_) {
        if (p.st == CPath::St::Idle) continue;
        bool lost = false, all_gone = true, left = true;
        for (fake::Cm* cm : p.attempt) {
            if (!cm) continue;
            if (cm->rejected) lost = true;
            fake::Con* c = cm->con;
            if (!c) continue;
            if (c->disconnected || c->cm_ended || c->destroyed) lost = true;
            if (!(c->destroyed || c->cm_ended || c->disconnected)) all_gone = false;
            if (!(c->destroyed || c->cm_ended)) left = false;
        }
        if (lost) went_down(p, "the server closed it");
        if (p.leaving && left) p.leaving = false;
        if (p.st == CPath::St::Down && all_gone && !p.leaving && !p.dead) p.st = CPath::St::Idle;
    }
}

void World::add_client_actions(std::vector<Action>& out) {
    for (auto& pr : paths_) {
        CPath* p = &pr;
        const std::string pn = "path " + std::to_string(p->index);
        if (p->dead) continue;
        const bool dev_ok = k().ib_state(p->c.ib_dev) != fake::Kernel::IbState::Gone;
        if ((p->st == CPath::St::Idle && p->attempts < 3) ||
            (p->st == CPath::St::Connecting && p->next_cid < p->c.cid_num)) {
            if (listening() && dev_ok && !ending_)
                out.push_back({pn + ": connection request " + std::to_string(p->st == CPath::St::Idle ? 0 : p->next_cid),
                               4, {Ctx::Connect}, false, [this, p] { connect(*p); }});
        }
        for (int cid = 0; cid < static_cast<int>(p->attempt.size()); ++cid) {
            fake::Cm* cm = p->attempt[static_cast<std::size_t>(cid)];
            if (!cm || !cm->con) continue;
            fake::Con* c = cm->con;
            // ESTABLISHED (the RTU reached the server's CM).
            if (p->st == CPath::St::Connecting && !p->established[static_cast<std::size_t>(cid)] &&
                !c->destroyed && !cm->in_handler)
                out.push_back({pn + ": ESTABLISHED on connection " + std::to_string(cid), 4,
                               {Ctx::Cm, path_of(c), c}, false, [this, p, cid, c] {
                                   p->established[static_cast<std::size_t>(cid)] = true;
                                   k().cm_event(c, RTRS_CORE_CM_ESTABLISHED);
                               }});
            // The client leaving: its disconnect reaches each established
            // connection; one it never established times out (an error).
            if (p->leaving && !c->cm_ended && !c->destroyed && !cm->in_handler) {
                const bool est = c->established;
                out.push_back({pn + (est ? ": the client disconnects connection " : ": connection error on connection ") +
                                   std::to_string(cid),
                               4, {Ctx::Cm, path_of(c), c}, false, [c, est] {
                                   k().cm_event(c, est ? RTRS_CORE_CM_DISCONNECTED : RTRS_CORE_CM_ERROR, est ? 0 : -110);
                               }});
            }
        }
        if (p->st == CPath::St::Connecting && !p->info_sent && p->next_cid == p->c.cid_num &&
            std::all_of(p->established.begin(), p->established.end(), [](bool b) { return b; })) {
            fake::Con* c0 = p->attempt[0]->con;
            if (c0 && !c0->recvs.empty() && c0->recvs.front().buf && !c0->in_cq)
                out.push_back({pn + ": info request", 4, {Ctx::Completion, path_of(c0), c0}, false,
                               [this, p] { send_info(*p); }});
        }
        if (p->st == CPath::St::Up && !ending_) {
            if (requests_left_ > 0) {
                for (int cid = 0; cid < static_cast<int>(p->attempt.size()); ++cid) {
                    if (p->attempt.size() > 1 && cid == 0) continue;  // I/O on 1..n-1, as upstream
                    fake::Con* c = p->attempt[static_cast<std::size_t>(cid)]->con;
                    if (!c || c->recvs.empty() || c->drained || c->in_cq) continue;
                    auto free = std::find(p->busy.begin(), p->busy.end(), -1);
                    if (free == p->busy.end()) break;
                    const int chunk = static_cast<int>(free - p->busy.begin());
                    for (int read = 0; read < 2; ++read)
                        out.push_back({pn + ": " + (read ? "read" : "write") + " on chunk " +
                                           std::to_string(chunk) + " over connection " + std::to_string(cid),
                                       6, {Ctx::Completion, path_of(c), c}, false,
                                       [this, p, cid, chunk, read] { send_io(*p, cid, chunk, read != 0); }});
                }
            }
            fake::Con* c0 = p->attempt[0]->con;
            if (c0 && !c0->recvs.empty() && !c0->drained && !c0->in_cq)
                out.push_back({pn + ": heartbeat", 1, {Ctx::Completion, path_of(c0), c0}, false, [c0] {
                                   k().deliver_imm(c0, wire::imm_encode(wire::ImmType::HbMsg, 0));
                               }});
            if (s_.client_leaves) {
                out.push_back({pn + ": the client leaves", 1, {Ctx::Top}, false, [this, p] {
                                   went_down(*p, "the client leaves");
                                   p->leaving = true;
                               }});
                out.push_back({pn + ": the client's host dies", 1, {Ctx::Top}, false, [this, p] {
                                   went_down(*p, "the client's host died");
                                   p->dead = true;
                               }});
            }
        }
    }
}

// --- actions -----------------------------------------------------------------------

std::vector<Action> World::actions(bool top) {
    std::vector<Action> out;
    add_client_actions(out);
    // Completions of the server's sends (one at a time per CQ).
    for (auto& cp : k().cons) {
        fake::Con* c = cp.get();
        if (c->drained || c->destroyed || c->in_cq) continue;
        bool signaled = false;
        for (auto& s : c->sends) signaled |= s.wr.signaled != 0;
        if (!signaled) continue;
        CPath* p = cpath_of(c);
        if (p && p->dead) continue;  // nothing comes back from a dead host
        out.push_back({"send completion on cm " + std::to_string(c->cm->id), 6,
                       {Ctx::Completion, path_of(c), c}, false, [this, c] {
                           const bool ok = ending_ || !s_.client_leaves || !ch_.coin(2);
                           if (!ok) event("  (it failed: a transport error)");
                           k().complete_send(c, ok);
                       }});
    }
    // The ULP's answers, from any CPU.
    for (rtrs_srv_op* op : held_)
        out.push_back({"ULP answers request " + name(outstanding_.at(op).no), 5,
                       {Ctx::Answer}, false, [this, op] {
                           held_.erase(std::find(held_.begin(), held_.end(), op));
                           outstanding_.erase(op);
                           ++r_.answered;
                           rtrs_core_answer(op, (!ending_ && ch_.coin(5)) ? -5 : 0);
                       }});
    // Work items that are due.
    for (fake::Work* w : k().due_works())
        out.push_back({"work kind " + std::to_string(w->kind) + " of #" + std::to_string(w->owner_no),
                       5, {Ctx::Work, w->owner}, false, [w] { k().run_work(w); }});
    // The client's answers to our disconnects.
    for (std::size_t i = 0; i < k().due_cm_events.size(); ++i) {
        fake::Con* c = k().due_cm_events[i].con;
        CPath* p = cpath_of(c);
        if ((p && p->dead) || c->cm->in_handler) continue;
        out.push_back({"the client answers the disconnect of cm " + std::to_string(c->cm->id), 3,
                       {Ctx::Cm, path_of(c), c}, false, [c] {
                           for (std::size_t j = 0; j < k().due_cm_events.size(); ++j)
                               if (k().due_cm_events[j].con == c) {
                                   k().deliver_due_cm_event(j);
                                   return;
                               }
                       }});
    }
    // The operator.
    if (s_.sysfs && !ending_)
        for (auto& sp : k().sysfs_paths) {
            if (!sp->live) continue;
            fake::SysfsPath* p = sp.get();
            void* core_path = p->core_path;
            out.push_back({"sysfs: disconnect " + p->name, 1, {Ctx::Sysfs, core_path}, false, [this, core_path] {
                               if (rtrs_core_path_store(core_path, RTRS_CORE_ATTR_DISCONNECT, "1", 1) != 0)
                                   fail("a disconnect write refused");
                           }});
            out.push_back({"sysfs: read and reset stats of " + p->name, 1, {Ctx::Sysfs, core_path}, false,
                           [this, core_path] {
                               char buf[256];
                               rtrs_core_path_show(core_path, RTRS_CORE_ATTR_STATS_RDMA, buf, sizeof(buf));
                               if (rtrs_core_path_store(core_path, RTRS_CORE_ATTR_STATS_RDMA, "1", 1) != 0)
                                   fail("a stats reset refused");
                           }});
        }
    // Time goes by (the heartbeats, the deadlines).
    if (k().next_due() && (top || active_.back().kind == Ctx::Wait))
        out.push_back({"time: to " + std::to_string(k().next_due()), 1, {Ctx::Top}, false,
                       [] { k().now = k().next_due(); }});
    if (!top) return out;
    // Blocking: a device's removal, the server's close.
    if (removals_left_ > 0 && steps_ >= 10 && !ending_)
        for (int d = 0; d < s_.devices; ++d) {
            void* ib = dev_ptr(d);
            if (k().ib_state(ib) != fake::Kernel::IbState::Registered) continue;
            out.push_back({"the device " + std::to_string(d) + " is removed", 2, {Ctx::Wait}, true, [this, ib] {
                               --removals_left_;
                               ++r_.removals;
                               k().remove_ib_dev(ib);
                           }});
        }
    // A device that went comes back (rdma link add): a new device at the
    // same address, which replaces the record of the old one.
    if (!ending_)
        for (int d = 0; d < s_.devices; ++d) {
            void* ib = dev_ptr(d);
            if (k().ib_state(ib) != fake::Kernel::IbState::Gone) continue;
            out.push_back({"the device " + std::to_string(d) + " is added again", 1, {Ctx::Top}, false,
                           [ib] { k().add_ib_dev(ib); }});
        }
    if (s_.close_midway && srv_ && !closed_midway_ && steps_ >= s_.max_steps / 3)
        out.push_back({"the ULP closes the server", 2, {Ctx::Wait}, true, [this] {
                           closed_midway_ = true;
                           rtrs_srv_ctx* s = srv_;
                           srv_ = nullptr;
                           rtrs_core_server_close(s);
                       }});
    if (!srv_ && !listening() && opens_ < 2 && !closed_midway_ && !ending_)
        out.push_back({"the ULP opens the server again", 1, {Ctx::Top}, false, [this] { open(); }});
    return out;
}

// Whether a (non-blocking) action may run now, beside what is running.
bool World::injectable(const Action& a) const {
    if (a.blocking) return false;
    for (const Ctx& c : active_) {
        switch (a.ctx.kind) {
        case Ctx::Work:
            // A work item may wait for anything of its path (a drain, a
            // destroy, a cancel, a sysfs removal), and for a connection
            // request's handler: not beside those.
            if (c.kind == Ctx::Connect) return false;
            if (c.path && c.path == a.ctx.path) return false;
            break;
        case Ctx::Completion:
            if (c.con && c.con == a.ctx.con && c.kind == Ctx::Completion) return false;
            break;
        case Ctx::Cm:
            if (c.con && c.con == a.ctx.con && c.kind == Ctx::Cm) return false;
            break;
        case Ctx::Connect:
            if (c.kind == Ctx::Connect) return false;  // one listener handler at a time
            break;
        default:
            break;
        }
    }
    // The fake's own handlers in progress (a drain's flushed completions,
    // a removal's DEVICE_REMOVAL events) count as running too.
    if (a.ctx.kind == Ctx::Work) {
        for (auto& cp : k().cons)
            if ((cp->in_cq || cp->cm->in_handler) && path_of(cp.get()) == a.ctx.path) return false;
        // (and the work items a wait of the fake runs by itself)
        for (auto& w : k().works)
            if (w->running && w->owner == a.ctx.path) return false;
    }
    if (a.ctx.kind == Ctx::Completion && a.ctx.con && a.ctx.con->in_cq) return false;
    if (a.ctx.kind == Ctx::Cm && a.ctx.con && a.ctx.con->cm->in_handler) return false;
    return true;
}

void World::exec(Action& a) {
    if (++actions_run_ > s_.max_steps * 40) {
        fail("the run does not end (too many actions)");
        return;
    }
    event(a.name);
    active_.push_back(a.ctx);
    ++depth_;
    a.fn();
    --depth_;
    active_.pop_back();
}

void World::on_preempt(const char* where) {
    if (!r_.ok || ending_ || depth_ == 0 || injected_ >= s_.preempt_depth || active_.empty()) return;
    if (!ch_.coin(s_.preempt_percent)) return;
    std::vector<Action> all = actions(false);
    std::vector<Action> ok;
    for (auto& a : all)
        if (injectable(a)) ok.push_back(std::move(a));
    if (ok.empty()) return;
    std::vector<int> w;
    for (auto& a : ok) w.push_back(a.weight);
    Action& a = ok[static_cast<std::size_t>(ch_.pick(w))];
    ++r_.preemptions;
    event(std::string("  (another thread, at: ") + where + ")");
    ++injected_;
    exec(a);
    --injected_;
}

bool World::on_wait_step() {
    if (!r_.ok) return false;
    if (ending_) {
        // The end: the ULP answers what it holds, the rest runs by itself.
        if (held_.empty()) return false;
        rtrs_srv_op* op = held_.front();
        held_.erase(held_.begin());
        outstanding_.erase(op);
        ++r_.answered;
        rtrs_core_answer(op, 0);
        return true;
    }
    if (depth_ > 3 || ch_.coin(25)) return false;  // let the wait move time itself
    Ctx wait{Ctx::Wait};
    active_.push_back(wait);
    std::vector<Action> all = actions(false);
    std::vector<Action> ok;
    for (auto& a : all)
        if (injectable(a)) ok.push_back(std::move(a));
    bool did = false;
    if (!ok.empty()) {
        std::vector<int> w;
        for (auto& a : ok) w.push_back(a.weight);
        Action& a = ok[static_cast<std::size_t>(ch_.pick(w))];
        event("  (while waiting)");
        exec(a);
        did = true;
    }
    active_.pop_back();
    watch_client();
    return did;
}

// --- checks --------------------------------------------------------------------------

void World::check() {
    if (!k().violations.empty()) fail("fake kernel: " + k().violations.front());
    if (!fake_env::state().warnings.empty()) fail("core warning: " + fake_env::state().warnings.front());
}

// --- the run --------------------------------------------------------------------------

void World::open() {
    ++opens_;
    event("the ULP opens the server");
    Ctx top{Ctx::Top};
    active_.push_back(top);
    ++depth_;
    rtrs_srv_ctx* srv = nullptr;
    const int err = rtrs_core_server_open(ulp_handle(), 1234, &srv);
    --depth_;
    active_.pop_back();
    if (err) {
        ++r_.failed_opens;
        event("  open failed: " + std::to_string(err));
        if (listening()) fail("a server that failed to open still listens");
        return;
    }
    srv_ = srv;
}

void World::finish() {
    ending_ = true;
    event("-- the end: the ULP answers, the queues empty");
    k().on_preempt = nullptr;
    k().should_fail = nullptr;
    for (int guard = 0; guard < 20000 && r_.ok; ++guard) {
        watch_client();
        std::vector<Action> all = actions(true);
        Action* pick = nullptr;
        for (auto& a : all)
            if (!a.blocking && a.name.rfind("time:", 0) != 0 && a.name.find("connection request") == std::string::npos &&
                a.name.find("ESTABLISHED") == std::string::npos && a.name.find("info request") == std::string::npos &&
                a.name.find("heartbeat") == std::string::npos) {
                pick = &a;
                break;
            }
        if (!pick) break;
        exec(*pick);
        check();
    }
    watch_client();
    // Every request of a path that stayed up has its answer.
    for (auto& p : paths_)
        if (p.st == CPath::St::Up)
            for (std::size_t i = 0; i < p.busy.size(); ++i)
                if (p.busy[i] >= 0)
                    fail("request " + std::to_string(p.busy[i]) + " on chunk " + std::to_string(i) + " of path " +
                         std::to_string(p.index) + " (up) never answered");
    if (!r_.ok) return;
    // The ULP closes the server; the client answers disconnects, but for
    // the hosts that died.
    auto& due = k().due_cm_events;
    due.erase(std::remove_if(due.begin(), due.end(),
                             [this](const fake::Kernel::DueCmEvent& e) {
                                 CPath* p = cpath_of(e.con);
                                 return p && p->dead;
                             }),
              due.end());
    k().cm_answers_by_hand = false;
    k().disconnect_answer_ms = 0;
    event("-- the ULP closes the server");
    if (srv_) rtrs_core_server_close(srv_);
    srv_ = nullptr;
    check();
    if (!sessions_.empty()) fail("a session's CONNECTED without its DISCONNECTED");
    if (!outstanding_.empty()) fail("the ULP holds a request after the close");
    // The module's unload: our IB client goes from every device, then the core.
    event("-- the module unloads");
    for (int d = 0; d < s_.devices; ++d)
        if (k().ib_state(dev_ptr(d)) == fake::Kernel::IbState::Registered) rtrs_core_on_device_remove(dev_ptr(d));
    rtrs_core_exit();
    check();
    for (auto& l : k().leftovers()) {
        fail("left over: " + l);
        break;
    }
    std::uint64_t sess = 0, paths = 0;
    rtrs_core_held(&sess, &paths);
    if (sess || paths) fail("held after the unload: " + std::to_string(sess) + " sessions, " + std::to_string(paths) + " paths");
}

void World::print_now() { std::fprintf(stderr, "%s\n", report(s_, ch_, r_).c_str()); }

Result World::go() {
    g_world = this;
    fake::reset();
    k().cm_answers_by_hand = true;
    k().on_preempt = [this](const char* where) { on_preempt(where); };
    k().on_wait_step = [this] { return on_wait_step(); };
    k().on_post = [this](fake::Con* c, const rtrs_env_wr& wr) { on_post(c, wr); };
    k().ulp.rdma_ev = [this](void*, rtrs_srv_op* op, void*, std::uint32_t, const void*, std::uint32_t) {
        return on_rdma_ev(op);
    };
    k().ulp.link_ev = [this](void* sess, int ev, void*) { return on_link_ev(sess, ev); };
    int faults = 0;
    std::function<bool(const char*)> fail_hook = [this, &faults](const char* what) {
        if (!r_.ok || ending_) return false;
        if (s_.open_race && std::strcmp(what, "listen_ib") == 0) {
            const bool f = ch_.coin(50);
            if (f) ++r_.faults;
            return f;
        }
        if (s_.fault_percent <= 0 || faults >= s_.max_faults) return false;
        // Only what a kernel call can fail with; not the listener's.
        if (std::strcmp(what, "listen") == 0 || std::strcmp(what, "listen_ib") == 0) return false;
        if (!ch_.coin(s_.fault_percent)) return false;
        ++faults;
        ++r_.faults;
        event(std::string("  (fault: ") + what + " fails)");
        return true;
    };
    requests_left_ = s_.requests;
    removals_left_ = s_.device_removals;
    for (int sess = 0; sess < s_.sessions; ++sess)
        for (int i = 0; i < s_.paths_per_session; ++i) {
            CPath p;
            p.sess = sess;
            p.index = static_cast<int>(paths_.size());
            p.dev = i % s_.devices;
            p.c = h::client(100 + sess, static_cast<std::uint16_t>(s_.cons_per_path), 2 + sess, p.dev + 1);
            p.c.sess_uuid.b[0] = static_cast<std::uint8_t>(0x40 + i);
            p.c.caddr = fake::ipv4(10, 77 + i, sess, 2);
            p.c.saddr = fake::ipv4(10, 77 + i, 0, 1);
            p.c.ib_dev = dev_ptr(p.dev);
            paths_.push_back(p);
        }

    rtrs_core_config cfg{};
    cfg.always_invalidate = s_.always_invalidate;
    cfg.max_chunk_size = 16384;
    cfg.sess_queue_depth = s_.queue_depth;
    cfg.page_size = 4096;
    cfg.signal_interval = s_.signal_interval;
    k().should_fail = nullptr;  // the module loads; faults come after
    if (rtrs_core_init(&cfg, nullptr) != 0) {
        fail("the core does not start");
        g_world = nullptr;
        return r_;
    }
    k().should_fail = fail_hook;
    // The IB core tells our client of every device at its registration.
    for (int d = 0; d < s_.devices; ++d) k().add_ib_dev(dev_ptr(d));
    open();
    check();
    for (steps_ = 0; steps_ < s_.max_steps && r_.ok; ++steps_) {
        watch_client();
        std::vector<Action> all = actions(true);
        if (all.empty()) break;
        std::vector<int> w;
        for (auto& a : all) w.push_back(a.weight);
        Action& a = all[static_cast<std::size_t>(ch_.pick(w))];
        exec(a);
        check();
    }
    r_.steps = steps_;
    if (r_.ok) finish();
    r_.choices = ch_.choices();
    for (auto& t : k().traces)
        if (t.name == "path_down") ++r_.closes;
    for (auto& t : k().traces)
        if (t.name == "conn_refused" && t.why.find("going away") != std::string::npos) ++r_.refused_in_window;
    for (auto& t : k().traces)
        if (t.name == "conn_refused" && t.why.find("still opening") != std::string::npos) ++r_.refused_opening;
    g_world = nullptr;
    return r_;
}

#if defined(__SANITIZE_ADDRESS__)
void on_asan_death() {
    if (g_world) g_world->print_now();
}
struct AsanHook {
    AsanHook() { __asan_set_death_callback(on_asan_death); }
} g_asan_hook;
#endif

}  // namespace

Result run(const Scenario& s, Chooser& ch) {
    World w(s, ch);
    return w.go();
}

std::string report(const Scenario& s, const Chooser& ch, const Result& r) {
    std::string out = std::string("explorer: scenario ") + s.name;
    if (ch.random()) out += ", seed " + std::to_string(ch.seed());
    out += ": " + (r.ok ? std::string("passed") : "FAILED: " + r.failure) + "\n";
    out += "replay: RTRS_EXPLORE_SCENARIO=" + std::string(s.name) + " RTRS_EXPLORE_REPLAY=";
    for (std::size_t i = 0; i < ch.choices().size(); ++i)
        out += (i ? "," : "") + std::to_string(ch.choices()[i]);
    out += "\nevents (" + std::to_string(r.events.size()) + "):\n";
    const std::size_t keep = std::getenv("RTRS_EXPLORE_PRINT") ? 100000 : 120;
    const std::size_t from = r.events.size() > keep ? r.events.size() - keep : 0;
    if (from) out += "  ... " + std::to_string(from) + " earlier\n";
    for (std::size_t i = from; i < r.events.size(); ++i) out += "  " + r.events[i] + "\n";
    return out;
}

Result enumerate(const Scenario& s, int max_runs, int max_choices, int* runs) {
    std::vector<int> prefix;
    Result last;
    for (*runs = 0; *runs < max_runs;) {
        Chooser ch = Chooser::prefixed(prefix);
        last = run(s, ch);
        ++*runs;
        if (!last.ok) return last;
        std::vector<int> taken = ch.choices();
        std::vector<int> opts = ch.options();
        std::size_t n = std::min<std::size_t>(taken.size(), static_cast<std::size_t>(max_choices));
        while (n > 0 && taken[n - 1] + 1 >= opts[n - 1]) --n;
        if (n == 0) break;  // every list up to the bound was tried
        prefix.assign(taken.begin(), taken.begin() + static_cast<long>(n));
        prefix.back() += 1;
    }
    return last;
}

}  // namespace ex
