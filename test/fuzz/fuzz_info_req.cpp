// SPDX-License-Identifier: GPL-2.0
// The info request (the client's first message, naming its session) and
// the session name rule: parse_info_req never reads past the message, its
// refusals are the documented ones, the name it returns lies inside the
// message and survives a round trip; valid_session_name is exactly "not
// empty, no '/' and no '.'". The messages our client tool parses (the info
// response, the new-rkey message) are fuzzed here too.
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/wire.h"
#include "fuzz_check.h"
#include "rt/errno.h"

using namespace wire;

namespace {

bool name_rule(const u8* p, usize n) {
    if (n == 0) return false;
    for (usize i = 0; i < n; ++i)
        if (p[i] == '/' || p[i] == '.') return false;
    return true;
}

void info_req(const u8* data, usize size) {
    const char* why = nullptr;
    auto r = parse_info_req(rt::Bytes(data, size), &why);
    if (!r.ok()) {
        FUZZ_CHECK(why != nullptr && why[0] != '\0');
        const int e = r.error();
        if (size < sizeof(InfoReq)) {
            FUZZ_CHECK(e == rt::errc::badmsg);
            return;
        }
        const u16 type = static_cast<u16>(data[0] | (data[1] << 8));
        if (type != 0) {
            FUZZ_CHECK(e == rt::errc::proto);
            return;
        }
        const void* nul = std::memchr(data + 2, 0, kNameMax);
        if (!nul) FUZZ_CHECK(e == rt::errc::nametoolong);
        else FUZZ_CHECK(e == rt::errc::inval && nul == data + 2);  // empty
        return;
    }
    FUZZ_CHECK(size >= sizeof(InfoReq));
    FUZZ_CHECK(data[0] == 0 && data[1] == 0);
    rt::Bytes name = r.value().name;
    FUZZ_CHECK(name.data() == data + 2);
    FUZZ_CHECK(name.size() >= 1 && name.size() < kNameMax);
    FUZZ_CHECK(std::memchr(name.data(), 0, name.size()) == nullptr);
    FUZZ_CHECK(data[2 + name.size()] == 0);

    const bool ok = valid_session_name(name);
    FUZZ_CHECK(ok == name_rule(name.data(), name.size()));
    FUZZ_CHECK(check_session_name(name).ok() == ok);
    if (!ok) FUZZ_CHECK(check_session_name(name).error() == rt::errc::inval);

    // The client's encoding of the same name parses back to it.
    u8 buf[sizeof(InfoReq)];
    auto n = encode_info_req(rt::MutBytes(buf, sizeof(buf)), name);
    FUZZ_CHECK(n.ok() && n.value() == sizeof(InfoReq));
    auto again = parse_info_req(rt::Bytes(buf, sizeof(buf)));
    FUZZ_CHECK(again.ok() && again.value().name.size() == name.size());
    FUZZ_CHECK(std::memcmp(again.value().name.data(), name.data(), name.size()) == 0);
    for (usize i = 2 + name.size(); i < sizeof(InfoReq); ++i) FUZZ_CHECK(buf[i] == 0);
}

// The whole input as a name, NULs and all.
void any_name(const u8* data, usize size) {
    rt::Bytes name(data, size);
    FUZZ_CHECK(valid_session_name(name) == name_rule(data, size));
    u8 buf[sizeof(InfoReq)];
    auto n = encode_info_req(rt::MutBytes(buf, sizeof(buf)), name);
    const bool encodable = size >= 1 && size < kNameMax && std::memchr(data, 0, size) == nullptr;
    FUZZ_CHECK(n.ok() == encodable);
    if (!encodable) {
        FUZZ_CHECK(n.error() == (size >= kNameMax ? rt::errc::nametoolong : rt::errc::inval));
        return;
    }
    auto back = parse_info_req(rt::Bytes(buf, sizeof(buf)));
    FUZZ_CHECK(back.ok() && back.value().name.size() == size);
    FUZZ_CHECK(std::memcmp(back.value().name.data(), data, size) == 0);
}

// What a server sends our client: the info response (checked against a
// session whose queue depth and chunk size come from the first bytes) and
// the new-rkey message.
void client_side(const u8* data, usize size) {
    auto t = parse_msg_type(rt::Bytes(data, size));
    FUZZ_CHECK(t.ok() == (size >= 2));
    auto rsp = parse_info_rsp(rt::Bytes(data, size));
    if (rsp.ok()) {
        const SgDescList& l = rsp.value();
        FUZZ_CHECK(l.count() > 0 && info_rsp_size(l.count()) <= size);
        FUZZ_CHECK(l.bytes().data() == data + sizeof(InfoRspHdr));
        const u32 qd = size >= 12 ? (u32{data[8]} | (u32{data[9]} << 8)) : 1;
        const u32 chunk = size >= 12 ? (u32{data[10]} << 12) : 4096;
        auto checked = check_info_rsp(l, qd, chunk);
        if (checked.ok()) {
            u64 chunks = 0;
            for (usize i = 0; i < l.count(); ++i) {
                const u32 len = l.at(i).len;
                FUZZ_CHECK(len != 0 && chunk != 0 && len % chunk == 0);
                chunks += len / chunk;
            }
            FUZZ_CHECK(chunks == qd && qd % l.count() == 0);
        }
        FUZZ_CHECK(l.at(l.count()) == SgDescFields{});  // out of range: zero
        // The server's encoder writes the same descriptors.
        std::vector<SgDescFields> d;
        for (usize i = 0; i < l.count(); ++i) d.push_back(l.at(i));
        std::vector<u8> out(info_rsp_size(d.size()));
        auto n = encode_info_rsp(rt::MutBytes(out.data(), out.size()),
                                 rt::Span<const SgDescFields>(d.data(), d.size()));
        FUZZ_CHECK(n.ok() && n.value() == out.size());
        FUZZ_CHECK(std::memcmp(out.data() + sizeof(InfoRspHdr), data + sizeof(InfoRspHdr),
                               out.size() - sizeof(InfoRspHdr)) == 0);
    }
    auto rk = parse_rkey_rsp(rt::Bytes(data, size));
    if (rk.ok()) {
        u8 out[sizeof(RkeyRsp)];
        auto n = encode_rkey_rsp(rt::MutBytes(out, sizeof(out)), rk.value());
        FUZZ_CHECK(n.ok() && std::memcmp(out, data, sizeof(out)) == 0);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    info_req(data, size);
    any_name(data, size);
    client_side(data, size);
    return 0;
}
