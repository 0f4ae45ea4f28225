#include "ninep/server.h"

#include <asio.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <map>

#include "net/connection_table.h"
#include "net/io_threads.h"
#include "net/listeners.h"
#include "net/reply_queue.h"
#include "util/mutex.h"

namespace pail::ninep {

using net::Socket;

namespace {

// Bytes read from the socket per read call.
constexpr size_t kReadBufferBytes = 64 * 1024;

uint32_t LoadU32(const char* p) {
  return uint32_t{static_cast<uint8_t>(p[0])} | uint32_t{static_cast<uint8_t>(p[1])} << 8 |
         uint32_t{static_cast<uint8_t>(p[2])} << 16 | uint32_t{static_cast<uint8_t>(p[3])} << 24;
}

// Whether a request of this type may run on the I/O thread itself when it
// is the only one its connection has in flight. These touch metadata only
// (the core's key-value store, in memory or its local cache), so they take
// tens of microseconds; handing each to a worker would cost two thread
// switches more than the work, and on a loaded machine (a VM guest's
// emulator sharing the cores) each switch can cost as much again. Reads
// and writes may wait on the bucket, on write-back memory or on a file's
// lock held across an upload: they run here only as far as
// Session::TryHandle finds they need not wait (bytes in memory, room in
// the buffer, the lock free), and go to a worker otherwise. Fsync and
// readdir always go to the workers, as does anything arriving while
// another request of the connection is still running.
bool RunsInline(uint8_t type) {
  switch (type) {
    case kTwalk: case kTgetattr: case kTclunk: case kTlopen: case kTlcreate: case kTmkdir:
    case kTunlinkat: case kTremove: case kTstatfs: case kTsetattr: case kTreadlink:
    case kTsymlink: case kTmknod: case kTlink: case kTrename: case kTrenameat:
    case kTxattrwalk: case kTxattrcreate: case kTlock: case kTgetlock:
    case kTread: case kTwrite:
      return true;
    default:
      return false;
  }
}

uint16_t TagOf(const std::string& message) {
  return static_cast<uint16_t>(static_cast<uint8_t>(message[5]) |
                               static_cast<uint8_t>(message[6]) << 8);
}

}  // namespace

class Connection;

struct NinepServer::Impl {
  Impl(fs::FileSystem& f, NinepServerOptions o)
      : fs(f), options(std::move(o)), connections("9p", options.session.identity.limits) {}

  void Admit(Socket socket, const net::Peer& from);

  fs::FileSystem& fs;
  NinepServerOptions options;
  fs::ByteRangeLocks locks;
  server::RefusalLog refusals;
  asio::io_context io;
  std::unique_ptr<asio::thread_pool> workers;
  net::Listeners listeners{io, "9p"};
  net::IoThreads io_threads;
  std::atomic<uint64_t> next_session{1};
  net::ConnectionTable<Connection> connections;
  bool started = false;
};

// One client connection.
//
// Reading and framing run on the connection's strand; requests run on the
// workers, except one arriving while the connection has nothing else in
// flight that is metadata-only, or a read or write that need not wait,
// which runs right there (RunsInline). A worker that finishes a request
// sends its reply itself, with
// one non-blocking send, when nothing else is queued or being written (one
// thread hop per request instead of two); a reply that does not go out
// whole joins the queue, which the strand writes with Asio. mu_ guards the
// tag table, the queue and the byte count, keeps those two writers apart,
// and keeps workers off the descriptor once it is closed (its number may
// be reused).
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `address`: the client's IP ("" for the Unix socket), as counted;
  // `peer`: how logs name it.
  Connection(NinepServer::Impl* server, Socket socket, std::string address, std::string peer)
      : server_(server),
        socket_(std::move(socket)),
        strand_(asio::make_strand(server->io)),
        address_(std::move(address)),
        peer_(std::move(peer)),
        session_(server->fs, server->locks, server->options.session,
                 server->next_session.fetch_add(1)),
        read_buffer_(kReadBufferBytes),
        attach_timer_(strand_) {}

