// SPDX-License-Identifier: GPL-2.0
#include "harness.h"

#include <cstring>

#include "fake_env.h"

namespace h {

using fake::k;

namespace {

wire::Uuid uuid(int tag, int which) {
    wire::Uuid u{};
    for (int i = 0; i < 16; ++i) u.b[i] = static_cast<std::uint8_t>(tag * 31 + which * 7 + i);
    return u;
}

rtrs_env_ulp* const kUlp = reinterpret_cast<rtrs_env_ulp*>(std::uintptr_t{1});

}  // namespace

Client client(int tag, std::uint16_t cid_num, int n, int dev) {
    Client c;
    c.paths_uuid = uuid(tag, 1);
    c.sess_uuid = uuid(tag, 2);
    c.cid_num = cid_num;
    c.caddr = fake::ipv4(10, 77, 0, n);
    c.saddr = fake::ipv4(10, 77, 0, 1);
    c.ib_dev = reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x1000 * dev));
    c.cms.assign(cid_num, nullptr);
    return c;
}

Client sibling(const Client& c, int tag, int n) {
    Client s = client(tag, c.cid_num, n);
    s.paths_uuid = c.paths_uuid;
    s.caddr = fake::ipv4(10, 78, 0, n);
    s.saddr = fake::ipv4(10, 78, 0, 1);
    s.ib_dev = c.ib_dev;
    return s;
}

std::vector<std::uint8_t> conn_req(const Client& c, std::uint16_t cid, bool first) {
    wire::ConnReqFields f;
    f.cid = cid;
    f.cid_num = c.cid_num;
    f.sess_uuid = c.sess_uuid;
    f.paths_uuid = c.paths_uuid;
    f.first_conn = first;
    std::vector<std::uint8_t> b(sizeof(wire::ConnReq));
    auto n = wire::encode_conn_req(rt::MutBytes(b.data(), b.size()), f);
    EXPECT_TRUE(n.ok());
    return b;
}

Fixture::Fixture(Opts o) : opts(o) {
    fake::reset();
    rtrs_core_held(&sessions_before, &paths_before);
    k().fail_at = o.fail_at;
    rtrs_core_config cfg{};
    cfg.always_invalidate = o.always_invalidate;
    cfg.max_chunk_size = o.chunk_size;
    cfg.sess_queue_depth = o.queue_depth;
    cfg.chunk_mem_mb = o.chunk_mem_mb;
    cfg.page_size = 4096;
    cfg.signal_interval = o.signal_interval;
    init_err = rtrs_core_init(&cfg, nullptr);
    if (init_err) return;
    core_up = true;
    // The devices the clients use (h::client's dev 1 to 4), as the IB core
    // tells our client of them at its registration.
    for (std::uintptr_t d = 1; d <= 4; ++d) k().add_ib_dev(reinterpret_cast<void*>(0x1000 * d));
    init_err = rtrs_core_server_open(kUlp, 1234, &srv);
    if (init_err) srv = nullptr;
}

Fixture::~Fixture() {
    if (!finished) finish();
}

bool Fixture::finish(bool expect_clean) {
    finished = true;
    if (srv) rtrs_core_server_close(srv);
    srv = nullptr;
    if (core_up) rtrs_core_exit();
    if (!expect_clean) return true;
    std::string p = problems();
    auto left = k().leftovers();
    for (auto& l : left) p += "left over: " + l + "\n";
    std::uint64_t sessions = 0, paths = 0;
    rtrs_core_held(&sessions, &paths);
    if (sessions != sessions_before) p += "sessions held: " + std::to_string(sessions - sessions_before) + "\n";
    if (paths != paths_before) p += "paths held: " + std::to_string(paths - paths_before) + "\n";
    EXPECT_EQ(p, "");
    return p.empty();
}

int count_logs(const std::string& needle) {
    int n = 0;
    for (auto& l : fake_env::state().logs)
        if (l.second.find(needle) != std::string::npos) ++n;
    return n;
}

int downs(const std::string& why) {
    int n = 0;
    for (auto& t : fake::k().traces_named("path_down"))
        if (t.why == why) ++n;
    return n;
}

std::string problems() {
    std::string out;
    for (auto& v : k().violations) out += "violation: " + v + "\n";
    for (auto& w : fake_env::state().warnings) out += "warning: " + w + "\n";
    return out;
}

