// SPDX-License-Identifier: GPL-2.0
#include "help.h"

namespace rtrs_srv::help {

namespace {

constexpr const char* list_help = R"TXT(Usage: rtrs-srv [-j [-p]] list

Lists every path of every session of the RTRS server, one row a path:

  SESSION   the session name (the client's choice)
  PATH      the path, "<client address>@<server address>", as in sysfs
  HCA       the RDMA device and port the path uses, e.g. "rxe0/1"
  READS     read requests served and their bytes, e.g. "12 (48.0 KiB)"
  WRITES    write requests served and their bytes
  INFLIGHT  requests being served now

"-" stands for a value that is not there: a file that is missing or holds
something unexpected, or the inflight count of a server that does not report
it (the upstream server prints four counters, this module five). A session
without paths has one row with "-" for the path. Byte counts are in binary
units (1 KiB = 1024 bytes) with one decimal; `show` prints them exact.

With -j/--json, prints a JSON array with one object a session:
  [{"session":"s","paths":[{"path":"ip:10.77.0.2@ip:10.77.0.1",
    "hca_name":"rxe0","hca_port":1,"src_addr":"ip:10.77.0.2",
    "dst_addr":"ip:10.77.0.1","read_cnt":12,"read_bytes":49152,
    "write_cnt":3,"write_bytes":12288,"inflight":0}]}]
Numbers are JSON numbers, absent values null. -p/--pretty indents it.
)TXT";

constexpr const char* show_help = R"TXT(Usage: rtrs-srv [-j [-p]] show SESSION

Shows one session in detail: every path with its HCA and port, the client's
address (src_addr) and the server's (dst_addr), the read and write counters
with exact byte counts, and the inflight count. An absent value is shown as
"-" with the reason: "missing" (no such file), "invalid" (with what the file
holds) or the error of reading it.

With -j/--json, prints the same JSON as `list` for this one session, and in
each path an "errors" object from attribute file to the reason it has no
value, and in the session an "error" (null, or why paths/ is unreadable).

rtrs-server also keeps two latency histograms of each path in debugfs
(/sys/kernel/debug/rtrs-server/SESSION/PATH/latency, root's only): from a
request's arrival to the upper layer's answer ("ulp latency": the storage
behind it), and from the answer to the completion of the response ("net
latency": the transport). Where that file is, show prints their p50, p99
and max since the counters were last reset; where it cannot be read (not
root), "-" with the reason; where there is none, nothing. Percentiles are
estimated from log2 buckets (linear inside a bucket, never above the max).

Exit status 3 if there is no such session.
)TXT";

constexpr const char* disconnect_help = R"TXT(Usage: rtrs-srv disconnect SESSION PATH

Closes one path of a session: writes "1" to its disconnect file. The server
tears the path down in the background; the session goes with its last path.
PATH is the path's name as `list` prints it, "<client>@<server>".
Needs root.

Exit status 3 if there is no such session or path, 4 if permission is
denied, 1 if the kernel refused the write (with its error).
)TXT";

constexpr const char* reset_help = R"TXT(Usage: rtrs-srv reset-stats SESSION [PATH]

Zeroes the read and write counters of one path of a session, or of every
path of the session if PATH is omitted: writes "1" to each path's
stats/rdma file. The inflight count is not a counter and stays. Needs root.

Without PATH, every path is tried even if one fails, a path that goes away
meanwhile is no error, and the exit status is that of the first failure.
Exit status 3 if there is no such session or path, 4 if permission is
denied, 1 if the kernel refused the write (with its error).
)TXT";

constexpr const char* watch_help = R"TXT(Usage: rtrs-srv watch [-i|--interval SECONDS] [-c|--count N]

Samples every path's counters every SECONDS (default 1, fractions allowed)
and prints a table of the rates between successive samples:

  READS/S, WRITES/S      requests a second
  READ-B/S, WRITE-B/S    bytes a second, in binary units
  INFLIGHT               the current inflight count
  ULP P50/P99/MAX        latency from arrival to the upper layer's answer:
                         p50 and p99 of the requests of the interval, max
                         since the last reset (see show; only where
                         rtrs-server's debugfs latency files are)
  NET P50/P99/MAX        the same from the answer to the response's completion

The first table comes one interval after the start. "-" for a path that is
new since the last sample (or reconnected under the same name), whose
counters were reset meanwhile, or whose counters cannot be read.
On a terminal the screen is redrawn in place; otherwise (a pipe, a file)
the tables follow each other, separated by an empty line. With --count N,
stops after N tables; otherwise runs until interrupted (Ctrl-C).
)TXT";

constexpr const char* metrics_help = R"TXT(Usage: rtrs-srv metrics [--textfile DIR]

Prints every path's counters and latency histograms in the Prometheus text
format (HELP and TYPE lines; labels session and path):

