// SPDX-License-Identifier: GPL-2.0
// What operators watch: the latency histograms (exact counts for a counted
// workload with every response signaled, a sample by default, reset, a clock that goes backwards or jumps), their debugfs
// files (there while the path is in sysfs, never after; absent debugfs),
// the trace events with their fields, and log lines that name the session.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "core/close_reason.h"
#include "core/histogram.h"
#include "core/path.h"
#include "fake_env.h"
#include "harness.h"

using fake::k;
using h::count_logs;

namespace {

const char* kPath = "ip:10.77.0.2@ip:10.77.0.1";
constexpr std::uint32_t kBuckets = core::Histogram::kBuckets;

struct Hist {
    std::uint64_t count = 0, sum_us = 0, max_us = 0;
    std::vector<std::uint64_t> buckets;
    std::uint64_t bucket_total() const {
        std::uint64_t n = 0;
        for (auto b : buckets) n += b;
        return n;
    }
};

// Parses the debugfs file: '#' lines skipped, then "name count sum max b0..b31".
std::map<std::string, Hist> parse(const std::string& text) {
    std::map<std::string, Hist> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream l(line);
        std::string name;
        Hist h;
        l >> name >> h.count >> h.sum_us >> h.max_us;
        std::uint64_t b;
        while (l >> b) h.buckets.push_back(b);
        EXPECT_EQ(h.buckets.size(), kBuckets) << line;
        out[name] = h;
    }
    return out;
}

std::map<std::string, Hist> latency(const std::string& sess) {
    return parse(k().debugfs_latency(sess, kPath));
}

void skew_us(std::int64_t us) { k().ns_skew += us * 1000; }

}  // namespace

TEST(Histogram, BucketBounds) {
    using core::Histogram;
    EXPECT_EQ(Histogram::bucket_of(0), 0u);
    EXPECT_EQ(Histogram::bucket_of(1), 0u);
    EXPECT_EQ(Histogram::bucket_of(2), 1u);
    EXPECT_EQ(Histogram::bucket_of(3), 1u);
    EXPECT_EQ(Histogram::bucket_of(4), 2u);
    EXPECT_EQ(Histogram::bucket_of(1023), 9u);
    EXPECT_EQ(Histogram::bucket_of(1024), 10u);
    EXPECT_EQ(Histogram::bucket_of((1ull << 31) - 1), 30u);
    EXPECT_EQ(Histogram::bucket_of(1ull << 31), 31u);
    EXPECT_EQ(Histogram::bucket_of(~0ull), 31u);
}

TEST(Histogram, RecordsCountSumMaxAndResets) {
    core::Histogram h;
    h.record_span(1000, 1000 + 5000);   // 5 us
    h.record_span(7000, 2000);          // backwards: 0 us
    h.record_span(0, ~0ull);            // as long as a clock can say
    EXPECT_EQ(h.count(), 3u);
    EXPECT_EQ(h.bucket(2), 1u);
    EXPECT_EQ(h.bucket(0), 1u);
    EXPECT_EQ(h.bucket(31), 1u);
    EXPECT_EQ(h.max_us(), ~0ull / 1000);
    EXPECT_EQ(h.sum_us(), 5 + ~0ull / 1000);
    char buf[1024];
    rt::StrBuf out(buf, sizeof(buf));
    h.format(out, "x");
    EXPECT_FALSE(out.truncated());
    auto p = parse(buf);
    ASSERT_EQ(p.count("x"), 1u);
    EXPECT_EQ(p["x"].count, 3u);
    EXPECT_EQ(p["x"].bucket_total(), 3u);
    h.reset();
    EXPECT_EQ(h.count(), 0u);
    EXPECT_EQ(h.sum_us(), 0u);
    EXPECT_EQ(h.max_us(), 0u);
}

