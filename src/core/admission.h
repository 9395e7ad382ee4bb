// SPDX-License-Identifier: GPL-2.0
// Admission: which clients may connect, and how much one client address
// may hold (issue 26). Off by default: with no rules every address may
// connect and nothing is limited, as before.
//
// The rules are text, one a line; blank lines and comments (a word that
// begins with '#', to the end of its line) are ignored. ';' ends a line as
// a newline does, so that the rules fit in one line (a module parameter in
// modprobe.d, the kernel's command line):
//
//   allow ADDR[/PREFIX] [names=NAME[,NAME...]]
//   limit [sessions=N] [paths=N] [connections=N] [rate=R/s|R/m] [burst=B]
//
// allow: a client whose address matches ADDR/PREFIX may connect. Once
//   there is at least one allow rule, the allow-list is on: an address
//   that matches no entry is refused. Without any, every address may.
//   ADDR is IPv4 (10.77.0.0), IPv6 (fd00::, any RFC 4291 form: "::" and a
//   dotted IPv4 tail too), or "gid:" and an InfiniBand GID in IPv6
//   notation (gid:fe80::2:c9ff:fe00:1). "ip:" before an IPv4 or IPv6
//   address is taken too (sysfs prints them so). PREFIX: how many leading
//   bits must be equal, 0..32 for IPv4 and 0..128 else; without it, all
//   of them. Bits past the prefix must be 0: 10.77.0.1/16 is an error (it
//   means 10.77.0.0/16, or 10.77.0.1 alone, and we cannot tell which).
//   names=: the only session names a client matching this entry may use
//   (exact, at most kAdmitMaxNames, separated by commas; a name with a
//   comma, a ';' or a blank in it cannot be listed). Without it, any name.
// limit: what one client address may hold on a server (the sessions with
//   a path from it, its paths, its connections) and how fast it may ask:
//   rate R connection requests a second (/s) or a minute (/m), through a
//   token bucket of burst B requests (B defaults to R). 0 or absent: no
//   limit. It applies whether the allow-list is on or not. At most one
//   limit rule. Each connection of a path is a request: upstream's client
//   makes one per CPU and one more, so a burst below that refuses a path.
//
// Matching: the entry with the longest matching prefix decides (its names
// apply); two entries with the same network and prefix are an error.
// IPv4-mapped IPv6 (::ffff:a.b.c.d) is IPv4, as a client's address and as
// an entry (::ffff:10.0.0.0/104 is 10.0.0.0/8); an IPv6 entry shorter than
// /96 (::/0) matches IPv6 clients only, not IPv4 ones. A GID entry matches
// only native InfiniBand addresses (AF_IB) and an IPv6 entry only IPv6
// ones, whatever their bytes.
//
// What a refused connection request gets, and why that errno (the client
// logs it, and since 2026 upstream's client returns it to its user):
//   not on the allow-list   ECONNREFUSED  the plain "connection refused"
//   sessions/paths/connections past the limit
//                           EDQUOT        a quota of this client is spent:
//                                         not EBUSY, which upstream's
//                                         client reports as "Previous
//                                         session is still exists on the
//                                         server, please reconnect later"
//   faster than the rate    EAGAIN        it may try again later
// A session name not allowed is refused at the info request: the path is
// closed (the protocol has no errno there; EPERM is the one counted).
//
// Counting: the server counts what an address holds by walking its
// sessions and paths under its lock (Server::count_client_locked), so
// there is no counter to drift; a path counts until its teardown ends
// (it holds its queues and registrations until then). Limits are per
// server (a ULP's port), as sessions are.
//
// Not thread-safe itself: the module's lock serializes every call
// (Module::admit_connection() and the others), so a new policy replaces
// the old one between two decisions, never during one.
#pragma once

#include "core/log.h"
#include "core/rtrs_core.h"
#include "rt/alloc.h"
#include "rt/result.h"
#include "rt/span.h"
#include "rt/strbuf.h"
#include "rt/types.h"

