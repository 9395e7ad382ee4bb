// SPDX-License-Identifier: GPL-2.0
// Drives the core as a client and an upper layer would, over the fake
// kernel (fake_kernel.h): connection requests, the info exchange, I/O
// requests written into chunks, the ULP's answers, disconnects.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/rtrs_core.h"
#include "core/wire.h"
#include "fake_kernel.h"

namespace h {

struct Opts {
    bool always_invalidate = true;
    std::uint32_t queue_depth = 16;
    std::uint32_t chunk_size = 16384;
    std::uint32_t chunk_mem_mb = 0;  // 0: the default (half the fake RAM)
    long fail_at = -1;               // the fake kernel's failure point, from the start
    // 1: every response signaled, so that each one's completion can be
    // driven; the module's default (32) where a test says so.
    std::uint32_t signal_interval = 1;
};

// One client path: its identity and, once up, what the info response said.
struct Client {
    wire::Uuid paths_uuid{};
    wire::Uuid sess_uuid{};
    std::uint16_t cid_num = 2;
    rtrs_core_addr caddr{};
    rtrs_core_addr saddr{};
    void* ib_dev = nullptr;
    std::vector<fake::Cm*> cms;  // by cid; nullptr before its request
    // From the accept and the info response:
    std::uint32_t queue_depth = 0;
    std::uint64_t chunk_size = 0;
    bool new_rkey = false;
    std::vector<wire::SgDescFields> descs;

    fake::Con* con(std::uint16_t cid) const {
        return cid < cms.size() && cms[cid] ? cms[cid]->con : nullptr;
    }
};

// A client path with fresh uuids (tag picks them), addresses 10.77.0.<n>
// -> 10.77.0.1 on device dev.
Client client(int tag, std::uint16_t cid_num = 2, int n = 2, int dev = 1);
// Another path of the same session as c (new path uuid, other addresses).
Client sibling(const Client& c, int tag, int n);

class Fixture {
public:
    explicit Fixture(Opts o = {});
    ~Fixture();
    Fixture(const Fixture&) = delete;
    Fixture& operator=(const Fixture&) = delete;

    // Closes the server, shuts the core down and checks that nothing is
    // left; returns false if something is (details as test failures).
    bool finish(bool expect_clean = true);

    rtrs_srv_ctx* srv = nullptr;
    Opts opts;
    bool finished = false;
    int init_err = 0;   // of the core's init, or of the server's open
    bool core_up = false;
    // rtrs_core_held() when the fixture began (a test that leaves objects
    // behind on purpose must not fail the next one).
    std::uint64_t sessions_before = 0, paths_before = 0;

    // --- the client's side ---
    // One connection request; returns the core's value (0 kept).
    int connect(Client& c, std::uint16_t cid, bool first = true);
    // Every connection of c, each established.
    bool connect_all(Client& c, bool first = true);
    // The info request on connection 0 (name as given, raw).
    bool send_info(Client& c, const std::string& name);
    // Runs the work items, then completes connection 0's sends until the
    // info response went out, and reads it. True when the path is up.
    bool finish_join(Client& c);
    // connect_all + send_info + finish_join.
    bool up(Client& c, const std::string& name);

    // The address of chunk id as the client sees it (from the descriptors).
    std::uint64_t chunk_addr(const Client& c, std::uint32_t id) const;
    std::uint8_t* chunk_mem(const Client& c, std::uint32_t id);

    // Writes a write request into chunk id (data, then usr, then the
    // header) and sends its immediate on connection cid. With
    // always_invalidate the local invalidation is completed too. Returns
    // the op the ULP got (nullptr if none).
    rtrs_srv_op* write(Client& c, std::uint16_t cid, std::uint32_t id,
                       const std::vector<std::uint8_t>& data, const std::vector<std::uint8_t>& usr);
    // A read request of len bytes into the client's (fake) buffer at raddr.
    rtrs_srv_op* read(Client& c, std::uint16_t cid, std::uint32_t id, std::uint32_t len,
                      const std::vector<std::uint8_t>& usr, bool need_inval = false,
                      std::uint64_t raddr = 0xC0FFEE000ull, std::uint32_t rkey = 0x4242);
    // Sends an I/O immediate for chunk id, header at off (nothing written).
    bool io_imm(Client& c, std::uint16_t cid, std::uint32_t id, std::uint32_t off);
    rtrs_srv_op* last_op();
    std::size_t ops_seen() const;

    // What sits in connection cid's send queue, oldest first.
    std::vector<rtrs_env_wr_op> sendq(const Client& c, std::uint16_t cid) const;

    // sysfs
    fake::SysfsPath* sysfs_path(const std::string& name) const;
    fake::SysfsSess* sysfs_sess(const std::string& name) const;
    std::string show(const std::string& path, rtrs_core_path_attr attr);
    int store(const std::string& path, rtrs_core_path_attr attr, const std::string& text);

    int link_events(int ev) const;
};

// The connection request bytes of c for cid.
std::vector<std::uint8_t> conn_req(const Client& c, std::uint16_t cid, bool first);

// Kernel log lines (of the fake environment) that contain needle.
int count_logs(const std::string& needle);
// How many path_down trace events name the reason why (its trace name).
int downs(const std::string& why);

// Every recorded violation, warning and leftover as one string ("" if none).
std::string problems();

}  // namespace h