// A counted workload: every request lands in both histograms once, in the
// bucket of the time the test let pass, whatever the mix and the mode.
TEST(Latency, HistogramsCountExactlyTheRequestsServed) {
    for (bool inval : {true, false}) {
        SCOPED_TRACE(inval ? "always_invalidate" : "no invalidation");
        h::Opts o;
        o.always_invalidate = inval;
        h::Fixture f(o);
        auto c = h::client(80);
        ASSERT_TRUE(f.up(c, "counted"));
        auto before = latency("counted");
        ASSERT_EQ(before.size(), 2u) << k().debugfs_latency("counted", kPath);
        EXPECT_EQ(before["ulp"].count, 0u);
        EXPECT_EQ(before["transport"].count, 0u);

        const int reads = 23, writes = 19;
        for (int i = 0; i < reads + writes; ++i) {
            const bool read = i % 2 == 0 && i / 2 < reads;
            std::uint32_t id = static_cast<std::uint32_t>(i % 16);
            rtrs_srv_op* op = read ? f.read(c, 1, id, 512, {1, 2, 3})
                                   : f.write(c, 1, id, std::vector<std::uint8_t>(100, 7), {9});
            ASSERT_NE(op, nullptr) << i;
            skew_us(3000);  // the storage: 3 ms, bucket 11
            rtrs_core_answer(op, 0);
            skew_us(40);  // the wire: 40 us, bucket 5
            k().complete_all_sends(c.con(1));
        }
        const std::uint64_t n = reads + writes;
        auto l = latency("counted");
        EXPECT_EQ(l["ulp"].count, n);
        EXPECT_EQ(l["ulp"].bucket_total(), n);
        EXPECT_EQ(l["ulp"].buckets[11], n);
        EXPECT_EQ(l["ulp"].sum_us, n * 3000);
        EXPECT_EQ(l["ulp"].max_us, 3000u);
        EXPECT_EQ(l["transport"].count, n);
        EXPECT_EQ(l["transport"].bucket_total(), n);
        EXPECT_EQ(l["transport"].buckets[5], n);
        EXPECT_EQ(l["transport"].sum_us, n * 40);
        EXPECT_EQ(l["transport"].max_us, 40u);

        // Reset with the counters (stats/rdma), both histograms.
        EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_STATS_RDMA, "1"), 0);
        l = latency("counted");
        for (const char* name : {"ulp", "transport"}) {
            EXPECT_EQ(l[name].count, 0u) << name;
            EXPECT_EQ(l[name].sum_us, 0u) << name;
            EXPECT_EQ(l[name].max_us, 0u) << name;
        }
        EXPECT_EQ(f.show(kPath, RTRS_CORE_ATTR_STATS_RDMA), "0 0 0 0 0\n");
        EXPECT_TRUE(f.finish());
    }
}

// A request the ULP still holds is counted when it answers; one answered
// with an error is counted as any other.
// By default one response in signal_interval is signaled: only those have
// a completion, and the transport histogram samples them; ulp counts all.
TEST(Latency, TransportSamplesTheSignaledResponses) {
    h::Opts o;
    o.signal_interval = 4;
    h::Fixture f(o);
    auto c = h::client(86);
    ASSERT_TRUE(f.up(c, "sampled"));
    for (std::uint32_t i = 0; i < 10; ++i) {
        rtrs_srv_op* op = f.write(c, 1, i, std::vector<std::uint8_t>(10, 1), {});
        ASSERT_NE(op, nullptr) << i;
        rtrs_core_answer(op, 0);
        skew_us(100);
        k().complete_all_sends(c.con(1));
    }
    auto l = latency("sampled");
    EXPECT_EQ(l["ulp"].count, 10u);
    EXPECT_EQ(l["transport"].count, 2u) << "responses 4 and 8";
    EXPECT_EQ(l["transport"].buckets[6], 2u);
    EXPECT_EQ(l["transport"].sum_us, 200u);
    EXPECT_TRUE(f.finish());
}

TEST(Latency, CountedAtTheAnswerWhateverItSays) {
    h::Fixture f;
    auto c = h::client(81);
    ASSERT_TRUE(f.up(c, "answers"));
    rtrs_srv_op* a = f.write(c, 1, 0, std::vector<std::uint8_t>(8, 1), {});
    rtrs_srv_op* b = f.write(c, 1, 1, std::vector<std::uint8_t>(8, 1), {});
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(latency("answers")["ulp"].count, 0u);
    rtrs_core_answer(a, -5);
    EXPECT_EQ(latency("answers")["ulp"].count, 1u);
    EXPECT_EQ(latency("answers")["transport"].count, 0u) << "not before its response completed";
    k().complete_all_sends(c.con(1));
    EXPECT_EQ(latency("answers")["transport"].count, 1u);
    rtrs_core_answer(b, 0);
    k().complete_all_sends(c.con(1));
    auto l = latency("answers");
    EXPECT_EQ(l["ulp"].count, 2u);
    EXPECT_EQ(l["transport"].count, 2u);
    EXPECT_TRUE(f.finish());
}