namespace core {

inline constexpr rt::u32 kAdmitMaxEntries = 64;   // allow rules
inline constexpr rt::u32 kAdmitMaxNames = 8;      // names of one entry
inline constexpr rt::u32 kAdmitNamePool = 2048;   // bytes of all entries' names
inline constexpr rt::u32 kAdmitBuckets = 128;     // addresses the rate remembers
inline constexpr rt::u32 kAdmitMaxValue = 1000000;  // the largest N, R or B
// What Admission::format() writes fits here (a module parameter's page):
// a policy whose rules take more than kAdmitShowRules is refused, the
// rest is for the comment lines.
inline constexpr rt::u32 kAdmitShowMax = RTRS_CORE_ADMISSION_SHOW_MAX;
inline constexpr rt::u32 kAdmitShowRules = kAdmitShowMax - 256;

// A decision. Keep the values: they index the refusal counters.
enum class Verdict : rt::u8 {
    Ok,
    NotAllowed,          // the address is on no entry of the allow-list
    TooManySessions,
    TooManyPaths,
    TooManyConnections,
    RateLimited,
    NameNotAllowed,      // the entry of the address does not list the name
};
inline constexpr rt::u32 kVerdicts = 7;

// Why, in words, for the log ("connection request refused: <reason>").
const char* verdict_reason(Verdict v);
// A short stable word (metrics, the policy's text): "not-allowed", ...
const char* verdict_name(Verdict v);
// The positive errno a refusal uses (0 for Ok).
int verdict_errno(Verdict v);

// A client's address as admission compares it: IPv4-mapped IPv6 is IPv4.
rtrs_core_addr client_key(const rtrs_core_addr& a);
bool same_client(const rtrs_core_addr& a, const rtrs_core_addr& b);

// What a client address holds now, and what the request would add to it
// (a connection always).
struct ClientCounts {
    rt::u32 sessions = 0;
    rt::u32 paths = 0;
    rt::u32 connections = 0;
    bool new_session = false;  // the request's session has no path from the address yet
    bool new_path = false;     // the request's path does not exist yet
};

struct AllowEntry {
    rtrs_core_addr net{};  // the bytes past the prefix are 0
    rt::u8 prefix = 0;
    rt::u8 names_num = 0;  // 0: any name
    rt::u32 line = 0;      // where it was written
    // The names: name_len[i] bytes at name_at[i] of the policy's pool.
    rt::u16 name_at[kAdmitMaxNames] = {};
    rt::u8 name_len[kAdmitMaxNames] = {};
};

struct AdmitLimits {
    rt::u32 sessions = 0;
    rt::u32 paths = 0;
    rt::u32 connections = 0;
    rt::u32 rate = 0;          // requests per period
    rt::u32 period_ms = 1000;  // 1000 (R/s) or 60000 (R/m)
    rt::u32 burst = 0;         // the bucket's size, in requests
};

// The rules, parsed. A fixed-size object (one allocation a policy).
class Policy {
public:
    // Reads text (len bytes; NUL-free). On EINVAL msg (cap bytes) says
    // "line N: what was wrong", and *this is half-filled: throw it away.
    // Call it once, on a new Policy.
    rt::Result<void> parse(const char* text, rt::usize len, char* msg, rt::usize cap);

    bool allow_list_on() const { return entries_num_ > 0; }
    rt::u32 entries() const { return entries_num_; }
    const AllowEntry& entry(rt::u32 i) const { return entries_[i]; }
    const AdmitLimits& limits() const { return limits_; }
    bool has_limits() const;
    // The entry that decides for a client address: the longest matching
    // prefix; nullptr when none matches.
    const AllowEntry* match(const rtrs_core_addr& client) const;
    // Whether a client matching e may name its session name.
    bool name_allowed(const AllowEntry& e, rt::Bytes name) const;
    // The rules as text that parse() reads back to the same policy.
    void format(rt::StrBuf& out) const;
    // The same into buf (kAdmitShowRules + 1 bytes); EINVAL, with why in
    // msg (cap bytes), when they do not fit: rules in effect must show
    // whole in a page (Module::set_admission, and rtrs-srv's own check).
    rt::Result<void> format_within(char* buf, char* msg, rt::usize cap) const;

private:
    rt::Result<void> parse_line(const char* p, const char* end, rt::u32 line,
                                rt::u32* limit_line, rt::StrBuf& err);
    rt::Result<void> parse_allow(const char* p, const char* end, rt::u32 line, rt::StrBuf& err);
    rt::Result<void> parse_limit(const char* p, const char* end, rt::u32 line, rt::StrBuf& err);
    rt::Result<void> parse_names(const char* s, rt::usize n, AllowEntry& e, rt::u32 line,
                                 rt::StrBuf& err);

