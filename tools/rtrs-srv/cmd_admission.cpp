// SPDX-License-Identifier: GPL-2.0
// `admission`: show, set (and keep in modprobe.d) the rules of rtrs-server's
// admission control, and close what they refuse, through the module's
// parameters admission and admission_close.
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

#include "admission.h"
#include "commands.h"
#include "exit_codes.h"
#include "fsio.h"
#include "table.h"

namespace rtrs_srv::cmd {

namespace {

constexpr const char* admission_file = "admission";
constexpr const char* close_file = "admission_close";

bool permission(int err) { return err == EACCES || err == EPERM || err == EROFS; }

std::string needs_root() { return geteuid() == 0 ? " (the file is read-only)" : " (writing needs root)"; }

// A parameter that could not be read or written: the message and the exit
// status. ENOENT says whether the module is there at all.
int param_error(const Context& ctx, const std::string& file, int err, const std::string& doing) {
    const std::string shown = printable(file);
    if (err == ENOENT || err == ENOTDIR) {
        if (int derr = fsio::dir_status(ctx.params_dir)) {
            ctx.error(printable(ctx.params_dir) + ": " + std::strerror(derr) +
                      " (is the rtrs-server module loaded?)");
        } else {
            ctx.error("no " + shown +
                      ": this rtrs_server has no admission control (upstream's server has none)");
        }
        return exit_not_found;
    }
    if (err == ENXIO) {
        ctx.error("cannot " + doing + " " + shown + ": " + std::strerror(err) +
                  " (the module is being loaded or unloaded)");
        return exit_failure;
    }
    if (permission(err)) {
        ctx.error("cannot " + doing + " " + shown + ": " + std::strerror(err) +
                  (doing == "read" ? "" : needs_root()));
        return exit_permission;
    }
    ctx.error("cannot " + doing + " " + shown + ": " + std::strerror(err));
    return exit_failure;
}

// The rules to set, from the command line, a file or standard input.
int read_rules(const Context& ctx, const AdmissionSet& set, std::string& text, std::string& where) {
    if (!set.file) {
        text = set.text;
        return exit_ok;
    }
    if (*set.file == "-") {
        where = "standard input";
        if (!ctx.in) {
            ctx.error("no standard input to read the rules from");
            return exit_usage;
        }
        text.assign(std::istreambuf_iterator<char>(*ctx.in), std::istreambuf_iterator<char>());
        if (ctx.in->bad()) {
            ctx.error("cannot read the rules from standard input");
            return exit_failure;
        }
        return exit_ok;
    }
    where = printable(*set.file);
    if (int err = fsio::read_file(*set.file, text, 1 << 20)) {
        ctx.error("cannot read " + where + ": " + std::strerror(err));
        return err == ENOENT ? exit_not_found : permission(err) ? exit_permission : exit_failure;
    }
    return exit_ok;
}

// Writes `text` to DIR/NAME through a temporary file beside it (whose
// name does not end in .conf: modprobe reads only those) and a rename, so
// that a reader sees the old file or the new one, whole. 0 or an errno.
int write_atomic(const std::string& dir, const std::string& name, const std::string& text) {
    const std::string final_name = fsio::join(dir, name);
    const std::string tmp = fsio::join(dir, "." + name + "." + std::to_string(getpid()));
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return errno;
    int err = 0;
    if (fchmod(fd, 0644) != 0) err = errno;  // whatever the umask: modprobe.d's files are
    std::size_t done = 0;
    while (!err && done < text.size()) {
        ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            err = errno;
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp.c_str(), final_name.c_str()) != 0) err = errno;
    if (err) {
        unlink(tmp.c_str());
        return err;
    }
    // The rename itself survives a crash once the folder is synced.
    int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return 0;
}

// --persist: the rules in modprobe.d, or no file for the default.
int persist(const Context& ctx, const admission::Policy& p) {
    const std::string file = fsio::join(ctx.modprobe_dir, admission::persist_name);
    const std::string shown = printable(file);
    int err = 0;
    if (p.is_default()) {
        if (unlink(file.c_str()) == 0) {
            ctx.out << "removed " << shown << ": the module's next load has the default rules\n";
            return exit_ok;
        }
        err = errno;
        if (err == ENOENT) {
            ctx.out << "no " << shown << " to remove: the module's next load has the default rules\n";
            return exit_ok;
        }
    } else {
        err = write_atomic(ctx.modprobe_dir, admission::persist_name, admission::persist_text(p));
        if (!err) {
            ctx.out << "kept in " << shown << " for the module's next load\n";
            return exit_ok;
        }
    }
    ctx.error("the rules are in effect, but not kept: cannot " +
              std::string(p.is_default() ? "remove " : "write ") + shown + ": " + std::strerror(err) +
              (permission(err) ? needs_root() : ""));
    return permission(err) ? exit_permission : err == ENOENT ? exit_not_found : exit_failure;
}

int close_refused(const Context& ctx) {
    const std::string file = fsio::join(ctx.params_dir, close_file);
    if (int err = fsio::write_file(file, "1"))
        return param_error(ctx, file, err, "write");
    ctx.out << "asked every path the rules in effect refuse to close (the kernel log says how many)\n";
    return exit_ok;
}

}  // namespace

