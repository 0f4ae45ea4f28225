#include "fuse/fuse_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <thread>

#include <spdlog/spdlog.h>

#include "fuse/device_io.h"
#include "fuse/fuse_lowlevel_include.h"
#include "fuse/fuse_ops.h"
#include "fuse/kernel_invalidator.h"
#include "fuse/request_loop.h"
#include "metrics/protocol_metrics.h"
#include "util/mutex.h"
#include "util/thread_priority.h"

namespace pail::fuse {

namespace {

// How long Start() waits for the kernel's INIT after mounting.
constexpr std::chrono::seconds kInitTimeout{10};
// How long Stop() lets the kernel end the connection after the lazy
// unmount (it does once nothing uses the mount any more) before aborting it.
constexpr std::chrono::seconds kUnmountGrace{3};
// Where the kernel's fusectl filesystem lists FUSE connections by device
// minor number; writing to <minor>/abort ends a connection at once.
constexpr const char* kFuseConnectionsDir = "/sys/fs/fuse/connections";

void LogFromLibfuse(enum fuse_log_level level, const char* fmt, va_list ap) {
  char line[1024];
  std::vsnprintf(line, sizeof line, fmt, ap);
  size_t n = std::strlen(line);
  while (n > 0 && line[n - 1] == '\n') line[--n] = '\0';
  if (level <= FUSE_LOG_ERR) {
    spdlog::error("fuse: {}", line);
  } else if (level <= FUSE_LOG_NOTICE) {
    spdlog::info("fuse: {}", line);
  } else {
    spdlog::debug("fuse: {}", line);
  }
}

// Whether the kernel still serves the FUSE connection on `fd`: once the
// mount is gone or the connection aborted, the device polls as POLLERR.
bool ConnectionAlive(int fd) {
  pollfd p{fd, 0, 0};
  return poll(&p, 1, 0) == 0 || (p.revents & POLLERR) == 0;
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Ends a FUSE connection that the lazy unmount left alive because some
// process still holds a file of it open.
void AbortConnection(dev_t dev) {
  struct stat st;
  if (stat(kFuseConnectionsDir, &st) == 0 &&
      stat((std::string(kFuseConnectionsDir) + "/" + std::to_string(minor(dev))).c_str(), &st) != 0) {
    // fusectl may simply not be mounted yet.
    mount("fusectl", kFuseConnectionsDir, "fusectl", 0, nullptr);
  }
  std::string abort_path =
      std::string(kFuseConnectionsDir) + "/" + std::to_string(minor(dev)) + "/abort";
  int fd = open(abort_path.c_str(), O_WRONLY);
  if (fd < 0 || write(fd, "1", 1) != 1) {
    spdlog::error("fuse: could not abort connection via {}: {}", abort_path, std::strerror(errno));
  }
  if (fd >= 0) close(fd);
}

}  // namespace

class FuseServer::Impl {
 public:
  Impl(fs::FileSystem& fs, FuseServerOptions options) : options_(std::move(options)) {
    context_.fs = &fs;
    context_.on_init = [this] {
      MutexLock g(&mu_);
      initialized_ = true;
      cv_.SignalAll();
    };
  }

  Status Start();
  void Stop();

 private:
  Status CheckMountpoint();
  void RunLoop();

  FuseServerOptions options_;
  FuseContext context_;
  fuse_session* session_ = nullptr;
  bool mounted_ = false;
  dev_t mount_dev_ = 0;
  std::thread loop_;
  // Fsyncs waiting beyond the pool's threads; more are answered inline.
  static constexpr size_t kSyncBacklog = 64;
  std::unique_ptr<ThreadPool> sync_pool_;

