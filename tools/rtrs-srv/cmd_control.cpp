// SPDX-License-Identifier: GPL-2.0
// `disconnect` and `reset-stats`: write "1" to a path's disconnect or
// stats/rdma file, and turn what can go wrong into a message and a status.
#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "commands.h"
#include "exit_codes.h"
#include "fsio.h"
#include "table.h"

namespace rtrs_srv::cmd {

namespace {

std::string path_of(const std::string& session, const std::string& path) {
    return "path " + quoted(path) + " of session " + quoted(session);
}

// Writes "1" to one control file; 0 or an exit status, with its message.
// With `went_away`, a path that went away meanwhile is no error (it took its
// counters with it): *went_away is set and 0 returned.
int write_one(const Context& ctx, const std::string& session, const std::string& path,
              const char* file, bool* went_away = nullptr) {
    std::string f = fsio::join(ctx.reader.path_dir(session, path), file);
    int err = fsio::write_file(f, "1");
    const std::string shown = printable(f);
    if (err == 0) return exit_ok;
    switch (err) {
    case ENOENT:
    case ENODEV:
        if (fsio::is_dir(ctx.reader.path_dir(session, path))) {
            ctx.error("cannot write " + shown + ": " + std::strerror(err));
            return exit_not_found;
        }
        if (went_away) {
            *went_away = true;
            return exit_ok;
        }
        ctx.error(path_of(session, path) + " went away (" + std::strerror(err) + ")");
        return exit_not_found;
    case EACCES:
    case EPERM:
    case EROFS:
        // root may write any file but sysfs's read-only ones (and fsio's
        // check of the write bits says the same of a fake tree's).
        ctx.error("cannot write " + shown + ": " + std::strerror(err) +
                  (geteuid() == 0 ? " (the file is read-only)" : " (writing needs root)"));
        return exit_permission;
    default:
        ctx.error("the kernel refused to write \"1\" to " + shown + ": " + std::strerror(err));
        return exit_failure;
    }
}

// The session's path names, or an exit status with its message.
int find_paths(const Context& ctx, const std::string& session, std::vector<std::string>& paths) {
    auto names = ctx.reader.path_names(session);
    if (!names) return no_session(ctx, session);
    paths = std::move(*names);
    return exit_ok;
}

int require_path(const Context& ctx, const std::string& session, const std::string& path,
                 const std::vector<std::string>& paths) {
    for (const auto& p : paths)
        if (p == path) return exit_ok;
    std::string msg = "session " + quoted(session) + " has no path " + quoted(path);
    if (paths.empty()) {
        msg += " (it has no paths)";
    } else {
        msg += "; its paths:";
        for (const auto& p : paths) msg += " " + quoted(p);
    }
    ctx.error(msg);
    return exit_not_found;
}

}  // namespace

int disconnect(Context& ctx, const std::string& session, const std::string& path) {
    std::vector<std::string> paths;
    if (int rc = find_paths(ctx, session, paths)) return rc;
    if (int rc = require_path(ctx, session, path, paths)) return rc;
    if (int rc = write_one(ctx, session, path, "disconnect")) return rc;
    ctx.out << "disconnecting " << path_of(session, path) << '\n';
    return exit_ok;
}

int reset_stats(Context& ctx, const std::string& session, const std::optional<std::string>& path) {
    std::vector<std::string> paths;
    if (int rc = find_paths(ctx, session, paths)) return rc;
    if (path) {
        if (int rc = require_path(ctx, session, *path, paths)) return rc;
        if (int rc = write_one(ctx, session, *path, "stats/rdma")) return rc;
        ctx.out << "reset the counters of " << path_of(session, *path) << '\n';
        return exit_ok;
    }
    // Every path: go on past a failure, report each, return the first.
    int status = exit_ok;
    for (const auto& p : paths) {
        if (!fsio::is_dir(ctx.reader.path_dir(session, p))) continue;  // gone since listed
        bool gone = false;
        int rc = write_one(ctx, session, p, "stats/rdma", &gone);
        if (rc == exit_ok) {
            if (gone)
                ctx.out << path_of(session, p) << " went away\n";
            else
                ctx.out << "reset the counters of " << path_of(session, p) << '\n';
        } else if (status == exit_ok) {
            status = rc;
        }
    }
    if (paths.empty()) ctx.out << "session " << quoted(session) << " has no paths\n";
    return status;
}

}  // namespace rtrs_srv::cmd