  const std::string& address() const { return address_; }

  void Start() {
    asio::dispatch(strand_, [self = shared_from_this()] {
      self->StartAttachTimer();
      self->ReadMore();
    });
  }
  void Close() {
    asio::dispatch(strand_, [self = shared_from_this()] { self->CloseOnStrand(); });
  }

 private:
  // A request between arrival and its reply.
  struct Pending {
    std::atomic<bool> cancelled{false};
    std::vector<uint16_t> flushes;  // under mu_: Tflush tags to answer after it
  };

  bool Full() const REQUIRES(mu_) {
    return pending_.size() >= server_->options.max_tags ||
           buffered_bytes_ >= server_->options.max_buffered_bytes;
  }

  // On the strand: false (and reading paused until replies drain) when the
  // connection may not take another request now, or is closed.
  bool MayRead() {
    MutexLock lock(&mu_);
    if (closed_) return false;
    paused_ = Full();
    return !paused_;
  }

  void ReadMore() {
    if (reading_ || read_begin_ < read_end_ || !MayRead()) return;
    read_begin_ = read_end_ = 0;
    reading_ = true;
    socket_.async_read_some(
        asio::buffer(read_buffer_.data(), read_buffer_.size()),
        asio::bind_executor(strand_, [self = shared_from_this()](asio::error_code ec, size_t n) {
          self->reading_ = false;
          if (ec) {
            self->CloseOnStrand();
            return;
          }
          self->read_end_ = n;
          self->ProcessBuffered();
          self->ReadMore();
        }));
  }

  // On the strand: cuts buffered bytes into messages until the buffer is
  // empty or the connection has enough outstanding.
  void ProcessBuffered() {
    while (read_begin_ < read_end_ && MayRead()) {
      size_t available = read_end_ - read_begin_;
      const char* at = read_buffer_.data() + read_begin_;
      if (message_.size() < 4) {
        size_t take = std::min(available, 4 - message_.size());
        message_.append(at, take);
        read_begin_ += take;
        if (message_.size() < 4) continue;
        message_size_ = LoadU32(message_.data());
        if (message_size_ < kHeaderBytes || message_size_ > session_.msize()) {
          spdlog::warn("9p: closing connection from {}: message of {} bytes (msize {})", peer_,
                       message_size_, session_.msize());
          CloseOnStrand();
          return;
        }
        message_.reserve(message_size_);
        continue;
      }
      size_t take = std::min(available, message_size_ - message_.size());
      message_.append(at, take);
      read_begin_ += take;
      if (message_.size() == message_size_) {
        std::string message;
        message.swap(message_);
        if (!Submit(std::move(message))) return;
      }
    }
  }

  // On the strand. False when the connection had to be closed.
  bool Submit(std::string message) {
    uint8_t type = static_cast<uint8_t>(message[4]);
    uint16_t tag = TagOf(message);
    const char* problem = nullptr;
    std::shared_ptr<Pending> pending;
    bool run_here = false;
    {
      MutexLock lock(&mu_);
      if (pending_.count(tag)) {
        problem = "a tag reused while in flight";
      } else if (type == kTflush && message.size() == kHeaderBytes + 2) {
        uint16_t old_tag = static_cast<uint16_t>(static_cast<uint8_t>(message[7]) |
                                                 static_cast<uint8_t>(message[8]) << 8);
        auto it = pending_.find(old_tag);
        if (it != pending_.end()) {
          if (it->second->flushes.size() >= server_->options.max_tags) {
            problem = "too many flushes of one tag";
          } else {
            it->second->cancelled = true;
            it->second->flushes.push_back(tag);
            return true;
          }
        }
        // Nothing pending under that tag: the session answers at once.
      }
      if (!problem) {
        pending = std::make_shared<Pending>();
        pending_.emplace(tag, pending);
        buffered_bytes_ += message.size();
        run_here = pending_.size() == 1 && RunsInline(type);
      }
    }
    if (problem) {
      spdlog::warn("9p: closing connection from {}: {} (tag {})", peer_, problem, tag);
      CloseOnStrand();
      return false;
    }
    if (run_here) {
      // On the strand: nothing else of this connection runs, and a Tflush
      // of this tag cannot be read before the reply is out. A request that
      // would wait did nothing and goes to a worker like any other.
      std::optional<std::string> reply = session_.TryHandle(message);
      if (reply) {
        Finish(tag, message.size(), std::move(*reply));
        return true;
      }
    }
    asio::post(*server_->workers, [self = shared_from_this(), pending, tag,
                                   message = std::move(message)] {
      std::optional<std::string> reply;
      if (!pending->cancelled) reply = self->session_.Handle(message);
      self->Finish(tag, message.size(), std::move(reply));
    });
    return true;
  }