    AllowEntry entries_[kAdmitMaxEntries];
    rt::u32 entries_num_ = 0;
    AdmitLimits limits_;
    char names_[kAdmitNamePool] = {};
    rt::u32 names_used_ = 0;
};

// One address's token bucket for the rate.
struct TokenBucket {
    rtrs_core_addr addr{};
    bool used = false;
    rt::u64 units = 0;    // tokens, period_ms units each (integers only)
    rt::u64 last_ms = 0;  // its last refill and use (the oldest slot goes first)
};

// The decisions, with the policy in effect, the buckets and the refusals
// counted. No lock of its own (see above); no allocation.
class Admission {
public:
    // A connection request (each connection of a path is one): the
    // address, then the rate (a token is taken), then the limits.
    Verdict admit_connection(const rtrs_core_addr& client, rt::u64 now_ms,
                             const ClientCounts& held);
    // The same request looked at again after the server let go of its
    // lock (to make its session): the address and the limits as they are
    // now, and no second token.
    Verdict recheck_connection(const rtrs_core_addr& client, const ClientCounts& held);
    // A path's info request naming its session: NameNotAllowed, or
    // NotAllowed when the address left the allow-list since it connected.
    Verdict admit_name(const rtrs_core_addr& client, rt::Bytes name);
    // Whether the policy would admit a path of client's now, with its
    // session's name (empty: none yet, the address alone): NotAllowed,
    // NameNotAllowed or Ok. Counts no refusal.
    Verdict still_allowed(const rtrs_core_addr& client, rt::Bytes name) const;

    // Puts p in effect (nullptr: the default, no rules) and returns the
    // old policy, for the caller to free without the lock. The buckets
    // start afresh (full) under the new rate.
    [[nodiscard]] rt::Own<Policy> replace(rt::Own<Policy> p);
    const Policy* policy() const { return policy_.get(); }

    rt::u64 refusals(Verdict v) const { return refusals_[static_cast<rt::u32>(v)]; }
    // The refusals as a comment line, then the policy as text
    // (re-readable): at most kAdmitShowMax bytes with its NUL.
    void format(rt::StrBuf& out) const;

private:
    // take: whether the rate's token is taken (at now_ms).
    Verdict decide(const rtrs_core_addr& client, const ClientCounts& held, bool take,
                   rt::u64 now_ms);
    bool take_token(const rtrs_core_addr& key, rt::u64 now_ms, const AdmitLimits& l);
    Verdict refused(Verdict v) {
        ++refusals_[static_cast<rt::u32>(v)];
        return v;
    }

    rt::Own<Policy> policy_;
    TokenBucket buckets_[kAdmitBuckets];
    rt::u64 refusals_[kVerdicts] = {};
};

// The log gates of a server's admission refusals, one for each client
// address and reason while it is active (a refusal of it in the last
// LogGate::kWindowMs), so that a peer's flood hides no other peer's
// refusal. Bounded: past kSlots active sources, the others share their
// reason's gate. A source whose slot goes to another while lines of it
// were not logged says how many first. Under its server's lock.
class RefusalGates {
public:
    static constexpr rt::u32 kSlots = 16;
    LogGate& gate(const rtrs_core_addr& client, Verdict v, rt::u64 now_ms);

private:
    struct Slot {
        rtrs_core_addr addr{};
        Verdict v = Verdict::Ok;  // Ok: free
        rt::u64 last_ms = 0;
        LogGate gate;
    };
    Slot slots_[kSlots];
    LogGate shared_[kVerdicts];
};

}  // namespace core
