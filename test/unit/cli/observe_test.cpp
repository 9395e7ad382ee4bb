// SPDX-License-Identifier: GPL-2.0
// The latency histograms: parsing the debugfs file, percentiles, show and
// watch with and without the file, and `metrics` (Prometheus text; promtool
// checks it in promtool_test.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "cli_run.h"
#include "exit_codes.h"
#include "format.h"
#include "fake_sysfs.h"
#include "latency.h"
#include "metrics.h"
#include "parse.h"

using namespace cli_test;
using namespace rtrs_srv;

namespace {

const std::string p = "ip:10.0.0.2@ip:10.0.0.1";

// 32 buckets, n in bucket i and 0 elsewhere.
std::string buckets(std::map<int, std::uint64_t> at) {
    std::string s;
    for (int i = 0; i < 32; ++i) s += " " + std::to_string(at.count(i) ? at[i] : 0);
    return s;
}

const std::string header = "# name count sum_us max_us, then 32 buckets: i counts [2^i, 2^(i+1)) us\n";

Histogram hist(std::map<int, std::uint64_t> at, std::uint64_t max) {
    Histogram h;
    h.max_us = max;
    for (int i = 0; i < 32; ++i) {
        h.buckets.push_back(at.count(i) ? at[i] : 0);
        h.count += h.buckets.back();
    }
    return h;
}

}  // namespace

TEST(CliLatency, ParsesTheDebugfsFile) {
    auto l = parse::latency(header + "ulp 3 30 12" + buckets({{3, 3}}) + "\ntransport 3 9 4" +
                            buckets({{1, 2}, {2, 1}}) + "\n");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->ulp.count, 3u);
    EXPECT_EQ(l->ulp.sum_us, 30u);
    EXPECT_EQ(l->ulp.max_us, 12u);
    EXPECT_EQ(l->ulp.buckets.size(), 32u);
    EXPECT_EQ(l->ulp.buckets[3], 3u);
    EXPECT_EQ(l->transport.buckets[1], 2u);
    // Names it does not know are skipped; the order does not matter.
    EXPECT_TRUE(parse::latency("transport 0 0 0 0\nother 1 1 1 1\nulp 0 0 0 0\n"));
}

TEST(CliLatency, RefusesWhatTheKernelDoesNotPrint) {
    for (const char* bad : {
             "",                                           // nothing
             "ulp 1 1 1 1\n",                              // no transport
             "ulp 1 1 1 1\ntransport 1 1 1 1",             // no final newline
             "ulp 2 1 1 1\ntransport 1 1 1 1\n",           // count != buckets
             "ulp 1 1 1\ntransport 1 1 1 1\n",             // no bucket
             "ulp 1 1 1 x\ntransport 1 1 1 1\n",           // not a number
             "ulp  1 1 1 1\ntransport 1 1 1 1\n",          // two spaces
             "ulp -1 1 1 1\ntransport 1 1 1 1\n",          // negative
         })
        EXPECT_FALSE(parse::latency(bad)) << bad;
}

TEST(CliLatency, Percentiles) {
    // 100 requests in [32, 64) us, the slowest 60 us.
    Histogram h = hist({{5, 100}}, 60);
    EXPECT_DOUBLE_EQ(*latency::quantile(h, 0.5), 48.0);
    EXPECT_DOUBLE_EQ(*latency::quantile(h, 0.99), 60.0) << "never above the max";
    // 90 fast, 10 in [1024, 2048): p50 in the first bucket, p99 in the second.
    h = hist({{2, 90}, {10, 10}}, 2000);
    EXPECT_DOUBLE_EQ(*latency::quantile(h, 0.5), 4 + 4 * (50.0 / 90));
    EXPECT_DOUBLE_EQ(*latency::quantile(h, 0.99), 1024 + 1024 * 0.9);
    EXPECT_GT(*latency::quantile(h, 0.99), 1024.0);
    // Bucket 0 starts at 0; the last bucket ends at the max.
    EXPECT_DOUBLE_EQ(*latency::quantile(hist({{0, 4}}, 1), 0.5), 1.0);
    h = hist({{31, 2}}, 3000000000ull);
    EXPECT_DOUBLE_EQ(*latency::quantile(h, 1.0), 3e9);
    EXPECT_FALSE(latency::quantile(hist({}, 0), 0.5)) << "empty";
    EXPECT_EQ(latency::summary(hist({}, 0)), "no requests");
    EXPECT_EQ(latency::summary(hist({{5, 100}}, 60)), "p50 48 us, p99 60 us, max 60 us (100 requests)");
    EXPECT_EQ(latency::summary(hist({{12, 1}}, 5000)), "p50 5.00 ms, p99 5.00 ms, max 5.00 ms (1 request)");
    EXPECT_EQ(latency::cell(hist({{5, 100}}, 60)), "48us/60us/60us");
    EXPECT_EQ(latency::cell(hist({}, 0)), "-");
    EXPECT_EQ(latency::duration(123456), "123 ms");
    EXPECT_EQ(latency::duration(12345678), "12.3 s");
}

