// SPDX-License-Identifier: GPL-2.0
// Errors that every command reports the same way.
#include <cerrno>
#include <cstring>

#include "commands.h"
#include "exit_codes.h"
#include "fsio.h"
#include "table.h"

namespace rtrs_srv::cmd {

int class_error(const Context& ctx, int err) {
    std::string msg = printable(ctx.reader.root()) + ": " + std::strerror(err);
    if (err == ENOENT) {
        ctx.error(msg + " (is the rtrs-server module loaded?)");
        return exit_not_found;
    }
    ctx.error(msg);
    return err == EACCES || err == EPERM ? exit_permission : exit_failure;
}

int no_session(const Context& ctx, const std::string& name) {
    if (int err = fsio::dir_status(ctx.reader.root())) return class_error(ctx, err);
    ctx.error("no session " + quoted(name) + " in " + printable(ctx.reader.root()));
    return exit_not_found;
}

}  // namespace rtrs_srv::cmd
