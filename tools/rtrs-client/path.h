// SPDX-License-Identifier: GPL-2.0
// One RTRS path: cid_num RDMA connections from one source to one server
// address, sharing a PD and a completion channel. Connection 0 is the
// service connection: it carries the info exchange and the heartbeats.
//
// The steps are exposed one by one (connect a cid with given private data,
// send an info request, wait for the answer) so that the `bad` cases can
// break any of them; Path::open() runs them all as the reference client does.
//
// I/O (io.h) runs on connections 1..cid_num-1, as the reference client's:
// the path keeps the table of the server's chunks (address and rkey of each,
// from the info response) and hands every receive that is not service
// traffic to its IoSink.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "addr.h"
#include "core/wire.h"
#include "loop.h"
#include "rdma.h"
#include "status.h"

namespace rc {

struct PathConfig {
    std::optional<Addr> src;
    Addr dst;
    uint16_t port = 1234;
    std::string session;  // the session name sent in the info request
    wire::Uuid paths_uuid{};
    wire::Uuid sess_uuid{};
    uint16_t cid_num = 2;
    bool first_conn = true;
    uint16_t recon_cnt = 0;
    // Heartbeats: answer the server's, and send ours every interval.
    bool answer_hb = true;
    bool send_hb = true;
    bool verbose = true;
    // Requests that may be in flight at once (0: no I/O). Sizes the queues
    // and the receives of the connections: every request may bring two
    // receives (a send with invalidate and the response).
    uint32_t io_depth = 0;
    // The local ACK timeout of the connections (4.096 us * 2^N, 1..31; 0:
    // the CM's default). Over RoCE it also sets the packet life time the
    // connection request announces, from which the server's QP takes its
    // own ACK timeout (at least the device's ACK delay: 134 ms on rxe).
    uint8_t ack_timeout = 0;
};

// How the server answered one connection request.
struct ConnOutcome {
    enum class Kind { Accepted, Rejected };
    Kind kind = Kind::Accepted;
    wire::ConnRspFields rsp;  // Accepted
    // Rejected: the server's negative errno from the reject's private data,
    // 0 if there was none (then cm_status says why the CM refused).
    int server_errno = 0;
    bool has_rtrs_data = false;
    int cm_status = 0;
    std::string text;  // a one-line description
};

// How the server reacted to an info request.
struct InfoOutcome {
    enum class Kind { Answered, Closed, Timeout };
    Kind kind = Kind::Timeout;
    std::vector<uint8_t> rsp;  // Answered: the message as received
};

class Path;
class Con;

// Where the I/O traffic of a path goes (see IoEngine).
class IoSink {
public:
    // A receive that is not service traffic: an I/O response (RDMA write
    // with immediate, or a send with immediate carrying an RkeyRsp), a send
    // with invalidate, or anything else unexpected on an I/O connection.
    // data holds wc.byte_len bytes, valid during the call only.
    virtual void on_io_recv(Con& con, const ibv_wc& wc, const uint8_t* data) = 0;
    // The completion of a request posted with Con::post_io_write(tag).
    virtual void on_io_sent(Con& con, uint64_t tag, const ibv_wc& wc) = 0;

protected:
    ~IoSink() = default;
};

class Con final : public CmHandler {
public:
    enum class State { Idle, Resolving, Connecting, Established, Rejected, Failed, Disconnected };

    Con(Path& path, uint16_t cid) : path_(path), cid_(cid) {}
    ~Con() = default;
    Con(const Con&) = delete;
    Con& operator=(const Con&) = delete;

    uint16_t cid() const { return cid_; }
    State state() const { return state_; }
    bool settled() const { return state_ >= State::Established; }
    rdma_cm_id* id() const { return id_.get(); }

    Status start(std::vector<uint8_t> private_data);
    void on_cm_event(const rdma_cm_event& ev) override;
    void on_wc(const ibv_wc& wc);

    // After ESTABLISHED: post the receives (slot_size bytes each).
    Status post_receives(size_t slots, size_t slot_size);
    Status post_send(const uint8_t* msg, size_t len);
    Status post_write_imm(uint32_t imm);
    // RDMA write of sge (none: zero bytes) to raddr/rkey with an immediate;
    // its completion goes to the path's IoSink with tag.
    Status post_io_write(const ibv_sge* sge, uint64_t raddr, uint32_t rkey, uint32_t imm,
                         uint64_t tag);
    // Any other work request of the I/O (a memory window bind): wr_id and
    // send_flags are set here; the completion goes to the IoSink with tag
    // (below 2^56).
    Status post_io_wr(ibv_send_wr& wr, uint64_t tag);
    // Two of them in one ibv_post_send, second right behind first.
    Status post_io_wr2(ibv_send_wr& first, uint64_t tag1, ibv_send_wr& second, uint64_t tag2);
    void disconnect();

    const ConnOutcome& outcome() const { return outcome_; }
    const Status& failure() const { return failure_; }

private:
    friend class Path;
    void fail(Status s);
    Status on_addr_resolved();
    Status post_recv(size_t slot);

    Path& path_;
    uint16_t cid_;
    State state_ = State::Idle;
    std::vector<uint8_t> private_data_;
    ConnOutcome outcome_;
    Status failure_;
    bool disconnect_requested_ = false;
    int sends_in_flight_ = 0;

