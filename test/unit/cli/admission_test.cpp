// SPDX-License-Identifier: GPL-2.0
// admission: show (table, JSON), set (words, a file, standard input;
// refused rules; --persist, --close-refused), close-refused, the metrics,
// against fake parameter folders. The texts the fake module "shows" are
// the core's (test/unit/core/admission_test.cpp, Admission::format()).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "admission.h"
#include "cli_run.h"
#include "exit_codes.h"
#include "fake_sysfs.h"

using namespace cli_test;
using namespace rtrs_srv;

namespace {

namespace fs = std::filesystem;

const std::string no_refusals =
    "# refused so far: not-allowed=0 sessions=0 paths=0 connections=0 rate=0 name=0\n";
const std::string default_shown =
    no_refusals + "# no allow rule: every address may connect\n# no limit\n";
// A module's admission parameter before any rule was set, as it reads.
const std::string lab_shown =
    "# refused so far: not-allowed=3 sessions=1 paths=0 connections=0 rate=7 name=2\n"
    "allow 10.77.0.0/24 names=a,b\n"
    "allow fd00::/64\n"
    "allow gid:fe80:0000:0000:0000:0002:c9ff:fe00:0001/128 names=vm1\n"
    "limit sessions=2 connections=32 rate=10/s burst=20\n";

std::string slurp(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void put(const std::string& file, const std::string& content, fs::perms mode = fs::perms(0644)) {
    fs::create_directories(fs::path(file).parent_path());
    if (fs::exists(file)) fs::permissions(file, fs::perms(0644));
    std::ofstream(file, std::ios::binary | std::ios::trunc) << content;
    fs::permissions(file, mode);
}

class CliAdmission : public ::testing::Test {
protected:
    void SetUp() override {
        params = fake.base() + "/module/rtrs_server/parameters";
        modprobe = fake.base() + "/modprobe.d";
        fs::create_directories(modprobe);
        put(params + "/admission", default_shown);
        put(params + "/admission_close", "", fs::perms(0200));
        put(params + "/max_chunk_size", "131072\n", fs::perms(0444));
    }
    // rtrs-srv with the fake folders, and the line given.
    Outcome run(std::vector<std::string> args, const RunOptions& o = {}) {
        args.insert(args.begin(), {"--sysfs-root", fake.root(), "--params-dir", params});
        return run_cli(args, o);
    }
    Outcome run_set(std::vector<std::string> args, const RunOptions& o = {}) {
        args.insert(args.begin(), {"--modprobe-dir", modprobe, "admission", "set"});
        return run(args, o);
    }
    std::string written() { return slurp(params + "/admission"); }
    std::string closed() {
        fs::permissions(params + "/admission_close", fs::perms(0600));
        std::string s = slurp(params + "/admission_close");
        fs::permissions(params + "/admission_close", fs::perms(0200));
        return s;
    }
    std::string persisted() const { return modprobe + "/rtrs-server-admission.conf"; }
    // What the folder holds but the file itself.
    std::vector<std::string> modprobe_files() const {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(modprobe)) names.push_back(e.path().filename());
        return names;
    }

    FakeSysfs fake;
    std::string params, modprobe;
};

}  // namespace

// --- show -----------------------------------------------------------------------