  // On a worker: the request finished (no reply: flushed before it ran).
  // Sends its reply, then the Rflush of every Tflush that named it.
  void Finish(uint16_t tag, size_t request_bytes, std::optional<std::string> reply) {
    bool start_writer = false, resume = false, failed = false;
    {
      MutexLock lock(&mu_);
      buffered_bytes_ -= request_bytes;
      auto it = pending_.find(tag);
      std::vector<uint16_t> flushes = std::move(it->second->flushes);
      pending_.erase(it);
      std::vector<std::string> out;
      if (reply) out.push_back(std::move(*reply));
      for (uint16_t flush_tag : flushes) {
        WireWriter w(kRflush, flush_tag);
        out.push_back(w.Finish());
      }
      // In order, under mu_: an Rflush never overtakes its request's reply.
      for (std::string& r : out) {
        if (closed_ || failed) break;
        const size_t size = r.size();
        switch (replies_.Push(socket_.native_handle(), std::move(r))) {
          case net::ReplyQueue::Pushed::kSent:
            break;
          case net::ReplyQueue::Pushed::kFailed:
            failed = true;
            break;
          case net::ReplyQueue::Pushed::kStartWriter:
            start_writer = true;
            buffered_bytes_ += size;
            break;
          case net::ReplyQueue::Pushed::kQueued:
            buffered_bytes_ += size;
            break;
        }
      }
      if (paused_ && !Full()) {
        paused_ = false;
        resume = true;
      }
    }
    if (failed) Close();
    if (start_writer) asio::post(strand_, [self = shared_from_this()] { self->WriteQueued(); });
    if (resume) {
      asio::post(strand_, [self = shared_from_this()] {
        self->ProcessBuffered();
        self->ReadMore();
      });
    }
  }

  // On the strand, once Push asked for the writer: writes queued replies
  // until none is left.
  void WriteQueued() {
    std::vector<asio::const_buffer> buffers;
    {
      MutexLock lock(&mu_);
      if (closed_) return;
      buffers = replies_.NextWrite();
    }
    asio::async_write(
        socket_, buffers,
        asio::bind_executor(strand_, [self = shared_from_this(), count = buffers.size()](
                                         asio::error_code ec, size_t) {
          if (ec) {
            self->CloseOnStrand();
            return;
          }
          bool more;
          {
            MutexLock lock(&self->mu_);
            self->buffered_bytes_ -= self->replies_.Pop(count, &more);
          }
          if (more) self->WriteQueued();
          self->ProcessBuffered();
          self->ReadMore();
        }));
  }

  // On the strand. The timer's handler runs there too (its executor).
  void StartAttachTimer() {
    const std::chrono::seconds timeout = server_->options.attach_timeout;
    if (timeout.count() == 0) return;
    attach_timer_.expires_after(timeout);
    attach_timer_.async_wait([self = shared_from_this(), timeout](asio::error_code ec) {
      if (ec || self->session_.attached()) return;
      spdlog::warn("9p: closing connection from {}: no attach within {} s", self->peer_,
                   timeout.count());
      self->CloseOnStrand();
    });
  }

