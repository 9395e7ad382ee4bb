// SPDX-License-Identifier: GPL-2.0
// The core's C entry points (core/rtrs_core.h): each hands the event to the
// object it concerns.
#include "core/connection.h"
#include "core/log.h"
#include "core/module.h"
#include "core/path.h"
#include "core/request.h"
#include "core/server.h"
#include "core/session.h"
#include "rt/errno.h"
#include "rt/strbuf.h"

using namespace core;

namespace {

Server* to_server(rtrs_srv_ctx* s) { return reinterpret_cast<Server*>(s); }
Session* to_session(rtrs_srv_sess* s) { return reinterpret_cast<Session*>(s); }

}  // namespace

extern "C" int rtrs_core_init(const rtrs_core_config* c, rt::u32* chunk_mem_mb_out) {
    Config cfg;
    cfg.always_invalidate = c->always_invalidate != 0;
    cfg.chunk_size = c->max_chunk_size;
    cfg.queue_depth = c->sess_queue_depth;
    cfg.page_size = c->page_size;
    cfg.signal_interval = c->signal_interval ? c->signal_interval : kDefaultSignalInterval;
    cfg.chunk_mem_limit = c->chunk_mem_mb ? rt::u64{c->chunk_mem_mb} << 20
                                          : default_chunk_mem_limit(rtrs_env_total_ram());
    if (chunk_mem_mb_out) *chunk_mem_mb_out = static_cast<rt::u32>(cfg.chunk_mem_limit >> 20);
    auto r = init_module(cfg);
    return rt::to_neg_errno(r);
}

extern "C" void rtrs_core_exit(void) { exit_module(); }

extern "C" int rtrs_core_server_open(rtrs_env_ulp* ulp, rt::u16 port, rtrs_srv_ctx** out) {
    auto s = Server::open(ulp, port);
    if (!s.ok()) return -s.error();
    *out = reinterpret_cast<rtrs_srv_ctx*>(s.value());
    return 0;
}

extern "C" rtrs_env_ulp* rtrs_core_server_close(rtrs_srv_ctx* srv) { return to_server(srv)->close(); }

extern "C" void rtrs_core_set_sess_priv(rtrs_srv_sess* sess, void* priv) {
    to_session(sess)->set_priv(priv);
}

// As upstream: the session's name while one of its paths is up (from its
// CONNECTED event on, until the last one leaves), else -ENOTCONN; cut to fit.
extern "C" int rtrs_core_get_path_name(rtrs_srv_sess* sess, char* buf, rt::usize len) {
    Session* s = to_session(sess);
    if (s->paths_visible() == 0) return -rt::errc::notconn;
    rt::StrBuf(buf, len).put(s->name());
    return 0;
}

extern "C" int rtrs_core_get_queue_depth(rtrs_srv_sess* sess) {
    return static_cast<int>(to_session(sess)->queue_depth());
}

extern "C" int rtrs_core_on_connect_request(void* core_server, rtrs_env_cm* cm, void* ib_dev,
                                            unsigned int port_num, const rtrs_core_addr* client,
                                            const rtrs_core_addr* server, const void* priv,
                                            rt::u32 len) {
    rt::Bytes data(static_cast<const rt::u8*>(priv), priv ? len : 0);
    return static_cast<Server*>(core_server)
        ->on_connect_request(cm, ib_dev, port_num, *client, *server, data);
}

extern "C" void rtrs_core_on_cm_event(void* core_con, rtrs_core_cm_event ev, int status) {
    Connection* c = static_cast<Connection*>(core_con);
    c->path().on_cm_event(*c, ev, status);
}

extern "C" int rtrs_core_on_device_add(void* ib_dev) {
    Module* m = module();
    if (!m) return -rt::errc::nxio;
    auto r = m->add_device(ib_dev);
    return r.ok() ? 0 : -r.error();
}

extern "C" void rtrs_core_on_device_remove(void* ib_dev) {
    if (Module* m = module()) m->remove_device(ib_dev);
}

