// SPDX-License-Identifier: GPL-2.0
#include "fsio.h"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rtrs_srv::fsio {

int list_dir(const std::string& dir, std::vector<std::string>& names) {
    names.clear();
    DIR* d = opendir(dir.c_str());
    if (!d) return errno;
    int err = 0;
    for (;;) {
        errno = 0;
        const dirent* e = readdir(d);
        if (!e) {
            err = errno;
            break;
        }
        std::string_view n = e->d_name;
        if (n == "." || n == "..") continue;
        names.emplace_back(n);
    }
    closedir(d);
    if (err) {
        names.clear();
        return err;
    }
    std::sort(names.begin(), names.end());
    return 0;
}

bool is_dir(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int dir_status(const std::string& path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return errno;
    return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

bool exists(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
}

int read_file(const std::string& path, std::string& content, std::size_t limit) {
    content.clear();
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return EISDIR;
    }
    int err = 0;
    char buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0) {
            if (errno == EINTR) continue;
            err = errno;
            break;
        }
        if (n == 0) break;
        if (content.size() + static_cast<std::size_t>(n) > limit) {
            err = EFBIG;
            break;
        }
        content.append(buf, static_cast<std::size_t>(n));
    }
    close(fd);
    if (err) content.clear();
    return err;
}

int write_file(const std::string& path, std::string_view data) {
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return err;
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return EISDIR;
    }
    if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) {
        close(fd);
        return EACCES;
    }
    // Like the shell's `>`, but only once the write bits were checked: root
    // may open a read-only file, and must not empty it. sysfs ignores this.
    if (S_ISREG(st.st_mode)) (void)!ftruncate(fd, 0);
    int err = 0;
    ssize_t n;
    do {
        n = write(fd, data.data(), data.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        err = errno;
    else if (static_cast<std::size_t>(n) != data.size())
        err = EIO;
    if (close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
    return err;
}

std::string join(std::string_view a, std::string_view b) {
    std::string s(a);
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    if (s.empty() || s.back() != '/') s += '/';
    while (!b.empty() && b.front() == '/') b.remove_prefix(1);
    s += b;
    return s;
}

}  // namespace rtrs_srv::fsio
