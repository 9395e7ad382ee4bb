// SPDX-License-Identifier: GPL-2.0
// The commands. Each returns an exit status (exit_codes.h) and reports its
// errors on ctx.err.
#pragma once

#include <optional>
#include <string>

#include "context.h"

namespace rtrs_srv::cmd {

int list(Context& ctx);
int show(Context& ctx, const std::string& session);
int disconnect(Context& ctx, const std::string& session, const std::string& path);
// Every path of the session when `path` is absent.
int reset_stats(Context& ctx, const std::string& session, const std::optional<std::string>& path);

struct WatchOptions {
    double interval = 1.0;      // seconds between samples
    std::optional<long> count;  // tables to print; forever if absent
};
int watch(Context& ctx, const WatchOptions& opts);
// Prometheus text on stdout, or written to DIR/rtrs_server.prom (atomically).
int metrics(Context& ctx, const std::optional<std::string>& textfile_dir);

// admission (rtrs-server's module parameters admission and admission_close,
// in ctx.params_dir): the rules in effect and the refusals; set rules
// (checked by the core's parser first, written in one write(2)), keep them
// in ctx.modprobe_dir, close what they refuse.
int admission_show(Context& ctx);
struct AdmissionSet {
    std::string text;  // the rules, when not read from `file`
    std::optional<std::string> file;  // "-": standard input
    bool persist = false;
    bool close_refused = false;
};
int admission_set(Context& ctx, const AdmissionSet& set);
int admission_close_refused(Context& ctx);

// Shared by the commands: report an error listing the class folder;
// report a session that is not there (or the class folder, if that is
// what is missing). Both return the exit status.
int class_error(const Context& ctx, int err);
int no_session(const Context& ctx, const std::string& name);

}  // namespace rtrs_srv::cmd