TEST_F(CliAdmission, ShowsTheDefault) {
    auto r = run({"admission"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out,
              "allow-list: off (no allow rule): every address may connect\n"
              "\n"
              "LIMIT        VALUE\n"
              "sessions      none\n"
              "paths         none\n"
              "connections   none\n"
              "rate          none\n"
              "burst         none\n"
              "\n"
              "REFUSED      COUNT  WHY\n"
              "not-allowed      0  the client's address is not on the allow-list\n"
              "sessions         0  the client's address holds as many sessions as its limit allows\n"
              "paths            0  the client's address holds as many paths as its limit allows\n"
              "connections      0  the client's address holds as many connections as its limit allows\n"
              "rate             0  the client's address asks to connect faster than its rate limit allows\n"
              "name             0  the session name is not allowed for the client's address\n");
    EXPECT_EQ(run({"admission", "show"}).out, r.out);
    auto j = run({"-j", "admission"});
    EXPECT_EQ(j.status, exit_ok) << j.err;
    EXPECT_EQ(j.out,
              "{\"allow_list\":false,\"allow\":[],\"limits\":{\"sessions\":null,\"paths\":null,"
              "\"connections\":null,\"rate\":null,\"burst\":null},\"refused\":{\"not-allowed\":0,"
              "\"sessions\":0,\"paths\":0,\"connections\":0,\"rate\":0,\"name\":0},\"rules\":[]}\n");
}

TEST_F(CliAdmission, ShowsAnAllowListWithNamesIpv6AndGidEntriesAndLimits) {
    put(params + "/admission", lab_shown);
    auto r = run({"admission", "show"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out,
              "allow-list: on, 3 entries: an address on none is refused, the longest matching "
              "network decides\n"
              "NETWORK                                          NAMES\n"
              "10.77.0.0/24                                     a,b\n"
              "fd00::/64                                        any name\n"
              "gid:fe80:0000:0000:0000:0002:c9ff:fe00:0001/128  vm1\n"
              "\n"
              "LIMIT        VALUE\n"
              "sessions         2\n"
              "paths         none\n"
              "connections     32\n"
              "rate          10/s\n"
              "burst           20\n"
              "\n"
              "REFUSED      COUNT  WHY\n"
              "not-allowed      3  the client's address is not on the allow-list\n"
              "sessions         1  the client's address holds as many sessions as its limit allows\n"
              "paths            0  the client's address holds as many paths as its limit allows\n"
              "connections      0  the client's address holds as many connections as its limit allows\n"
              "rate             7  the client's address asks to connect faster than its rate limit allows\n"
              "name             2  the session name is not allowed for the client's address\n");
    auto j = run({"admission", "--json"});
    EXPECT_EQ(j.status, exit_ok) << j.err;
    EXPECT_EQ(j.out,
              "{\"allow_list\":true,\"allow\":["
              "{\"network\":\"10.77.0.0/24\",\"family\":\"ipv4\",\"names\":[\"a\",\"b\"]},"
              "{\"network\":\"fd00::/64\",\"family\":\"ipv6\",\"names\":null},"
              "{\"network\":\"gid:fe80:0000:0000:0000:0002:c9ff:fe00:0001/128\",\"family\":\"gid\","
              "\"names\":[\"vm1\"]}],"
              "\"limits\":{\"sessions\":2,\"paths\":null,\"connections\":32,\"rate\":\"10/s\",\"burst\":20},"
              "\"refused\":{\"not-allowed\":3,\"sessions\":1,\"paths\":0,\"connections\":0,\"rate\":7,"
              "\"name\":2},"
              "\"rules\":[\"allow 10.77.0.0/24 names=a,b\",\"allow fd00::/64\","
              "\"allow gid:fe80:0000:0000:0000:0002:c9ff:fe00:0001/128 names=vm1\","
              "\"limit sessions=2 connections=32 rate=10/s burst=20\"]}\n");
    auto p = run({"-p", "admission"});
    EXPECT_EQ(p.status, exit_ok);
    EXPECT_EQ(p.out.substr(0, 45), "{\n    \"allow_list\": true,\n    \"allow\": [\n    ");
    EXPECT_NE(p.out.find("\n        \"burst\": 20\n"), std::string::npos) << p.out;
}

TEST_F(CliAdmission, ShowsLimitsWithoutAnAllowListAndOneEntry) {
    put(params + "/admission", no_refusals + "# no allow rule: every address may connect\n"
                                             "limit paths=4 rate=30/m burst=5\n");
    auto r = run({"admission"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find("REFUSED")),
              "allow-list: off (no allow rule): every address may connect\n"
              "\n"
              "LIMIT        VALUE\n"
              "sessions      none\n"
              "paths            4\n"
              "connections   none\n"
              "rate          30/m\n"
              "burst            5\n"
              "\n");
    put(params + "/admission", no_refusals + "allow 192.168.1.7/32\n# no limit\n");
    r = run({"admission"});
    EXPECT_EQ(r.out.substr(0, r.out.find("\n\n")),
              "allow-list: on, 1 entry: an address on none is refused, the longest matching network "
              "decides\n"
              "NETWORK         NAMES\n"
              "192.168.1.7/32  any name");
    EXPECT_NE(run({"-j", "admission"}).out.find(
                  "\"allow\":[{\"network\":\"192.168.1.7/32\",\"family\":\"ipv4\",\"names\":null}]"),
              std::string::npos);
}

TEST_F(CliAdmission, ShowsOddNamesEscaped) {
    put(params + "/admission", no_refusals + "allow 10.0.0.0/8 names=a\x1b[2J,caf\xc3\xa9\n# no limit\n");
    auto r = run({"admission"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_NE(r.out.find("10.0.0.0/8  a\\x1b[2J,caf\xc3\xa9\n"), std::string::npos) << r.out;
    auto j = run({"-j", "admission"});
    EXPECT_NE(j.out.find("\"names\":[\"a\\u001b[2J\",\"caf\xc3\xa9\"]"), std::string::npos) << j.out;
}

TEST_F(CliAdmission, ShowWithoutTheModuleOrItsAdmission) {
    fs::remove(params + "/admission");
    auto r = run({"admission"});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "rtrs-srv: no " + params +
                         "/admission: this rtrs_server has no admission control (upstream's server "
                         "has none)\n");
    fs::remove_all(fake.base() + "/module");
    r = run({"admission"});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_EQ(r.err, "rtrs-srv: " + params +
                         ": No such file or directory (is the rtrs-server module loaded?)\n");
}

TEST_F(CliAdmission, ShowOfWhatIsNotTheModulesText) {
    struct Case {
        std::string shown, why;
    };
    for (const auto& c : std::vector<Case>{
             {"", "it is empty (the module is being loaded or unloaded)"},
             {"allow 10.0.0.0/8\n", "it does not begin with \"# refused so far:\""},
             {"# refused so far: not-allowed=x\n", "a refusal count that is not REASON=N: \"not-allowed=x\""},
             {no_refusals + "allow 10.0.0.1/8\n",
              "its rules do not parse: line 2: '10.0.0.1/8' has bits set past its prefix: the network "
              "is 10.0.0.0/8; a single address needs no prefix"},
         }) {
        put(params + "/admission", c.shown);
        auto r = run({"admission"});
        EXPECT_EQ(r.status, exit_failure) << c.shown;
        EXPECT_EQ(r.out, "");
        EXPECT_EQ(r.err, "rtrs-srv: cannot understand " + params + "/admission: " + c.why + "\n");
    }
}

TEST_F(CliAdmission, ParametersFolderFromTheEnvironment) {
    put(params + "/admission", lab_shown);
    RunOptions o;
    o.env["RTRS_SRV_PARAMS"] = params;
    auto r = run_cli({"-j", "admission"}, o);
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out.rfind("{\"allow_list\":true,", 0), 0u) << r.out;
    o.env["RTRS_SRV_PARAMS"] = fake.base() + "/nonexistent";
    EXPECT_EQ(run_cli({"--params-dir", params, "-j", "admission"}, o).status, exit_ok)
        << "the option before the environment";
}

// --- set ------------------------------------------------------------------------

TEST_F(CliAdmission, SetJoinsTheWordsIntoOneText) {
    auto r = run_set({"allow", "10.77.0.0/24", "names=a,b;", "allow", "fd00::/64;", "limit",
                      "rate=5/s"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out,
              "admission rules set:\n"
              "  allow 10.77.0.0/24 names=a,b\n"
              "  allow fd00::/64\n"
              "  limit rate=5/s burst=5\n");
    // The canonical rules, one a line: what the module reads back.
    EXPECT_EQ(written(), "allow 10.77.0.0/24 names=a,b\nallow fd00::/64\nlimit rate=5/s burst=5\n");
    EXPECT_EQ(modprobe_files(), std::vector<std::string>{}) << "no --persist, no file";
    EXPECT_EQ(closed(), "") << "no --close-refused";

    r = run_set({"allow ::ffff:10.9.0.0/112 names=x # the lab; limit sessions=2 paths=0"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(written(), "allow 10.9.0.0/16 names=x\nlimit sessions=2\n");
}

TEST_F(CliAdmission, SetFromAFile) {
    const std::string file = fake.base() + "/rules";
    put(file,
        "# who may connect\n"
        "allow 10.77.0.0/24   names=vm1,vm2\n"
        "\n"
        "allow gid:fe80::2:c9ff:fe00:1\n"
        "limit connections=64 rate=100/m burst=10  # per client address\n");
    auto r = run_set({"-f", file});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    const std::string rules =
        "allow 10.77.0.0/24 names=vm1,vm2\n"
        "allow gid:fe80:0000:0000:0000:0002:c9ff:fe00:0001/128\n"
        "limit connections=64 rate=100/m burst=10\n";
    EXPECT_EQ(written(), rules);
    put(params + "/admission", default_shown);
    r = run_set({"--file=" + file});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(written(), rules);
    r = run_set({"-f", fake.base() + "/nonexistent"});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_EQ(r.err, "rtrs-srv: cannot read " + fake.base() + "/nonexistent: No such file or directory\n");
}

TEST_F(CliAdmission, SetFromStandardInput) {
    RunOptions o;
    o.stdin_text = "allow 10.1.0.0/16\nlimit paths=2\n";
    auto r = run_set({"-"}, o);
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(written(), "allow 10.1.0.0/16\nlimit paths=2\n");
    o.stdin_text = "allow 10.2.0.0/16\n";
    r = run_set({"-f", "-"}, o);
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(written(), "allow 10.2.0.0/16\n");
}

TEST_F(CliAdmission, SetEmptyRulesIsTheDefault) {
    put(params + "/admission", lab_shown);
    auto r = run_set({""});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out, "admission rules set: none (every address may connect, no limit)\n");
    // sysfs does nothing with an empty write: a lone newline.
    EXPECT_EQ(written(), "\n");
    RunOptions o;
    o.stdin_text = "# nothing yet\n";
    put(params + "/admission", lab_shown);
    EXPECT_EQ(run_set({"-"}, o).status, exit_ok);
    EXPECT_EQ(written(), "\n");
}

TEST_F(CliAdmission, BadRulesAreReportedWithTheCoresWordsAndNothingIsWritten) {
    const std::string file = fake.base() + "/bad";
    put(file, "# x\n\nallow 10.0.0.256\n");
    struct Case {
        std::vector<std::string> args;
        std::optional<std::string> stdin_text;
        std::string err;
    };
    for (const auto& c : std::vector<Case>{
             {{"allow 10.0.0.0/33"}, {},
              "bad rules (nothing written): line 1: bad prefix '33' (0 to 32 for IPv4)"},
             {{"allow", "10.77.0.1/16"}, {},
              "bad rules (nothing written): line 1: '10.77.0.1/16' has bits set past its prefix: the "
              "network is 10.77.0.0/16; a single address needs no prefix"},
             {{"allow 10.0.0.0/8; limit rate=5"}, {},
              "bad rules (nothing written): line 2: bad rate '5' (expected R/s or R/m)"},
             {{"limit", "sessions=1;", "limit", "paths=1"}, {},
              "bad rules (nothing written): line 2: a second limit rule (the first is on line 1)"},
             {{"deny 10.0.0.0/8"}, {},
              "bad rules (nothing written): line 1: unknown rule 'deny' (a rule begins with allow or "
              "limit)"},
             {{"allow 10.0.0.0/8 names=a.b"}, {},
              "bad rules (nothing written): line 1: the name 'a.b' can never be a session's (names "
              "with '/' or '.' are refused)"},
             {{"-f", file}, {},
              "bad rules in " + file + " (nothing written): line 3: bad address '10.0.0.256' (expected "
              "IPv4, IPv6, or gid: and a GID in IPv6 notation)"},
             {{"-"}, std::string("allow 10.0.0.0/8\nlimit burst=3\n"),
              "bad rules in standard input (nothing written): line 2: burst= without a rate"},
             {{"-"}, std::string("allow 10.0.0.0/8\0", 17),
              "bad rules in standard input (nothing written): line 1: a NUL byte"},
             // Issue 38's texts: cut at the NUL, the first is one address,
             // the second a limit with no allow-list.
             {{"-"}, std::string("allow 10.77.0.2\0allow 0.0.0.0/0", 31),
              "bad rules in standard input (nothing written): line 1: a NUL byte"},
             {{"-"}, std::string("limit sessions=8\0allow 10.77.0.2", 32),
              "bad rules in standard input (nothing written): line 1: a NUL byte"},
         }) {
        RunOptions o;
        o.stdin_text = c.stdin_text;
        auto args = c.args;
        args.insert(args.begin(), {"--persist", "--close-refused"});
        auto r = run_set(args, o);
        EXPECT_EQ(r.status, exit_usage) << c.err;
        EXPECT_EQ(r.out, "");
        EXPECT_EQ(r.err, "rtrs-srv: " + c.err + "\n");
        EXPECT_EQ(written(), default_shown) << c.err;
        EXPECT_EQ(modprobe_files(), std::vector<std::string>{}) << c.err;
        EXPECT_EQ(closed(), "") << c.err;
    }
}

TEST_F(CliAdmission, RulesTooLongToShowAreRefusedAsTheModuleDoes) {
    // 63 GID entries and one with long names: the core parses them, and
    // the module refuses to keep what would not show whole in its
    // parameter's page, as it shows GIDs (all of their 39 digits).
    std::string text;
    for (int i = 0; i < 63; ++i) {
        char gid[64];
        std::snprintf(gid, sizeof(gid), "gid:fe80::%x", i + 1);
        text += std::string("allow ") + gid + "\n";
    }
    std::string why;
    auto p = admission::parse_rules(text + "allow 10.0.0.0/8 names=" + std::string(63, 'x') + "\n", why);
    ASSERT_TRUE(p) << why;
    EXPECT_EQ(p->allow.size(), 64u);
    text += "allow 10.0.0.0/8 names=";
    for (int i = 0; i < 8; ++i) text += (i ? "," : "") + std::string(63, static_cast<char>('a' + i));
    text += "\n";
    const std::string file = fake.base() + "/long";
    put(file, text);
    auto r = run_set({"-f", file});
    EXPECT_EQ(r.status, exit_usage);
    EXPECT_EQ(r.err.rfind("rtrs-srv: bad rules in " + file +
                              " (nothing written): the rules take more than 3840 bytes when shown (",
                          0),
              0u)
        << r.err;
    EXPECT_NE(r.err.find("): use fewer rules or names, or prefixes that cover several\n"), std::string::npos);
    EXPECT_EQ(written(), default_shown);
}

TEST_F(CliAdmission, AWriteTheModuleRefusesSaysWhereTheReasonIs) {
    // /proc/self/oom_score_adj refuses what is no number with EINVAL, as
    // the module refuses rules its core does not take.
    fs::remove(params + "/admission");
    fs::create_symlink("/proc/self/oom_score_adj", params + "/admission");
    auto r = run_set({"--persist", "--close-refused", "allow 10.77.0.0/24; limit sessions=1"});
    EXPECT_EQ(r.status, exit_failure);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err,
              "rtrs-srv: the module refused the rules (Invalid argument): the kernel log says why "
              "(dmesg: \"rtrs_server: admission rules refused: line N: ...\"); the lines written:\n"
              "  1  allow 10.77.0.0/24\n"
              "  2  limit sessions=1\n");
    EXPECT_EQ(modprobe_files(), std::vector<std::string>{}) << "not kept";
    EXPECT_EQ(closed(), "") << "nothing closed";
}

TEST_F(CliAdmission, SetNeedsTheModuleAndTheRightToWrite) {
    put(params + "/admission", default_shown, fs::perms(0444));
    auto r = run_set({"allow 10.0.0.0/8"});
    EXPECT_EQ(r.status, exit_permission);
    EXPECT_EQ(r.err, "rtrs-srv: cannot write " + params + "/admission: Permission denied" +
                         (geteuid() == 0 ? " (the file is read-only)" : " (writing needs root)") + "\n");
    EXPECT_EQ(written(), default_shown);
    fs::remove(params + "/admission");
    r = run_set({"allow 10.0.0.0/8"});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_NE(r.err.find("has no admission control"), std::string::npos) << r.err;
    fs::remove_all(fake.base() + "/module");
    r = run_set({"--persist", "allow 10.0.0.0/8"});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_NE(r.err.find("is the rtrs-server module loaded?"), std::string::npos) << r.err;
    EXPECT_EQ(modprobe_files(), std::vector<std::string>{}) << "kept only once in effect";
}

// --- --persist ------------------------------------------------------------------

TEST_F(CliAdmission, PersistWritesTheModprobeFileAndTheDefaultRemovesIt) {
    ::umask(077);  // the file is modprobe.d's 0644 whatever the umask
    auto r = run_set({"--persist", "allow 10.77.0.0/24 names=a,b; allow fd00::/64",
                      "# the lab\nlimit sessions=2 rate=10/s burst=20"});
    ::umask(022);
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out,
              "admission rules set:\n"
              "  allow 10.77.0.0/24 names=a,b\n"
              "  allow fd00::/64\n"
              "  limit sessions=2 rate=10/s burst=20\n"
              "kept in " + persisted() + " for the module's next load\n");
    EXPECT_EQ(slurp(persisted()),
              "# Written by rtrs-srv (admission set --persist): the admission rules of\n"
              "# rtrs-server, in effect from the module's load on. rtrs-srv rewrites this\n"
              "# file, and removes it for the default rules; see rtrs-srv(8), ADMISSION.\n"
              "options rtrs_server admission=\"allow 10.77.0.0/24 names=a,b; allow fd00::/64; "
              "limit sessions=2 rate=10/s burst=20\"\n");
    struct stat st;
    ASSERT_EQ(stat(persisted().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    EXPECT_EQ(modprobe_files(), std::vector<std::string>{"rtrs-server-admission.conf"})
        << "no temporary file left";

    // What it keeps is what the module's core reads at load: the same rules.
    const std::string conf = slurp(persisted());
    const std::string quoted = conf.substr(conf.find("admission=\"") + 11);
    std::string why;
    auto again = admission::parse_rules(quoted.substr(0, quoted.rfind('"')), why);
    ASSERT_TRUE(again) << why;
    EXPECT_EQ(admission::parameter_text(*again), written());

    // Replaced whole.
    r = run_set({"--persist", "limit paths=1"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(slurp(persisted()).substr(slurp(persisted()).find("options")),
              "options rtrs_server admission=\"limit paths=1\"\n");

    r = run_set({"--persist", "# none"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out, "admission rules set: none (every address may connect, no limit)\n"
                     "removed " + persisted() + ": the module's next load has the default rules\n");
    EXPECT_FALSE(fs::exists(persisted()));
    EXPECT_EQ(written(), "\n");
    r = run_set({"--persist", ""});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out, "admission rules set: none (every address may connect, no limit)\n"
                     "no " + persisted() + " to remove: the module's next load has the default rules\n");
}

TEST_F(CliAdmission, PersistRefusesANameTheQuotesCannotCarry) {
    auto r = run_set({"--persist", "allow 10.0.0.0/8 names=a\"b"});
    EXPECT_EQ(r.status, exit_usage);
    EXPECT_EQ(r.err, "rtrs-srv: cannot keep these rules in modprobe.d (nothing written): the name "
                     "\"a\"b\" holds a '\"', which a module option's quotes cannot carry\n");
    EXPECT_EQ(written(), default_shown);
    // Without --persist such a name is fine.
    EXPECT_EQ(run_set({"allow 10.0.0.0/8 names=a\"b"}).status, exit_ok);
    EXPECT_EQ(written(), "allow 10.0.0.0/8 names=a\"b\n");
}

TEST_F(CliAdmission, PersistThatFailsSaysTheRulesAreInEffect) {
    fs::remove_all(modprobe);
    auto r = run_set({"--persist", "--close-refused", "allow 10.0.0.0/8"});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_EQ(r.err, "rtrs-srv: the rules are in effect, but not kept: cannot write " + persisted() +
                         ": No such file or directory\n");
    EXPECT_EQ(written(), "allow 10.0.0.0/8\n");
    EXPECT_EQ(closed(), "") << "stopped at the first failure";
    RunOptions o;
    o.env["RTRS_SRV_MODPROBE_DIR"] = fake.base();
    r = run({"admission", "set", "--persist", "allow 10.0.0.0/8"}, o);
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_TRUE(fs::exists(fake.base() + "/rtrs-server-admission.conf")) << "the folder of the environment";
}

// --- closing what the rules refuse -----------------------------------------------------

TEST_F(CliAdmission, CloseRefused) {
    auto r = run_set({"--close-refused", "allow 10.0.0.0/8"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out, "admission rules set:\n  allow 10.0.0.0/8\n"
                     "asked every path the rules in effect refuse to close (the kernel log says how "
                     "many)\n");
    EXPECT_EQ(closed(), "1");
    put(params + "/admission_close", "", fs::perms(0200));
    r = run({"admission", "close-refused"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.out, "asked every path the rules in effect refuse to close (the kernel log says how "
                     "many)\n");
    EXPECT_EQ(closed(), "1");
    EXPECT_EQ(written(), "allow 10.0.0.0/8\n") << "close-refused alone sets no rules";

    put(params + "/admission_close", "", fs::perms(0));
    r = run({"admission", "close-refused"});
    EXPECT_EQ(r.status, exit_permission);
    EXPECT_NE(r.err.find("cannot write " + params + "/admission_close: Permission denied"),
              std::string::npos)
        << r.err;
    fs::remove(params + "/admission_close");
    r = run({"admission", "close-refused"});
    EXPECT_EQ(r.status, exit_not_found);
    EXPECT_NE(r.err.find("no " + params + "/admission_close: this rtrs_server has no admission"),
              std::string::npos)
        << r.err;
}

// --- the command line ---------------------------------------------------------------

TEST_F(CliAdmission, UsageErrors) {
    struct Case {
        std::vector<std::string> args;
        std::string first_line;
    };
    for (const auto& c : std::vector<Case>{
             {{"admission", "frob"},
              "rtrs-srv: unknown admission command \"frob\" (show, set or close-refused)"},
             {{"admission", "show", "x"}, "rtrs-srv: too many arguments to admission"},
             {{"admission", "close-refused", "x"}, "rtrs-srv: too many arguments to admission"},
             {{"admission", "set"},
              "rtrs-srv: admission set needs rules, -f FILE or - (standard input); '' sets the "
              "default (no rules)"},
             {{"admission", "set", "-f", "x", "allow"},
              "rtrs-srv: admission set takes rules or -f FILE, not both"},
             {{"admission", "set", "-f"}, "rtrs-srv: option -f needs a value"},
             {{"admission", "set", "--file="}, "rtrs-srv: -f/--file needs a file"},
             {{"-j", "admission", "set", "allow 10.0.0.0/8"},
              "rtrs-srv: -j/--json and -p/--pretty apply to list, show and admission show only"},
             {{"admission", "--persist"},
              "rtrs-srv: --persist, --close-refused and -f/--file apply to admission set only"},
             {{"admission", "close-refused", "--close-refused"},
              "rtrs-srv: --persist, --close-refused and -f/--file apply to admission set only"},
             {{"list", "--persist"},
              "rtrs-srv: --persist, --close-refused and -f/--file apply to admission set only"},
             {{"admission", "--modprobe-dir", "/tmp"},
              "rtrs-srv: --modprobe-dir applies to admission set only"},
             {{"list", "--params-dir", "/tmp"}, "rtrs-srv: --params-dir applies to admission and metrics only"},
             {{"admission", "--params-dir="}, "rtrs-srv: --params-dir needs a folder"},
             {{"admission", "set", "--modprobe-dir=", "x"}, "rtrs-srv: --modprobe-dir needs a folder"},
         }) {
        auto r = run_cli(c.args);
        std::string joined;
        for (const auto& a : c.args) joined += a + " ";
        EXPECT_EQ(r.status, exit_usage) << joined;
        EXPECT_EQ(r.out, "") << joined;
        EXPECT_EQ(r.err.substr(0, r.err.find('\n')), c.first_line) << joined;
    }
    // The command's usage: all three of its lines.
    EXPECT_EQ(run_cli({"admission", "frob"}).err,
              "rtrs-srv: unknown admission command \"frob\" (show, set or close-refused)\n"
              "Usage: rtrs-srv [-j [-p]] admission [show]\n"
              "       rtrs-srv admission set [--persist] [--close-refused] (RULES... | -f FILE | -)\n"
              "       rtrs-srv admission close-refused\n"
              "Try 'rtrs-srv --help' for more information.\n");
}

// --- metrics --------------------------------------------------------------------

TEST_F(CliAdmission, MetricsCountEveryRefusalByReason) {
    put(params + "/admission", lab_shown);
    auto r = run({"metrics"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.err, "");
    const std::string families =
        "# HELP rtrs_server_admission_refusals_total Connection requests admission control refused "
        "since the module was loaded, by reason (name: a path whose session name is not allowed, at "
        "its info request).\n"
        "# TYPE rtrs_server_admission_refusals_total counter\n"
        "rtrs_server_admission_refusals_total{reason=\"not-allowed\"} 3\n"
        "rtrs_server_admission_refusals_total{reason=\"sessions\"} 1\n"
        "rtrs_server_admission_refusals_total{reason=\"paths\"} 0\n"
        "rtrs_server_admission_refusals_total{reason=\"connections\"} 0\n"
        "rtrs_server_admission_refusals_total{reason=\"rate\"} 7\n"
        "rtrs_server_admission_refusals_total{reason=\"name\"} 2\n"
        "# HELP rtrs_server_admission_allow_list Whether the admission allow-list is on (1: an "
        "address on none of its entries is refused).\n"
        "# TYPE rtrs_server_admission_allow_list gauge\n"
        "rtrs_server_admission_allow_list 1\n"
        "# HELP rtrs_server_admission_allow_entries Entries of the admission allow-list (0: every "
        "address may connect).\n"
        "# TYPE rtrs_server_admission_allow_entries gauge\n"
        "rtrs_server_admission_allow_entries 3\n";
    EXPECT_NE(r.out.find("rtrs_server_loaded 1\n" + families), std::string::npos) << r.out;

    put(params + "/admission", default_shown);
    r = run({"metrics"});
    EXPECT_NE(r.out.find("rtrs_server_admission_allow_list 0\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("rtrs_server_admission_allow_entries 0\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("rtrs_server_admission_refusals_total{reason=\"rate\"} 0\n"), std::string::npos);
}

TEST_F(CliAdmission, MetricsWithoutAdmissionHaveNoneOfIt) {
    fs::remove(params + "/admission");  // upstream's server: parameters, but no admission
    auto r = run({"metrics"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out.find("admission"), std::string::npos) << r.out;
    fs::remove_all(fake.base() + "/module");  // not loaded
    fake.remove_class();
    r = run({"metrics"});
    EXPECT_EQ(r.status, exit_ok) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out.find("admission"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nrtrs_server_loaded 0\n"), std::string::npos) << r.out;
}

TEST_F(CliAdmission, MetricsGoOnWithoutWhatCannotBeUnderstood) {
    put(params + "/admission", "");
    auto r = run({"metrics"});
    EXPECT_EQ(r.status, exit_ok);
    EXPECT_EQ(r.err, "rtrs-srv: warning: no admission metrics: cannot understand " + params +
                         "/admission: it is empty (the module is being loaded or unloaded)\n");
    EXPECT_EQ(r.out.find("admission"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("rtrs_server_loaded 1\n"), std::string::npos);
}
