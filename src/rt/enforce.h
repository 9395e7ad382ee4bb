// SPDX-License-Identifier: GPL-2.0
// Force-included into every core and runtime translation unit (never into
// test code): names outside the allowed C++ subset become compile errors.
// Together with -fno-exceptions, -fno-rtti, -nostdinc and the section check
// of the build (no static constructors), this is how the subset is enforced.
#pragma once
// Declarations below would draw a "not first declaration" note; this header
// only declares, so silencing its own diagnostics hides nothing.
#pragma GCC system_header

#ifndef __cplusplus
#error "rt/enforce.h is for the C++ side only"
#endif
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#error "the subset is built without exceptions (-fno-exceptions)"
#endif
#if defined(__cpp_rtti) || defined(__GXX_RTTI)
#error "the subset is built without RTTI (-fno-rtti)"
#endif

// Floating point: the kernel does not save FPU state for us.
#pragma GCC poison float double
// Exceptions and RTTI by name.
#pragma GCC poison try catch throw typeid dynamic_cast
// C and C++ library allocation: use rt::make_own / new (rt::Gfp).
#pragma GCC poison malloc calloc realloc free aligned_alloc posix_memalign
// Library names that would drag in the hosted runtime.
#pragma GCC poison printf fprintf sprintf snprintf puts abort exit atexit
#pragma GCC poison thread_local

// The throwing allocation functions: `new T` without rt::Gfp is an error.
// gcc 10 (Debian 11's) refuses to delete the implicit declarations; there a
// call that is left after optimisation is the error (and modpost's, on the
// undefined _Znwm, stays behind both).
#if defined(__clang__) || __GNUC__ >= 11
void* operator new(__SIZE_TYPE__) = delete;
void* operator new[](__SIZE_TYPE__) = delete;
#else
void* operator new(__SIZE_TYPE__) __attribute__((error("new T without rt::Gfp")));
void* operator new[](__SIZE_TYPE__) __attribute__((error("new T[] without rt::Gfp")));
#endif
