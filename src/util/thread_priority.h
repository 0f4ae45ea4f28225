// Scheduling priority of the threads that answer requests.
//
// Every client of the filesystem waits on those threads, and each request
// is a few microseconds of their work. At the same priority as the
// clients, the scheduler shares the processors out evenly, so on a busy
// machine a request waits behind the time slices of the very processes
// waiting for it. Ten stress-ng stressors at once over FUSE on 2 cores
// (docs/benchmarks.md, session 27) ran up to twice as many operations
// each with the request threads at nice -10: FUSE's request loop and, since
// session 30, its fsync pool. The NFS server's threads at -10 did worse
// against libnfs clients on the same processors (more server CPU per
// operation), so the socket servers keep the normal priority, as does
// background work (compactions, uploads, segment collection).
#pragma once

namespace pail {

inline constexpr int kRequestThreadNice = -10;

// Sets the calling thread's nice value. Returns false, changing nothing,
// without the privilege to raise it (CAP_SYS_NICE); the thread then runs
// as before, which is no error.
bool SetThreadNice(int nice);

}  // namespace pail
