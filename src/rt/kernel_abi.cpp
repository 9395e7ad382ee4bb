// SPDX-License-Identifier: GPL-2.0
// The few C++ ABI entry points g++ may emit calls to, provided for the module
// only (on the host the C++ runtime has them). Built into rtrs-server.ko.

#include "rt/env.h"

// (the ABI's name: reserved to the implementation, which here is us)
extern "C" void __cxa_pure_virtual();  // NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
extern "C" void __cxa_pure_virtual() { rtrs_env_warn("pure virtual function called"); }

// A class with a virtual destructor gets a deleting destructor that refers to
// these even if it is never called; objects are freed by rt::destroy().
// (The global operator new is deleted, rt/enforce.h: rt/alloc.h's takes a
// gfp argument.)
void operator delete(void* p) noexcept { rtrs_env_free(p); }  // NOLINT(cert-dcl54-cpp)
void operator delete(void* p, __SIZE_TYPE__) noexcept { rtrs_env_free(p); }
