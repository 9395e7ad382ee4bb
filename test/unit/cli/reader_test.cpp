// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>

#include "fake_sysfs.h"
#include "reader.h"

using namespace rtrs_srv;
using cli_test::FakeSysfs;
using cli_test::PathFiles;

namespace {

const Session* find(const Snapshot& s, const std::string& name) {
    for (const auto& x : s.sessions)
        if (x.name == name) return &x;
    return nullptr;
}

class CliReader : public ::testing::TestWithParam<FakeSysfs::Layout> {
protected:
    FakeSysfs fake{GetParam()};
};

}  // namespace

TEST_P(CliReader, ReadsEveryField) {
    PathFiles f;
    f.stats = "12 49152 3 12288 2\n";
    fake.add_path("s1", "ip:10.77.0.2@ip:10.77.0.1", f);
    Snapshot snap;
    ASSERT_EQ(Reader(fake.root()).read_all(snap), 0);
    ASSERT_EQ(snap.sessions.size(), 1u);
    const Session& s = snap.sessions[0];
    EXPECT_EQ(s.name, "s1");
    EXPECT_EQ(s.problem, "");
    ASSERT_EQ(s.paths.size(), 1u);
    const Path& p = s.paths[0];
    EXPECT_EQ(p.name, "ip:10.77.0.2@ip:10.77.0.1");
    EXPECT_EQ(p.hca_name.value, "rxe0");
    EXPECT_EQ(p.hca_port.value, 1u);
    EXPECT_EQ(p.src_addr.value, "ip:10.77.0.2");
    EXPECT_EQ(p.dst_addr.value, "ip:10.77.0.1");
    EXPECT_EQ(p.stats.value, (Stats{12, 49152, 3, 12288, 2}));
    EXPECT_EQ(p.stats.raw, "12 49152 3 12288 2\n");
    EXPECT_EQ(p.stats.problem, "");
}

TEST_P(CliReader, EmptyClassHasNoSessions) {
    Snapshot snap;
    snap.sessions.resize(3);
    EXPECT_EQ(Reader(fake.root()).read_all(snap), 0);
    EXPECT_TRUE(snap.sessions.empty());
}

TEST_P(CliReader, MissingClassIsENOENT) {
    fake.remove_class();
    Snapshot snap;
    EXPECT_EQ(Reader(fake.root()).read_all(snap), ENOENT);
    EXPECT_FALSE(Reader(fake.root()).read_session("s1"));
}

TEST_P(CliReader, OddNamesAndIpv6AndGid) {
    const std::string odd = "a \"quoted\" name @ 1:2 \\ x";
    fake.add_path(odd, "ip:fd00::2@ip:fd00::1");
    fake.add_path("s:@", "gid:fe80:0000:0000:0000:0002:c903:0010:c0f1@"
                         "gid:fe80:0000:0000:0000:0002:c903:0010:c0f2");
    Snapshot snap;
    ASSERT_EQ(Reader(fake.root()).read_all(snap), 0);
    ASSERT_EQ(snap.sessions.size(), 2u);
    const Session* s = find(snap, odd);
    ASSERT_TRUE(s);
    ASSERT_EQ(s->paths.size(), 1u);
    EXPECT_EQ(s->paths[0].name, "ip:fd00::2@ip:fd00::1");
    EXPECT_EQ(s->paths[0].src_addr.value, "ip:fd00::2");
    EXPECT_EQ(s->paths[0].dst_addr.value, "ip:fd00::1");
    const Session* g = find(snap, "s:@");
    ASSERT_TRUE(g);
    EXPECT_EQ(g->paths[0].src_addr.value, "gid:fe80:0000:0000:0000:0002:c903:0010:c0f1");
    auto one = Reader(fake.root()).read_session(odd);
    ASSERT_TRUE(one);
    EXPECT_EQ(one->name, odd);
}

TEST_P(CliReader, SessionsAndPathsAreSorted) {
    fake.add_path("b", "ip:10.0.0.3@ip:10.0.0.1");
    fake.add_path("b", "ip:10.0.0.2@ip:10.0.0.1");
    fake.add_path("a", "ip:10.0.0.9@ip:10.0.0.1");
    Snapshot snap;
    ASSERT_EQ(Reader(fake.root()).read_all(snap), 0);
    ASSERT_EQ(snap.sessions.size(), 2u);
    EXPECT_EQ(snap.sessions[0].name, "a");
    EXPECT_EQ(snap.sessions[1].name, "b");
    ASSERT_EQ(snap.sessions[1].paths.size(), 2u);
    EXPECT_EQ(snap.sessions[1].paths[0].name, "ip:10.0.0.2@ip:10.0.0.1");
    EXPECT_EQ(snap.sessions[1].paths[1].name, "ip:10.0.0.3@ip:10.0.0.1");
}

