// Clang thread-safety annotations (-Wthread-safety), as LevelDB's
// port/thread_annotations.h. Under g++ they expand to nothing; CI builds the
// tree with clang and -Werror=thread-safety so the lock discipline written
// here is checked, not just documented.
#pragma once

#if defined(__clang__)
#define PAIL_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define PAIL_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) PAIL_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY PAIL_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) PAIL_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) PAIL_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_AFTER(...) PAIL_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define ACQUIRED_BEFORE(...) PAIL_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define REQUIRES(...) PAIL_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) PAIL_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) PAIL_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) PAIL_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) PAIL_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) PAIL_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) PAIL_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) PAIL_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) PAIL_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) PAIL_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) PAIL_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS PAIL_THREAD_ANNOTATION(no_thread_safety_analysis)
