// SPDX-License-Identifier: GPL-2.0
// Admission (admission.h): the rules' parser, address matching, the
// limits and the rate's token buckets.
#include "core/admission.h"

#include "core/addr.h"
#include "core/log.h"
#include "core/wire.h"
#include "rt/errno.h"

namespace core {

// --- verdicts ---------------------------------------------------------------

const char* verdict_reason(Verdict v) {
    switch (v) {
    case Verdict::Ok: return "admitted";
    case Verdict::NotAllowed: return "the client's address is not on the allow-list";
    case Verdict::TooManySessions:
        return "the client's address holds as many sessions as its limit allows";
    case Verdict::TooManyPaths: return "the client's address holds as many paths as its limit allows";
    case Verdict::TooManyConnections:
        return "the client's address holds as many connections as its limit allows";
    case Verdict::RateLimited:
        return "the client's address asks to connect faster than its rate limit allows";
    case Verdict::NameNotAllowed: return "the session name is not allowed for the client's address";
    }
    return "?";
}

const char* verdict_name(Verdict v) {
    switch (v) {
    case Verdict::Ok: return "ok";
    case Verdict::NotAllowed: return "not-allowed";
    case Verdict::TooManySessions: return "sessions";
    case Verdict::TooManyPaths: return "paths";
    case Verdict::TooManyConnections: return "connections";
    case Verdict::RateLimited: return "rate";
    case Verdict::NameNotAllowed: return "name";
    }
    return "?";
}

int verdict_errno(Verdict v) {
    switch (v) {
    case Verdict::Ok: return 0;
    case Verdict::NotAllowed: return rt::errc::connrefused;
    case Verdict::TooManySessions:
    case Verdict::TooManyPaths:
    case Verdict::TooManyConnections: return rt::errc::dquot;
    case Verdict::RateLimited: return rt::errc::again;
    case Verdict::NameNotAllowed: return rt::errc::perm;
    }
    return rt::errc::inval;
}

// --- addresses ----------------------------------------------------------------

namespace {

// ::ffff:a.b.c.d
bool is_mapped(const unsigned char* b) {
    for (int i = 0; i < 10; ++i)
        if (b[i]) return false;
    return b[10] == 0xff && b[11] == 0xff;
}

rt::u32 addr_bits(rt::u16 family) {
    switch (family) {
    case RTRS_CORE_AF_INET: return 32;
    case RTRS_CORE_AF_INET6:
    case RTRS_CORE_AF_IB: return 128;
    }
    return 0;
}

// Whether the first prefix bits of a and b are equal (b's family fits).
bool prefix_equal(const rtrs_core_addr& net, rt::u32 prefix, const rtrs_core_addr& a) {
    if (a.family != net.family || addr_bits(a.family) == 0) return false;
    const rt::u32 full = prefix / 8;
    for (rt::u32 i = 0; i < full; ++i)
        if (a.bytes[i] != net.bytes[i]) return false;
    const rt::u32 rest = prefix % 8;
    if (rest == 0) return true;
    const rt::u8 mask = static_cast<rt::u8>(0xff << (8 - rest));
    return ((a.bytes[full] ^ net.bytes[full]) & mask) == 0;
}

// a with the bits past prefix cleared.
rtrs_core_addr masked(const rtrs_core_addr& a, rt::u32 prefix) {
    rtrs_core_addr m = a;
    for (rt::u32 i = 0; i < 16; ++i) {
        if (prefix >= (i + 1) * 8) continue;
        m.bytes[i] = prefix <= i * 8 ? 0 : static_cast<rt::u8>(m.bytes[i] & (0xff << (8 - (prefix - i * 8))));
    }
    return m;
}

// "10.77.0.0/16", "fd00::/64", "gid:fe80:0000:...:0001/128": what
// parse_net() reads back.
void put_net(rt::StrBuf& out, const rtrs_core_addr& net, rt::u32 prefix) {
    char buf[64];
    format_addr(net, buf, sizeof(buf));
    const char* s = buf;
    if (s[0] == 'i' && s[1] == 'p' && s[2] == ':') s += 3;
    out.put(s).put('/').dec(prefix);
}

}  // namespace

rtrs_core_addr client_key(const rtrs_core_addr& a) {
    if (a.family != RTRS_CORE_AF_INET6 || !is_mapped(a.bytes)) return a;
    rtrs_core_addr v4{};
    v4.family = RTRS_CORE_AF_INET;
    for (int i = 0; i < 4; ++i) v4.bytes[i] = a.bytes[12 + i];
    return v4;
}

bool same_client(const rtrs_core_addr& a, const rtrs_core_addr& b) {
    return same_addr(client_key(a), client_key(b));
}

// --- the parser -------------------------------------------------------------------

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// A word of a line: [s, s + n).
struct Word {
    const char* s = nullptr;
    rt::usize n = 0;

