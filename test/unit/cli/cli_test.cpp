// SPDX-License-Identifier: GPL-2.0
// The command line: options, help, the sysfs root, usage errors.
#include <gtest/gtest.h>

#include "cli_run.h"
#include "exit_codes.h"
#include "fake_sysfs.h"
#include "help.h"

using namespace cli_test;
using namespace rtrs_srv;

namespace {

class CliArgs : public ::testing::Test {
protected:
    void SetUp() override {
        PathFiles f;
        f.stats = "12 49152 3 12288 0\n";
        fake.add_path("s", "ip:10.0.0.2@ip:10.0.0.1", f);
    }
    FakeSysfs fake;
};

const char* list_json =
    R"([{"session":"s","paths":[{"path":"ip:10.0.0.2@ip:10.0.0.1","hca_name":"rxe0",)"
    R"("hca_port":1,"src_addr":"ip:10.0.0.2","dst_addr":"ip:10.0.0.1","read_cnt":12,)"
    R"("read_bytes":49152,"write_cnt":3,"write_bytes":12288,"inflight":0}]}])"
    "\n";

}  // namespace

TEST_F(CliArgs, OptionsGoAnywhere) {
    for (auto args : std::vector<std::vector<std::string>>{
             {"-j", "--sysfs-root", fake.root(), "list"},
             {"list", "--json", "--sysfs-root=" + fake.root()},
             {"--sysfs-root", fake.root(), "list", "-j"}}) {
        auto r = run_cli(args);
        EXPECT_EQ(r.status, exit_ok) << r.err;
        EXPECT_EQ(r.out, list_json);
    }
}

TEST_F(CliArgs, PrettyImpliesJsonAndBundles) {
    auto a = run_cli({"--sysfs-root", fake.root(), "-p", "list"});
    auto b = run_cli({"--sysfs-root", fake.root(), "-jp", "list"});
    EXPECT_EQ(a.status, exit_ok);
    EXPECT_EQ(a.out, b.out);
    EXPECT_EQ(a.out.substr(0, 6), "[\n    ");
}

TEST_F(CliArgs, RootFromTheEnvironmentUnlessGiven) {
    RunOptions o;
    o.env["RTRS_SRV_SYSFS"] = fake.root();
    auto r = run_cli({"-j", "list"}, o);
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out, list_json);
    auto given = run_cli({"--sysfs-root", fake.root() + "/nope", "list"}, o);
    EXPECT_EQ(given.status, exit_not_found);
    o.env["RTRS_SRV_SYSFS"] = "";
    auto def = run_cli({"list"}, o);  // the real /sys/class/rtrs-server
    EXPECT_NE(def.out + def.err, "");
}