extern "C" void rtrs_core_on_wc(void* core_con, rtrs_core_cqe* cqe, const rtrs_core_wc* wc) {
    Connection* c = static_cast<Connection*>(core_con);
    CqScope cq(c->cq());
    c->path().on_wc(*c, *cqe, *wc);
}

// (rtrs_core_answer(), rtrs_core_on_imm() and rtrs_core_on_send_done(),
// the I/O path's, are in request.cpp, their events inlined into them.)

extern "C" void rtrs_core_run_work(void* owner, unsigned int kind) {
    static_cast<Path*>(owner)->run_work(kind);
}

extern "C" int rtrs_core_path_show(void* core_path, rtrs_core_path_attr attr, char* buf,
                                   rt::usize cap) {
    Path& p = *static_cast<Path*>(core_path);
    rt::StrBuf out(buf, cap);
    switch (attr) {
    case RTRS_CORE_ATTR_HCA_NAME: out.put(p.dev().attrs().name).put('\n'); break;
    case RTRS_CORE_ATTR_HCA_PORT: out.dec(rt::u64{p.hca_port()}).put('\n'); break;
    case RTRS_CORE_ATTR_SRC_ADDR: out.put(p.client_addr()).put('\n'); break;
    case RTRS_CORE_ATTR_DST_ADDR: out.put(p.server_addr()).put('\n'); break;
    case RTRS_CORE_ATTR_DISCONNECT: out.put("Usage: echo 1 > disconnect\n"); break;
    case RTRS_CORE_ATTR_STATS_RDMA: p.format_stats(buf, cap); return static_cast<int>(__builtin_strlen(buf));
    case RTRS_CORE_ATTR_LATENCY: p.format_latency(buf, cap); return static_cast<int>(__builtin_strlen(buf));
    }
    return static_cast<int>(out.len());
}

namespace {
// sysfs_streq(buf, "1"): "1" with at most one trailing newline.
bool is_one(const char* buf, rt::usize len) {
    if (len > 0 && buf[len - 1] == '\n') --len;
    return len == 1 && buf[0] == '1';
}
}  // namespace

extern "C" int rtrs_core_path_store(void* core_path, rtrs_core_path_attr attr, const char* buf,
                                    rt::usize len) {
    Path& p = *static_cast<Path*>(core_path);
    if (!is_one(buf, len)) return -rt::errc::inval;
    switch (attr) {
    case RTRS_CORE_ATTR_DISCONNECT:
        // Only starts the teardown: the teardown removes this very file and
        // waits for this write to end.
        p.on_sysfs_disconnect();
        return 0;
    case RTRS_CORE_ATTR_STATS_RDMA:
        p.reset_stats();
        return 0;
    default:
        return -rt::errc::inval;
    }
}

extern "C" void rtrs_core_held(rt::u64* sessions, rt::u64* paths) {
    *sessions = __atomic_load_n(&g_sessions_held, __ATOMIC_RELAXED);
    *paths = __atomic_load_n(&g_paths_held, __ATOMIC_RELAXED);
}

extern "C" int rtrs_core_admission_set(const char* text, rt::usize len, char* msg,
                                       rt::usize msg_len) {
    Module* m = module();
    if (!m) {
        rt::StrBuf(msg, msg_len).put("the core is not up");
        return -rt::errc::nxio;
    }
    return rt::to_neg_errno(m->set_admission(text, len, msg, msg_len));
}

extern "C" int rtrs_core_admission_close_refused(void) {
    Module* m = module();
    if (!m) return -rt::errc::nxio;
    return static_cast<int>(m->close_refused());
}

extern "C" int rtrs_core_admission_show(char* buf, rt::usize cap) {
    Module* m = module();
    if (!m) return -rt::errc::nxio;
    auto n = m->show_admission(buf, cap);
    if (!n.ok()) return -n.error();
    return static_cast<int>(n.value());
}