int admission_show(Context& ctx) {
    const std::string file = fsio::join(ctx.params_dir, admission_file);
    std::string text;
    if (int err = fsio::read_file(file, text)) return param_error(ctx, file, err, "read");
    std::string why;
    auto state = admission::parse_shown(text, why);
    if (!state) {
        ctx.error("cannot understand " + printable(file) + ": " + why);
        return exit_failure;
    }
    ctx.out << (ctx.json ? admission::json(*state, ctx.pretty) : admission::table(*state));
    return exit_ok;
}

int admission_set(Context& ctx, const AdmissionSet& set) {
    std::string text, where;
    if (int rc = read_rules(ctx, set, text, where)) return rc;
    // The core's parser first: what the module would refuse is not written.
    std::string why;
    auto policy = admission::parse_rules(text, why);
    if (!policy) {
        ctx.error("bad rules" + (where.empty() ? "" : " in " + where) + " (nothing written): " + why);
        return exit_usage;
    }
    if (set.persist) {
        std::string problem = admission::persist_problem(*policy);
        if (!problem.empty()) {
            ctx.error("cannot keep these rules in modprobe.d (nothing written): " + problem);
            return exit_usage;
        }
    }
    const std::string file = fsio::join(ctx.params_dir, admission_file);
    const std::string written = admission::parameter_text(*policy);
    if (int err = fsio::write_file(file, written)) {
        if (err != EINVAL) return param_error(ctx, file, err, "write");
        // The core here took them: the module runs another core. Its
        // reason is in the kernel log, with the line of what was written.
        std::string lines;
        int n = 0;
        for (const auto& r : policy->rules) lines += "  " + std::to_string(++n) + "  " + printable(r) + "\n";
        ctx.error("the module refused the rules (" + std::string(std::strerror(err)) +
                  "): the kernel log says why (dmesg: \"rtrs_server: admission rules refused: "
                  "line N: ...\"); the lines written:");
        ctx.err << (lines.empty() ? "  (none: an empty line)\n" : lines);
        return exit_failure;
    }
    if (policy->is_default()) {
        ctx.out << "admission rules set: none (every address may connect, no limit)\n";
    } else {
        ctx.out << "admission rules set:\n";
        for (const auto& r : policy->rules) ctx.out << "  " << printable(r) << '\n';
    }
    if (set.persist)
        if (int rc = persist(ctx, *policy)) return rc;
    if (set.close_refused) return close_refused(ctx);
    return exit_ok;
}

int admission_close_refused(Context& ctx) { return close_refused(ctx); }

}  // namespace rtrs_srv::cmd