TEST(Latency, AClockGoingBackwardsOrJumpingBreaksNothing) {
    h::Fixture f;
    auto c = h::client(82);
    ASSERT_TRUE(f.up(c, "clock"));
    // Backwards between arrival and answer: 0 us.
    rtrs_srv_op* op = f.write(c, 1, 0, std::vector<std::uint8_t>(8, 1), {});
    ASSERT_NE(op, nullptr);
    skew_us(-1000000);
    rtrs_core_answer(op, 0);
    k().complete_all_sends(c.con(1));
    // A jump of 2^62 ns (146 years) between answer and completion.
    op = f.write(c, 1, 1, std::vector<std::uint8_t>(8, 1), {});
    ASSERT_NE(op, nullptr);
    rtrs_core_answer(op, 0);
    k().ns_skew += std::int64_t{1} << 62;
    k().complete_all_sends(c.con(1));
    // And the largest bucket's bound itself.
    op = f.write(c, 1, 2, std::vector<std::uint8_t>(8, 1), {});
    ASSERT_NE(op, nullptr);
    skew_us(std::int64_t{1} << 31);
    rtrs_core_answer(op, 0);
    k().complete_all_sends(c.con(1));

    auto l = latency("clock");
    EXPECT_EQ(l["ulp"].count, 3u);
    EXPECT_EQ(l["ulp"].buckets[0], 2u);
    EXPECT_EQ(l["ulp"].buckets[31], 1u);
    EXPECT_EQ(l["ulp"].max_us, 1ull << 31);
    EXPECT_EQ(l["transport"].count, 3u);
    EXPECT_EQ(l["transport"].buckets[31], 1u);
    EXPECT_EQ(l["transport"].max_us, (1ull << 62) / 1000);
    EXPECT_TRUE(f.finish());
}

// The files come with the path's sysfs folder and go before the path does;
// the session's folder goes with its last path.
TEST(Debugfs, FoldersFollowTheSessionAndItsPaths) {
    h::Fixture f;
    auto a = h::client(83);
    auto b = h::sibling(a, 84, 2);
    ASSERT_TRUE(f.up(a, "two"));
    ASSERT_TRUE(f.up(b, "two"));
    EXPECT_NE(k().debugfs_latency("two", kPath), "");
    EXPECT_NE(k().debugfs_latency("two", "ip:10.78.0.2@ip:10.78.0.1"), "");
    EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_DISCONNECT, "1"), 0);
    k().run();
    EXPECT_EQ(k().debugfs_latency("two", kPath), "");
    EXPECT_NE(k().debugfs_latency("two", "ip:10.78.0.2@ip:10.78.0.1"), "");
    int live = 0;
    for (auto& d : k().debugfs) live += d->live;
    EXPECT_EQ(live, 2) << "the session's folder and the other path's";
    EXPECT_TRUE(f.finish());  // no debugfs folder left over
}

TEST(Debugfs, WithoutDebugfsPathsComeUpAllTheSame) {
    h::Fixture f;
    k().debugfs_absent = true;
    auto c = h::client(85);
    ASSERT_TRUE(f.up(c, "nodebugfs"));
    ASSERT_NE(f.sysfs_path(kPath), nullptr);
    EXPECT_TRUE(k().debugfs.empty());
    rtrs_srv_op* op = f.write(c, 1, 0, std::vector<std::uint8_t>(8, 1), {});
    ASSERT_NE(op, nullptr);
    rtrs_core_answer(op, 0);
    k().complete_all_sends(c.con(1));
    EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_STATS_RDMA, "1"), 0);
    EXPECT_TRUE(f.finish());
}