TEST(CliLatency, SinceAnEarlierSample) {
    Histogram a = hist({{5, 10}}, 60), b = hist({{5, 15}, {9, 1}}, 700);
    Histogram d = latency::since(a, b);
    EXPECT_EQ(d.count, 6u);
    EXPECT_EQ(d.buckets[5], 5u);
    EXPECT_EQ(d.buckets[9], 1u);
    EXPECT_EQ(d.max_us, 700u);
    // A reset in between: everything the new sample holds is new.
    Histogram r = hist({{5, 2}}, 40);
    EXPECT_EQ(latency::since(b, r), r);
}

class CliObserve : public ::testing::Test {
protected:
    void SetUp() override {
        PathFiles f;
        f.stats = "40 164480 25 102800 0\n";
        fake.add_path("s", p, f);
    }
    std::vector<std::string> args(std::vector<std::string> rest) {
        std::vector<std::string> a{"--sysfs-root", fake.root(), "--debugfs-root", fake.debugfs_root()};
        a.insert(a.end(), rest.begin(), rest.end());
        return a;
    }
    void latency(const std::string& ulp, const std::string& transport) {
        fake.add_latency("s", p, header + "ulp " + ulp + "\ntransport " + transport + "\n");
    }
    FakeSysfs fake;
};

TEST_F(CliObserve, ShowPrintsPercentilesWhereTheFileIs) {
    auto r = run_cli(args({"show", "s"}));
    EXPECT_EQ(r.status, exit_ok);
    EXPECT_EQ(r.out.find("latency"), std::string::npos) << "no file, nothing extra:\n" << r.out;

    latency("65 3900 90" + buckets({{5, 65}}), "65 650 12" + buckets({{3, 65}}));
    r = run_cli(args({"show", "s"}));
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_NE(r.out.find("    inflight:     0\n"
                         "    ulp latency:  p50 48 us, p99 64 us, max 90 us (65 requests)\n"
                         "    net latency:  p50 12 us, p99 12 us, max 12 us (65 requests)\n"),
              std::string::npos)
        << r.out;
}

TEST_F(CliObserve, ShowSaysWhyTheFileCannotBeRead) {
    // A folder where the file should be (as root, mode bits do not stop a read).
    std::filesystem::create_directories(fake.debugfs_root() + "/s/" + p + "/latency");
    auto r = run_cli(args({"show", "s"}));
    EXPECT_EQ(r.status, exit_ok);
    EXPECT_NE(r.out.find("    ulp latency:  - (Is a directory)\n"), std::string::npos) << r.out;
    // Permission denied (debugfs is root's), in the model.
    Session s;
    s.name = "s";
    Path path;
    path.name = p;
    path.latency.problem = "Permission denied";
    s.paths.push_back(path);
    EXPECT_NE(format::show_text(s).find("    net latency:  - (Permission denied)\n"), std::string::npos);
}

