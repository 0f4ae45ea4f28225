#include "nfs/rpc_tcp_server.h"

#include <asio.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <deque>
#include <mutex>

#include "net/connection_table.h"
#include "net/io_threads.h"
#include "net/listeners.h"
#include "net/reply_queue.h"
#include "nfs/record_assembler.h"

namespace pail::nfs {


namespace {

// Bytes read from the socket per read call; the connection reads again only
// after it has consumed all of them.
constexpr size_t kReadBufferBytes = 64 * 1024;
// How often idle connections are looked for, at most (and at least every
// quarter of the idle timeout).
constexpr auto kMaxIdleSweepPeriod = std::chrono::seconds(30);
constexpr auto kMinIdleSweepPeriod = std::chrono::milliseconds(100);

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

class Connection;

struct RpcTcpServer::Impl {
  Impl(const RpcDispatcher& d, RpcTcpServerOptions o)
      : dispatcher(d), options(std::move(o)), connections("nfs", options.limits) {}

  // Admits a new connection from `address` or says why not; may close the
  // longest-idle connection to make room.
  std::shared_ptr<Connection> Admit(net::Socket& socket, const net::Peer& peer,
                                    std::string* refusal);
  void ScheduleIdleSweep();
  void CloseIdle();
  size_t max_running() const {
    if (options.max_running_per_connection) return options.max_running_per_connection;
    return std::max(1u, std::max(1u, options.worker_threads) / 2);
  }

  const RpcDispatcher& dispatcher;
  RpcTcpServerOptions options;
  asio::io_context io;
  std::unique_ptr<asio::thread_pool> workers;
  net::Listeners listeners{io, "nfs"};
  net::IoThreads io_threads;
  // On a strand of its own: Stop cancels it from another thread.
  std::unique_ptr<asio::steady_timer> idle_timer;
  server::RefusalLog refusal_log;
  net::ConnectionTable<Connection> connections;
  bool started = false;
};

// One client socket.
//
// Reading runs on the connection's strand, and so do quick calls (see
// Submit). The thread that finishes a call sends its reply itself, with one
// non-blocking send, when nothing else is queued or being written; that
// saves a hop to the I/O thread per call. A reply that does not go out whole
// joins the queue, which the strand writes with Asio. write_mu_ keeps those
// two writers apart and keeps workers off the descriptor once the
// connection is closed (its number may be reused).
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(RpcTcpServer::Impl* server, net::Socket socket, const net::Peer& peer)
      : server_(server),
        socket_(std::move(socket)),
        strand_(asio::make_strand(server->io)),
        assembler_(server->options.max_record_bytes),
        read_buffer_(kReadBufferBytes) {
    context_.local_port = peer.local_port;
    context_.peer_address = peer.address;
    context_.peer_port = peer.port;
    Touch();
  }

  const std::string& address() const { return context_.peer_address; }
  // Nothing read and not answered, since when (steady clock nanoseconds);
  // nullopt while calls are in flight.
  std::optional<int64_t> IdleSince() const {
    if (in_flight_ > 0) return std::nullopt;
    return last_active_.load();
  }

  void Start() {
    asio::dispatch(strand_, [self = shared_from_this()] { self->ReadMore(); });
  }

  // Safe from any thread.
  void Close() {
    asio::dispatch(strand_, [self = shared_from_this()] { self->CloseOnStrand(); });
  }

 private:
  bool Full() const {
    return in_flight_ >= server_->options.max_in_flight ||
           in_flight_bytes_ >= server_->options.max_in_flight_bytes;
  }

  // Full(), and if so, asks the next finished call to resume reading. The
  // second look covers a call that finished before paused_ was set.
  bool PauseIfFull() {
    if (!Full()) return false;
    paused_ = true;
    if (Full()) return true;
    paused_ = false;
    return false;
  }

