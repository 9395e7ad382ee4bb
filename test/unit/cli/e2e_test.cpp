// SPDX-License-Identifier: GPL-2.0
// End to end: runs the built rtrs-srv binary (RTRS_SRV_BINARY) against fake
// trees and checks its standard output, standard error and exit status.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_sysfs.h"

extern char** environ;

using cli_test::FakeSysfs;
using cli_test::PathFiles;

namespace {

struct Result {
    int status = -1;
    std::string out, err;
};

// Runs the binary with `args`, with `env` added to the environment and
// RTRS_SRV_SYSFS removed unless given there; standard input from
// `stdin_file` (if not empty).
Result run(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
           const std::string& stdin_file = "") {
    std::vector<std::string> envs;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "RTRS_SRV_SYSFS=", 15) != 0) envs.emplace_back(*e);
    for (const auto& e : env) envs.push_back(e);
    std::vector<char*> argv{const_cast<char*>(RTRS_SRV_BINARY)}, envp;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : envs) envp.push_back(e.data());
    envp.push_back(nullptr);

    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) return {};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    if (!stdin_file.empty()) posix_spawn_file_actions_addopen(&fa, 0, stdin_file.c_str(), O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, RTRS_SRV_BINARY, &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    Result r;
    if (rc != 0) {
        close(out[0]);
        close(err[0]);
        r.err = std::string("posix_spawn: ") + std::strerror(rc);
        return r;
    }
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* dst[2] = {&r.out, &r.err};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[4096];
            ssize_t n = read(fds[i].fd, buf, sizeof(buf));
            if (n > 0) {
                dst[i]->append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    return r;
}

class CliE2e : public ::testing::Test {
protected:
    void SetUp() override {
        PathFiles a;
        a.stats = "12 49152 3 12288 0\n";
        fake.add_path("backup 1", "ip:10.77.0.2@ip:10.77.0.1", a);
        PathFiles v6;
        v6.stats = "1048576 4294967296 524288 2147483648 7\n";
        v6.hca_name = "rxe1\n";
        fake.add_path("backup 1", "ip:fd00::2@ip:fd00::1", v6);
        PathFiles up;
        up.stats = "5 20480 0 0\n";
        up.hca_name = "mlx5_0\n";
        fake.add_path("legacy", "ip:10.77.0.3@ip:10.77.0.1", up);
    }
    std::vector<std::string> with_root(std::vector<std::string> args) {
        args.insert(args.begin(), {"--sysfs-root", fake.root()});
        return args;
    }
    FakeSysfs fake;
};

const char* table =
    "SESSION   PATH                       HCA       READS              WRITES            INFLIGHT\n"
    "backup 1  ip:10.77.0.2@ip:10.77.0.1  rxe0/1    12 (48.0 KiB)      3 (12.0 KiB)             0\n"
    "backup 1  ip:fd00::2@ip:fd00::1      rxe1/1    1048576 (4.0 GiB)  524288 (2.0 GiB)         7\n"
    "legacy    ip:10.77.0.3@ip:10.77.0.1  mlx5_0/1  5 (20.0 KiB)       0 (0 B)                  -\n";

}  // namespace

TEST_F(CliE2e, List) {
    auto r = run(with_root({"list"}));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, table);
}

TEST_F(CliE2e, ListWithTheRootFromTheEnvironment) {
    auto r = run({"list"}, {"RTRS_SRV_SYSFS=" + fake.root()});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, table);
}

TEST_F(CliE2e, ListJson) {
    auto r = run(with_root({"-j", "list"}));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out,
              R"([{"session":"backup 1","paths":[{"path":"ip:10.77.0.2@ip:10.77.0.1",)"
              R"("hca_name":"rxe0","hca_port":1,"src_addr":"ip:10.77.0.2","dst_addr":"ip:10.77.0.1",)"
              R"("read_cnt":12,"read_bytes":49152,"write_cnt":3,"write_bytes":12288,"inflight":0},)"
              R"({"path":"ip:fd00::2@ip:fd00::1","hca_name":"rxe1","hca_port":1,)"
              R"("src_addr":"ip:fd00::2","dst_addr":"ip:fd00::1","read_cnt":1048576,)"
              R"("read_bytes":4294967296,"write_cnt":524288,"write_bytes":2147483648,"inflight":7}]},)"
              R"({"session":"legacy","paths":[{"path":"ip:10.77.0.3@ip:10.77.0.1",)"
              R"("hca_name":"mlx5_0","hca_port":1,"src_addr":"ip:10.77.0.3","dst_addr":"ip:10.77.0.1",)"
              R"("read_cnt":5,"read_bytes":20480,"write_cnt":0,"write_bytes":0,"inflight":null}]}])"
              "\n");
}

