// SPDX-License-Identifier: GPL-2.0
// Status and Expected<T>: what every helper of the client returns. A failure
// carries a positive errno and a message; `kind` tells the CLI whether the
// client itself failed, the server refused a connection, or the server
// closed a path that was up (they map to different exit statuses).
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace rc {

enum class Failure {
    None,
    Local,     // the client or its environment failed
    Rejected,  // the server refused a connection (server_errno says why)
    Closed,    // the server closed a path, or stopped answering
};

class [[nodiscard]] Status {
public:
    Status() = default;
    static Status error(int err, std::string msg, Failure kind = Failure::Local) {
        Status s;
        s.err_ = err > 0 ? err : 1;
        s.msg_ = std::move(msg);
        s.kind_ = kind;
        return s;
    }

    bool ok() const { return err_ == 0; }
    int err() const { return err_; }
    const std::string& msg() const { return msg_; }
    Failure kind() const { return kind_; }
    // The negative errno from the server's reject, when kind() is Rejected.
    int server_errno() const { return server_errno_; }
    Status& with_server_errno(int e) {
        server_errno_ = e;
        return *this;
    }

private:
    int err_ = 0;
    std::string msg_;
    Failure kind_ = Failure::None;
    int server_errno_ = 0;
};

// printf-style formatting into a std::string.
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// "ENXIO" for 6; "errno 4095" for a number without a name.
std::string errno_name(int err);
// Status::error(errno, "what: strerror (ENAME)"), for a failed libc/verbs call.
Status sys_error(int err, const std::string& what);

template <class T>
class [[nodiscard]] Expected {
public:
    Expected(T value) : value_(std::move(value)) {}
    Expected(Status status) : status_(std::move(status)) {}

    bool ok() const { return value_.has_value(); }
    const Status& status() const { return status_; }
    T& value() { return *value_; }
    const T& value() const { return *value_; }
    T* operator->() { return &*value_; }

private:
    std::optional<T> value_;
    Status status_;
};

}  // namespace rc
