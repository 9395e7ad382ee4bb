// SPDX-License-Identifier: GPL-2.0
#include "reader.h"

#include <cerrno>
#include <cstring>

#include "fsio.h"
#include "parse.h"

namespace rtrs_srv {

namespace {

// Whether an error reading an attribute means that its kobject is being
// removed: ENOENT once it is gone, ENODEV while kernfs deactivates it.
bool gone_errno(int err) { return err == ENOENT || err == ENODEV; }

// Reads one attribute into a field; returns the read's errno.
template <class T, class Parse>
int read_field(const std::string& file, Field<T>& field, Parse parse,
               const std::function<int(const std::string&)>& hook) {
    int err = hook ? hook(file) : 0;
    if (!err) err = fsio::read_file(file, field.raw);
    if (err == ENOENT) {
        field.problem = "missing";
    } else if (err) {
        field.problem = std::strerror(err);
    } else if (auto v = parse(field.raw)) {
        field.value = std::move(*v);
    } else {
        field.problem = "invalid";
    }
    return err;
}

}  // namespace

bool is_valid_name(const std::string& name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == name.npos &&
           name.find('\0') == name.npos;
}

std::string Reader::session_dir(const std::string& session) const {
    return fsio::join(root_, session);
}

std::string Reader::path_dir(const std::string& session, const std::string& path) const {
    return fsio::join(fsio::join(session_dir(session), "paths"), path);
}

int Reader::list(const std::string& dir, std::vector<std::string>& names) const {
    names.clear();
    if (int err = hook(dir)) return err;
    return fsio::list_dir(dir, names);
}

int Reader::read_path(const std::string& session, const std::string& dir, Path& p) const {
    const auto& h = before_read;
    int errs[] = {
        read_field(fsio::join(dir, "hca_name"), p.hca_name, parse::line, h),
        read_field(fsio::join(dir, "hca_port"), p.hca_port,
                   [](std::string_view s) -> std::optional<std::uint32_t> {
                       auto v = parse::number(s, UINT32_MAX);
                       if (!v) return std::nullopt;
                       return static_cast<std::uint32_t>(*v);
                   },
                   h),
        read_field(fsio::join(dir, "src_addr"), p.src_addr, parse::line, h),
        read_field(fsio::join(dir, "dst_addr"), p.dst_addr, parse::line, h),
        read_field(fsio::join(dir, "stats/rdma"), p.stats, parse::stats, h),
    };
    for (int err : errs)
        if (gone_errno(err) && !fsio::is_dir(dir)) return ENOENT;
    // Not ABI, and root's only: its absence or an error says nothing of the path.
    if (!debugfs_root.empty())
        read_field(fsio::join(fsio::join(fsio::join(debugfs_root, session), p.name), "latency"),
                   p.latency, parse::latency, h);
    return 0;
}

std::optional<std::vector<std::string>> Reader::path_names(const std::string& session) const {
    if (!is_valid_name(session)) return std::nullopt;
    std::string sdir = session_dir(session);
    if (!fsio::is_dir(sdir)) return std::nullopt;
    std::vector<std::string> names, dirs;
    std::string pdir = fsio::join(sdir, "paths");
    if (list(pdir, names) != 0) {
        if (!fsio::is_dir(sdir)) return std::nullopt;
        return dirs;
    }
    for (auto& n : names)
        if (fsio::is_dir(fsio::join(pdir, n))) dirs.push_back(std::move(n));
    return dirs;
}

std::optional<Session> Reader::read_session(const std::string& name) const {
    if (!is_valid_name(name)) return std::nullopt;
    std::string sdir = session_dir(name);
    if (!fsio::is_dir(sdir)) return std::nullopt;

    Session s;
    s.name = name;
    std::string pdir = fsio::join(sdir, "paths");
    std::vector<std::string> names;
    int err = list(pdir, names);
    if (err) {
        if (!fsio::is_dir(sdir)) return std::nullopt;
        // paths/ is created right after the session's device: absent for a
        // moment, so no paths yet; anything else is worth telling.
        if (err != ENOENT) s.problem = std::string("paths: ") + std::strerror(err);
        return s;
    }
    for (const auto& pname : names) {
        std::string dir = fsio::join(pdir, pname);
        if (!fsio::is_dir(dir)) continue;
        Path p;
        p.name = pname;
        if (read_path(name, dir, p) == ENOENT) continue;  // went away while read
        s.paths.push_back(std::move(p));
    }
    // The session's device is deleted after its last path: if it is gone
    // now, what was read is a leftover of a session that no longer exists.
    if (!fsio::is_dir(sdir)) return std::nullopt;
    return s;
}

int Reader::read_all(Snapshot& out) const {
    out.sessions.clear();
    std::vector<std::string> names;
    if (int err = list(root_, names)) return err;
    for (const auto& n : names) {
        if (auto s = read_session(n)) out.sessions.push_back(std::move(*s));
    }
    return 0;
}

}  // namespace rtrs_srv