  void ReadMore() {
    if (closed_ || reading_ || read_begin_ < read_end_ || PauseIfFull()) return;
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
          self->Touch();
          self->ProcessBuffered();
          self->ReadMore();
        }));
  }

  // Turns buffered bytes into calls until the buffer is empty or the
  // connection has enough in flight.
  void ProcessBuffered() {
    while (!closed_ && read_begin_ < read_end_ && !PauseIfFull()) {
      bool ready = false;
      Result<size_t> used =
          assembler_.Feed(read_buffer_.data() + read_begin_, read_end_ - read_begin_, &ready);
      if (!used.ok()) {
        spdlog::warn("nfs: closing connection from {}: {}", context_.peer_address,
                     used.status().ToString());
        CloseOnStrand();
        return;
      }
      read_begin_ += *used;
      if (ready) Submit(assembler_.TakeRecord());
    }
  }

  struct Call {
    std::string record;
    size_t charge = 0;  // bytes added to in_flight_bytes_ for it
  };

  void Submit(std::string record) {
    RpcDispatcher::CallShape shape = server_->dispatcher.Examine(record);
    // The reply's size is charged now, before the call runs: a client that
    // pipelines large READs reaches the bound before their replies exist.
    size_t charge = record.size() + shape.reply_bytes_bound;
    in_flight_++;
    in_flight_bytes_ += charge;
    Call call{std::move(record), charge};
    {
      std::lock_guard<std::mutex> lock(run_mu_);
      if (running_ >= server_->max_running()) {
        waiting_.push_back(std::move(call));  // bounded by max_in_flight
        return;
      }
      // A quick call of a connection with nothing else running is answered
      // right here: handing it to a worker would cost two thread switches,
      // more than the call itself. Calls that may wait, and those of a
      // client with calls on the workers (it pipelines: they run side by
      // side there), leave this thread to read for everyone.
      if (!shape.quick || running_ > 0) {
        running_++;
        Post(std::move(call));
        return;
      }
    }
    Execute(std::move(call));
  }

  // Runs `call` on a worker, then the connection's next waiting call. Each
  // goes to the back of the pool's queue, so connections take turns.
  void Post(Call call) {
    asio::post(*server_->workers, [self = shared_from_this(), call = std::move(call)]() mutable {
      self->Execute(std::move(call));
      self->RunNext();
    });
  }

  // Runs `call` on this thread and answers it.
  void Execute(Call call) {
    std::optional<std::string> reply = server_->dispatcher.Dispatch(call.record, context_);
    if (reply) {
      Deliver(std::move(*reply), call.charge);
    } else {
      in_flight_bytes_ -= call.charge;
      Finished(1, 0);
    }
  }

  // On a worker that finished a call: starts this connection's next waiting
  // call in its place.
  void RunNext() {
    Call next;
    {
      std::lock_guard<std::mutex> lock(run_mu_);
      if (waiting_.empty() || closed_) {
        running_--;
        return;
      }
      next = std::move(waiting_.front());
      waiting_.pop_front();
    }
    Post(std::move(next));
  }

  // On the thread that ran the call: sends `reply` now if the socket is
  // free, else queues it. `charge` is what the call held of in_flight_bytes_; the reply's real
  // size replaces it.
  void Deliver(std::string reply, size_t charge) {
    size_t size = reply.size();
    in_flight_bytes_ += size;
    in_flight_bytes_ -= charge;
    net::ReplyQueue::Pushed pushed;
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      if (closed_) {
        pushed = net::ReplyQueue::Pushed::kSent;  // dropped, as if sent
      } else {
        pushed = replies_.Push(socket_.native_handle(), std::move(reply));
      }
    }
    switch (pushed) {
      case net::ReplyQueue::Pushed::kSent:
        Finished(1, size);
        break;
      case net::ReplyQueue::Pushed::kFailed:
        Finished(1, size);
        Close();
        break;
      case net::ReplyQueue::Pushed::kStartWriter:
        asio::post(strand_, [self = shared_from_this()] { self->WriteQueued(); });
        break;
      case net::ReplyQueue::Pushed::kQueued:
        break;
    }
  }

  // On the strand, once Push asked for the writer: writes queued replies
  // until none is left.
  void WriteQueued() {
    std::vector<asio::const_buffer> buffers;
    {
      std::lock_guard<std::mutex> lock(write_mu_);
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
          size_t bytes;
          bool more;
          {
            std::lock_guard<std::mutex> lock(self->write_mu_);
            bytes = self->replies_.Pop(count, &more);
          }
          self->Finished(count, bytes);
          if (more) self->WriteQueued();
        }));
  }

  // Any thread: `calls` replies (of `bytes` bytes) are done with.
  void Finished(size_t calls, size_t bytes) {
    in_flight_bytes_ -= bytes;
    Touch();
    in_flight_ -= calls;
    if (paused_.exchange(false)) {
      asio::post(strand_, [self = shared_from_this()] {
        self->ProcessBuffered();
        self->ReadMore();
      });
    }
  }

  void Touch() { last_active_ = NowNanos(); }

  void CloseOnStrand() {
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      if (closed_) return;
      closed_ = true;
      // Queued replies stay: an aborted write may still point into them.
      asio::error_code ignored;
      socket_.shutdown(net::Socket::shutdown_both, ignored);
      socket_.close(ignored);
    }
    {
      // Calls that never started are dropped with their charges.
      std::lock_guard<std::mutex> lock(run_mu_);
      for (Call& call : waiting_) {
        in_flight_bytes_ -= call.charge;
        in_flight_--;
      }
      waiting_.clear();
    }
    server_->connections.Forget(this);
  }

  RpcTcpServer::Impl* server_;
  net::Socket socket_;
  asio::strand<asio::io_context::executor_type> strand_;
  CallContext context_;
  // Reading side, on the strand only.
  RecordAssembler assembler_;
  std::vector<char> read_buffer_;
  size_t read_begin_ = 0;
  size_t read_end_ = 0;
  bool reading_ = false;
  // Shared with workers.
  std::atomic<bool> closed_{false};
  std::atomic<bool> paused_{false};   // reading stopped until a call finishes
  std::atomic<size_t> in_flight_{0};        // calls read and not yet answered on the wire
  std::atomic<size_t> in_flight_bytes_{0};  // their request or reply bytes
  std::atomic<int64_t> last_active_{0};     // NowNanos() of the last read or reply
  std::mutex run_mu_;
  size_t running_ = 0;        // guarded by run_mu_: calls on the workers
  std::deque<Call> waiting_;  // guarded by run_mu_: calls waiting for a worker
  std::mutex write_mu_;
  net::ReplyQueue replies_;  // guarded by write_mu_
};

