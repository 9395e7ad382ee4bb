// SPDX-License-Identifier: GPL-2.0
// `list` and `show`.
#include "commands.h"
#include "exit_codes.h"
#include "format.h"

namespace rtrs_srv::cmd {

int list(Context& ctx) {
    Snapshot snap;
    if (int err = ctx.reader.read_all(snap)) return class_error(ctx, err);
    if (ctx.json)
        ctx.out << format::json(snap.sessions, ctx.pretty, false);
    else
        ctx.out << format::list_table(snap);
    return exit_ok;
}

int show(Context& ctx, const std::string& name) {
    auto s = ctx.reader.read_session(name);
    if (!s) return no_session(ctx, name);
    if (ctx.json)
        ctx.out << format::json({*s}, ctx.pretty, true);
    else
        ctx.out << format::show_text(*s);
    return exit_ok;
}

}  // namespace rtrs_srv::cmd
