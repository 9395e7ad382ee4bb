// SPDX-License-Identifier: GPL-2.0
// The few file system operations rtrs-srv needs, with errno as the error:
// list a directory, test for one, read a small file, write a small string.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rtrs_srv::fsio {

// Names in `dir` other than "." and "..", sorted bytewise. 0 or an errno.
int list_dir(const std::string& dir, std::vector<std::string>& names);

// Whether `path` is a directory, following symbolic links (the class
// entries are links into /sys/devices).
bool is_dir(const std::string& path);

// 0 if `path` is a directory (following links), else ENOTDIR or the errno
// of stat(2).
int dir_status(const std::string& path);

// Whether `path` exists at all (without following a final link).
bool exists(const std::string& path);

// Reads a whole file of at most `limit` bytes (sysfs files are one page).
// 0 or an errno; EFBIG when the file is longer than the limit.
int read_file(const std::string& path, std::string& content, std::size_t limit = 65536);

// Writes `data` to an existing file in one write(2), as the shell's
// `echo 1 > file` does (a regular file is truncated first, which sysfs
// ignores), but never creates it. A file without any write permission bit is refused with
// EACCES even for root, as sysfs refuses it. 0 or an errno.
int write_file(const std::string& path, std::string_view data);

// "a" + "/" + "b", with no doubled slash.
std::string join(std::string_view a, std::string_view b);

}  // namespace rtrs_srv::fsio
