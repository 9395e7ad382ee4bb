// SPDX-License-Identifier: GPL-2.0
// The output of list, show and -j, byte for byte, from models built here.
#include <gtest/gtest.h>

#include "format.h"

using namespace rtrs_srv;

namespace {

Path path(const std::string& name, std::optional<Stats> stats) {
    Path p;
    p.name = name;
    auto at = name.find('@');
    p.hca_name.value = "rxe0";
    p.hca_port.value = 1;
    p.src_addr.value = name.substr(0, at);
    p.dst_addr.value = name.substr(at + 1);
    if (stats)
        p.stats.value = stats;
    else
        p.stats.problem = "missing";
    return p;
}

Snapshot sample() {
    Snapshot snap;
    Session a;
    a.name = "sess \"1\"";
    a.paths.push_back(path("ip:10.77.0.2@ip:10.77.0.1", Stats{12, 49152, 3, 12288, 0}));
    Path up = path("ip:fd00::2@ip:fd00::1", Stats{1048576, 4294967296ull, 1, 1023, std::nullopt});
    up.hca_name.value.reset();
    up.hca_name.problem = "missing";
    a.paths.push_back(up);
    Session b;
    b.name = "bare\nname";
    Session c;
    c.name = "c";
    Path bad = path("ip:10.0.0.2@ip:10.0.0.1", std::nullopt);
    bad.stats.problem = "invalid";
    bad.stats.raw = "garbage\n";
    bad.hca_port.value.reset();
    bad.hca_port.problem = "Permission denied";
    c.paths.push_back(bad);
    snap.sessions = {a, b, c};
    return snap;
}

}  // namespace

TEST(CliFormat, ListTable) {
    EXPECT_EQ(format::list_table(sample()),
              "SESSION     PATH                       HCA     READS              WRITES        INFLIGHT\n"
              "sess \"1\"    ip:10.77.0.2@ip:10.77.0.1  rxe0/1  12 (48.0 KiB)      3 (12.0 KiB)         0\n"
              "sess \"1\"    ip:fd00::2@ip:fd00::1      -/1     1048576 (4.0 GiB)  1 (1023 B)           -\n"
              "bare\\nname  -                          -       -                  -                    -\n"
              "c           ip:10.0.0.2@ip:10.0.0.1    rxe0/-  -                  -                    -\n");
}

TEST(CliFormat, ListTableOfEmptyClassIsTheHeader) {
    EXPECT_EQ(format::list_table(Snapshot{}),
              "SESSION  PATH  HCA  READS  WRITES  INFLIGHT\n");
}

TEST(CliFormat, ShowText) {
    auto snap = sample();
    EXPECT_EQ(format::show_text(snap.sessions[0]),
              "session: sess \"1\"\n"
              "paths:   2\n"
              "\n"
              "path: ip:10.77.0.2@ip:10.77.0.1\n"
              "    hca_name:     rxe0\n"
              "    hca_port:     1\n"
              "    src_addr:     ip:10.77.0.2 (client)\n"
              "    dst_addr:     ip:10.77.0.1 (server)\n"
              "    reads:        12 requests, 49152 bytes (48.0 KiB)\n"
              "    writes:       3 requests, 12288 bytes (12.0 KiB)\n"
              "    inflight:     0\n"
              "\n"
              "path: ip:fd00::2@ip:fd00::1\n"
              "    hca_name:     - (missing)\n"
              "    hca_port:     1\n"
              "    src_addr:     ip:fd00::2 (client)\n"
              "    dst_addr:     ip:fd00::1 (server)\n"
              "    reads:        1048576 requests, 4294967296 bytes (4.0 GiB)\n"
              "    writes:       1 request, 1023 bytes (1023 B)\n"
              "    inflight:     - (not reported by this server)\n");
    EXPECT_EQ(format::show_text(snap.sessions[1]), "session: bare\\nname\npaths:   0\n");
    EXPECT_EQ(format::show_text(snap.sessions[2]),
              "session: c\n"
              "paths:   1\n"
              "\n"
              "path: ip:10.0.0.2@ip:10.0.0.1\n"
              "    hca_name:     rxe0\n"
              "    hca_port:     - (Permission denied)\n"
              "    src_addr:     ip:10.0.0.2 (client)\n"
              "    dst_addr:     ip:10.0.0.1 (server)\n"
              "    reads:        - (invalid: \"garbage\\n\")\n"
              "    writes:       - (invalid: \"garbage\\n\")\n"
              "    inflight:     - (invalid: \"garbage\\n\")\n");
}