TEST_P(CliReader, UpstreamStatsHaveNoInflight) {
    PathFiles f;
    f.stats = "5 20480 0 0\n";
    fake.add_path("up", "ip:10.0.0.2@ip:10.0.0.1", f);
    auto s = Reader(fake.root()).read_session("up");
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->paths[0].stats.value);
    EXPECT_FALSE(s->paths[0].stats.value->inflight);
    EXPECT_EQ(s->paths[0].stats.value->read_bytes, 20480u);
}

TEST_P(CliReader, MissingFilesAreAbsentFields) {
    PathFiles f;
    f.hca_name.reset();
    f.stats.reset();
    f.disconnect.reset();
    fake.add_path("s", "ip:10.0.0.2@ip:10.0.0.1", f);
    auto s = Reader(fake.root()).read_session("s");
    ASSERT_TRUE(s);
    ASSERT_EQ(s->paths.size(), 1u);
    const Path& p = s->paths[0];
    EXPECT_FALSE(p.hca_name.value);
    EXPECT_EQ(p.hca_name.problem, "missing");
    EXPECT_FALSE(p.stats.value);
    EXPECT_EQ(p.stats.problem, "missing");
    EXPECT_EQ(p.hca_port.value, 1u);
}

TEST_P(CliReader, GarbageIsInvalidAndKeptRaw) {
    PathFiles f;
    f.hca_port = "one\n";
    f.stats = "garbage\x01\n";
    f.src_addr = "two\nlines\n";
    f.dst_addr = "";
    fake.add_path("s", "ip:10.0.0.2@ip:10.0.0.1", f);
    auto s = Reader(fake.root()).read_session("s");
    ASSERT_TRUE(s);
    const Path& p = s->paths[0];
    EXPECT_FALSE(p.hca_port.value);
    EXPECT_EQ(p.hca_port.problem, "invalid");
    EXPECT_EQ(p.hca_port.raw, "one\n");
    EXPECT_EQ(p.stats.problem, "invalid");
    EXPECT_EQ(p.stats.raw, "garbage\x01\n");
    EXPECT_EQ(p.src_addr.problem, "invalid");
    EXPECT_EQ(p.dst_addr.problem, "invalid");
    EXPECT_EQ(p.hca_name.value, "rxe0");
}

TEST_P(CliReader, AnUnreadableFileGivesItsError) {
    fake.add_path("s", "ip:10.0.0.2@ip:10.0.0.1");
    Reader r(fake.root());
    r.before_read = [](const std::string& f) {
        return f.ends_with("/hca_name") ? EACCES : 0;
    };
    auto s = r.read_session("s");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->paths[0].hca_name.problem, "Permission denied");
    EXPECT_EQ(s->paths[0].hca_port.value, 1u);
}

TEST_P(CliReader, SessionWithoutPathsFolderHasNoPaths) {
    fake.add_session("young");
    std::filesystem::remove(fake.session_dir("young") + "/paths");
    auto s = Reader(fake.root()).read_session("young");
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->paths.empty());
    EXPECT_EQ(s->problem, "");
}

TEST_P(CliReader, UnlistablePathsFolderIsReported) {
    fake.add_path("s", "ip:10.0.0.2@ip:10.0.0.1");
    Reader r(fake.root());
    r.before_read = [](const std::string& f) { return f.ends_with("/s/paths") ? EIO : 0; };
    auto s = r.read_session("s");
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->paths.empty());
    EXPECT_EQ(s->problem, "paths: Input/output error");
}

TEST_P(CliReader, SessionThatDisappearsWhileReadIsLeftOut) {
    fake.add_path("stays", "ip:10.0.0.2@ip:10.0.0.1");
    fake.add_path("goes", "ip:10.0.0.3@ip:10.0.0.1");
    fake.add_path("goes", "ip:10.0.0.4@ip:10.0.0.1");
    Reader r(fake.root());
    // The session is deleted after its class entry was listed, while its
    // second path's attributes are being read.
    r.before_read = [&](const std::string& f) {
        if (f.find("/goes/paths/ip:10.0.0.4@ip:10.0.0.1/src_addr") != std::string::npos)
            fake.remove_session("goes");
        return 0;
    };
    Snapshot snap;
    ASSERT_EQ(r.read_all(snap), 0);
    ASSERT_EQ(snap.sessions.size(), 1u);
    EXPECT_EQ(snap.sessions[0].name, "stays");
    EXPECT_EQ(snap.sessions[0].paths.size(), 1u);
}

