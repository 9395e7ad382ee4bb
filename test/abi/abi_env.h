// SPDX-License-Identifier: GPL-2.0
// Helpers of the ABI suite: sysfs access that reports errno, waiting with a
// deadline, and the userspace RTRS client run as a child process.
// The suite runs inside the QEMU guest (see guest-run.sh), as root, with
// rtrs-server and rtrs-null loaded and rxe devices up.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace rtrsabi {

// The test network (guest-run.sh sets it up).
struct Net {
    static constexpr const char* kServer = "10.77.0.1";
    static constexpr const char* kClient = "10.77.0.2";
    static constexpr const char* kServer2 = "10.78.0.1";
    static constexpr const char* kClient2 = "10.78.0.2";
    static constexpr const char* kServer6 = "fd00::1";
    static constexpr const char* kClient6 = "fd00::2";
    static constexpr const char* kHca = "rxe0";
    static constexpr const char* kHca2 = "rxe1";
};

inline const std::string kClassDir = "/sys/class/rtrs-server";

std::string session_dir(const std::string& sess);
std::string path_dir(const std::string& sess, const std::string& path);

// File contents, or errno.
struct ReadResult {
    int err = 0;
    std::string data;
};
ReadResult read_file(const std::string& path);
// 0, or the errno of open() or write().
int write_file(const std::string& path, const std::string& data);
bool exists(const std::string& path);
// Permission bits (e.g. 0644), or -1.
int mode_of(const std::string& path);
std::vector<std::string> list_dir(const std::string& dir);

// Polls pred every 100 ms until it holds or timeout passes.
bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout);

// The kernel log since the last clear_kernel_log().
std::string kernel_log();
void clear_kernel_log();
int count_lines_with(const std::string& text, const std::string& needle);

// A running rtrs-client (the CLI of tools/rtrs-client).
class Client {
public:
    explicit Client(std::vector<std::string> args);
    ~Client();  // SIGTERM, then SIGKILL, and reap
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Waits for an output line containing `needle`; false on exit/timeout.
    bool wait_for_line(const std::string& needle, std::chrono::milliseconds timeout);
    // Waits for the process to end; its exit status, or -1 on timeout.
    int wait_exit(std::chrono::milliseconds timeout);
    void kill_hard();  // SIGKILL: the client vanishes without a word
    const std::string& output() const { return out_; }

private:
    bool read_some(std::chrono::milliseconds timeout);
    pid_t pid_ = -1;
    int fd_ = -1;
    int status_ = -1;
    std::string out_;
};

// Runs a client to completion; its output and exit status.
struct RunResult {
    int status = -1;
    std::string output;
};
RunResult run_client(const std::vector<std::string>& args, std::chrono::milliseconds timeout);

// Arguments for a one-path session from the default client address.
std::vector<std::string> connect_args(const std::string& sess,
                                      const std::string& src = Net::kClient,
                                      const std::string& dst = Net::kServer);

std::string client_binary();

}  // namespace rtrsabi