  void CloseOnStrand() {
    attach_timer_.cancel();  // its handler holds the connection
    {
      MutexLock lock(&mu_);
      if (closed_) return;
      closed_ = true;
      // Queued replies stay: an aborted write may still point into them.
      asio::error_code ignored;
      socket_.shutdown(Socket::shutdown_both, ignored);
      socket_.close(ignored);
    }
    server_->connections.Forget(this);
  }

  NinepServer::Impl* server_;
  Socket socket_;
  asio::strand<asio::io_context::executor_type> strand_;
  const std::string address_;
  std::string peer_;
  Session session_;  // thread-safe; used by the workers
  // Reading side: strand only.
  std::vector<char> read_buffer_;
  size_t read_begin_ = 0;
  size_t read_end_ = 0;
  bool reading_ = false;
  std::string message_;  // the message being assembled
  uint32_t message_size_ = 0;
  asio::steady_timer attach_timer_;  // strand only
  // Shared with the workers.
  Mutex mu_;
  std::map<uint16_t, std::shared_ptr<Pending>> pending_ GUARDED_BY(mu_);
  size_t buffered_bytes_ GUARDED_BY(mu_) = 0;  // requests in flight and unsent replies
  net::ReplyQueue replies_ GUARDED_BY(mu_);
  bool paused_ GUARDED_BY(mu_) = false;    // reading stopped until replies drain
  bool closed_ GUARDED_BY(mu_) = false;
};

void NinepServer::Impl::Admit(Socket socket, const net::Peer& from) {
  const std::string peer = from.tcp() ? from.address : "unix socket";
  asio::error_code ignored;
  if (from.tcp()) {
    // The shared client policy (allow-list, secure port); a Unix socket's
    // callers are whoever its file permissions let in.
    std::optional<std::string> refusal =
        options.session.identity.RefusalReason(from.address, from.port);
    if (refusal) {
      refusals.Refused("9p: refusing connection from " + peer + ": " + *refusal);
      socket.close(ignored);
      return;
    }
  }
  const std::string address = from.tcp() ? from.address : "";
  std::string refusal;
  std::shared_ptr<Connection> connection = connections.Admit(address, &refusal, [&] {
    return std::make_shared<Connection>(this, std::move(socket), address, peer);
  });
  if (connection) {
    connection->Start();
    return;
  }
  if (!refusal.empty()) refusals.Refused("9p: refusing connection from " + peer + ": " + refusal);
  socket.close(ignored);
}

NinepServer::NinepServer(fs::FileSystem& fs, NinepServerOptions options)
    : impl_(std::make_unique<Impl>(fs, std::move(options))) {}

NinepServer::~NinepServer() { Stop(); }

Status NinepServer::Start() {
  Impl& s = *impl_;
  if (s.started) return Status::InvalidArgument("9P server already started");
  if (s.options.addresses.empty() && s.options.unix_socket.empty()) {
    return Status::InvalidArgument("9P server: no address or unix_socket configured");
  }
  PAIL_RETURN_IF_ERROR(s.listeners.Open(s.options.addresses, s.options.unix_socket));
  s.started = true;
  s.workers = std::make_unique<asio::thread_pool>(std::max(1u, s.options.worker_threads));
  s.listeners.Start([&s](Socket socket, const net::Peer& from) { s.Admit(std::move(socket), from); });
  s.io_threads.Start(s.io, s.options.io_threads);
  spdlog::info("9p: 9P2000.L listening on {}; msize up to {}", s.listeners.Describe(),
               s.options.session.max_msize);
  return Status::OK();
}

void NinepServer::Stop() {
  Impl& s = *impl_;
  if (!s.started) return;
  // Every connection, with the files it holds open, is gone before the
  // filesystem closes.
  net::StopServing(s.connections, s.listeners, *s.workers, s.io_threads);
}

std::vector<uint16_t> NinepServer::bound_ports() const { return impl_->listeners.bound_ports(); }

}  // namespace pail::ninep
