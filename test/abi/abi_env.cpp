// SPDX-License-Identifier: GPL-2.0
#include "abi_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace rtrsabi {

using namespace std::chrono;

std::string session_dir(const std::string& sess) { return kClassDir + "/" + sess; }

std::string path_dir(const std::string& sess, const std::string& path) {
    return session_dir(sess) + "/paths/" + path;
}

ReadResult read_file(const std::string& path) {
    ReadResult r;
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) {
        r.err = errno;
        return r;
    }
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n < 0) {
            r.err = errno;
            break;
        }
        if (n == 0) break;
        r.data.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return r;
}

int write_file(const std::string& path, const std::string& data) {
    int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) return errno;
    ssize_t n = ::write(fd, data.data(), data.size());
    int err = n < 0 ? errno : (static_cast<size_t>(n) == data.size() ? 0 : EIO);
    ::close(fd);
    return err;
}

bool exists(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
}

int mode_of(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return -1;
    return static_cast<int>(st.st_mode & 07777);
}

std::vector<std::string> list_dir(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return out;
    while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
    return out;
}

bool wait_until(const std::function<bool()>& pred, milliseconds timeout) {
    auto end = steady_clock::now() + timeout;
    for (;;) {
        if (pred()) return true;
        if (steady_clock::now() >= end) return false;
        std::this_thread::sleep_for(100ms);
    }
}

std::string kernel_log() {
    int size = ::klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, nullptr, 0);
    if (size <= 0) return {};
    std::string buf(static_cast<size_t>(size), '\0');
    int n = ::klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf.data(), size);
    buf.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return buf;
}

void clear_kernel_log() { ::klogctl(5 /* SYSLOG_ACTION_CLEAR */, nullptr, 0); }

int count_lines_with(const std::string& text, const std::string& needle) {
    int n = 0;
    size_t pos = 0;
    while ((pos = text.find(needle, pos)) != std::string::npos) {
        ++n;
        pos += needle.size();
    }
    return n;
}

std::string client_binary() {
    const char* p = std::getenv("RTRS_CLIENT");
    if (!p || !*p) throw std::runtime_error("RTRS_CLIENT (path to the rtrs-client CLI) is not set");
    return p;
}

Client::Client(std::vector<std::string> args) {
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    std::string bin = client_binary();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        ::dup2(pipefd[1], 1);
        ::dup2(pipefd[1], 2);
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>(bin.c_str()));
        for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(bin.c_str(), argv.data());
        ::_exit(127);
    }
    ::close(pipefd[1]);
    fd_ = pipefd[0];
}

Client::~Client() {
    if (pid_ > 0 && status_ < 0) {
        ::kill(pid_, SIGTERM);
        if (wait_exit(10s) < 0) {
            ::kill(pid_, SIGKILL);
            int st;
            ::waitpid(pid_, &st, 0);
        }
    }
    if (fd_ >= 0) ::close(fd_);
}

bool Client::read_some(milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (r <= 0) return false;
    char buf[1024];
    ssize_t n = ::read(fd_, buf, sizeof(buf));
    if (n <= 0) return false;
    out_.append(buf, static_cast<size_t>(n));
    return true;
}

bool Client::wait_for_line(const std::string& needle, milliseconds timeout) {
    auto end = steady_clock::now() + timeout;
    while (out_.find(needle) == std::string::npos) {
        auto left = duration_cast<milliseconds>(end - steady_clock::now());
        if (left.count() <= 0) return false;
        if (!read_some(left) && steady_clock::now() < end) {
            // EOF: the client exited
            int st;
            if (::waitpid(pid_, &st, WNOHANG) == pid_) {
                status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                while (read_some(0ms)) {
                }
                return out_.find(needle) != std::string::npos;
            }
        }
    }
    return true;
}

int Client::wait_exit(milliseconds timeout) {
    if (status_ >= 0) return status_;
    auto end = steady_clock::now() + timeout;
    for (;;) {
        while (read_some(0ms)) {
        }
        int st;
        pid_t r = ::waitpid(pid_, &st, WNOHANG);
        if (r == pid_) {
            while (read_some(0ms)) {
            }
            status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            return status_;
        }
        if (steady_clock::now() >= end) return -1;
        read_some(100ms);
    }
}

void Client::kill_hard() {
    ::kill(pid_, SIGKILL);
    wait_exit(10s);
}

RunResult run_client(const std::vector<std::string>& args, milliseconds timeout) {
    Client c(args);
    RunResult r;
    r.status = c.wait_exit(timeout);
    r.output = c.output();
    return r;
}

std::vector<std::string> connect_args(const std::string& sess, const std::string& src,
                                      const std::string& dst) {
    return {"connect", "--session", sess, "--server", dst, "--src", src};
}

}  // namespace rtrsabi