TEST(CliFormat, ShowTextCutsLongGarbage) {
    Session s;
    s.name = "s";
    Path p = path("a@b", std::nullopt);
    p.stats.problem = "invalid";
    p.stats.raw = std::string(100, 'x');
    s.paths.push_back(p);
    auto text = format::show_text(s);
    EXPECT_NE(text.find("reads:        - (invalid: \"" + std::string(60, 'x') + "\"...)\n"),
              std::string::npos)
        << text;
}

TEST(CliFormat, ShowTextReportsAnUnreadablePathsFolder) {
    Session s;
    s.name = "s";
    s.problem = "paths: Permission denied";
    EXPECT_EQ(format::show_text(s), "session: s\npaths:   0\nerror:   paths: Permission denied\n");
}

TEST(CliFormat, JsonOfList) {
    EXPECT_EQ(format::json(sample().sessions, false, false),
              R"([{"session":"sess \"1\"","paths":[)"
              R"({"path":"ip:10.77.0.2@ip:10.77.0.1","hca_name":"rxe0","hca_port":1,)"
              R"("src_addr":"ip:10.77.0.2","dst_addr":"ip:10.77.0.1","read_cnt":12,)"
              R"("read_bytes":49152,"write_cnt":3,"write_bytes":12288,"inflight":0},)"
              R"({"path":"ip:fd00::2@ip:fd00::1","hca_name":null,"hca_port":1,)"
              R"("src_addr":"ip:fd00::2","dst_addr":"ip:fd00::1","read_cnt":1048576,)"
              R"("read_bytes":4294967296,"write_cnt":1,"write_bytes":1023,"inflight":null}]},)"
              R"({"session":"bare\nname","paths":[]},)"
              R"({"session":"c","paths":[{"path":"ip:10.0.0.2@ip:10.0.0.1","hca_name":"rxe0",)"
              R"("hca_port":null,"src_addr":"ip:10.0.0.2","dst_addr":"ip:10.0.0.1",)"
              R"("read_cnt":null,"read_bytes":null,"write_cnt":null,"write_bytes":null,)"
              R"("inflight":null}]}])"
              "\n");
}

TEST(CliFormat, JsonOfShowHasErrors) {
    auto snap = sample();
    EXPECT_EQ(format::json({snap.sessions[2]}, false, true),
              R"([{"session":"c","paths":[{"path":"ip:10.0.0.2@ip:10.0.0.1","hca_name":"rxe0",)"
              R"("hca_port":null,"src_addr":"ip:10.0.0.2","dst_addr":"ip:10.0.0.1",)"
              R"("read_cnt":null,"read_bytes":null,"write_cnt":null,"write_bytes":null,)"
              R"("inflight":null,"errors":{"hca_port":"Permission denied",)"
              R"("stats/rdma":"invalid"}}],"error":null}])"
              "\n");
}

TEST(CliFormat, JsonOfNothing) {
    EXPECT_EQ(format::json({}, false, false), "[]\n");
    EXPECT_EQ(format::json({}, true, false), "[]\n");
}

TEST(CliFormat, PrettyJson) {
    Session s;
    s.name = "s";
    s.paths.push_back(path("a@b", Stats{1, 2, 3, 4, 5}));
    EXPECT_EQ(format::json({s}, true, false), R"([
    {
        "session": "s",
        "paths": [
            {
                "path": "a@b",
                "hca_name": "rxe0",
                "hca_port": 1,
                "src_addr": "a",
                "dst_addr": "b",
                "read_cnt": 1,
                "read_bytes": 2,
                "write_cnt": 3,
                "write_bytes": 4,
                "inflight": 5
            }
        ]
    }
]
)");
}

TEST(CliFormat, WatchTable) {
    std::vector<PathRates> r(2);
    r[0].session = "s";
    r[0].path = "a@b";
    r[0].reads = 10;
    r[0].read_bytes = 40960;
    r[0].writes = 0.5;
    r[0].write_bytes = 512;
    r[0].inflight = 3;
    r[1].session = "new";
    r[1].path = "c@d";
    EXPECT_EQ(format::watch_table(r),
              "SESSION  PATH  READS/S    READ-B/S  WRITES/S  WRITE-B/S  INFLIGHT\n"
              "s        a@b      10.0  40.0 KiB/s       0.5    512 B/s         3\n"
              "new      c@d         -           -         -          -         -\n");
}