int Fixture::connect(Client& c, std::uint16_t cid, bool first) {
    int ret = -1;
    fake::Cm* cm = k().connect(k().listener_server, conn_req(c, cid, first), c.caddr, c.saddr,
                               c.ib_dev, &ret);
    if (cid < c.cms.size()) c.cms[cid] = cm;
    if (cm->accepted) {
        auto rsp = wire::parse_conn_rsp(rt::Bytes(cm->priv.data(), cm->priv.size()));
        EXPECT_TRUE(rsp.ok());
        if (rsp.ok()) {
            c.queue_depth = rsp.value().queue_depth;
            c.chunk_size = rsp.value().chunk_size();
            c.new_rkey = (rsp.value().flags & wire::kMsgNewRkey) != 0;
        }
    }
    return ret;
}

bool Fixture::connect_all(Client& c, bool first) {
    for (std::uint16_t cid = 0; cid < c.cid_num; ++cid) {
        if (connect(c, cid, first) != 0 || !c.cms[cid]->accepted) return false;
    }
    for (std::uint16_t cid = 0; cid < c.cid_num; ++cid) k().cm_event(c.con(cid), RTRS_CORE_CM_ESTABLISHED);
    return true;
}

bool Fixture::send_info(Client& c, const std::string& name) {
    fake::Con* c0 = c.con(0);
    if (!c0 || c0->recvs.empty() || !c0->recvs.front().buf) return false;
    rtrs_env_buf* buf = c0->recvs.front().buf;
    std::vector<std::uint8_t> msg(sizeof(wire::InfoReq), 0);
    // Written by hand, so that names the encoder refuses can be sent too.
    std::memcpy(msg.data() + 2, name.data(), std::min<std::size_t>(name.size(), 255));
    std::memcpy(buf->cpu, msg.data(), std::min<std::size_t>(msg.size(), buf->len));
    return k().deliver_recv(c0, static_cast<std::uint32_t>(msg.size()));
}

bool Fixture::finish_join(Client& c) {
    k().run();
    fake::Con* c0 = c.con(0);
    if (!c0) return false;
    for (int guard = 0; guard < 100000; ++guard) {
        for (auto& s : c0->sends) {
            if (s.wr.op != RTRS_ENV_WR_SEND) continue;
            std::uint8_t* p = k().cpu_of(s.wr.addr, s.wr.len);
            if (!p) return false;
            auto d = wire::parse_info_rsp(rt::Bytes(p, s.wr.len));
            if (!d.ok()) return false;
            c.descs.clear();
            for (std::size_t i = 0; i < d.value().count(); ++i) c.descs.push_back(d.value().at(i));
            k().complete_all_sends(c0);
            return true;
        }
        if (!k().complete_send(c0)) return false;
    }
    return false;
}

bool Fixture::up(Client& c, const std::string& name) {
    return connect_all(c) && send_info(c, name) && finish_join(c);
}

std::uint64_t Fixture::chunk_addr(const Client& c, std::uint32_t id) const {
    std::uint64_t skip = id;
    for (auto& d : c.descs) {
        std::uint64_t n = d.len / c.chunk_size;
        if (skip < n) return d.addr + skip * c.chunk_size;
        skip -= n;
    }
    return 0;  // (a client asking for a chunk the server never gave)
}

std::uint8_t* Fixture::chunk_mem(const Client& c, std::uint32_t id) {
    return k().cpu_of(chunk_addr(c, id), static_cast<std::uint32_t>(c.chunk_size));
}

bool Fixture::io_imm(Client& c, std::uint16_t cid, std::uint32_t id, std::uint32_t off) {
    std::uint32_t payload = wire::io_req_payload(id, off, wire::chunk_bits(c.queue_depth));
    return k().deliver_imm(c.con(cid), wire::imm_encode(wire::ImmType::IoReq, payload));
}

namespace {

// After the immediate: with always_invalidate the local invalidation, the
// newest signaled request of the connection, is completed.
rtrs_srv_op* after_imm(Fixture& f, Client& c, std::uint16_t cid, std::size_t before) {
    fake::Con* con = c.con(cid);
    if (f.opts.always_invalidate && con && !con->sends.empty() &&
        con->sends.back().wr.op == RTRS_ENV_WR_LOCAL_INV) {
        // Completes the invalidation (and what was posted before it), and
        // nothing after it.
        std::size_t left = con->sends.size();
        while (left > 0) {
            std::size_t size = con->sends.size();
            if (!k().complete_send(con)) break;
            std::size_t gone = size - con->sends.size();
            left = gone >= left ? 0 : left - gone;
        }
    }
    return f.ops_seen() > before ? f.last_op() : nullptr;
}

}  // namespace