    // Released in reverse order: the id (and its QP) before the memory and
    // the CQ the QP used.
    Cq cq_;
    std::optional<RegBuf> recv_buf_;
    size_t slot_size_ = 0;
    std::optional<RegBuf> send_buf_;
    CmId id_;
};

class Path final : public CqHandler {
public:
    Path(Loop& loop, PathConfig cfg);
    ~Path();
    Path(const Path&) = delete;
    Path& operator=(const Path&) = delete;

    const PathConfig& config() const { return cfg_; }
    // "ip:SRC@ip:DST", as the server names the path in sysfs (known once
    // connection 0 has resolved its address).
    const std::string& name() const { return name_; }
    bool up() const { return up_; }
    // The server closed a connection or the heartbeats stopped.
    bool lost() const { return !lost_reason_.empty(); }
    const std::string& lost_reason() const { return lost_reason_; }

    // The private data the reference client sends for cid.
    std::vector<uint8_t> conn_req(uint16_t cid) const;
    // Connects cid with this private data and waits for the answer. An
    // error Status is for the client's own failures (address resolution,
    // timeouts); the server's accept or reject is in the outcome.
    Expected<ConnOutcome> connect(uint16_t cid, std::vector<uint8_t> private_data);
    // Sends raw bytes as the info request on connection 0 and waits for the
    // server's reaction.
    Expected<InfoOutcome> info_exchange(const std::vector<uint8_t>& req, int timeout_ms);
    // The whole thing: connect cid 0..cid_num-1, then the info exchange;
    // the path is up on success. Failure kinds: Rejected, Closed, Local.
    Status open();
    // Its two halves. connect_all(count): cids 0..count-1 only (all of
    // them if count is 0 or cid_num), each accepted, else the failure.
    Status connect_all(uint16_t count = 0);
    // connect_all for the fault tests (FAILURES.md row 27): up to window
    // connection requests in flight at once (a peer as fast as it can), or
    // interval_ms between one connection's answer and the next request (a
    // trickle; window 1). With progress, a stdout line for each accepted
    // connection: "path NAME: connection K of M accepted (N made)".
    Status connect_paced(uint16_t count, unsigned window, int interval_ms, bool progress);
    // The info request sent on connection 0 without waiting for the answer
    // (see info_answered()).
    Status send_info(const std::vector<uint8_t>& req);
    bool info_answered() const { return info_rsp_.has_value(); }
    // The info exchange once every connection is there: the path is up.
    Status join();
    // RDMA write with immediate (no data) on connection cid.
    Status send_imm(uint16_t cid, uint32_t imm);
    // Whether the server's end acknowledged the first send_imm() on
    // connection cid (its completion came back successful) before the info
    // response had arrived; nothing if none was acknowledged. An
    // acknowledged write has reached the server's queue pair.
    std::optional<bool> imm_acked_before_info(uint16_t cid) const;

    // Once up: the connection response of connection 0, and the server's
    // chunks as the reference client derives them from the info response
    // (a region of len bytes holds len / chunk_size consecutive chunks).
    struct RemoteChunk {
        uint64_t addr = 0;
        uint32_t rkey = 0;
    };
    const wire::ConnRspFields& params() const { return params_; }
    const std::vector<RemoteChunk>& chunks() const { return chunk_table_; }
    // With kMsgNewRkey the server re-registers a chunk after each request.
    void set_chunk_rkey(uint32_t id, uint32_t rkey) { chunk_table_.at(id).rkey = rkey; }
    ibv_pd* pd() const { return pd_.get(); }
    // The connection cid if it is established, else nullptr.
    Con* con(uint16_t cid) const;
    void set_io_sink(IoSink* sink) { io_sink_ = sink; }
    // Disconnects every connection and waits (up to timeout) for the CM to
    // confirm. Idempotent.
    void close(int timeout_ms = 5000);

    // Printed when the path comes up.
    std::string summary() const;

    struct HbStats {
        unsigned sent = 0, acked = 0, received = 0, answered = 0;
    };
    const HbStats& hb_stats() const { return hb_; }

    void on_cq_ready() override;
    void tick(Clock::time_point now) override;

private:
    friend class Con;
    Status ensure_device(ibv_context* verbs);
    void on_recv(Con& con, const ibv_wc& wc, const uint8_t* data);
    void on_con_closed(Con& con);
    // What connect() does once con has the server's answer.
    Expected<ConnOutcome> settle(Con& con);
    void lose(const std::string& why);
    void log(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));

    Loop& loop_;
    PathConfig cfg_;
    std::string name_;
    ibv_context* verbs_ = nullptr;
    wire::ConnRspFields params_;  // from connection 0
    bool have_params_ = false;
    bool up_ = false;
    bool closing_ = false;
    std::string lost_reason_;
    std::optional<std::vector<uint8_t>> info_rsp_;
    // send_imm()'s first acknowledgement per connection: before the info
    // response or not (imm_acked_before_info()).
    std::vector<std::pair<uint16_t, bool>> imm_acked_;
    void on_imm_acked(uint16_t cid);
    unsigned chunks_ = 0, regions_ = 0;
    std::vector<RemoteChunk> chunk_table_;
    IoSink* io_sink_ = nullptr;
    uint32_t send_wr_ = 0, recv_wr_ = 0;  // per connection

    HbStats hb_;
    unsigned hb_missed_ = 0;
    Clock::time_point next_hb_;

    // Released in reverse order: connections, then PD and channel.
    CompChannel comp_;
    Pd pd_;
    std::vector<std::unique_ptr<Con>> cons_;
};

}  // namespace rc