TEST_P(CliReader, SessionThatDisappearsBeforeItsPathsAreListedIsLeftOut) {
    fake.add_path("goes", "ip:10.0.0.3@ip:10.0.0.1");
    Reader r(fake.root());
    r.before_read = [&](const std::string& f) {
        if (f.ends_with("/goes/paths")) fake.remove_session("goes");
        return 0;
    };
    Snapshot snap;
    ASSERT_EQ(r.read_all(snap), 0);
    EXPECT_TRUE(snap.sessions.empty());
    fake.add_path("goes", "ip:10.0.0.3@ip:10.0.0.1");
    EXPECT_FALSE(r.read_session("goes"));
}

TEST_P(CliReader, PathThatDisappearsWhileReadIsLeftOut) {
    fake.add_path("s", "ip:10.0.0.2@ip:10.0.0.1");
    fake.add_path("s", "ip:10.0.0.3@ip:10.0.0.1");
    Reader r(fake.root());
    r.before_read = [&](const std::string& f) {
        if (f.ends_with("ip:10.0.0.2@ip:10.0.0.1/stats/rdma"))
            fake.remove_path("s", "ip:10.0.0.2@ip:10.0.0.1");
        return 0;
    };
    auto s = r.read_session("s");
    ASSERT_TRUE(s);
    ASSERT_EQ(s->paths.size(), 1u);
    EXPECT_EQ(s->paths[0].name, "ip:10.0.0.3@ip:10.0.0.1");
}

TEST_P(CliReader, EnodevWhileThePathIsRemovedLeavesItOut) {
    fake.add_path("s", "ip:10.0.0.2@ip:10.0.0.1");
    fake.add_path("s", "ip:10.0.0.3@ip:10.0.0.1");
    Reader r(fake.root());
    // kernfs answers ENODEV for an open file whose kobject is being deleted.
    r.before_read = [&](const std::string& f) {
        if (f.ends_with("ip:10.0.0.3@ip:10.0.0.1/hca_port")) {
            fake.remove_path("s", "ip:10.0.0.3@ip:10.0.0.1");
            return ENODEV;
        }
        return 0;
    };
    auto s = r.read_session("s");
    ASSERT_TRUE(s);
    ASSERT_EQ(s->paths.size(), 1u);
    EXPECT_EQ(s->paths[0].name, "ip:10.0.0.2@ip:10.0.0.1");
}

TEST_P(CliReader, EnodevOnAPathThatStaysIsAFieldError) {
    fake.add_path("s", "ip:10.0.0.2@ip:10.0.0.1");
    Reader r(fake.root());
    r.before_read = [&](const std::string& f) { return f.ends_with("/stats/rdma") ? ENODEV : 0; };
    auto s = r.read_session("s");
    ASSERT_TRUE(s);
    ASSERT_EQ(s->paths.size(), 1u);
    EXPECT_EQ(s->paths[0].stats.problem, "No such device");
}

TEST_P(CliReader, IgnoresWhatIsNotASessionOrPathFolder) {
    fake.add_path("s", "ip:10.0.0.2@ip:10.0.0.1");
    fake.write("stray-file", "x\n");
    fake.write("s/paths/stray-file", "x\n");
    std::filesystem::create_symlink("nowhere", fake.root() + "/dangling");
    Snapshot snap;
    ASSERT_EQ(Reader(fake.root()).read_all(snap), 0);
    ASSERT_EQ(snap.sessions.size(), 1u);
    EXPECT_EQ(snap.sessions[0].paths.size(), 1u);
}

TEST_P(CliReader, RefusesNamesThatAreNotOneEntry) {
    fake.add_path("s", "ip:10.0.0.2@ip:10.0.0.1");
    Reader r(fake.root());
    for (const char* bad : {"", ".", "..", "s/paths", "../rtrs-server/s"}) {
        EXPECT_FALSE(r.read_session(bad)) << bad;
        EXPECT_FALSE(r.path_names(bad)) << bad;
    }
    auto names = r.path_names("s");
    ASSERT_TRUE(names);
    EXPECT_EQ(*names, std::vector<std::string>{"ip:10.0.0.2@ip:10.0.0.1"});
}

INSTANTIATE_TEST_SUITE_P(Layouts, CliReader,
                         ::testing::Values(FakeSysfs::Layout::links, FakeSysfs::Layout::folders),
                         [](const auto& info) {
                             return info.param == FakeSysfs::Layout::links ? "ClassLinks"
                                                                            : "Folders";
                         });
