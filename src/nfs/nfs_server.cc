#include "nfs/nfs_server.h"

#include <chrono>
#include <random>

#include <spdlog/spdlog.h>

#include "nfs/mount_program.h"
#include "nfs/nfs3_program.h"
#include "nfs/portmap_program.h"
#include "nfs/rpc_dispatcher.h"
#include "nfs/rpc_tcp_server.h"

namespace pail::nfs {

namespace {

// RPC header with two 400-byte auth bodies, a 64-byte handle and WRITE's
// fixed arguments fit in well under this.
constexpr size_t kMaxCallOverheadBytes = 4096;

// Differs on every start, so clients notice a restart and resend what they
// had not committed.
uint64_t NewWriteVerifier() {
  std::random_device random;
  uint64_t bits = (uint64_t{random()} << 32) ^ random();
  return bits ^ static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
}

RpcTcpServerOptions TransportOptions(const NfsServerOptions& options) {
  RpcTcpServerOptions transport;
  transport.addresses = options.addresses;
  transport.worker_threads = options.worker_threads;
  transport.io_threads = options.io_threads;
  transport.limits = options.access.limits;
  // The largest call is a WRITE of kMaxIoBytes (FSINFO's wtmax) plus its
  // RPC header, credentials and arguments.
  transport.max_record_bytes = kMaxIoBytes + kMaxCallOverheadBytes;
  return transport;
}

}  // namespace

struct NfsServer::Impl {
  Impl(fs::FileSystem& fs, const NfsServerOptions& options)
      : options(options),
        nfs(fs, options.durable_commit, NewWriteVerifier()),
        mount(fs, options.access.AllowedClientStrings()),
        dispatcher(options.access),
        transport(dispatcher, TransportOptions(options)) {
    dispatcher.Register(&portmap);
    dispatcher.Register(&mount);
    dispatcher.Register(&nfs);
  }

  NfsServerOptions options;
  Nfs3Program nfs;
  MountProgram mount;
  PortmapProgram portmap;
  RpcDispatcher dispatcher;
  RpcTcpServer transport;
};

NfsServer::NfsServer(fs::FileSystem& fs, NfsServerOptions options)
    : impl_(std::make_unique<Impl>(fs, options)) {}

NfsServer::~NfsServer() { Stop(); }

Status NfsServer::Start() {
  PAIL_RETURN_IF_ERROR(impl_->transport.Start());
  std::string where;
  std::vector<uint16_t> ports = impl_->transport.bound_ports();
  for (size_t i = 0; i < ports.size(); i++) {
    if (i) where += ", ";
    where += impl_->options.addresses[i] + " (port " + std::to_string(ports[i]) + ")";
  }
  spdlog::info("nfs: NFSv3 + MOUNT + portmap listening on {}; commit={}; {}", where,
               impl_->options.durable_commit ? "durable" : "async",
               impl_->options.access.Describe());
  return Status::OK();
}

void NfsServer::Stop() { impl_->transport.Stop(); }

std::vector<uint16_t> NfsServer::bound_ports() const { return impl_->transport.bound_ports(); }

}  // namespace pail::nfs
