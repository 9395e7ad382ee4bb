// SPDX-License-Identifier: GPL-2.0
// rtrs-srv: the admin tool of the RTRS server. See rtrs-srv(8).
#include <cstdlib>
#include <iostream>
#include <unistd.h>

#include "cli.h"

int main(int argc, char** argv) {
    std::ios::sync_with_stdio(false);
    rtrs_srv::Io io{std::cout, std::cerr, [](const char* n) { return std::getenv(n); },
                    isatty(STDOUT_FILENO) == 1, {}, {}, &std::cin};
    int rc = rtrs_srv::run(std::vector<std::string>(argv + 1, argv + argc), io);
    std::cout.flush();
    if (!std::cout) {
        std::cerr << "rtrs-srv: cannot write the output\n";
        if (rc == 0) rc = 1;
    }
    return rc;
}
