// SPDX-License-Identifier: GPL-2.0
// watch: rates from successive samples, with a fake clock whose sleep
// changes the counters in the fake tree.
#include <gtest/gtest.h>

#include "cli_run.h"
#include "exit_codes.h"
#include "fake_sysfs.h"

using namespace cli_test;
using namespace rtrs_srv;

namespace {

const std::string p = "ip:10.0.0.2@ip:10.0.0.1";

class CliWatch : public ::testing::Test {
protected:
    void SetUp() override {
        PathFiles f;
        f.stats = "100 409600 10 40960 1\n";
        fake.add_path("s", p, f);
    }
    // Each sleep advances the clock and applies the next change.
    RunOptions clock(std::vector<std::function<void()>> changes) {
        RunOptions o;
        auto step = std::make_shared<std::size_t>(0);
        auto t = std::make_shared<double>(1000.0);
        o.now = [t] { return *t; };
        o.sleep = [this, t, step, changes](double s) {
            slept.push_back(s);
            *t += s;
            if (*step < changes.size()) changes[(*step)++]();
        };
        return o;
    }
    void stats(const std::string& v) { fake.write("s/paths/" + p + "/stats/rdma", v); }

    FakeSysfs fake;
    std::vector<double> slept;
};

}  // namespace

TEST_F(CliWatch, RatesFromTwoSamples) {
    auto o = clock({[&] { stats("300 1228800 15 61440 4\n"); }});
    auto r = run_cli({"--sysfs-root", fake.root(), "watch", "--interval", "2", "--count", "1"}, o);
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(slept, std::vector<double>{2.0});
    EXPECT_EQ(r.out,
              "SESSION  PATH                     READS/S     READ-B/S  WRITES/S   WRITE-B/S  INFLIGHT\n"
              "s        ip:10.0.0.2@ip:10.0.0.1    100.0  400.0 KiB/s       2.5  10.0 KiB/s         4\n");
}

TEST_F(CliWatch, SuccessiveTablesWithoutATerminal) {
    auto o = clock({[&] { stats("101 410624 10 40960 0\n"); },
                    [&] { stats("0 0 0 0 0\n"); },  // reset
                    [&] { fake.add_path("t", "a@b"); }});
    auto r = run_cli({"--sysfs-root", fake.root(), "watch", "-i0.5", "-c", "3"}, o);
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(slept, (std::vector<double>{0.5, 0.5, 0.5}));
    EXPECT_EQ(r.out,
              "SESSION  PATH                     READS/S   READ-B/S  WRITES/S  WRITE-B/S  INFLIGHT\n"
              "s        ip:10.0.0.2@ip:10.0.0.1      2.0  2.0 KiB/s       0.0      0 B/s         0\n"
              "\n"
              "SESSION  PATH                     READS/S  READ-B/S  WRITES/S  WRITE-B/S  INFLIGHT\n"
              "s        ip:10.0.0.2@ip:10.0.0.1        -         -         -          -         0\n"
              "\n"
              "SESSION  PATH                     READS/S  READ-B/S  WRITES/S  WRITE-B/S  INFLIGHT\n"
              "s        ip:10.0.0.2@ip:10.0.0.1      0.0     0 B/s       0.0      0 B/s         0\n"
              "t        a@b                            -         -         -          -         0\n");
}

TEST_F(CliWatch, RedrawsOnATerminal) {
    auto o = clock({});
    o.tty = true;
    auto r = run_cli({"--sysfs-root", fake.root(), "watch", "-c", "2"}, o);
    EXPECT_EQ(r.status, exit_ok);
    std::string frame = "\033[H\033[2JEvery 1s: rtrs-srv watch (" + fake.root() +
                        ")\n\n"
                        "SESSION  PATH                     READS/S  READ-B/S  WRITES/S  WRITE-B/S  INFLIGHT\n"
                        "s        ip:10.0.0.2@ip:10.0.0.1      0.0     0 B/s       0.0      0 B/s         1\n";
    EXPECT_EQ(r.out, frame + frame);
}

TEST_F(CliWatch, KeepsGoingWhenTheClassGoesAway) {
    auto o = clock({[&] { fake.remove_class(); }});
    auto r = run_cli({"--sysfs-root", fake.root(), "watch", "-c", "1"}, o);
    EXPECT_EQ(r.status, exit_ok);
    EXPECT_EQ(r.out, "SESSION  PATH  READS/S  READ-B/S  WRITES/S  WRITE-B/S  INFLIGHT\n");
}

TEST_F(CliWatch, FailsAtOnceWithoutTheClass) {
    fake.remove_class();
    auto o = clock({});
    auto r = run_cli({"--sysfs-root", fake.root(), "watch", "-c", "1"}, o);
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_TRUE(slept.empty());
    EXPECT_NE(r.err.find("is the rtrs-server module loaded?"), std::string::npos);
}

TEST_F(CliWatch, SessionThatGoesAwayDisappearsFromTheTable) {
    fake.add_path("gone", "c@d");
    auto o = clock({[&] { fake.remove_session("gone"); }});
    auto r = run_cli({"--sysfs-root", fake.root(), "watch", "-c", "1"}, o);
    EXPECT_EQ(r.status, exit_ok);
    EXPECT_EQ(r.out.find("gone"), std::string::npos) << r.out;
}