TEST(Trace, UpDownWithTheReason) {
    h::Fixture f;
    auto c = h::client(86);
    ASSERT_TRUE(f.up(c, "traced"));
    auto up = k().traces_named("path_up");
    ASSERT_EQ(up.size(), 1u);
    EXPECT_EQ(up[0].sess, "traced");
    EXPECT_EQ(up[0].path, kPath);
    ASSERT_EQ(k().traces_named("sess_up").size(), 1u);
    EXPECT_EQ(k().traces_named("sess_up")[0].sess, "traced");

    EXPECT_EQ(f.store(kPath, RTRS_CORE_ATTR_DISCONNECT, "1"), 0);
    k().run();
    auto down = k().traces_named("path_down");
    ASSERT_EQ(down.size(), 1u);
    EXPECT_EQ(down[0].sess, "traced");
    EXPECT_EQ(down[0].path, kPath);
    EXPECT_EQ(down[0].reason, 2);
    EXPECT_EQ(down[0].why, "sysfs disconnect");
    EXPECT_EQ(down[0].was_up, 1);
    auto sdown = k().traces_named("sess_down");
    ASSERT_EQ(sdown.size(), 1u);
    EXPECT_EQ(sdown[0].sess, "traced");
    EXPECT_EQ(sdown[0].why, "sysfs disconnect");
    EXPECT_TRUE(f.finish());
}

TEST(Trace, ClientDisconnectAndServerClose) {
    h::Fixture f;
    auto a = h::client(87);
    auto b = h::client(88, 2, 3);
    ASSERT_TRUE(f.up(a, "leaver"));
    ASSERT_TRUE(f.up(b, "stayer"));
    k().cm_event(a.con(1), RTRS_CORE_CM_DISCONNECTED);
    k().run();
    auto down = k().traces_named("path_down");
    ASSERT_EQ(down.size(), 1u);
    EXPECT_EQ(down[0].why, "client disconnect");
    EXPECT_EQ(down[0].reason, 1);
    EXPECT_TRUE(f.finish());
    down = k().traces_named("path_down");
    ASSERT_EQ(down.size(), 2u);
    EXPECT_EQ(down[1].sess, "stayer");
    EXPECT_EQ(down[1].why, "server close");
    EXPECT_EQ(k().traces_named("sess_down").size(), 2u);
}

// Every reason a path closes for has its value, its words (reason_name(),
// the log) and its trace name (the table src/kernel/trace.h prints
// sess_down's and path_down's reason with), all made from the one list in
// core/close_reason.h: values 0, 1, 2, ... as the enum has them, names
// unique, trace names lower-case identifiers. (Issue 38: the trace table
// was a copy that had no name for Admission, and the events printed 0xb.)
TEST(Trace, EveryCloseReasonHasItsNames) {
    struct Entry {
        core::CloseReason reason;
        int value;
        const char* trace;
        const char* words;
    };
#define ENTRY(name, value, trace, words) Entry{core::CloseReason::name, value, #trace, words}
    const Entry list[] = {RTRS_CLOSE_REASONS(ENTRY, RTRS_CLOSE_REASON_COMMA)};
#undef ENTRY
    // trace.h's table, built as trace.h builds it.
    struct Symbol {
        long value;
        const char* name;
    };
    const Symbol table[] = {RTRS_CLOSE_REASONS(RTRS_CLOSE_REASON_SYMBOL, RTRS_CLOSE_REASON_COMMA)};
    const std::size_t n = sizeof(list) / sizeof(list[0]);
    ASSERT_EQ(sizeof(table) / sizeof(table[0]), n);
    std::set<std::string> traces, words;
    for (std::size_t i = 0; i < n; ++i) {
        const Entry& e = list[i];
        EXPECT_EQ(e.value, static_cast<int>(i)) << e.trace;
        EXPECT_EQ(static_cast<int>(e.reason), e.value) << e.trace;
        EXPECT_EQ(table[i].value, e.value) << e.trace;
        EXPECT_STREQ(table[i].name, e.trace);
        EXPECT_STREQ(core::reason_name(e.reason), e.words) << e.trace;
        EXPECT_STRNE(core::reason_name(e.reason), "?") << e.trace;
        const std::string t = e.trace;
        EXPECT_FALSE(t.empty());
        for (char ch : t) EXPECT_TRUE(std::islower(static_cast<unsigned char>(ch)) || ch == '_') << t;
        EXPECT_TRUE(traces.insert(t).second) << "trace name twice: " << t;
        EXPECT_FALSE(std::string(e.words).empty()) << t;
        EXPECT_TRUE(words.insert(e.words).second) << "words twice: " << e.words;
    }
    // The admission policy's reason, the one that had no trace name.
    EXPECT_STREQ(table[static_cast<int>(core::CloseReason::Admission)].name, "admission");
    // Past the list: no name.
    EXPECT_STREQ(core::reason_name(static_cast<core::CloseReason>(n)), "?");
}

