// SPDX-License-Identifier: GPL-2.0
// disconnect and reset-stats: what they write where, and every error.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "cli_run.h"
#include "exit_codes.h"
#include "fake_sysfs.h"

using namespace cli_test;
using namespace rtrs_srv;

namespace {

const std::string p1 = "ip:10.77.0.2@ip:10.77.0.1";
const std::string p2 = "ip:fd00::2@ip:fd00::1";

class CliControl : public ::testing::Test {
protected:
    void SetUp() override {
        PathFiles f;
        f.stats = "12 49152 3 12288 0\n";
        fake.add_path("s 1", p1, f);
        fake.add_path("s 1", p2, f);
        fake.add_path("other", p1, f);
    }
    Outcome run(std::vector<std::string> args) {
        args.insert(args.begin(), {"--sysfs-root", fake.root()});
        return run_cli(args);
    }
    std::string file(const std::string& s, const std::string& p, const std::string& f) {
        return fake.read(s + "/paths/" + p + "/" + f);
    }
    FakeSysfs fake;
};

const std::string usage = "Usage: echo 1 > disconnect\n";
const std::string counters = "12 49152 3 12288 0\n";

}  // namespace

TEST_F(CliControl, DisconnectWritesOneToThatPathOnly) {
    auto r = run({"disconnect", "s 1", p2});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, "disconnecting path \"" + p2 + "\" of session \"s 1\"\n");
    EXPECT_EQ(file("s 1", p2, "disconnect"), "1");
    EXPECT_EQ(file("s 1", p1, "disconnect"), usage);
    EXPECT_EQ(file("other", p1, "disconnect"), usage);
    EXPECT_EQ(file("s 1", p2, "stats/rdma"), counters);
}

TEST_F(CliControl, ResetStatsOfOnePath) {
    auto r = run({"reset-stats", "s 1", p1});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out, "reset the counters of path \"" + p1 + "\" of session \"s 1\"\n");
    EXPECT_EQ(file("s 1", p1, "stats/rdma"), "1");
    EXPECT_EQ(file("s 1", p2, "stats/rdma"), counters);
    EXPECT_EQ(file("other", p1, "stats/rdma"), counters);
    EXPECT_EQ(file("s 1", p1, "disconnect"), usage);
}

TEST_F(CliControl, ResetStatsOfEveryPathOfTheSession) {
    auto r = run({"reset-stats", "s 1"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out, "reset the counters of path \"" + p1 + "\" of session \"s 1\"\n"
                     "reset the counters of path \"" + p2 + "\" of session \"s 1\"\n");
    EXPECT_EQ(file("s 1", p1, "stats/rdma"), "1");
    EXPECT_EQ(file("s 1", p2, "stats/rdma"), "1");
    EXPECT_EQ(file("other", p1, "stats/rdma"), counters);
}

TEST_F(CliControl, ResetStatsOfASessionWithoutPaths) {
    fake.add_session("empty");
    auto r = run({"reset-stats", "empty"});
    EXPECT_EQ(r.status, exit_ok);
    EXPECT_EQ(r.out, "session \"empty\" has no paths\n");
}

TEST_F(CliControl, NoSuchSession) {
    for (auto args : std::vector<std::vector<std::string>>{
             {"disconnect", "nope", p1}, {"reset-stats", "nope"}, {"reset-stats", "nope", p1},
             {"show", "nope"}}) {
        auto r = run(args);
        EXPECT_EQ(r.status, exit_not_found) << args[0];
        EXPECT_EQ(r.err, "rtrs-srv: no session \"nope\" in " + fake.root() + "\n");
        EXPECT_EQ(r.out, "");
    }
}

TEST_F(CliControl, NamesThatEscapeTheClassFolderAreNoSessions) {
    for (const char* bad : {"..", ".", "s 1/paths", ""}) {
        auto r = run({"disconnect", bad, p1});
        EXPECT_EQ(r.status, exit_not_found) << bad;
    }
    auto r = run({"disconnect", "s 1", "../../other/paths/" + p1});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_EQ(file("other", p1, "disconnect"), usage);
}

TEST_F(CliControl, NoSuchPathListsTheSessionsPaths) {
    auto r = run({"disconnect", "s 1", "ip:1.2.3.4@ip:5.6.7.8"});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_EQ(r.err, "rtrs-srv: session \"s 1\" has no path \"ip:1.2.3.4@ip:5.6.7.8\"; its paths: \"" +
                         p1 + "\" \"" + p2 + "\"\n");
    auto r2 = run({"reset-stats", "other", p2});
    EXPECT_EQ(r2.status, exit_not_found);
    EXPECT_EQ(r2.err, "rtrs-srv: session \"other\" has no path \"" + p2 + "\"; its paths: \"" +
                          p1 + "\"\n");
}

TEST_F(CliControl, NoClassFolder) {
    fake.remove_class();
    auto r = run({"disconnect", "s 1", p1});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_EQ(r.err, "rtrs-srv: " + fake.root() +
                         ": No such file or directory (is the rtrs-server module loaded?)\n");
}

TEST_F(CliControl, ReadOnlyFileIsPermissionDenied) {
    fake.write("s 1/paths/" + p1 + "/disconnect", usage, 0444);
    auto r = run({"disconnect", "s 1", p1});
    EXPECT_EQ(r.status, exit_permission);
    std::string f = fake.root() + "/s 1/paths/" + p1 + "/disconnect";
    std::string hint = geteuid() == 0 ? "the file is read-only" : "writing needs root";
    EXPECT_EQ(r.err, "rtrs-srv: cannot write " + f + ": Permission denied (" + hint + ")\n");
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(file("s 1", p1, "disconnect"), usage) << "a read-only file was changed";
}

TEST_F(CliControl, ResetAllGoesOnPastAFailureAndReturnsIt) {
    fake.write("s 1/paths/" + p1 + "/stats/rdma", counters, 0444);
    auto r = run({"reset-stats", "s 1"});
    EXPECT_EQ(r.status, exit_permission);
    EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "reset the counters of path \"" + p2 + "\" of session \"s 1\"\n");
    EXPECT_EQ(file("s 1", p1, "stats/rdma"), counters);
    EXPECT_EQ(file("s 1", p2, "stats/rdma"), "1");
}

TEST_F(CliControl, KernelRefusalShowsItsErrno) {
    // /dev/full refuses every write with ENOSPC, as the kernel would refuse
    // a value with EINVAL.
    std::string f = fake.path_dir("s 1", p1) + "/disconnect";
    std::filesystem::remove(f);
    std::filesystem::create_symlink("/dev/full", f);
    auto r = run({"disconnect", "s 1", p1});
    EXPECT_EQ(r.status, exit_failure);
    EXPECT_EQ(r.err, "rtrs-srv: the kernel refused to write \"1\" to " + fake.root() + "/s 1/paths/" +
                         p1 + "/disconnect: No space left on device\n");
}

TEST_F(CliControl, MissingControlFile) {
    std::filesystem::remove(fake.path_dir("s 1", p1) + "/disconnect");
    auto r = run({"disconnect", "s 1", p1});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_EQ(r.err, "rtrs-srv: cannot write " + fake.root() + "/s 1/paths/" + p1 +
                         "/disconnect: No such file or directory\n");
}

TEST_F(CliControl, OddSessionNames) {
    const std::string odd = "q\"uote \\ back@:x";
    fake.add_path(odd, p1);
    auto r = run({"reset-stats", odd, p1});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out, "reset the counters of path \"" + p1 + "\" of session \"q\\\"uote \\\\ back@:x\"\n");
    EXPECT_EQ(file(odd, p1, "stats/rdma"), "1");
}
