// SPDX-License-Identifier: GPL-2.0
// Lock rules the compiler checks: Clang's thread safety analysis
// (-Wthread-safety) reads these attributes. They name which lock guards a
// member (GUARDED_BY), which lock a function needs (REQUIRES) or must not
// hold (EXCLUDES), and which functions take and let go of one (ACQUIRE,
// RELEASE). Every other compiler (gcc: the kernel's build and the host's
// default one) sees nothing: each macro expands to nothing there.
//
// The unit.thread-safety test builds the core with clang and
// -Wthread-safety -Werror (test/thread-safety/run.sh).
#pragma once

#if defined(__clang__)
#define RT_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define RT_THREAD_ANNOTATION(x)
#endif

// A class whose objects are locks ("mutex": the name in the messages).
#define CAPABILITY(x) RT_THREAD_ANNOTATION(capability(x))
// A class that holds a lock for its lifetime (a guard).
#define SCOPED_CAPABILITY RT_THREAD_ANNOTATION(scoped_lockable)
// A member read or written only with the lock held.
#define GUARDED_BY(x) RT_THREAD_ANNOTATION(guarded_by(x))
// A pointer member whose target is read or written only with the lock held.
#define PT_GUARDED_BY(x) RT_THREAD_ANNOTATION(pt_guarded_by(x))
// Lock order: this lock is taken before / after the ones named.
#define ACQUIRED_BEFORE(...) RT_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) RT_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
// The caller holds the locks (exclusively), and still does on return.
#define REQUIRES(...) RT_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// The function takes the locks (this object, with no argument) / lets go.
#define ACQUIRE(...) RT_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) RT_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// Takes the lock when it returns the first argument.
#define TRY_ACQUIRE(...) RT_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// The caller must not hold the locks (the function takes them itself).
#define EXCLUDES(...) RT_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// From here on the analysis takes the lock as held (a check made at run time).
#define ASSERT_CAPABILITY(x) RT_THREAD_ANNOTATION(assert_capability(x))
// The function returns (a reference to) this lock.
#define RETURN_CAPABILITY(x) RT_THREAD_ANNOTATION(lock_returned(x))
// The function is not analysed: for a correct pattern the analysis cannot
// follow. Say why beside each use.
#define NO_THREAD_SAFETY_ANALYSIS RT_THREAD_ANNOTATION(no_thread_safety_analysis)