    bool is(const char* lit) const {
        rt::usize i = 0;
        for (; i < n && lit[i]; ++i)
            if (s[i] != lit[i]) return false;
        return i == n && lit[i] == '\0';
    }
    bool starts(const char* lit) const {
        for (rt::usize i = 0; lit[i]; ++i)
            if (i >= n || s[i] != lit[i]) return false;
        return true;
    }
    rt::usize find(char c) const {
        for (rt::usize i = 0; i < n; ++i)
            if (s[i] == c) return i;
        return n;
    }
    Word from(rt::usize i) const { return i < n ? Word{s + i, n - i} : Word{s + n, 0}; }
    Word upto(rt::usize i) const { return Word{s, i < n ? i : n}; }
};

// The next word of the line [*p, end); false at its end or at a comment.
bool next_word(const char** p, const char* end, Word* w) {
    const char* q = *p;
    while (q < end && blank(*q)) ++q;
    if (q == end || *q == '#') {
        *p = end;
        return false;
    }
    const char* s = q;
    while (q < end && !blank(*q)) ++q;
    *w = Word{s, static_cast<rt::usize>(q - s)};
    *p = q;
    return true;
}

rt::StrBuf& at(rt::StrBuf& err, rt::u32 line) { return err.put("line ").dec(line).put(": "); }

// A word quoted in a message, cut to 64 bytes.
rt::StrBuf& quoted(rt::StrBuf& out, Word w) {
    out.put('\'').put(w.s, w.n < 64 ? w.n : 64);
    if (w.n > 64) out.put("...");
    return out.put('\'');
}

rt::Error invalid() { return rt::err(rt::errc::inval); }

// Decimal, at most max (leading zeros allowed).
bool parse_number(Word w, rt::u32 max, rt::u32* out) {
    if (w.n == 0 || w.n > 10) return false;
    rt::u64 v = 0;
    for (rt::usize i = 0; i < w.n; ++i) {
        if (w.s[i] < '0' || w.s[i] > '9') return false;
        v = v * 10 + static_cast<rt::u64>(w.s[i] - '0');
    }
    if (v > max) return false;
    *out = static_cast<rt::u32>(v);
    return true;
}

// a.b.c.d, each 0..255 without leading zeros (they read as octal elsewhere).
bool parse_ipv4(Word w, rt::u8* out) {
    rt::usize i = 0;
    for (int part = 0; part < 4; ++part) {
        if (part) {
            if (i >= w.n || w.s[i] != '.') return false;
            ++i;
        }
        const rt::usize start = i;
        rt::u32 v = 0;
        while (i < w.n && w.s[i] >= '0' && w.s[i] <= '9' && i - start < 4) {
            v = v * 10 + static_cast<rt::u32>(w.s[i] - '0');
            ++i;
        }
        const rt::usize digits = i - start;
        if (digits == 0 || digits > 3 || v > 255 || (digits > 1 && w.s[start] == '0')) return false;
        out[part] = static_cast<rt::u8>(v);
    }
    return i == w.n;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// RFC 4291 text: eight groups of 1-4 hex digits, one "::" for a run of
// zero groups (at least one), and the last two groups as a dotted IPv4.
bool parse_ipv6(Word w, rt::u8* out) {
    rt::u16 read[8] = {};
    int groups = 0;  // read so far (a dotted tail is two)
    int gap = -1;    // the groups before "::", where the zeros go
    rt::usize i = 0;
    if (w.n >= 2 && w.s[0] == ':' && w.s[1] == ':') {
        gap = 0;
        i = 2;
    }
    while (i < w.n) {
        rt::usize j = i;
        bool dotted = false;
        for (; j < w.n && w.s[j] != ':'; ++j)
            if (w.s[j] == '.') dotted = true;
        if (dotted) {
            rt::u8 v4[4];
            if (j != w.n || groups > 6 || !parse_ipv4(Word{w.s + i, j - i}, v4)) return false;
            read[groups++] = static_cast<rt::u16>(v4[0] << 8 | v4[1]);
            read[groups++] = static_cast<rt::u16>(v4[2] << 8 | v4[3]);
            break;
        }
        if (j == i || j - i > 4 || groups == 8) return false;
        rt::u32 v = 0;
        for (rt::usize k = i; k < j; ++k) {
            const int h = hex_value(w.s[k]);
            if (h < 0) return false;
            v = v << 4 | static_cast<rt::u32>(h);
        }
        read[groups++] = static_cast<rt::u16>(v);
        i = j;
        if (i == w.n) break;
        ++i;  // the ':'
        if (i < w.n && w.s[i] == ':') {
            if (gap >= 0) return false;  // a second "::"
            gap = groups;
            ++i;
        } else if (i == w.n) {
            return false;  // ends in a single ':'
        }
    }
    if (gap < 0 ? groups != 8 : groups > 7) return false;
    rt::u16 g[8] = {};
    const int tail = gap < 0 ? 0 : groups - gap;
    const int head = groups - tail;
    for (int k = 0; k < head; ++k) g[k] = read[k];
    for (int k = 0; k < tail; ++k) g[8 - tail + k] = read[head + k];
    for (int k = 0; k < 8; ++k) {
        out[2 * k] = static_cast<rt::u8>(g[k] >> 8);
        out[2 * k + 1] = static_cast<rt::u8>(g[k]);
    }
    return true;
}

const char* family_name(rt::u16 family) {
    switch (family) {
    case RTRS_CORE_AF_INET: return "IPv4";
    case RTRS_CORE_AF_INET6: return "IPv6";
    default: return "a GID";
    }
}

// ADDR[/PREFIX] into e's network and prefix.
rt::Result<void> parse_net(Word w, AllowEntry& e, rt::u32 line, rt::StrBuf& err) {
    const rt::usize slash = w.find('/');
    Word a = w.upto(slash);
    rtrs_core_addr net{};
    bool ok;
    if (a.starts("gid:")) {
        net.family = RTRS_CORE_AF_IB;
        ok = parse_ipv6(a.from(4), net.bytes);
    } else {
        if (a.starts("ip:")) a = a.from(3);
        const bool v6 = a.find(':') < a.n;
        net.family = v6 ? RTRS_CORE_AF_INET6 : RTRS_CORE_AF_INET;
        ok = v6 ? parse_ipv6(a, net.bytes) : parse_ipv4(a, net.bytes);
    }
    if (!ok) {
        quoted(at(err, line).put("bad address "), w.upto(slash))
            .put(" (expected IPv4, IPv6, or gid: and a GID in IPv6 notation)");
        return invalid();
    }
    const rt::u32 bits = addr_bits(net.family);
    rt::u32 prefix = bits;
    if (slash < w.n && !parse_number(w.from(slash + 1), bits, &prefix)) {
        quoted(at(err, line).put("bad prefix "), w.from(slash + 1))
            .put(" (0 to ").dec(bits).put(" for ").put(family_name(net.family)).put(')');
        return invalid();
    }
    // IPv4-mapped IPv6 is IPv4, when the prefix covers the mapping.
    if (net.family == RTRS_CORE_AF_INET6 && prefix >= 96 && is_mapped(net.bytes)) {
        net = client_key(net);
        prefix -= 96;
    }
    const rtrs_core_addr m = masked(net, prefix);
    if (!same_addr(m, net)) {
        put_net(quoted(at(err, line), w).put(" has bits set past its prefix: the network is "), m,
                prefix);
        err.put("; a single address needs no prefix");
        return invalid();
    }
    e.net = net;
    e.prefix = static_cast<rt::u8>(prefix);
    return {};
}

}  // namespace

rt::Result<void> Policy::parse(const char* text, rt::usize len, char* msg, rt::usize cap) {
    rt::StrBuf err(msg, cap);
    const char* p = text;
    const char* const end = text + len;
    rt::u32 line = 0, limit_line = 0;
    while (p < end) {
        ++line;
        const char* eol = p;
        while (eol < end && *eol != '\n' && *eol != ';') ++eol;
        RT_TRY(parse_line(p, eol, line, &limit_line, err));
        if (eol == end) break;
        p = eol + 1;
    }
    return {};
}

rt::Result<void> Policy::parse_line(const char* p, const char* end, rt::u32 line,
                                    rt::u32* limit_line, rt::StrBuf& err) {
    for (const char* q = p; q < end; ++q)
        if (*q == '\0') {
            at(err, line).put("a NUL byte");
            return invalid();
        }
    Word w;
    if (!next_word(&p, end, &w)) return {};  // blank, or a comment
    if (w.is("allow")) return parse_allow(p, end, line, err);
    if (w.is("limit")) {
        if (*limit_line) {
            at(err, line).put("a second limit rule (the first is on line ").dec(*limit_line).put(')');
            return invalid();
        }
        *limit_line = line;
        return parse_limit(p, end, line, err);
    }
    quoted(at(err, line).put("unknown rule "), w).put(" (a rule begins with allow or limit)");
    return invalid();
}

rt::Result<void> Policy::parse_allow(const char* p, const char* end, rt::u32 line,
                                     rt::StrBuf& err) {
    Word w;
    if (!next_word(&p, end, &w)) {
        at(err, line).put("allow without an address");
        return invalid();
    }
    if (entries_num_ == kAdmitMaxEntries) {
        at(err, line).put("more than ").dec(kAdmitMaxEntries).put(" allow rules");
        return invalid();
    }
    AllowEntry& e = entries_[entries_num_];
    RT_TRY(parse_net(w, e, line, err));
    bool named = false;
    while (next_word(&p, end, &w)) {
        if (!w.starts("names=")) {
            quoted(at(err, line).put("unknown word "), w).put(" after the address (expected names=NAME,...)");
            return invalid();
        }
        if (named) {
            at(err, line).put("names= twice in one rule");
            return invalid();
        }
        named = true;
        RT_TRY(parse_names(w.s + 6, w.n - 6, e, line, err));
    }
    for (rt::u32 i = 0; i < entries_num_; ++i) {
        const AllowEntry& o = entries_[i];
        if (o.prefix == e.prefix && same_addr(o.net, e.net)) {
            put_net(at(err, line).put("the network "), e.net, e.prefix);
            err.put(" is on line ").dec(o.line).put(" already (one rule a network: merge their names)");
            return invalid();
        }
    }
    e.line = line;
    ++entries_num_;
    return {};
}

rt::Result<void> Policy::parse_names(const char* s, rt::usize n, AllowEntry& e, rt::u32 line,
                                     rt::StrBuf& err) {
    rt::usize i = 0;
    for (;;) {
        rt::usize j = i;
        while (j < n && s[j] != ',') ++j;
        const Word name{s + i, j - i};
        const rt::Bytes bytes(reinterpret_cast<const rt::u8*>(name.s), name.n);
        if (name.n == 0) {
            at(err, line).put(n == 0 ? "names= without a name" : "an empty name in names=");
            return invalid();
        }
        if (name.n >= wire::kNameMax) {
            at(err, line).put("a name of more than ").dec(rt::u32{wire::kNameMax - 1}).put(" bytes");
            return invalid();
        }
        if (!wire::valid_session_name(bytes)) {
            quoted(at(err, line).put("the name "), name)
                .put(" can never be a session's (names with '/' or '.' are refused)");
            return invalid();
        }
        if (e.names_num == kAdmitMaxNames) {
            at(err, line).put("more than ").dec(kAdmitMaxNames).put(" names in one rule");
            return invalid();
        }
        if (names_used_ + name.n > kAdmitNamePool) {
            at(err, line).put("the names of all rules take more than ").dec(kAdmitNamePool).put(" bytes");
            return invalid();
        }
        for (rt::usize k = 0; k < name.n; ++k) names_[names_used_ + k] = name.s[k];
        e.name_at[e.names_num] = static_cast<rt::u16>(names_used_);
        e.name_len[e.names_num] = static_cast<rt::u8>(name.n);
        ++e.names_num;
        names_used_ += static_cast<rt::u32>(name.n);
        if (j == n) return {};
        i = j + 1;
    }
}

rt::Result<void> Policy::parse_limit(const char* p, const char* end, rt::u32 line,
                                     rt::StrBuf& err) {
    const char* const kKeys[] = {"sessions", "paths", "connections", "rate", "burst"};
    constexpr int kRate = 3, kBurst = 4;
    AdmitLimits l;
    rt::u32* const values[] = {&l.sessions, &l.paths, &l.connections, &l.rate, &l.burst};
    bool seen[5] = {};
    bool any = false;
    Word w;
    while (next_word(&p, end, &w)) {
        any = true;
        const rt::usize eq = w.find('=');
        if (eq == w.n) {
            quoted(at(err, line), w).put(" is not KEY=VALUE");
            return invalid();
        }
        const Word key = w.upto(eq), value = w.from(eq + 1);
        int k = 0;
        while (k < 5 && !key.is(kKeys[k])) ++k;
        if (k == 5) {
            quoted(at(err, line).put("unknown limit "), key)
                .put(" (expected sessions, paths, connections, rate or burst)");
            return invalid();
        }
        if (seen[k]) {
            at(err, line).put(kKeys[k]).put("= twice");
            return invalid();
        }
        seen[k] = true;
        Word number = value;
        if (k == kRate) {
            // R/s or R/m; a bare 0 is no rate.
            const rt::usize slash = value.find('/');
            number = value.upto(slash);
            const Word unit = value.from(slash + 1);
            if (slash < value.n && unit.is("m")) l.period_ms = 60000;
            else if (slash < value.n ? !unit.is("s") : !value.is("0")) {
                quoted(at(err, line).put("bad rate "), value).put(" (expected R/s or R/m)");
                return invalid();
            }
        }
        if (!parse_number(number, kAdmitMaxValue, values[k]) || (k == kBurst && *values[k] == 0)) {
            quoted(at(err, line).put("bad value "), value).put(" for ").put(kKeys[k]).put(" (")
                .dec(rt::u32{k == kBurst ? 1u : 0u}).put(" to ").dec(kAdmitMaxValue).put(')');
            return invalid();
        }
    }
    if (!any) {
        at(err, line).put("limit without a value (sessions=, paths=, connections=, rate=, burst=)");
        return invalid();
    }
    if (seen[kBurst] && l.rate == 0) {
        at(err, line).put("burst= without a rate");
        return invalid();
    }
    if (l.rate && !l.burst) l.burst = l.rate;
    limits_ = l;
    return {};
}

// --- the policy ---------------------------------------------------------------------

bool Policy::has_limits() const {
    return limits_.sessions || limits_.paths || limits_.connections || limits_.rate;
}

const AllowEntry* Policy::match(const rtrs_core_addr& client) const {
    const rtrs_core_addr key = client_key(client);
    const AllowEntry* best = nullptr;
    for (rt::u32 i = 0; i < entries_num_; ++i) {
        const AllowEntry& e = entries_[i];
        if (prefix_equal(e.net, e.prefix, key) && (!best || e.prefix > best->prefix)) best = &e;
    }
    return best;
}

bool Policy::name_allowed(const AllowEntry& e, rt::Bytes name) const {
    if (e.names_num == 0) return true;
    for (rt::u32 i = 0; i < e.names_num; ++i) {
        if (e.name_len[i] != name.size()) continue;
        const char* n = names_ + e.name_at[i];
        rt::usize k = 0;
        while (k < name.size() && static_cast<rt::u8>(n[k]) == name.data()[k]) ++k;
        if (k == name.size()) return true;
    }
    return false;
}

void Policy::format(rt::StrBuf& out) const {
    for (rt::u32 i = 0; i < entries_num_; ++i) {
        const AllowEntry& e = entries_[i];
        out.put("allow ");
        put_net(out, e.net, e.prefix);
        for (rt::u32 k = 0; k < e.names_num; ++k)
            out.put(k ? "," : " names=").put(names_ + e.name_at[k], e.name_len[k]);
        out.put('\n');
    }
    if (!has_limits()) return;
    out.put("limit");
    if (limits_.sessions) out.put(" sessions=").dec(limits_.sessions);
    if (limits_.paths) out.put(" paths=").dec(limits_.paths);
    if (limits_.connections) out.put(" connections=").dec(limits_.connections);
    if (limits_.rate)
        out.put(" rate=").dec(limits_.rate).put(limits_.period_ms == 1000 ? "/s" : "/m")
            .put(" burst=").dec(limits_.burst);
    out.put('\n');
}

rt::Result<void> Policy::format_within(char* buf, char* msg, rt::usize cap) const {
    rt::StrBuf out(buf, kAdmitShowRules + 1);
    format(out);
    if (!out.truncated()) return {};
    rt::StrBuf(msg, cap).put("the rules take more than ").dec(rt::u32{kAdmitShowRules})
        .put(" bytes when shown (").dec(static_cast<rt::u64>(out.wanted()))
        .put("): use fewer rules or names, or prefixes that cover several");
    return rt::err(rt::errc::inval);
}

// --- the decisions ------------------------------------------------------------------

Verdict Admission::admit_connection(const rtrs_core_addr& client, rt::u64 now_ms,
                                    const ClientCounts& held) {
    return decide(client, held, true, now_ms);
}

Verdict Admission::recheck_connection(const rtrs_core_addr& client, const ClientCounts& held) {
    return decide(client, held, false, 0);
}

Verdict Admission::decide(const rtrs_core_addr& client, const ClientCounts& held, bool take,
                          rt::u64 now_ms) {
    if (!policy_) return Verdict::Ok;
    const Policy& p = *policy_;
    if (p.allow_list_on() && !p.match(client)) return refused(Verdict::NotAllowed);
    // Every attempt of an allowed address costs a token, whatever it
    // would hold: the rate is of requests.
    const AdmitLimits& l = p.limits();
    if (take && l.rate && !take_token(client_key(client), now_ms, l))
        return refused(Verdict::RateLimited);
    // A limit refuses only what would grow past it: a new connection of a
    // path that exists is no new path, whatever the path count says.
    if (l.sessions && held.new_session && held.sessions >= l.sessions)
        return refused(Verdict::TooManySessions);
    if (l.paths && held.new_path && held.paths >= l.paths) return refused(Verdict::TooManyPaths);
    if (l.connections && held.connections >= l.connections)
        return refused(Verdict::TooManyConnections);
    return Verdict::Ok;
}

Verdict Admission::admit_name(const rtrs_core_addr& client, rt::Bytes name) {
    if (!policy_ || !policy_->allow_list_on()) return Verdict::Ok;
    const AllowEntry* e = policy_->match(client);
    if (!e) return refused(Verdict::NotAllowed);
    if (!policy_->name_allowed(*e, name)) return refused(Verdict::NameNotAllowed);
    return Verdict::Ok;
}

Verdict Admission::still_allowed(const rtrs_core_addr& client, rt::Bytes name) const {
    if (!policy_ || !policy_->allow_list_on()) return Verdict::Ok;
    const AllowEntry* e = policy_->match(client);
    if (!e) return Verdict::NotAllowed;
    if (name.size() && !policy_->name_allowed(*e, name)) return Verdict::NameNotAllowed;
    return Verdict::Ok;
}

// A token, in period_ms units, refilled at rate units a millisecond up to
// burst tokens: integers only (no floating point in the kernel).
bool Admission::take_token(const rtrs_core_addr& key, rt::u64 now_ms, const AdmitLimits& l) {
    const rt::u64 cap = rt::u64{l.burst} * l.period_ms;
    TokenBucket* b = nullptr;
    TokenBucket* victim = nullptr;  // a free slot, else the least recently used
    for (TokenBucket& s : buckets_) {
        if (s.used && same_addr(s.addr, key)) {
            b = &s;
            break;
        }
        if (!victim || (victim->used && (!s.used || s.last_ms < victim->last_ms))) victim = &s;
    }
    if (!b) {
        // New, or forgotten: a full bucket. More addresses asking at once
        // than there are slots forget each other's history so.
        b = victim;
        b->used = true;
        b->addr = key;
        b->units = cap;
        b->last_ms = now_ms;
    } else if (now_ms > b->last_ms) {
        // (A clock that went back refills nothing.)
        const rt::u64 gap = now_ms - b->last_ms;
        const rt::u64 room = cap > b->units ? cap - b->units : 0;
        b->units = gap > room / l.rate ? cap : b->units + gap * l.rate;
        b->last_ms = now_ms;
    }
    if (b->units < l.period_ms) return false;
    b->units -= l.period_ms;
    return true;
}

rt::Own<Policy> Admission::replace(rt::Own<Policy> p) {
    rt::Own<Policy> old = rt::move(policy_);
    policy_ = rt::move(p);
    for (TokenBucket& b : buckets_) b = TokenBucket{};
    return old;
}

void Admission::format(rt::StrBuf& out) const {
    out.put("# refused so far:");
    for (rt::u32 v = 1; v < kVerdicts; ++v)
        out.put(' ').put(verdict_name(static_cast<Verdict>(v))).put('=').dec(refusals_[v]);
    out.put('\n');
    if (!policy_ || !policy_->allow_list_on()) out.put("# no allow rule: every address may connect\n");
    if (policy_) policy_->format(out);
    if (!policy_ || !policy_->has_limits()) out.put("# no limit\n");
}

// --- the refusals' log gates ---------------------------------------------------------

LogGate& RefusalGates::gate(const rtrs_core_addr& client, Verdict v, rt::u64 now_ms) {
    const rtrs_core_addr key = client_key(client);
    Slot* pick = nullptr;  // a free slot, else the least recently used idle one
    for (Slot& s : slots_) {
        if (s.v == v && same_addr(s.addr, key)) {
            s.last_ms = now_ms;
            return s.gate;
        }
        if (s.v == Verdict::Ok) {
            if (!pick || pick->v != Verdict::Ok) pick = &s;
            continue;
        }
        if (now_ms - s.last_ms < LogGate::kWindowMs) continue;  // active
        if (!pick || (pick->v != Verdict::Ok && s.last_ms < pick->last_ms)) pick = &s;
    }
    if (!pick) return shared_[static_cast<rt::u32>(v)];
    if (pick->v != Verdict::Ok) {
        if (const rt::u32 n = pick->gate.take_suppressed()) {
            char who[64];
            format_addr(pick->addr, who, sizeof(who));
            Log(kErr).put("connection requests refused: ").dec(rt::u64{n}).put(" refusals of ")
                .put(who).put(" (").put(verdict_name(pick->v)).put(") were not logged");
        }
    }
    pick->addr = key;
    pick->v = v;
    pick->last_ms = now_ms;
    pick->gate = LogGate();
    return pick->gate;
}

}  // namespace core
