// SPDX-License-Identifier: GPL-2.0
#include "client.h"

#include <chrono>
#include <cstring>
#include <thread>

namespace tclient {

namespace {

wire::Uuid uuid(int tag, int which) {
    wire::Uuid u{};
    for (int i = 0; i < 16; ++i) u.b[i] = static_cast<std::uint8_t>(tag * 31 + which * 7 + i + 1);
    return u;
}

rtrs_core_addr ipv4(int a, int b, int c, int d) {
    rtrs_core_addr x{};
    x.family = RTRS_CORE_AF_INET;
    x.bytes[0] = static_cast<std::uint8_t>(a);
    x.bytes[1] = static_cast<std::uint8_t>(b);
    x.bytes[2] = static_cast<std::uint8_t>(c);
    x.bytes[3] = static_cast<std::uint8_t>(d);
    return x;
}

}  // namespace

Path make(int tag, std::uint16_t cid_num, void* ib_dev) {
    Path p;
    p.paths_uuid = uuid(tag, 1);
    p.sess_uuid = uuid(tag, 2);
    p.cid_num = cid_num;
    p.caddr = ipv4(10, 77, tag & 0xff, 2);
    p.saddr = ipv4(10, 77, tag & 0xff, 1);
    p.ib_dev = ib_dev;
    p.cms.assign(cid_num, nullptr);
    return p;
}

bool up(Path& p, const std::string& name, std::string* why) {
    void* srv = tenv::listener();
    if (!srv) {
        *why = "no listener";
        return false;
    }
    for (std::uint16_t cid = 0; cid < p.cid_num; ++cid) {
        wire::ConnReqFields f;
        f.cid = cid;
        f.cid_num = p.cid_num;
        f.sess_uuid = p.sess_uuid;
        f.paths_uuid = p.paths_uuid;
        f.first_conn = true;
        std::vector<std::uint8_t> b(sizeof(wire::ConnReq));
        if (!wire::encode_conn_req(rt::MutBytes(b.data(), b.size()), f).ok()) {
            *why = "cannot encode the connection request";
            return false;
        }
        int ret = tenv::connect(srv, b, p.caddr, p.saddr, p.ib_dev, &p.cms[cid]);
        if (ret != 0 || !tenv::accepted(p.cms[cid])) {
            *why = "connection " + std::to_string(cid) + " refused: " + std::to_string(ret);
            return false;
        }
        const auto& priv = tenv::accept_priv(p.cms[cid]);
        auto rsp = wire::parse_conn_rsp(rt::Bytes(priv.data(), priv.size()));
        if (!rsp.ok()) {
            *why = "bad connection response";
            return false;
        }
        p.queue_depth = rsp.value().queue_depth;
        p.chunk_size = static_cast<std::uint32_t>(rsp.value().chunk_size());
    }
    for (std::uint16_t cid = 0; cid < p.cid_num; ++cid) tenv::established(p.cms[cid]);

    std::vector<std::uint8_t> info(sizeof(wire::InfoReq), 0);
    if (!wire::encode_info_req(rt::MutBytes(info.data(), info.size()),
                               rt::Bytes(reinterpret_cast<const std::uint8_t*>(name.data()), name.size()))
             .ok()) {
        *why = "cannot encode the info request";
        return false;
    }
    tenv::Con* c0 = p.con(0);
    if (!tenv::deliver_msg(c0, info.data(), static_cast<std::uint32_t>(info.size()))) {
        *why = "cannot deliver the info request";
        return false;
    }
    // The info work answers: registrations, then the response (a SEND).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
        tenv::poll(c0);
        for (auto& m : tenv::take_msgs(c0)) {
            auto d = wire::parse_info_rsp(rt::Bytes(m.data(), m.size()));
            if (!d.ok()) {
                *why = "bad info response";
                return false;
            }
            std::vector<wire::SgDescFields> descs;
            for (std::size_t i = 0; i < d.value().count(); ++i) descs.push_back(d.value().at(i));
            p.chunks.clear();
            for (std::uint32_t id = 0; id < p.queue_depth; ++id) {
                std::uint64_t skip = id, addr = 0;
                for (auto& x : descs) {
                    std::uint64_t n = x.len / p.chunk_size;
                    if (skip < n) {
                        addr = x.addr + skip * p.chunk_size;
                        break;
                    }
                    skip -= n;
                }
                std::uint8_t* mem = addr ? tenv::cpu_of(addr, p.chunk_size) : nullptr;
                if (!mem) {
                    *why = "chunk " + std::to_string(id) + " is not where the info response says";
                    return false;
                }
                p.chunks.push_back(mem);
            }
            p.done.reset(new Path::Done[p.queue_depth]);
            Path::Done* done = p.done.get();
            for (std::uint16_t cid = 0; cid < p.cid_num; ++cid)
                tenv::on_response(p.con(cid), [done](std::uint32_t id, std::uint32_t err) {
                    done[id].store(1 + err, std::memory_order_release);
                });
            tenv::poll(c0);
            return true;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    *why = "no info response within 20 s";
    return false;
}

bool request(Path& p, std::uint16_t cid, std::uint32_t id, bool read) {
    std::uint8_t* mem = p.chunks[id];
    const std::uint32_t off = read ? 0 : 4096;
    p.done[id].store(0, std::memory_order_relaxed);
    // The client's RDMA write of the request into the server's chunk.
    auto write = [&]() {
        if (read) {
            wire::SgDescFields d{0xC0FFEE000ull + std::uint64_t{id} * 4096, 0x4242, 4096};
            return wire::encode_rdma_read(rt::MutBytes(mem, p.chunk_size), 0, 0,
                                          rt::Span<const wire::SgDescFields>(&d, 1))
                .ok();
        }
        return wire::encode_rdma_write(rt::MutBytes(mem + off, p.chunk_size - off), 0).ok();
    };
    const std::uint32_t payload = wire::io_req_payload(id, off, wire::chunk_bits(p.queue_depth));
    if (tenv::deliver_imm(p.con(cid), wire::imm_encode(wire::ImmType::IoReq, payload), write)) return true;
    p.done[id].store(1, std::memory_order_relaxed);  // not sent
    return false;
}

bool wait_response(Path& p, std::uint16_t cid, std::uint32_t id) {
    tenv::Con* c = p.con(cid);
    for (long spins = 0;; ++spins) {
        if (p.done[id].load(std::memory_order_acquire)) return true;
        if (tenv::poll(c)) continue;
        if (tenv::gone(c)) return p.done[id].load(std::memory_order_acquire) != 0;
        if (spins > 1000) std::this_thread::yield();
    }
}

}  // namespace tclient
