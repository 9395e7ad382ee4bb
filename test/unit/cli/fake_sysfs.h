// SPDX-License-Identifier: GPL-2.0
// Builds fake /sys/class/rtrs-server trees in a temporary folder for the
// rtrs-srv tests: sessions (as folders, or as symbolic links into a fake
// devices folder as the real class has them), their paths and each path's
// files, with any content and mode. Removed with the object.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>

namespace cli_test {

// The files of one path; nullopt leaves a file out. The addresses default
// to the two halves of the path's name.
struct PathFiles {
    std::optional<std::string> hca_name = "rxe0\n";
    std::optional<std::string> hca_port = "1\n";
    std::optional<std::string> src_addr;
    std::optional<std::string> dst_addr;
    std::optional<std::string> disconnect = "Usage: echo 1 > disconnect\n";
    std::optional<std::string> stats = "0 0 0 0 0\n";
};

class FakeSysfs {
public:
    enum class Layout {
        links,    // class/rtrs-server/<s> -> ../../devices/virtual/rtrs-server/<s>
        folders,  // class/rtrs-server/<s>/ is the session's folder itself
    };

    explicit FakeSysfs(Layout layout = Layout::links);
    ~FakeSysfs();
    FakeSysfs(const FakeSysfs&) = delete;
    FakeSysfs& operator=(const FakeSysfs&) = delete;

    // The class folder: what --sysfs-root takes.
    const std::string& root() const { return root_; }
    // The temporary folder everything is in.
    const std::string& base() const { return base_; }

    // Adds a session with an empty paths/ folder; returns its real folder.
    std::string add_session(const std::string& name);
    // Adds a path (and its session if needed); returns the path's folder.
    std::string add_path(const std::string& session, const std::string& path,
                         const PathFiles& files = {});

    // `rel` is relative to the class folder, e.g. "s/paths/a@b/hca_port".
    void write(const std::string& rel, const std::string& content, mode_t mode = 0644) const;
    std::string read(const std::string& rel) const;
    bool exists(const std::string& rel) const;

    // Removes a session as the kernel does: its folder and its class link.
    void remove_session(const std::string& name) const;
    // Removes one path's folder.
    void remove_path(const std::string& session, const std::string& path) const;

    std::string session_dir(const std::string& name) const;  // the real one
    std::string path_dir(const std::string& session, const std::string& path) const;

    // The fake debugfs folder of rtrs-server (what --debugfs-root takes).
    std::string debugfs_root() const { return base_ + "/debug/rtrs-server"; }
    // <debugfs_root>/<session>/<path>/latency with this content.
    void add_latency(const std::string& session, const std::string& path,
                     const std::string& content) const;

    // Removes the class folder itself, as unloading the module does.
    void remove_class() const;

private:
    Layout layout_;
    std::string base_;
    std::string root_;
    std::string devices_;
};

}  // namespace cli_test