  Mutex mu_;
  CondVar cv_{&mu_};
  bool initialized_ GUARDED_BY(mu_) = false;
  bool loop_ended_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
};

Status FuseServer::Impl::CheckMountpoint() {
  const std::string& mnt = options_.mountpoint;
  if (mnt.empty()) return Status::InvalidArgument("fuse: mountpoint is empty");
  // A FUSE mount whose server died (a crash or SIGKILL of an earlier
  // pailfs) answers ENOTCONN to statfs(), which always asks the server.
  // (stat() is answered from the root's cached attributes for up to
  // kAttrTimeoutSeconds.) A new mount on top of the dead one would leave it
  // behind when it goes.
  struct statfs fs_stat;
  if (statfs(mnt.c_str(), &fs_stat) != 0 && errno == ENOTCONN) {
    // Nothing can use it any more, so detach it and mount afresh.
    spdlog::warn("fuse: detaching stale mount at {}", mnt);
    if (umount2(mnt.c_str(), MNT_DETACH) != 0) {
      return Status::IOError(Errno("fuse: detaching stale mount at " + mnt));
    }
  }
  struct stat st;
  if (stat(mnt.c_str(), &st) != 0) return Status::InvalidArgument(Errno("fuse: mountpoint " + mnt));
  if (!S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("fuse: mountpoint " + mnt + " is not a directory");
  }
  return Status::OK();
}

Status FuseServer::Impl::Start() {
  if (session_ != nullptr) return Status::InvalidArgument("fuse: already started");
  PAIL_RETURN_IF_ERROR(CheckMountpoint());
  fuse_set_log_func(LogFromLibfuse);

  // default_permissions: the kernel checks access with the attributes we
  // report, including on cached path lookups, which never reach us.
  std::string mount_options = "default_permissions,fsname=pailfs,subtype=pailfs";
  if (options_.allow_other) mount_options += ",allow_other";
  std::string program = "pailfs", dash_o = "-o";
  char* argv[] = {program.data(), dash_o.data(), mount_options.data(), nullptr};
  fuse_args args = FUSE_ARGS_INIT(3, argv);
  session_ = fuse_session_new(&args, &FuseOperations(), sizeof(fuse_lowlevel_ops), &context_);
  fuse_opt_free_args(&args);
  if (session_ == nullptr) return Status::InvalidArgument("fuse: could not create session");

  if (fuse_session_mount(session_, options_.mountpoint.c_str()) != 0) {
    fuse_session_destroy(session_);
    session_ = nullptr;
    return Status::IOError("fuse: mounting " + options_.mountpoint +
                           " failed (is /dev/fuse usable and are we root?)");
  }
  if (int rc = UseDeviceIo(session_); rc != 0) {
    fuse_session_unmount(session_);
    fuse_session_destroy(session_);
    session_ = nullptr;
    return Status::IOError("fuse: could not take over the device's reads and writes (" +
                           std::to_string(rc) + ")");
  }
  mounted_ = true;
  // libfuse refuses notifications until the kernel's INIT, so attaching
  // before the loop starts loses none.
  if (options_.invalidator != nullptr) options_.invalidator->Attach(session_);
  metrics::ProtocolMetrics::For("fuse").ConnectionOpened();
  // The pool answers fsyncs, so its threads run ahead of their callers
  // like the request loop's (thread_priority.h).
  sync_pool_ = std::make_unique<ThreadPool>(options_.threads, kSyncBacklog, kRequestThreadNice);
  context_.sync_pool = sync_pool_.get();
  loop_ = std::thread([this] { RunLoop(); });

  bool live;
  {
    MutexLock lock(&mu_);
    const auto deadline = std::chrono::steady_clock::now() + kInitTimeout;
    while (!initialized_ && !loop_ended_ && cv_.WaitUntil(deadline)) {
    }
    live = initialized_;
  }
  if (!live) {
    Stop();
    return Status::IOError("fuse: the kernel did not complete the handshake at " +
                           options_.mountpoint);
  }
  struct stat st;
  if (stat(options_.mountpoint.c_str(), &st) == 0) mount_dev_ = st.st_dev;
  spdlog::info("fuse: mounted at {}", options_.mountpoint);
  return Status::OK();
}

void FuseServer::Impl::RunLoop() {
  int rc = RequestLoop(session_, options_.threads).Run();
  if (rc != 0) spdlog::warn("fuse: request loop ended with {}", rc);
  bool unmounted_from_outside;
  {
    MutexLock g(&mu_);
    loop_ended_ = true;
    unmounted_from_outside = initialized_ && !stopping_;
    cv_.SignalAll();
  }
  if (unmounted_from_outside && options_.on_unmounted) options_.on_unmounted();
}

void FuseServer::Impl::Stop() {
  if (session_ == nullptr) return;
  {
    MutexLock g(&mu_);
    stopping_ = true;
  }
  if (options_.invalidator != nullptr) options_.invalidator->Detach();
  fuse_session_exit(session_);
  if (mounted_) {
    // Detaching ends the connection as soon as no process uses the mount;
    // the loop threads then see the device close and return.
    // EINVAL: no mount there any more (unmounted from outside).
    if (umount2(options_.mountpoint.c_str(), MNT_DETACH) != 0 && errno != EINVAL) {
      spdlog::error("fuse: unmounting {}: {}", options_.mountpoint, std::strerror(errno));
    }
    bool ended;
    {
      MutexLock lock(&mu_);
      const auto deadline = std::chrono::steady_clock::now() + kUnmountGrace;
      while (!loop_ended_ && cv_.WaitUntil(deadline)) {
      }
      ended = loop_ended_;
    }
    if (!ended) {
      spdlog::warn("fuse: {} still in use after unmount; aborting the connection",
                   options_.mountpoint);
      if (mount_dev_ != 0) AbortConnection(mount_dev_);
    }
  }
  if (loop_.joinable()) loop_.join();
  // Answers the fsyncs still in the pool while the session can carry them.
  context_.sync_pool = nullptr;
  sync_pool_.reset();
  // The loop also returns at the first request after fuse_session_exit, so
  // processes still using the detached mount can keep the connection alive.
  // It ends now either way; ending it here keeps libfuse, which unmounts a
  // live connection's mount point, from unmounting it a second time.
  if (mounted_ && mount_dev_ != 0 && ConnectionAlive(fuse_session_fd(session_))) {
    AbortConnection(mount_dev_);
  }
  // Closes the device; the mount is gone already, so no second unmount.
  fuse_session_unmount(session_);
  fuse_session_destroy(session_);
  session_ = nullptr;
  mounted_ = false;
  metrics::ProtocolMetrics::For("fuse").ConnectionClosed();
  spdlog::info("fuse: unmounted {}", options_.mountpoint);
}

FuseServer::FuseServer(fs::FileSystem& fs, FuseServerOptions options)
    : impl_(std::make_unique<Impl>(fs, std::move(options))) {}

FuseServer::~FuseServer() { Stop(); }

Status FuseServer::Start() { return impl_->Start(); }

void FuseServer::Stop() { impl_->Stop(); }

}  // namespace pail::fuse
