// SPDX-License-Identifier: GPL-2.0
#include "fake_sysfs.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace cli_test {

FakeSysfs::FakeSysfs(Layout layout) : layout_(layout) {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/rtrs-srv-test.XXXXXX";
    if (!mkdtemp(templ.data())) throw std::runtime_error("mkdtemp " + templ);
    base_ = templ;
    root_ = base_ + "/class/rtrs-server";
    devices_ = base_ + "/devices/virtual/rtrs-server";
    fs::create_directories(root_);
    fs::create_directories(devices_);
}

FakeSysfs::~FakeSysfs() {
    std::error_code ec;
    // Tests make files read-only; a folder without write bits would stop
    // removal for a non-root user.
    for (auto it = fs::recursive_directory_iterator(base_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_directory(ec) && !it->is_symlink(ec))
            fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::remove_all(base_, ec);
}

void FakeSysfs::add_latency(const std::string& session, const std::string& path,
                            const std::string& content) const {
    std::string dir = debugfs_root() + "/" + session + "/" + path;
    fs::create_directories(dir);
    std::ofstream(dir + "/latency") << content;
}

std::string FakeSysfs::session_dir(const std::string& name) const {
    return (layout_ == Layout::links ? devices_ : root_) + "/" + name;
}

std::string FakeSysfs::path_dir(const std::string& session, const std::string& path) const {
    return session_dir(session) + "/paths/" + path;
}

std::string FakeSysfs::add_session(const std::string& name) {
    std::string dir = session_dir(name);
    fs::create_directories(dir + "/paths");
    if (layout_ == Layout::links) {
        fs::path link = root_ + "/" + name;
        if (!fs::is_symlink(link))
            fs::create_directory_symlink("../../devices/virtual/rtrs-server/" + name, link);
    }
    return dir;
}

std::string FakeSysfs::add_path(const std::string& session, const std::string& path,
                                const PathFiles& files) {
    add_session(session);
    std::string dir = path_dir(session, path);
    fs::create_directories(dir + "/stats");
    std::string rel = session + "/paths/" + path + "/";
    auto at = path.find('@');
    std::string src = path.substr(0, at), dst = at == path.npos ? "" : path.substr(at + 1);
    auto put = [&](const char* name, const std::optional<std::string>& v, mode_t mode) {
        if (v) write(rel + name, *v, mode);
    };
    put("hca_name", files.hca_name, 0444);
    put("hca_port", files.hca_port, 0444);
    put("src_addr", files.src_addr ? files.src_addr : std::optional(src + "\n"), 0444);
    put("dst_addr", files.dst_addr ? files.dst_addr : std::optional(dst + "\n"), 0444);
    put("disconnect", files.disconnect, 0644);
    put("stats/rdma", files.stats, 0644);
    return dir;
}

void FakeSysfs::write(const std::string& rel, const std::string& content, mode_t mode) const {
    fs::path p = root_ + "/" + rel;
    fs::create_directories(p.parent_path());
    std::error_code ec;
    if (fs::exists(p, ec)) fs::permissions(p, fs::perms::owner_write, fs::perm_options::add, ec);
    {
        std::ofstream f(p, std::ios::binary | std::ios::trunc);
        if (!f) throw std::runtime_error("cannot write " + p.string());
        f << content;
    }
    if (chmod(p.c_str(), mode) != 0) throw std::runtime_error("chmod " + p.string());
}

std::string FakeSysfs::read(const std::string& rel) const {
    std::ifstream f(root_ + "/" + rel, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

bool FakeSysfs::exists(const std::string& rel) const {
    std::error_code ec;
    return fs::exists(root_ + "/" + rel, ec);
}

void FakeSysfs::remove_session(const std::string& name) const {
    std::error_code ec;
    fs::remove_all(session_dir(name), ec);
    fs::remove(root_ + "/" + name, ec);
}

void FakeSysfs::remove_path(const std::string& session, const std::string& path) const {
    std::error_code ec;
    fs::remove_all(path_dir(session, path), ec);
}

void FakeSysfs::remove_class() const {
    std::error_code ec;
    fs::remove_all(root_, ec);
}

}  // namespace cli_test
