// SPDX-License-Identifier: GPL-2.0
#include "metrics.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

#include "fsio.h"
#include "utf8.h"

namespace rtrs_srv::metrics {

std::string label_value(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        std::uint32_t cp;
        std::size_t n = utf8::sequence(s, i, cp);
        if (n == 0) {
            out += "\xef\xbf\xbd";  // U+FFFD
            ++i;
            continue;
        }
        if (s[i] == '\\')
            out += "\\\\";
        else if (s[i] == '"')
            out += "\\\"";
        else if (s[i] == '\n')
            out += "\\n";
        else
            out.append(s, i, n);
        i += n;
    }
    return out;
}

std::string us_as_seconds(std::uint64_t us) {
    std::string s = std::to_string(us / 1000000);
    std::uint64_t frac = us % 1000000;
    if (frac) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "%06llu", static_cast<unsigned long long>(frac));
        std::string f = buf;
        while (f.back() == '0') f.pop_back();
        s += "." + f;
    }
    return s;
}

std::string le_seconds(std::size_t i) { return us_as_seconds(std::uint64_t{2} << i); }

namespace {

class Writer {
public:
    // A family: its HELP and TYPE lines, once, before its first sample.
    void family(const std::string& name, const char* type, const char* help) {
        out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    }
    void sample(const std::string& name, const std::string& labels, const std::string& value) {
        out_ += name;
        if (!labels.empty()) out_ += "{" + labels + "}";
        out_ += " " + value + "\n";
    }
    std::string str() { return std::move(out_); }

private:
    std::string out_;
};

std::string path_labels(const Session& s, const Path& p) {
    return "session=\"" + label_value(s.name) + "\",path=\"" + label_value(p.name) + "\"";
}

const char* const prefix = "rtrs_server_";

// One histogram family: every path that has a latency file.
void histogram(Writer& w, const Snapshot& snap, const char* which, const char* help,
               const Histogram Latency::*member) {
    bool any = false;
    const std::string name = std::string(prefix) + "path_" + which + "_latency_seconds";
    for (const auto& s : snap.sessions) {
        for (const auto& p : s.paths) {
            if (!p.latency.value) continue;
            if (!any) w.family(name, "histogram", help);
            any = true;
            const Histogram& h = (*p.latency.value).*member;
            const std::string labels = path_labels(s, p);
            std::uint64_t cum = 0;
            // The last bucket has no upper bound: it is in +Inf only.
            for (std::size_t i = 0; i + 1 < h.buckets.size(); ++i) {
                cum += h.buckets[i];
                w.sample(name + "_bucket", labels + ",le=\"" + le_seconds(i) + "\"",
                         std::to_string(cum));
            }
            w.sample(name + "_bucket", labels + ",le=\"+Inf\"", std::to_string(h.count));
            w.sample(name + "_sum", labels, us_as_seconds(h.sum_us));
            w.sample(name + "_count", labels, std::to_string(h.count));
        }
    }
}

// Admission control: the refusals by reason, the allow-list.
void admission_families(Writer& w, const admission::State& a) {
    const std::string p = std::string(prefix) + "admission_";
    w.family(p + "refusals_total", "counter",
             "Connection requests admission control refused since the module was loaded, by reason "
             "(name: a path whose session name is not allowed, at its info request).");
    for (const auto& [reason, count] : a.refused)
        w.sample(p + "refusals_total", "reason=\"" + label_value(reason) + "\"", std::to_string(count));
    w.family(p + "allow_list", "gauge",
             "Whether the admission allow-list is on (1: an address on none of its entries is refused).");
    w.sample(p + "allow_list", "", a.policy.allow_list() ? "1" : "0");
    w.family(p + "allow_entries", "gauge",
             "Entries of the admission allow-list (0: every address may connect).");
    w.sample(p + "allow_entries", "", std::to_string(a.policy.allow.size()));
}

}  // namespace

std::string exposition(const Snapshot& snap, bool loaded, const admission::State* admission) {
    Writer w;
    const std::string p = prefix;
    w.family(p + "loaded", "gauge",
             "Whether the RTRS server's sysfs class (/sys/class/rtrs-server) exists.");
    w.sample(p + "loaded", "", loaded ? "1" : "0");
    if (admission) admission_families(w, *admission);
    if (!loaded) return w.str();

    w.family(p + "session_paths_up", "gauge", "Paths of the session that are up (in sysfs).");
    for (const auto& s : snap.sessions)
        w.sample(p + "session_paths_up", "session=\"" + label_value(s.name) + "\"",
                 std::to_string(s.paths.size()));

    w.family(p + "path_info", "gauge",
             "A path that is up, with its RDMA device and port and both addresses (always 1).");
    for (const auto& s : snap.sessions)
        for (const auto& path : s.paths) {
            auto text = [](const Field<std::string>& f) { return f.value ? label_value(*f.value) : ""; };
            w.sample(p + "path_info",
                     path_labels(s, path) + ",hca_name=\"" + text(path.hca_name) + "\",hca_port=\"" +
                         (path.hca_port.value ? std::to_string(*path.hca_port.value) : "") +
                         "\",src_addr=\"" + text(path.src_addr) + "\",dst_addr=\"" +
                         text(path.dst_addr) + "\"",
                     "1");
        }

    struct Counter {
        const char* name;
        const char* help;
        std::uint64_t Stats::*member;
    };
    const Counter counters[] = {
        {"path_reads_total", "Read requests served on the path since its counters were reset.",
         &Stats::read_cnt},
        {"path_read_bytes_total",
         "Bytes of read requests (data and user header) served on the path since its counters were reset.",
         &Stats::read_bytes},
        {"path_writes_total", "Write requests served on the path since its counters were reset.",
         &Stats::write_cnt},
        {"path_write_bytes_total",
         "Bytes of write requests (data and user header) served on the path since its counters were reset.",
         &Stats::write_bytes},
    };
    for (const Counter& c : counters) {
        w.family(p + c.name, "counter", c.help);
        for (const auto& s : snap.sessions)
            for (const auto& path : s.paths)
                if (path.stats.value)
                    w.sample(p + c.name, path_labels(s, path),
                             std::to_string((*path.stats.value).*(c.member)));
    }
    w.family(p + "path_inflight", "gauge",
             "Requests of the path the upper layer holds now (absent from the upstream server).");
    for (const auto& s : snap.sessions)
        for (const auto& path : s.paths)
            if (path.stats.value && path.stats.value->inflight)
                w.sample(p + "path_inflight", path_labels(s, path),
                         std::to_string(*path.stats.value->inflight));

    histogram(w, snap, "ulp",
              "Time from a request's arrival to the upper layer's answer (the storage behind it).",
              &Latency::ulp);
    histogram(w, snap, "transport",
              "Time from the upper layer's answer to the completion of the response (the transport).",
              &Latency::transport);
    return w.str();
}

int write_textfile(const std::string& dir, const std::string& text) {
    const std::string final_name = fsio::join(dir, "rtrs_server.prom");
    const std::string tmp = fsio::join(dir, ".rtrs_server.prom." + std::to_string(getpid()));
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    int err = 0;
    std::size_t done = 0;
    while (done < text.size()) {
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
    if (err) unlink(tmp.c_str());
    return err;
}

}  // namespace rtrs_srv::metrics
