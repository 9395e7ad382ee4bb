// SPDX-License-Identifier: GPL-2.0
// `list`, `show` and `metrics`.
#include <cerrno>
#include <cstring>

#include "commands.h"
#include "exit_codes.h"
#include "format.h"
#include "fsio.h"
#include "metrics.h"
#include "table.h"

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

int metrics(Context& ctx, const std::optional<std::string>& textfile_dir) {
    Snapshot snap;
    int err = ctx.reader.read_all(snap);
    // No class folder: the module is not loaded, which is a value to
    // report (rtrs_server_loaded 0), not a failure of the collector.
    if (err && err != ENOENT) return class_error(ctx, err);
    // Admission control's counters, where the module has them: none
    // without its parameters folder (not loaded) or its admission file
    // (upstream's server); one that cannot be read is said, and left out.
    std::optional<admission::State> adm;
    const std::string file = fsio::join(ctx.params_dir, "admission");
    std::string shown;
    if (int rerr = fsio::read_file(file, shown)) {
        if (rerr != ENOENT && rerr != ENOTDIR)
            ctx.error("warning: no admission metrics: cannot read " + printable(file) + ": " +
                      std::strerror(rerr));
    } else {
        std::string why;
        adm = admission::parse_shown(shown, why);
        if (!adm) ctx.error("warning: no admission metrics: cannot understand " + printable(file) + ": " + why);
    }
    std::string text = metrics::exposition(snap, err == 0, adm ? &*adm : nullptr);
    if (!textfile_dir) {
        ctx.out << text;
        return exit_ok;
    }
    if (int werr = metrics::write_textfile(*textfile_dir, text)) {
        ctx.error("cannot write " + printable(fsio::join(*textfile_dir, "rtrs_server.prom")) + ": " +
                  std::strerror(werr));
        return werr == EACCES || werr == EPERM ? exit_permission
               : werr == ENOENT               ? exit_not_found
                                              : exit_failure;
    }
    return exit_ok;
}

}  // namespace rtrs_srv::cmd
