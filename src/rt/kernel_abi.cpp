// SPDX-License-Identifier: GPL-2.0
// The few C++ ABI entry points g++ may emit calls to, provided for the module
// only (on the host the C++ runtime has them). Built into rtrs-server.ko.

#include "rt/env.h"

extern "C" void __cxa_pure_virtual();
extern "C" void __cxa_pure_virtual() { rtrs_env_warn("pure virtual function called"); }

// A class with a virtual destructor gets a deleting destructor that refers to
// these even if it is never called; objects are freed by rt::destroy().
void operator delete(void* p) noexcept { rtrs_env_free(p); }
void operator delete(void* p, __SIZE_TYPE__) noexcept { rtrs_env_free(p); }