TEST(Trace, AStalledHandshakeWasNeverUp) {
    h::Fixture f;
    auto c = h::client(89);
    ASSERT_TRUE(f.connect_all(c));
    k().advance(30000);
    auto down = k().traces_named("path_down");
    ASSERT_EQ(down.size(), 1u);
    EXPECT_EQ(down[0].why, "stalled handshake");
    EXPECT_EQ(down[0].was_up, 0);
    EXPECT_EQ(down[0].sess, "") << "no name before the info request";
    EXPECT_TRUE(k().traces_named("path_up").empty());
    EXPECT_TRUE(k().traces_named("sess_down").empty());
    EXPECT_TRUE(f.finish());
}

TEST(Trace, RefusedConnections) {
    h::Fixture f;
    auto c = h::client(90);
    EXPECT_NE(f.connect(c, 0, false), 0);
    auto r = k().traces_named("conn_refused");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].path, kPath);
    EXPECT_EQ(r[0].err, -6);
    EXPECT_EQ(r[0].why, "no such session, and not the first connection of a new one");
    EXPECT_TRUE(f.finish());
}

TEST(Trace, IoErrorsWithChunkAndErrno) {
    h::Fixture f;
    auto c = h::client(91);
    ASSERT_TRUE(f.up(c, "ioerr"));
    k().ulp.rdma_ev = [](void*, rtrs_srv_op*, void*, std::uint32_t, const void*, std::uint32_t) {
        return -5;
    };
    EXPECT_NE(f.read(c, 1, 3, 100, {}), nullptr);
    k().complete_all_sends(c.con(1));
    auto e = k().traces_named("io_error");
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].sess, "ioerr");
    EXPECT_EQ(e[0].path, kPath);
    EXPECT_EQ(e[0].chunk, 3u);
    EXPECT_EQ(e[0].err, -5);
    EXPECT_EQ(e[0].is_read, 1);
    // The log line names the session too.
    EXPECT_EQ(count_logs(std::string("ioerr: ") + kPath + ": the upper layer failed request 3: -5"),
              1);
    // A good answer is no error.
    k().ulp.rdma_ev = nullptr;
    rtrs_srv_op* op = f.write(c, 1, 4, std::vector<std::uint8_t>(8, 1), {});
    ASSERT_NE(op, nullptr);
    rtrs_core_answer(op, 0);
    k().complete_all_sends(c.con(1));
    EXPECT_EQ(k().traces_named("io_error").size(), 1u);
    EXPECT_TRUE(f.finish());
}

TEST(Trace, HeartbeatMissesCountUpToTheTimeout) {
    h::Fixture f;
    auto c = h::client(92);
    ASSERT_TRUE(f.up(c, "quiet"));
    k().advance(5000);
    k().complete_all_sends(c.con(0));
    EXPECT_TRUE(k().traces_named("hb_miss").empty()) << "the first period had traffic";
    k().advance(5000 * 6);
    k().run();
    auto m = k().traces_named("hb_miss");
    ASSERT_EQ(m.size(), 6u);
    for (std::uint32_t i = 0; i < m.size(); ++i) {
        EXPECT_EQ(m[i].missed, i + 1);
        EXPECT_EQ(m[i].max, 5u);
        EXPECT_EQ(m[i].sess, "quiet");
        EXPECT_EQ(m[i].path, kPath);
    }
    auto down = k().traces_named("path_down");
    ASSERT_EQ(down.size(), 1u);
    EXPECT_EQ(down[0].why, "heartbeat timeout");
    EXPECT_EQ(count_logs(std::string("quiet: ") + kPath + ": no heartbeat from the client"), 1);
    EXPECT_TRUE(f.finish());
}