std::shared_ptr<Connection> RpcTcpServer::Impl::Admit(net::Socket& socket, const net::Peer& peer,
                                                      std::string* refusal) {
  const std::string& address = peer.address;
  if (std::optional<std::string> why = connections.ClientRefusal(address)) {
    *refusal = *why;
    return nullptr;
  }
  // The reserve: the connection idle longest makes room; its client
  // reconnects when it needs to. Accepts run one at a time (net::Listeners),
  // so the room stays ours; other threads only ever free more.
  if (connections.Full()) {
    std::vector<std::shared_ptr<Connection>> open = connections.Open();
    std::shared_ptr<Connection> victim;
    int64_t oldest = 0;
    for (const auto& candidate : open) {
      std::optional<int64_t> since = candidate->IdleSince();
      if (since && (!victim || *since < oldest)) {
        victim = candidate;
        oldest = *since;
      }
    }
    if (!victim) {
      *refusal = std::to_string(open.size()) + " connections open, all busy (max_connections)";
      return nullptr;
    }
    if (connections.Forget(victim.get())) {
      refusal_log.Refused("rpc: connection table full; closing the longest-idle connection (from " +
                          victim->address() + ") for a new one from " + address);
      victim->Close();
    }
  }
  return connections.Admit(address, refusal, [&] {
    return std::make_shared<Connection>(this, std::move(socket), peer);
  });
}

void RpcTcpServer::Impl::ScheduleIdleSweep() {
  auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(options.limits.idle_timeout);
  auto period = std::clamp<std::chrono::milliseconds>(
      timeout / 4, kMinIdleSweepPeriod, std::chrono::milliseconds(kMaxIdleSweepPeriod));
  idle_timer->expires_after(period);
  idle_timer->async_wait([this](asio::error_code ec) {
    if (ec) return;  // cancelled: stopping
    // Fired just before Stop cancelled it: re-arming would keep the I/O
    // threads from draining.
    if (connections.stopped()) return;
    CloseIdle();
    ScheduleIdleSweep();
  });
}

void RpcTcpServer::Impl::CloseIdle() {
  int64_t limit = NowNanos() - std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   options.limits.idle_timeout).count();
  for (const auto& connection : connections.Open()) {
    std::optional<int64_t> since = connection->IdleSince();
    if (since && *since < limit && connections.Forget(connection.get())) {
      spdlog::debug("rpc: closing connection from {}: idle", connection->address());
      connection->Close();
    }
  }
}

RpcTcpServer::RpcTcpServer(const RpcDispatcher& dispatcher, RpcTcpServerOptions options)
    : impl_(std::make_unique<Impl>(dispatcher, std::move(options))) {}

RpcTcpServer::~RpcTcpServer() { Stop(); }

Status RpcTcpServer::Start() {
  Impl& s = *impl_;
  if (s.started) return Status::InvalidArgument("RPC server already started");
  if (s.options.addresses.empty()) return Status::InvalidArgument("no listen address configured");
  PAIL_RETURN_IF_ERROR(s.listeners.Open(s.options.addresses, ""));
  s.started = true;
  s.workers = std::make_unique<asio::thread_pool>(std::max(1u, s.options.worker_threads));
  s.listeners.Start([&s](net::Socket socket, const net::Peer& peer) {
    std::string refusal;
    std::shared_ptr<Connection> connection = s.Admit(socket, peer, &refusal);
    if (connection) {
      connection->Start();
    } else {
      if (!refusal.empty()) s.refusal_log.Refused("rpc: refusing connection: " + refusal);
      asio::error_code ignored;
      socket.close(ignored);
    }
  });
  s.idle_timer = std::make_unique<asio::steady_timer>(asio::make_strand(s.io));
  if (s.options.limits.idle_timeout.count() > 0) s.ScheduleIdleSweep();
  s.io_threads.Start(s.io, s.options.io_threads);
  return Status::OK();
}

void RpcTcpServer::Stop() {
  Impl& s = *impl_;
  if (!s.started) return;
  net::StopServing(s.connections, s.listeners, *s.workers, s.io_threads, [&s] {
    asio::dispatch(s.idle_timer->get_executor(), [&s] { s.idle_timer->cancel(); });
  });
}

std::vector<uint16_t> RpcTcpServer::bound_ports() const { return impl_->listeners.bound_ports(); }

}  // namespace pail::nfs