  rtrs_server_loaded                          1, or 0 without the class
  rtrs_server_session_paths_up{session}       paths of the session that are up
  rtrs_server_path_info{session,path,hca_name,hca_port,src_addr,dst_addr}  1
  rtrs_server_path_reads_total{session,path}  and path_read_bytes_total,
      path_writes_total, path_write_bytes_total: stats/rdma's counters
  rtrs_server_path_inflight{session,path}     requests being served now
  rtrs_server_path_ulp_latency_seconds        histograms (cumulative "le"
  rtrs_server_path_transport_latency_seconds  buckets 2^i us), where
                                              rtrs-server's debugfs has them
  rtrs_server_admission_refusals_total{reason}  refusals of admission control
      by reason (not-allowed, sessions, paths, connections, rate, name)
  rtrs_server_admission_allow_list            1 when its allow-list is on
  rtrs_server_admission_allow_entries         the allow-list's entries
      (the three where the module has admission control; see --params-dir)

With --textfile DIR, writes DIR/rtrs_server.prom instead (through a
temporary file and a rename, so a reader never sees half of it), for
node_exporter's textfile collector (Debian's reads
/var/lib/prometheus/node-exporter). The module not loaded is no error:
rtrs_server_loaded is 0 then. Latency needs root (debugfs).
)TXT";

constexpr const char* admission_help = R"TXT(Usage: rtrs-srv [-j [-p]] admission [show]
       rtrs-srv admission set [--persist] [--close-refused] (RULES... | -f FILE | -)
       rtrs-srv admission close-refused

Admission control: which client addresses may connect to rtrs-server, with
which session names, and how much one address may hold. Through the
module's parameters admission and admission_close, in
/sys/module/rtrs_server/parameters (--params-dir).

admission, admission show: the rules in effect and the refusals so far:

  allow-list   off (every address may connect), or its entries: each a
               NETWORK and the only NAMES its clients may use (or any name)
  LIMIT        sessions, paths, connections (what one client address may
               hold), rate and burst (how fast it may ask): each or "none"
  REFUSED      the connection requests refused so far, by reason:
               not-allowed, sessions, paths, connections, rate, name

With -j/--json, one JSON object:
  {"allow_list":true,"allow":[{"network":"10.77.0.0/24","family":"ipv4",
    "names":["a","b"]}],"limits":{"sessions":2,"paths":null,
    "connections":null,"rate":"10/s","burst":20},"refused":{"not-allowed":3,
    "sessions":0,"paths":0,"connections":0,"rate":0,"name":0},
    "rules":["allow 10.77.0.0/24 names=a,b","limit sessions=2 rate=10/s burst=20"]}
"names" is null for any name; a limit not set is null. -p/--pretty indents it.

admission set: puts new rules in effect, from the next connection request
on (what is connected stays, unless --close-refused). The rules, one a line,
';' ending one as a newline does, '#' a comment to the end of its line:

  allow ADDR[/PREFIX] [names=NAME[,NAME...]]
  limit [sessions=N] [paths=N] [connections=N] [rate=R/s|R/m] [burst=B]

ADDR is IPv4, IPv6, or gid: and a GID. Once there is an allow rule, an
address on none is refused; the longest matching network decides. Without
any rule (an empty text: '') every address may connect, with no limit.
RULES words are joined by spaces into one text; -f FILE reads a file, and
- standard input. The rules are checked first with the module's own parser:
rules it would refuse are reported ("line N: why") and nothing is written
(exit status 2). Then they are written to the admission parameter in one
write. Needs root.

  --persist        also keep them for the module's next load (after a
                   reboot): /etc/modprobe.d/rtrs-server-admission.conf
                   (--modprobe-dir), written through a temporary file and
                   a rename; the default rules remove it
  --close-refused  then close every path the new rules refuse

admission close-refused: closes every path the rules in effect refuse
(writes 1 to admission_close). Needs root.

Exit status 3 if the module is not loaded or has no admission control, 4 if
permission is denied, 1 if the module refused a write (its reason is in the
kernel log).
)TXT";

constexpr const char* help_help = R"TXT(Usage: rtrs-srv help [COMMAND]