TEST_F(CliObserve, WatchAddsLatencyColumnsOfTheInterval) {
    latency("10 100 20" + buckets({{3, 10}}), "10 100 20" + buckets({{3, 10}}));
    RunOptions o;
    double t = 0;
    o.now = [&] { return t; };
    o.sleep = [&](double s) {
        t += s;
        // 10 more requests, all between 1 and 2 ms, and a slow one of 9 ms.
        latency("21 30000 9000" + buckets({{3, 10}, {10, 10}, {13, 1}}),
                "21 300 40" + buckets({{3, 10}, {4, 11}}));
    };
    auto r = run_cli(args({"watch", "-c", "1"}), o);
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_NE(r.out.find("ULP P50/P99/MAX  NET P50/P99/MAX"), std::string::npos) << r.out;
    // ULP: p50 of the 11 new ones in [1024, 2048), p99 capped by the max;
    // transport: the 11 new ones in [16, 32); the max is since the reset.
    EXPECT_NE(r.out.find("  1.59ms/9.00ms/9.00ms"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  24us/32us/40us\n"), std::string::npos) << r.out;
}

TEST_F(CliObserve, WatchWithoutLatencyFilesHasNoLatencyColumns) {
    RunOptions o;
    o.now = [] { return 0.0; };
    o.sleep = [](double) {};
    auto r = run_cli(args({"watch", "-c", "1"}), o);
    EXPECT_EQ(r.out.find("P50"), std::string::npos) << r.out;
}

TEST_F(CliObserve, MetricsMatchSysfsAndTheHistograms) {
    latency("3 30 12" + buckets({{3, 3}}), "3 9 4" + buckets({{1, 2}, {2, 1}}));
    auto r = run_cli(args({"metrics"}));
    EXPECT_EQ(r.status, exit_ok) << r.err;
    const std::string l = "{session=\"s\",path=\"" + p + "\"";
    for (const std::string& line : std::vector<std::string>{
             std::string("# TYPE rtrs_server_loaded gauge\nrtrs_server_loaded 1\n"),
             std::string("rtrs_server_session_paths_up{session=\"s\"} 1\n"),
             "# TYPE rtrs_server_path_reads_total counter\nrtrs_server_path_reads_total" + l + "} 40\n",
             "rtrs_server_path_read_bytes_total" + l + "} 164480\n",
             "rtrs_server_path_writes_total" + l + "} 25\n",
             "rtrs_server_path_write_bytes_total" + l + "} 102800\n",
             "rtrs_server_path_inflight" + l + "} 0\n",
             "# TYPE rtrs_server_path_ulp_latency_seconds histogram\n",
             "rtrs_server_path_ulp_latency_seconds_bucket" + l + ",le=\"0.000008\"} 0\n",
             "rtrs_server_path_ulp_latency_seconds_bucket" + l + ",le=\"0.000016\"} 3\n",
             "rtrs_server_path_ulp_latency_seconds_bucket" + l + ",le=\"2147.483648\"} 3\n",
             "rtrs_server_path_ulp_latency_seconds_bucket" + l + ",le=\"+Inf\"} 3\n",
             "rtrs_server_path_ulp_latency_seconds_sum" + l + "} 0.00003\n",
             "rtrs_server_path_ulp_latency_seconds_count" + l + "} 3\n",
             "rtrs_server_path_transport_latency_seconds_bucket" + l + ",le=\"0.000004\"} 2\n",
             "rtrs_server_path_transport_latency_seconds_bucket" + l + ",le=\"0.000008\"} 3\n",
         })
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

TEST_F(CliObserve, MetricsWithoutTheModuleOrTheHistograms) {
    auto r = run_cli(args({"metrics"}));
    EXPECT_EQ(r.status, exit_ok);
    EXPECT_EQ(r.out.find("latency"), std::string::npos) << "no debugfs file, no histogram";
    fake.remove_class();
    r = run_cli(args({"metrics"}));
    EXPECT_EQ(r.status, exit_ok) << "the collector goes on";
    EXPECT_NE(r.out.find("\nrtrs_server_loaded 0\n"), std::string::npos) << r.out;
}

TEST_F(CliObserve, MetricsTextfile) {
    std::string dir = fake.base() + "/textfile";
    std::filesystem::create_directories(dir);
    auto r = run_cli(args({"metrics", "--textfile", dir}));
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out, "");
    std::ifstream in(dir + "/rtrs_server.prom");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, run_cli(args({"metrics"})).out);
    int files = 0;
    for (auto& e : std::filesystem::directory_iterator(dir)) files += e.exists();
    EXPECT_EQ(files, 1) << "no temporary file left";
    r = run_cli(args({"metrics", "--textfile", fake.base() + "/nonexistent"}));
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
    EXPECT_EQ(run_cli(args({"list", "--textfile", dir})).status, exit_usage);
    EXPECT_EQ(run_cli(args({"metrics", "extra"})).status, exit_usage);
}

TEST(CliMetrics, LabelsAndNumbers) {
    EXPECT_EQ(metrics::label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    EXPECT_EQ(metrics::label_value("x\xff"), "x\xef\xbf\xbd") << "not UTF-8: U+FFFD";
    EXPECT_EQ(metrics::label_value("caf\xc3\xa9"), "caf\xc3\xa9");
    EXPECT_EQ(metrics::le_seconds(0), "0.000002");
    EXPECT_EQ(metrics::le_seconds(19), "1.048576");
    EXPECT_EQ(metrics::us_as_seconds(0), "0");
    EXPECT_EQ(metrics::us_as_seconds(12500000), "12.5");
    EXPECT_EQ(metrics::us_as_seconds(18446744073709551615ull), "18446744073709.551615");
}