rtrs_srv_op* Fixture::write(Client& c, std::uint16_t cid, std::uint32_t id,
                            const std::vector<std::uint8_t>& data,
                            const std::vector<std::uint8_t>& usr) {
    std::uint8_t* mem = chunk_mem(c, id);
    if (!mem) return nullptr;
    if (!data.empty()) std::memcpy(mem, data.data(), data.size());
    if (!usr.empty()) std::memcpy(mem + data.size(), usr.data(), usr.size());
    std::uint32_t off = static_cast<std::uint32_t>(data.size() + usr.size());
    auto n = wire::encode_rdma_write(rt::MutBytes(mem + off, c.chunk_size - off),
                                     static_cast<std::uint16_t>(usr.size()));
    EXPECT_TRUE(n.ok());
    std::size_t before = ops_seen();
    if (!io_imm(c, cid, id, off)) return nullptr;
    return after_imm(*this, c, cid, before);
}

rtrs_srv_op* Fixture::read(Client& c, std::uint16_t cid, std::uint32_t id, std::uint32_t len,
                           const std::vector<std::uint8_t>& usr, bool need_inval,
                           std::uint64_t raddr, std::uint32_t rkey) {
    std::uint8_t* mem = chunk_mem(c, id);
    if (!mem) return nullptr;
    if (!usr.empty()) std::memcpy(mem, usr.data(), usr.size());
    std::uint32_t off = static_cast<std::uint32_t>(usr.size());
    wire::SgDescFields d{raddr, rkey, len};
    auto n = wire::encode_rdma_read(rt::MutBytes(mem + off, c.chunk_size - off),
                                    static_cast<std::uint16_t>(usr.size()),
                                    need_inval ? wire::kMsgNeedInval : 0,
                                    rt::Span<const wire::SgDescFields>(&d, 1));
    EXPECT_TRUE(n.ok());
    std::size_t before = ops_seen();
    if (!io_imm(c, cid, id, off)) return nullptr;
    return after_imm(*this, c, cid, before);
}

std::size_t Fixture::ops_seen() const {
    std::size_t n = 0;
    for (auto& e : k().events)
        if (e.kind == fake::Event::RdmaEv) ++n;
    return n;
}

rtrs_srv_op* Fixture::last_op() {
    for (auto it = k().events.rbegin(); it != k().events.rend(); ++it)
        if (it->kind == fake::Event::RdmaEv) return it->op;
    return nullptr;
}

std::vector<rtrs_env_wr_op> Fixture::sendq(const Client& c, std::uint16_t cid) const {
    std::vector<rtrs_env_wr_op> out;
    if (fake::Con* con = c.con(cid))
        for (auto& s : con->sends) out.push_back(s.wr.op);
    return out;
}

fake::SysfsPath* Fixture::sysfs_path(const std::string& name) const {
    for (auto& p : k().sysfs_paths)
        if (p->live && p->name == name) return p.get();
    return nullptr;
}

fake::SysfsSess* Fixture::sysfs_sess(const std::string& name) const {
    for (auto& s : k().sysfs_sess)
        if (s->live && s->name == name) return s.get();
    return nullptr;
}

std::string Fixture::show(const std::string& path, rtrs_core_path_attr attr) {
    fake::SysfsPath* p = sysfs_path(path);
    if (!p) return "<no such path>";
    char buf[4096];
    int n = rtrs_core_path_show(p->core_path, attr, buf, sizeof(buf));
    return std::string(buf, static_cast<std::size_t>(n));
}

int Fixture::store(const std::string& path, rtrs_core_path_attr attr, const std::string& text) {
    fake::SysfsPath* p = sysfs_path(path);
    if (!p) return -2;
    return rtrs_core_path_store(p->core_path, attr, text.data(), text.size());
}

int Fixture::link_events(int ev) const {
    int n = 0;
    for (auto& e : k().events)
        if (e.kind == fake::Event::LinkEv && e.ev == ev) ++n;
    return n;
}

}  // namespace h