Prints the help of the tool, or of one command (as rtrs-srv COMMAND --help).
)TXT";

}  // namespace

std::string usage_line() {
    return "Usage: rtrs-srv [OPTIONS] {list | show SESSION | disconnect SESSION PATH |\n"
           "                reset-stats SESSION [PATH] | watch [-i S] [-c N] |\n"
           "                metrics [--textfile DIR] | admission [show | set RULES | close-refused] |\n"
           "                help [COMMAND]}\n";
}

std::string tool() {
    return usage_line() + R"TXT(
Administers the RTRS server (the rtrs-server kernel module, or the upstream
rtrs-server) through its sysfs class, /sys/class/rtrs-server: lists its
sessions and their paths with their counters, watches the I/O rates, closes
a path, zeroes counters; shows and sets the rules of who may connect
(admission control, rtrs-server's module parameters).

Commands:
  list                        every path of every session, one row a path
  show SESSION                one session in detail
  disconnect SESSION PATH     close one path (needs root)
  reset-stats SESSION [PATH]  zero the counters of a path, or of all paths
  watch [-i S] [-c N]         I/O rates every S seconds (default 1), N times
  metrics [--textfile DIR]    Prometheus metrics, on stdout or in DIR
  admission [show]            the admission rules in effect, the refusals
  admission set RULES         set the rules (needs root); -f FILE, - (stdin)
  admission close-refused     close the paths the rules refuse (needs root)
  help [COMMAND]              this text, or a command's

Options (anywhere on the line, before a "--"):
  -j, --json             JSON output (list and show), one line
  -p, --pretty           indented JSON (implies --json)
      --sysfs-root DIR   read DIR instead of /sys/class/rtrs-server
      --debugfs-root DIR read latency files in DIR instead of
                         /sys/kernel/debug/rtrs-server
  -i, --interval S       watch: seconds between samples (default 1)
  -c, --count N          watch: stop after N tables
      --textfile DIR     metrics: write DIR/rtrs_server.prom
      --params-dir DIR   admission, metrics: the module's parameters in DIR
                         instead of /sys/module/rtrs_server/parameters
  -f, --file FILE        admission set: read the rules from FILE (- stdin)
      --persist          admission set: keep the rules in modprobe.d too
      --close-refused    admission set: then close what the rules refuse
      --modprobe-dir DIR admission set --persist: DIR instead of
                         /etc/modprobe.d
  -h, --help             help of the tool, or of the command given
  -V, --version          print the version

A session name is the client's choice and may hold spaces and most other
characters: quote it for the shell. Paths are named "<client>@<server>",
each address "ip:10.0.0.2", "ip:fd00::2" or "gid:<GID>".
Names are printed with control characters escaped ("\n", "\x1b").

Environment:
  RTRS_SRV_SYSFS   the class folder, if --sysfs-root is not given
  RTRS_SRV_DEBUGFS the debugfs folder, if --debugfs-root is not given
  RTRS_SRV_PARAMS  the parameters folder, if --params-dir is not given
  RTRS_SRV_MODPROBE_DIR  the modprobe.d folder, if --modprobe-dir is not given

Exit status:
  0  success
  1  the kernel refused a write (its error is shown), or an I/O error
  2  bad command line, or admission rules the module would refuse
  3  no such session or path, or no /sys/class/rtrs-server (module not loaded)
  4  permission denied (disconnect, reset-stats and admission set need root)

Examples:
  rtrs-srv list
  rtrs-srv -j list | jq '.[].paths[].read_bytes'
  rtrs-srv show "backup 1"
  rtrs-srv disconnect "backup 1" ip:10.77.0.2@ip:10.77.0.1
  rtrs-srv reset-stats "backup 1"
  rtrs-srv watch --interval 0.5
  rtrs-srv metrics --textfile /var/lib/prometheus/node-exporter
  rtrs-srv admission set --persist 'allow 10.77.0.0/24 names=vm1,vm2; limit rate=10/s'
  rtrs-srv -j admission | jq .refused

See rtrs-srv COMMAND --help for each command, and rtrs-srv(8).
)TXT";
}

std::optional<std::string> command(const std::string& name) {
    if (name == "list") return list_help;
    if (name == "show") return show_help;
    if (name == "disconnect") return disconnect_help;
    if (name == "reset-stats") return reset_help;
    if (name == "watch") return watch_help;
    if (name == "metrics") return metrics_help;
    if (name == "admission") return admission_help;
    if (name == "help") return help_help;
    return std::nullopt;
}

}  // namespace rtrs_srv::help
