// SPDX-License-Identifier: GPL-2.0
// Paths: setting one up for its first connection, adding connections,
// closing, and where each event of a path goes.
#include "core/path.h"

#include "core/addr.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/module.h"
#include "core/server.h"
#include "core/session.h"
#include "rt/errno.h"
#include "rt/strbuf.h"

namespace core {

// The list's values run 0, 1, 2, ... in its order (a gap or a repeat would
// leave a reason without its trace name, or give one two).
namespace {
#define RTRS_CLOSE_REASON_VALUE(name, value, trace, words) value
constexpr int kReasonValues[] = {RTRS_CLOSE_REASONS(RTRS_CLOSE_REASON_VALUE, RTRS_CLOSE_REASON_COMMA)};
#undef RTRS_CLOSE_REASON_VALUE
constexpr bool reason_values_in_order() {
    for (unsigned i = 0; i < sizeof(kReasonValues) / sizeof(kReasonValues[0]); ++i)
        if (kReasonValues[i] != static_cast<int>(i)) return false;
    return true;
}
static_assert(reason_values_in_order(), "core/close_reason.h: values must be 0, 1, 2, ... in order");
}  // namespace

const char* reason_name(CloseReason r) {
    switch (r) {
#define RTRS_CLOSE_REASON_CASE(name, value, trace, words) \
    case CloseReason::name:                                \
        return words;
        RTRS_CLOSE_REASONS(RTRS_CLOSE_REASON_CASE, RTRS_CLOSE_REASON_NOSEP)
#undef RTRS_CLOSE_REASON_CASE
    }
    return "?";
}

Path::Path(Session& sess, const wire::ConnReqFields& req)
    : sess_(&sess),
      uuid_(req.sess_uuid),
      con_num_(req.cid_num),
      recon_cnt_(req.recon_cnt),
      always_inval_(module()->cfg().always_invalidate),
      chunk_size_(sess.chunk_size()),
      queue_depth_(sess.queue_depth()),
      offset_bits_(wire::offset_bits(wire::chunk_bits(sess.queue_depth()))) {
    __atomic_add_fetch(&g_paths_held, 1, __ATOMIC_RELAXED);
}

bool Path::same_addresses(const rtrs_core_addr& client, const rtrs_core_addr& server) const {
    return same_addr(client_, client) && same_addr(server_, server);
}

rt::Result<void> Path::setup(rt::RefPtr<Device> dev, const rtrs_core_addr& client,
                             const rtrs_core_addr& server, unsigned int port_num,
                             const char** why) {
    dev_ = rt::move(dev);
    client_ = client;
    server_ = server;
    hca_port_ = port_num;
    format_addr(client_, client_str_, sizeof(client_str_));
    format_addr(server_, server_str_, sizeof(server_str_));
    rt::StrBuf(name_, sizeof(name_)).put(client_str_).put('@').put(server_str_);

    *why = "no memory for the path";
    io_lock_.init(RTRS_ENV_LOCK_PATH_IO);
    close_work_ = rtrs_env_work_new(this, kWorkClose);
    info_work_ = rtrs_env_work_new(this, kWorkInfo);
    const bool timer = clock_.make_work(this, kWorkTimer);
    if (!io_lock_ || !close_work_ || !info_work_ || !timer) return rt::err(rt::errc::nomem);
    cons_ = RT_TRY(rt::Array<Connection*>::make(rt::Gfp::kernel, con_num_));
    RT_TRY(chunks_.alloc(*this, queue_depth_));

    // The chunks on this path's device: with always_invalidate each has a
    // registration of its own (so that it can be invalidated alone), else
    // as many share one as the device's page list allows.
    const rt::u32 mrs = chunks_.plan(always_inval_, dev_->attrs(), queue_depth_);
    // Ours per chunk, and per registration the kernel's (a region with its
    // page list: about a kilobyte on soft-RoCE) and the new-key message.
    const rt::u64 cost = rt::u64{queue_depth_} * (sizeof(Request) + sizeof(rt::u64)) +
                         rt::u64{mrs} * (sizeof(Mr) + 1024 + (always_inval_ ? 256 : 0)) +
                         wire::info_rsp_size(mrs) + sizeof(Path);
    *why = "the memory budget is spent";
    RT_TRY(module()->charge(cost, "a path"));
    charged_ = cost;
    RT_TRY(chunks_.alloc_mrs(mrs));

    *why = "cannot map the session's chunks for the device";
    if (!chunks_.map(dev_->env(), *sess_, chunk_size_)) return rt::err(rt::errc::nomem);
    *why = "cannot register the session's chunks";
    if (!chunks_.register_chunks(dev_->env(), chunk_size_, always_inval_))
        return rt::err(rt::errc::nomem);
    *why = "no memory for the info response";
    if (hs_.setup(this, dev_->env(), chunks_.mrs_num())) return rt::err(rt::errc::nomem);

    // On the device's list, where a removal finds it: unless the removal
    // began after we took the device, and would not see us.
    {
        Guard g(module()->lock());
        if (dev_->removing) {
            *why = "the device is going away";
            return rt::err(rt::errc::busy);
        }
        dev_->paths.push_back(*this);
    }
    clock_.start(rtrs_env_now_ms());
    return {};
}

bool Path::abandon() {
    Guard io(io_lock_);
    if (state_ != PathState::Connecting) return false;
    set_state_locked(PathState::Destroying);
    return true;
}

// Whatever setup() got, in reverse. A path without connections has had
// no events: its work items are idle but for the timer.
rt::RefPtr<Device> Path::undo_setup() { return free_resources(); }

// The connections' QPs are destroyed by now (or never were).
rt::RefPtr<Device> Path::free_resources(bool keep_cons) {
    clock_.cancel_sync();
    for (rt::usize i = 0; i < cons_.size(); ++i) {
        if (!cons_[i]) continue;
        cons_[i]->free_buffers();  // before the device goes
        if (keep_cons) continue;
        rt::destroy(cons_[i]);
        cons_[i] = nullptr;
    }
    if (!dev_) return {};
    {
        Guard g(module()->lock());
        if (static_cast<rt::ListLink<DevicePathsTag>&>(*this).linked()) dev_->paths.remove(*this);
    }
    hs_.free_response(dev_->env());
    chunks_.free_all(dev_->env(), chunk_size_);
    if (charged_) module()->release_chunk_mem(charged_);
    charged_ = 0;
    return rt::move(dev_);
}

Path::~Path() {
    __atomic_sub_fetch(&g_paths_held, 1, __ATOMIC_RELAXED);
    // (Only a path whose setup failed still has its device here.)
    free_resources().reset();
    if (close_work_) rtrs_env_work_free(close_work_);
    if (info_work_) rtrs_env_work_free(info_work_);
    clock_.free_work();
    if (io_lock_) rtrs_env_lock_free(io_lock_.raw());
}

PathState Path::state_locked_read() {
    Guard g(io_lock_);
    return state_;
}

rt::Result<Connection*> Path::add_connection(rt::u16 cid, rtrs_env_cm* cm, const char** why) {
    auto sizes = Connection::sizes(cid, dev_->attrs(), queue_depth_, chunks_.mrs_num(), always_inval_, why);
    if (!sizes.ok()) return rt::err(sizes.error());
    const rt::u64 cost = Connection::cost(sizes.value());
    if (!module()->charge(cost, "a connection").ok()) {
        *why = "the memory budget is spent";
        return rt::err(rt::errc::nomem);
    }
    *why = "cannot set up the connection";
    Connection* c = new (rt::Gfp::kernel) Connection(*this, server(), cid);
    if (!c) {
        module()->release_chunk_mem(cost);
        return rt::err(rt::errc::nomem);
    }
    c->charged = cost;
    if (cid == 0 && rtrs_env_buf_alloc(dev_->env(), sizeof(wire::InfoReq),
                                       RTRS_ENV_DMA_FROM_DEVICE, &c->info_buf)) {
        rt::destroy(c);
        return rt::err(rt::errc::nomem);
    }
    auto made = c->create(cm, sizes.value(), module()->cfg().signal_interval);
    if (!made.ok()) {
        rt::destroy(c);
        return rt::err(made.error());
    }
    // From here on the connection owns the cm_id: it is the path's to end.
    cons_[cid] = c;
    ++cons_made_;
    if (cid == 0) {
        int err = rtrs_env_post_recv(c->env(), &c->info_buf, &c->recv_cqe, 1);
        if (err) {
            *why = "cannot post the receive for the info request";
            request_close(CloseReason::SetupFailed);
            return c;  // accepted all the same: the teardown ends it
        }
    }
    return c;
}


void Path::on_sysfs_disconnect() {
    Log(kInfo).put(sess_->name()).put(": disconnect of path ").put(name_).put(" requested");
    request_close(CloseReason::SysfsDisconnect);
}

void Path::on_cm_event(Connection& c, rtrs_core_cm_event ev, int status) {
    switch (ev) {
    case RTRS_CORE_CM_ESTABLISHED: {
        Guard g(server().lock());
        c.established = true;
        return;
    }
    case RTRS_CORE_CM_ERROR:
        Log(kErr, log_gate_).who(sess_name(), name_).put(": connection ").dec(rt::u64{c.cid()})
            .put(": connection error ").dec(status);
        on_cm_end(c, CloseReason::ClientDisconnect);
        return;
    case RTRS_CORE_CM_DISCONNECTED:
        on_cm_end(c, CloseReason::ClientDisconnect);
        return;
    case RTRS_CORE_CM_DEVICE_REMOVAL:
        // The device's removal waits for this cm_id to be destroyed, which
        // the teardown does.
        on_cm_end(c, CloseReason::DeviceRemoval);
        return;
    case RTRS_CORE_CM_OTHER:
        return;
    }
}

void Path::on_cm_end(Connection& c, CloseReason why) {
    {
        Guard g(server().lock());
        c.cm_ended = true;
        Guard io(io_lock_);
        // The teardown waits for this: it goes on now.
        if (state_ == PathState::AwaitingDisconnect && disconnects_done_locked())
            rtrs_env_work_requeue(close_work_, 0);
    }
    request_close(why);
}

bool Path::disconnects_done_locked() const {
    for (const Connection* c : cons_)
        if (c && c->created() && c->established && !c->cm_ended) return false;
    return true;
}

void Path::on_wc(Connection& c, rtrs_core_cqe& cqe, const rtrs_core_wc& wc) {
    switch (cqe.kind) {
    case kCqeRecv:
        if (!wc.ok) break;
        if (wc.opcode == RTRS_CORE_WC_RECV) {
            on_info_recv(c, wc);
        } else if (wc.opcode == RTRS_CORE_WC_RECV_IMM) {
            imm_from_wc(c, wc.imm);
        } else {
            Log(kErr, log_gate_).who(sess_name(), name_).put(": connection ").dec(rt::u64{c.cid()})
                .put(": unexpected receive opcode ").dec(static_cast<rt::u64>(wc.opcode));
            request_close(CloseReason::Protocol);
        }
        return;
    case kCqeSend:
        if (!wc.ok) break;
        on_send_ok(c);
        return;
    case kCqeInv:
        if (wc.ok)
            on_inv_ok(c, *static_cast<Request*>(cqe.owner));
        else
            on_inv_failed(c, *static_cast<Request*>(cqe.owner), wc);
        return;
    case kCqeInfo:
        on_info_wc(c, wc);
        return;
    }
    // A failed work request. Flushes are the normal end of a QP, not news.
    if (!wc.flushed)
        Log(kErr, log_gate_).who(sess_name(), name_).put(": connection ").dec(rt::u64{c.cid()})
            .put(cqe.kind == kCqeRecv ? ": receive failed: " : ": send failed: ").put(wc.status);
    request_close(CloseReason::Transport);
}

// A signaled send completed: its post and all before it are done.
void Path::on_send_ok(Connection& c) {
    const rt::u64 now = kLatencyOn ? rtrs_env_now_ns() : 0;
    Guard g(c.lock());
    rt::u64 answered_ns = 0;
    // A signaled response: one sample of the transport latency.
    if (c.signaled_done(&answered_ns) && kLatencyOn) c.lat_net.record_span(answered_ns, now);
    if (!c.pending.empty()) run_pending(c);
}

void Path::run_work(unsigned int kind) {
    switch (kind) {
    case kWorkClose: close_work(); return;
    case kWorkInfo: info_work(); return;
    case kWorkTimer: timer_work(); return;
    }
}

// --- stats/rdma -----------------------------------------------------------------

// The connections' counters added up. (The files that call these are
// there only while the path is in sysfs, from its join to its leave(): its
// connections all exist then.)
void Path::format_stats(char* buf, rt::usize cap) {
    Stats sum;
    for (const Connection* c : cons_)
        if (c) c->add_stats_to(sum);
    rt::StrBuf out(buf, cap);
    out.dec(sum.read_cnt).put(' ').dec(sum.read_bytes).put(' ').dec(sum.write_cnt).put(' ')
        .dec(sum.write_bytes).put(' ').dec(rt::u64{inflight()}).put('\n');
}

rt::u32 Path::inflight() const {
    rt::u32 n = 0;
    for (const Connection* c : cons_)
        if (c) n += c->inflight();
    return n;
}

// The four counters and the latency histograms; the inflight count is not
// a counter.
void Path::reset_stats() {
    for (Connection* c : cons_)
        if (c) c->reset_stats();
}

Histogram Path::ulp_latency() const NO_THREAD_SAFETY_ANALYSIS {
    Histogram h;
    for (const Connection* c : cons_)
        if (c) h.merge(c->lat_ulp);
    return h;
}

Histogram Path::transport_latency() const NO_THREAD_SAFETY_ANALYSIS {
    Histogram h;
    for (const Connection* c : cons_)
        if (c) h.merge(c->lat_net);
    return h;
}

// --- debugfs latency -------------------------------------------------------------

// A comment line naming the columns, then one line a histogram (README
// "Observe"); a reader skips lines that begin with '#'.
void Path::format_latency(char* buf, rt::usize cap) {
    rt::StrBuf out(buf, cap);
    out.put("# name count sum_us max_us, then ").dec(rt::u64{Histogram::kBuckets})
        .put(" buckets: i counts [2^i, 2^(i+1)) us\n");
    ulp_latency().format(out, "ulp");
    transport_latency().format(out, "transport");
}

const char* Path::sess_name() const { return sess_->name(); }

}  // namespace core
