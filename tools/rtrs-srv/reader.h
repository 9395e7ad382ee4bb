// SPDX-License-Identifier: GPL-2.0
// Reads /sys/class/rtrs-server (or a tree laid out like it) into the model.
// Sessions and paths come and go while they are read: one that disappears
// between being listed and being read is left out, as if it had gone a
// moment earlier, rather than shown half-read or reported as an error.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "model.h"

namespace rtrs_srv {

inline constexpr const char* default_sysfs_root = "/sys/class/rtrs-server";
// Where rtrs-server keeps what is not ABI (the latency histograms).
inline constexpr const char* default_debugfs_root = "/sys/kernel/debug/rtrs-server";

class Reader {
public:
    explicit Reader(std::string root) : root_(std::move(root)) {}

    const std::string& root() const { return root_; }

    // <debugfs_root>/<session>/<path>/latency is read into Path::latency.
    std::string debugfs_root = default_debugfs_root;

    // Every session. 0, or the errno of listing the class folder itself
    // (ENOENT: the module is not loaded).
    int read_all(Snapshot& out) const;

    // One session; nullopt when there is no such session (or it went away
    // while being read).
    std::optional<Session> read_session(const std::string& name) const;

    // Only the names of the paths of one session, without reading them;
    // nullopt when the session does not exist.
    std::optional<std::vector<std::string>> path_names(const std::string& session) const;

    std::string session_dir(const std::string& session) const;
    std::string path_dir(const std::string& session, const std::string& path) const;

    // Called with each file or folder just before it is read or listed;
    // tests use it to make things disappear at the worst moment. A non-zero
    // return is taken as the errno of that read, which is then not done.
    std::function<int(const std::string&)> before_read;

private:
    int hook(const std::string& p) const { return before_read ? before_read(p) : 0; }
    int list(const std::string& dir, std::vector<std::string>& names) const;
    // 0 with the path read, or ENOENT when it went away.
    int read_path(const std::string& session, const std::string& dir, Path& out) const;

    std::string root_;
};

// A session or path name as given on the command line names an entry of
// its folder only if it is a single, real component.
bool is_valid_name(const std::string& name);

}  // namespace rtrs_srv