TEST_F(CliE2e, ShowAndShowJson) {
    auto r = run(with_root({"show", "legacy"}));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out,
              "session: legacy\n"
              "paths:   1\n"
              "\n"
              "path: ip:10.77.0.3@ip:10.77.0.1\n"
              "    hca_name:     mlx5_0\n"
              "    hca_port:     1\n"
              "    src_addr:     ip:10.77.0.3 (client)\n"
              "    dst_addr:     ip:10.77.0.1 (server)\n"
              "    reads:        5 requests, 20480 bytes (20.0 KiB)\n"
              "    writes:       0 requests, 0 bytes (0 B)\n"
              "    inflight:     - (not reported by this server)\n");
    auto j = run(with_root({"show", "legacy", "--json", "--pretty"}));
    EXPECT_EQ(j.status, 0);
    EXPECT_EQ(j.out, R"([
    {
        "session": "legacy",
        "paths": [
            {
                "path": "ip:10.77.0.3@ip:10.77.0.1",
                "hca_name": "mlx5_0",
                "hca_port": 1,
                "src_addr": "ip:10.77.0.3",
                "dst_addr": "ip:10.77.0.1",
                "read_cnt": 5,
                "read_bytes": 20480,
                "write_cnt": 0,
                "write_bytes": 0,
                "inflight": null,
                "errors": {}
            }
        ],
        "error": null
    }
]
)");
}

TEST_F(CliE2e, OddNameInJsonAndTable) {
    const std::string odd = "q\"b\\s\x01 @:x";
    fake.add_path(odd, "gid:fe80::1@gid:fe80::2");
    auto j = run(with_root({"show", odd, "-j"}));
    EXPECT_EQ(j.status, 0) << j.err;
    const std::string start = R"([{"session":"q\"b\\s\u0001 @:x","paths":)";
    EXPECT_EQ(j.out.substr(0, start.size()), start);
    auto t = run(with_root({"list"}));
    EXPECT_NE(t.out.find("q\"b\\\\s\\x01 @:x  gid:fe80::1@gid:fe80::2"), std::string::npos) << t.out;
}

TEST_F(CliE2e, EmptyAndMissingClass) {
    FakeSysfs empty;
    auto r = run({"--sysfs-root", empty.root(), "list"});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "SESSION  PATH  HCA  READS  WRITES  INFLIGHT\n");
    auto m = run({"--sysfs-root", empty.base() + "/nothing", "list"});
    EXPECT_EQ(m.status, 3);
    EXPECT_EQ(m.out, "");
    EXPECT_EQ(m.err, "rtrs-srv: " + empty.base() +
                         "/nothing: No such file or directory (is the rtrs-server module loaded?)\n");
}

TEST_F(CliE2e, DisconnectAndResetStats) {
    auto d = run(with_root({"disconnect", "backup 1", "ip:fd00::2@ip:fd00::1"}));
    EXPECT_EQ(d.status, 0) << d.err;
    EXPECT_EQ(d.out, "disconnecting path \"ip:fd00::2@ip:fd00::1\" of session \"backup 1\"\n");
    EXPECT_EQ(fake.read("backup 1/paths/ip:fd00::2@ip:fd00::1/disconnect"), "1");
    auto s = run(with_root({"reset-stats", "legacy"}));
    EXPECT_EQ(s.status, 0) << s.err;
    EXPECT_EQ(fake.read("legacy/paths/ip:10.77.0.3@ip:10.77.0.1/stats/rdma"), "1");
}

TEST_F(CliE2e, ErrorExits) {
    auto nosess = run(with_root({"disconnect", "nope", "a@b"}));
    EXPECT_EQ(nosess.status, 3);
    EXPECT_EQ(nosess.err, "rtrs-srv: no session \"nope\" in " + fake.root() + "\n");
    auto nopath = run(with_root({"reset-stats", "legacy", "a@b"}));
    EXPECT_EQ(nopath.status, 3);
    fake.write("legacy/paths/ip:10.77.0.3@ip:10.77.0.1/disconnect", "Usage\n", 0444);
    auto ro = run(with_root({"disconnect", "legacy", "ip:10.77.0.3@ip:10.77.0.1"}));
    EXPECT_EQ(ro.status, 4);
    EXPECT_NE(ro.err.find(": Permission denied ("), std::string::npos) << ro.err;
    std::string ctl = fake.path_dir("backup 1", "ip:10.77.0.2@ip:10.77.0.1") + "/stats/rdma";
    std::filesystem::remove(ctl);
    std::filesystem::create_symlink("/dev/full", ctl);
    auto refused = run(with_root({"reset-stats", "backup 1", "ip:10.77.0.2@ip:10.77.0.1"}));
    EXPECT_EQ(refused.status, 1);
    EXPECT_NE(refused.err.find("No space left on device"), std::string::npos) << refused.err;
    auto usage = run(with_root({"show"}));
    EXPECT_EQ(usage.status, 2);
}