TEST_F(CliArgs, DoubleDashEndsOptions) {
    fake.add_path("-j", "a@b");
    auto r = run_cli({"--sysfs-root", fake.root(), "show", "--", "-j"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out.substr(0, 13), "session: -j\np");
}

TEST_F(CliArgs, Help) {
    auto r = run_cli({"--help"});
    EXPECT_EQ(r.status, exit_ok);
    EXPECT_EQ(r.out, help::tool());
    for (const char* c : {"list", "show", "disconnect", "reset-stats", "watch", "metrics", "admission", "help"}) {
        auto a = run_cli({c, "--help"});
        auto b = run_cli({"help", c});
        auto h = run_cli({"-h", c});
        EXPECT_EQ(a.status, exit_ok) << c;
        EXPECT_EQ(a.out, *help::command(c)) << c;
        EXPECT_EQ(b.out, a.out) << c;
        EXPECT_EQ(h.out, a.out) << c;
        EXPECT_EQ(a.out.rfind(std::string("Usage: rtrs-srv "), 0), 0u) << c;
        // Every command is in the tool's help.
        EXPECT_NE(help::tool().find(std::string("  ") + c), std::string::npos) << c;
    }
    EXPECT_EQ(run_cli({"help"}).out, help::tool());
}

TEST_F(CliArgs, Version) {
    auto r = run_cli({"--version"});
    EXPECT_EQ(r.status, exit_ok);
    EXPECT_EQ(r.out.rfind("rtrs-srv ", 0), 0u);
    EXPECT_EQ(run_cli({"-V"}).out, r.out);
}

TEST_F(CliArgs, UsageErrors) {
    struct Case {
        std::vector<std::string> args;
        std::string first_line;
    };
    for (const auto& c : std::vector<Case>{
             {{}, "rtrs-srv: no command given"},
             {{"frob"}, "rtrs-srv: unknown command \"frob\""},
             {{"help", "frob"}, "rtrs-srv: unknown command \"frob\""},
             {{"--frob", "list"}, "rtrs-srv: unknown option --frob"},
             {{"-x", "list"}, "rtrs-srv: unknown option -x"},
             {{"--json=yes", "list"}, "rtrs-srv: option --json takes no value"},
             {{"list", "--sysfs-root"}, "rtrs-srv: option --sysfs-root needs a value"},
             {{"list", "extra"}, "rtrs-srv: too many arguments to list"},
             {{"show"}, "rtrs-srv: missing argument to show"},
             {{"show", "a", "b"}, "rtrs-srv: too many arguments to show"},
             {{"disconnect", "s"}, "rtrs-srv: missing argument to disconnect"},
             {{"reset-stats"}, "rtrs-srv: missing argument to reset-stats"},
             {{"reset-stats", "a", "b", "c"}, "rtrs-srv: too many arguments to reset-stats"},
             {{"-j", "disconnect", "s", "p"},
              "rtrs-srv: -j/--json and -p/--pretty apply to list, show and admission show only"},
             {{"-p", "watch"}, "rtrs-srv: -j/--json and -p/--pretty apply to list, show and admission show only"},
             {{"list", "-c", "2"}, "rtrs-srv: -i/--interval and -c/--count apply to watch only"},
             {{"watch", "-i", "0"}, "rtrs-srv: bad interval \"0\": seconds, more than 0, at most 86400"},
             {{"watch", "--interval=-1"},
              "rtrs-srv: bad interval \"-1\": seconds, more than 0, at most 86400"},
             {{"watch", "-i", "nan"},
              "rtrs-srv: bad interval \"nan\": seconds, more than 0, at most 86400"},
             {{"watch", "-i", "1s"}, "rtrs-srv: bad interval \"1s\": seconds, more than 0, at most 86400"},
             {{"watch", "-c", "0"}, "rtrs-srv: bad count \"0\": a whole number, at least 1"},
             {{"watch", "-c", "-3"}, "rtrs-srv: bad count \"-3\": a whole number, at least 1"},
             {{"watch", "--count", "2x"}, "rtrs-srv: bad count \"2x\": a whole number, at least 1"},
             {{"watch", "-i"}, "rtrs-srv: option -i needs a value"},
             {{"--sysfs-root", "", "list"}, "rtrs-srv: --sysfs-root needs a folder"},
         }) {
        auto r = run_cli(c.args);
        std::string joined;
        for (const auto& a : c.args) joined += a + " ";
        EXPECT_EQ(r.status, exit_usage) << joined;
        EXPECT_EQ(r.out, "") << joined;
        EXPECT_EQ(r.err.substr(0, r.err.find('\n')), c.first_line) << joined;
        EXPECT_NE(r.err.find("Try 'rtrs-srv --help' for more information.\n"), std::string::npos);
    }
}

TEST_F(CliArgs, UsageErrorShowsTheCommandsUsage) {
    auto r = run_cli({"disconnect", "s"});
    EXPECT_EQ(r.err,
              "rtrs-srv: missing argument to disconnect\n"
              "Usage: rtrs-srv disconnect SESSION PATH\n"
              "Try 'rtrs-srv --help' for more information.\n");
}

TEST_F(CliArgs, ListOfAnEmptyClass) {
    FakeSysfs empty;
    auto r = run_cli({"--sysfs-root", empty.root(), "list"});
    EXPECT_EQ(r.status, exit_ok);
    EXPECT_EQ(r.out, "SESSION  PATH  HCA  READS  WRITES  INFLIGHT\n");
    auto j = run_cli({"--sysfs-root", empty.root(), "-j", "list"});
    EXPECT_EQ(j.out, "[]\n");
}

TEST_F(CliArgs, ListWithoutTheClass) {
    auto r = run_cli({"--sysfs-root", fake.base() + "/none", "list"});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "rtrs-srv: " + fake.base() +
                         "/none: No such file or directory (is the rtrs-server module loaded?)\n");
    fake.write("../file", "x");
    auto f = run_cli({"--sysfs-root", fake.base() + "/class/file", "list"});
    EXPECT_EQ(f.status, exit_failure);
    EXPECT_EQ(f.err, "rtrs-srv: " + fake.base() + "/class/file: Not a directory\n");
}