TEST_F(CliE2e, WatchBoundedByCount) {
    auto r = run(with_root({"watch", "--interval", "0.05", "--count", "2"}));
    EXPECT_EQ(r.status, 0) << r.err;
    const std::string t =
        "SESSION   PATH                       READS/S  READ-B/S  WRITES/S  WRITE-B/S  INFLIGHT\n"
        "backup 1  ip:10.77.0.2@ip:10.77.0.1      0.0     0 B/s       0.0      0 B/s         0\n"
        "backup 1  ip:fd00::2@ip:fd00::1          0.0     0 B/s       0.0      0 B/s         7\n"
        "legacy    ip:10.77.0.3@ip:10.77.0.1      0.0     0 B/s       0.0      0 B/s         -\n";
    EXPECT_EQ(r.out, t + "\n" + t);
}

TEST_F(CliE2e, HelpAndVersion) {
    auto h = run({"--help"});
    EXPECT_EQ(h.status, 0);
    EXPECT_NE(h.out.find("Exit status:"), std::string::npos);
    auto v = run({"--version"});
    EXPECT_EQ(v.status, 0);
    EXPECT_EQ(v.out, "rtrs-srv " RTRS_SRV_VERSION "\n");
}

TEST_F(CliE2e, AdmissionSetFromStandardInputThenShow) {
    // The core's parser is linked into the binary, and - reads its stdin.
    const std::string params = fake.base() + "/parameters";
    std::filesystem::create_directories(params);
    {
        std::ofstream(params + "/admission")
            << "# refused so far: not-allowed=0 sessions=0 paths=0 connections=0 rate=0 name=0\n"
               "# no allow rule: every address may connect\n# no limit\n";
        std::ofstream(fake.base() + "/rules") << "allow fd00::/64 names=vm1 # the lab\nlimit rate=5/s\n";
        std::ofstream(fake.base() + "/bad") << "allow fd00::1/64\n";
    }
    auto bad = run({"admission", "set", "-"}, {"RTRS_SRV_PARAMS=" + params}, fake.base() + "/bad");
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(bad.err, "rtrs-srv: bad rules in standard input (nothing written): line 1: 'fd00::1/64' has "
                       "bits set past its prefix: the network is fd00::/64; a single address needs no "
                       "prefix\n");
    auto set = run({"admission", "set", "-"}, {"RTRS_SRV_PARAMS=" + params}, fake.base() + "/rules");
    EXPECT_EQ(set.status, 0) << set.err;
    EXPECT_EQ(set.out, "admission rules set:\n  allow fd00::/64 names=vm1\n  limit rate=5/s burst=5\n");
    std::ifstream in(params + "/admission");
    std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(written, "allow fd00::/64 names=vm1\nlimit rate=5/s burst=5\n");
    // What the module would show then: the refusals, then those rules.
    {
        std::ofstream(params + "/admission")
            << "# refused so far: not-allowed=1 sessions=0 paths=0 connections=0 rate=4 name=0\n" + written;
    }
    auto show = run({"--params-dir", params, "-j", "admission"});
    EXPECT_EQ(show.status, 0) << show.err;
    EXPECT_EQ(show.out,
              "{\"allow_list\":true,\"allow\":[{\"network\":\"fd00::/64\",\"family\":\"ipv6\","
              "\"names\":[\"vm1\"]}],\"limits\":{\"sessions\":null,\"paths\":null,\"connections\":null,"
              "\"rate\":\"5/s\",\"burst\":5},\"refused\":{\"not-allowed\":1,\"sessions\":0,\"paths\":0,"
              "\"connections\":0,\"rate\":4,\"name\":0},\"rules\":[\"allow fd00::/64 names=vm1\","
              "\"limit rate=5/s burst=5\"]}\n");
}
