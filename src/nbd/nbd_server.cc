#include "nbd/nbd_server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <asio.hpp>
#include <spdlog/spdlog.h>

#include <deque>
#include <map>
#include <memory>
#include <string_view>

#include "nbd/exports.h"
#include "nbd/handshake.h"
#include "nbd/protocol.h"
#include "nbd/transmission.h"
#include "nbd/wire.h"
#include "net/connection_table.h"
#include "net/io_threads.h"
#include "net/listeners.h"

namespace pail::nbd {

using net::Socket;

namespace {
// Replies handed to the kernel per write (gathered into one sendmsg).
constexpr size_t kMaxRepliesPerWrite = 64;
// READs and WRITEs up to this long may run on the I/O thread
// (Transmission::TryExecute): a copy out of or into memory, short enough
// not to hold up other connections' traffic noticeably; the wake-up of a
// worker and the hand-back cost more than the request itself (half the CPU
// samples of random 4 KiB reads).
constexpr uint32_t kMaxInlineBytes = 1u << 20;

// A WRITE's payload. The socket overwrites every byte, so none is zeroed
// first: a std::string of the length cleared each 1 MiB payload, a fifth
// of the server's CPU in sequential writes.
class Payload {
 public:
  explicit Payload(size_t n) : bytes_(n == 0 ? nullptr : new char[n]), size_(n) {}
  char* data() { return bytes_.get(); }
  std::string_view view() const { return {bytes_.get(), size_}; }
  size_t size() const { return size_; }
  // Frees the bytes once the write is done, before its reply goes out.
  void Release() {
    bytes_.reset();
    size_ = 0;
  }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t size_;
};
}  // namespace

class Connection;

struct NbdServer::Impl {
  Impl(fs::FileSystem& f, NbdServerOptions o)
      : fs(f), options(std::move(o)), exports(f), connections("nbd", options.access.limits) {}

  // Applies the client policy to a TCP peer, then Adopt.
  void Admit(Socket socket, const net::Peer& from);
  // `address` is the client's IP ("" for the Unix socket), counted against
  // the per-client limit.
  void Adopt(Socket socket, std::string address, std::string peer);

  fs::FileSystem& fs;
  NbdServerOptions options;
  Exports exports;
  asio::io_context io;
  std::unique_ptr<asio::thread_pool> workers;
  net::Listeners listeners{io, "nbd"};
  net::IoThreads io_threads;
  net::ConnectionTable<Connection> connections;
  server::RefusalLog refusal_log;
  bool started = false;
};

// One client. Everything but the work itself happens on the connection's
// strand, so its state needs no lock; workers hand results back by posting
// to the strand.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(NbdServer::Impl* server, Socket socket, std::string address, std::string peer)
      : server_(server),
        socket_(std::move(socket)),
        strand_(asio::make_strand(server->io)),
        address_(std::move(address)),
        peer_(std::move(peer)),
        handshake_(server->exports),
        handshake_timer_(strand_) {}

  void Start() {
    asio::dispatch(strand_, [self = shared_from_this()] {
      self->StartHandshakeTimer();
      self->Send(Handshake::Greeting());
      self->ReadClientFlags();
    });
  }

  void Close() {
    asio::dispatch(strand_, [self = shared_from_this()] { self->CloseOnStrand(); });
  }

  const std::string& address() const { return address_; }

 private:
  // On the strand; the timer runs its handler there too (its executor).
  void StartHandshakeTimer() {
    const std::chrono::seconds timeout = server_->options.handshake_timeout;
    if (timeout.count() == 0) return;
    handshake_timer_.expires_after(timeout);
    handshake_timer_.async_wait([self = shared_from_this(), timeout](asio::error_code ec) {
      if (ec || self->transmission_) return;
      spdlog::warn("nbd: {}: no export chosen within {} s; disconnecting", self->peer_,
                   timeout.count());
      self->CloseOnStrand();
    });
  }

  template <typename F>
  auto OnStrand(F f) {
    return asio::bind_executor(strand_, std::move(f));
  }

  void ReadClientFlags() {
    asio::async_read(socket_, asio::buffer(header_, 4),
                     OnStrand([self = shared_from_this()](asio::error_code ec, size_t) {
                       if (ec) return self->CloseOnStrand();
                       WireReader r(std::string_view(self->header_, 4));
                       if (!self->handshake_.SetClientFlags(r.U32())) {
                         spdlog::warn("nbd: {}: unknown client flags", self->peer_);
                         return self->CloseOnStrand();
                       }
                       self->ReadOption();
                     }));
  }

  void ReadOption() {
    asio::async_read(
        socket_, asio::buffer(header_, kOptionHeaderBytes),
        OnStrand([self = shared_from_this()](asio::error_code ec, size_t) {
          if (ec) return self->CloseOnStrand();
          OptionHeader h = DecodeOptionHeader(std::string_view(self->header_, kOptionHeaderBytes));
          if (h.magic != kOptionMagic || h.length > kMaxOptionBytes) {
            spdlog::warn("nbd: {}: bad option header (magic {:x}, {} bytes)", self->peer_,
                         h.magic, h.length);
            return self->CloseOnStrand();
          }
          self->option_data_.assign(h.length, '\0');
          asio::async_read(self->socket_, asio::buffer(self->option_data_),
                           self->OnStrand([self, option = h.option](asio::error_code ec, size_t) {
                             if (ec) return self->CloseOnStrand();
                             self->RunOption(option);
                           }));
        }));
  }

  // On a worker: the option may look up exports in the filesystem.
  void RunOption(uint32_t option) {
    asio::post(*server_->workers, [self = shared_from_this(), option] {
      auto reply = std::make_shared<std::string>();
      OptionOutcome outcome = self->handshake_.HandleOption(option, self->option_data_, reply.get());
      asio::post(self->strand_, [self, reply, outcome] {
        if (self->closed_) return;
        self->Send(std::move(*reply));
        switch (outcome) {
          case OptionOutcome::kContinue:
            self->ReadOption();
            break;
          case OptionOutcome::kClose:
            self->closing_ = true;
            self->MaybeFinish();
            break;
          case OptionOutcome::kTransmit:
            self->session_ = self->handshake_.session();
            self->transmission_.emplace(self->server_->fs, self->session_);
            self->handshake_timer_.cancel();
            spdlog::debug("nbd: {} attached export '{}'", self->peer_,
                          self->session_.export_info.name);
            self->ReadRequest();
            break;
        }
      });
    });
  }

  bool Full() const {
    return in_flight_ >= server_->options.max_in_flight ||
           in_flight_bytes_ + queued_bytes_ >= server_->options.max_in_flight_bytes;
  }

  void ReadRequest() {
    if (closed_ || closing_ || reading_) return;
    if (Full()) {
      paused_ = true;
      return;
    }
    reading_ = true;
    asio::async_read(
        socket_, asio::buffer(header_, kRequestHeaderBytes),
        OnStrand([self = shared_from_this()](asio::error_code ec, size_t) {
          if (ec) return self->CloseOnStrand();
          Request request = DecodeRequest(std::string_view(self->header_, kRequestHeaderBytes));
          Admission admission = Admit(request);
          if (admission.close) {
            spdlog::warn("nbd: {}: bad request (magic {:x}, type {}, {} bytes); disconnecting",
                         self->peer_, request.magic, request.type, request.length);
            return self->CloseOnStrand();
          }
          auto payload = std::make_shared<Payload>(admission.payload);
          if (admission.payload == 0) return self->Submit(request, admission, payload);
          asio::async_read(self->socket_, asio::buffer(payload->data(), payload->size()),
                           self->OnStrand([self, request, admission, payload](asio::error_code ec,
                                                                              size_t) {
                             if (ec) return self->CloseOnStrand();
                             self->Submit(request, admission, payload);
                           }));
        }));
  }

  void Submit(const Request& request, const Admission& admission,
              std::shared_ptr<Payload> payload) {
    reading_ = false;
    if (request.type == kCmdDisc) {
      closing_ = true;
      MaybeFinish();
      return;
    }
    if ((request.type == kCmdRead || request.type == kCmdWrite) &&
        request.length <= kMaxInlineBytes) {
      // Served from memory right here if it need not wait (TryExecute);
      // NBD orders nothing between requests in flight, so this may pass
      // requests still running on workers.
      std::optional<Outcome> outcome = transmission_->TryExecute(request, payload->view());
      if (outcome) {
        Send(std::move(outcome->reply));
        Send(std::move(outcome->data));
        ReadRequest();
        return;
      }
    }
    in_flight_++;
    in_flight_bytes_ += admission.memory;
    asio::post(*server_->workers, [self = shared_from_this(), request, admission, payload] {
      Outcome outcome = self->transmission_->Execute(request, payload->view());
      payload->Release();
      asio::post(self->strand_, [self, admission, outcome = std::move(outcome)]() mutable {
        self->in_flight_--;
        self->in_flight_bytes_ -= admission.memory;
        if (self->closed_) return;
        if (outcome.close_after) {
          spdlog::warn("nbd: {}: export '{}' is gone; disconnecting", self->peer_,
                       self->session_.export_info.name);
          self->closing_ = true;
        }
        self->Send(std::move(outcome.reply));
        self->Send(std::move(outcome.data));
        if (self->paused_ && !self->Full()) {
          self->paused_ = false;
          self->ReadRequest();
        }
        self->MaybeFinish();
      });
    });
    ReadRequest();
  }

  // What goes out: protocol bytes, or a READ's data as the filesystem read
  // it (sent from its own buffer, not copied).
  struct Reply {
    std::string text;
    ByteBuffer data;
    std::string_view bytes() const { return data.empty() ? std::string_view(text) : data.view(); }
  };

  void Send(std::string text) { Queue(Reply{std::move(text), {}}); }
  void Send(ByteBuffer data) { Queue(Reply{{}, std::move(data)}); }

  void Queue(Reply reply) {
    if (closed_ || reply.bytes().empty()) return;
    queued_bytes_ += reply.bytes().size();
    replies_.push_back(std::move(reply));
    if (!writing_) WriteQueued();
  }

  void WriteQueued() {
    writing_ = true;
    std::vector<asio::const_buffer> buffers;
    size_t count = std::min(replies_.size(), kMaxRepliesPerWrite);
    for (size_t i = 0; i < count; i++) buffers.push_back(asio::buffer(replies_[i].bytes()));
    asio::async_write(socket_, buffers,
                      OnStrand([self = shared_from_this(), count](asio::error_code ec, size_t) {
                        if (ec) return self->CloseOnStrand();
                        for (size_t i = 0; i < count; i++) {
                          self->queued_bytes_ -= self->replies_.front().bytes().size();
                          self->replies_.pop_front();
                        }
                        self->writing_ = false;
                        if (!self->replies_.empty()) {
                          self->WriteQueued();
                        } else {
                          self->MaybeFinish();
                        }
                        if (self->paused_ && !self->Full()) {
                          self->paused_ = false;
                          self->ReadRequest();
                        }
                      }));
  }

  // Closes once a closing connection has answered everything.
  void MaybeFinish() {
    if (closing_ && in_flight_ == 0 && !writing_ && replies_.empty()) CloseOnStrand();
  }

  void CloseOnStrand() {
    if (closed_) return;
    closed_ = true;
    handshake_timer_.cancel();
    asio::error_code ignored;
    socket_.shutdown(asio::socket_base::shutdown_both, ignored);
    socket_.close(ignored);
    server_->connections.Forget(this);
  }

  NbdServer::Impl* server_;
  Socket socket_;
  asio::strand<asio::io_context::executor_type> strand_;
  const std::string address_;
  std::string peer_;
  Handshake handshake_;
  asio::steady_timer handshake_timer_;
  Session session_;
  std::optional<Transmission> transmission_;
  char header_[kRequestHeaderBytes];
  std::string option_data_;
  bool reading_ = false;
  bool paused_ = false;   // stopped reading until something completes
  bool closing_ = false;  // answer what is in flight, then close
  bool closed_ = false;
  bool writing_ = false;
  size_t in_flight_ = 0;
  size_t in_flight_bytes_ = 0;
  size_t queued_bytes_ = 0;
  std::deque<Reply> replies_;
};

void NbdServer::Impl::Adopt(Socket socket, std::string address, std::string peer) {
  std::string refusal;
  std::shared_ptr<Connection> connection = connections.Admit(address, &refusal, [&] {
    return std::make_shared<Connection>(this, std::move(socket), address, peer);
  });
  if (connection) {
    connection->Start();
  } else if (!refusal.empty()) {
    refusal_log.Refused("nbd: refusing " + peer + ": " + refusal);
  }
}

void NbdServer::Impl::Admit(Socket socket, const net::Peer& from) {
  if (!from.tcp()) {
    Adopt(std::move(socket), "", "unix:" + options.unix_socket);
    return;
  }
  std::optional<std::string> refusal = options.access.RefusalReason(from.address, from.port);
  if (refusal) {
    refusal_log.Refused("nbd: refusing connection: " + *refusal);
    asio::error_code ignored;
    socket.close(ignored);
    return;
  }
  Adopt(std::move(socket), from.address, from.address + ":" + std::to_string(from.port));
}

NbdServer::NbdServer(fs::FileSystem& fs, NbdServerOptions options)
    : impl_(std::make_unique<Impl>(fs, std::move(options))) {}

NbdServer::~NbdServer() { Stop(); }

Status NbdServer::Start() {
  Impl& s = *impl_;
  if (s.started) return Status::InvalidArgument("NBD server already started");
  if (s.options.addresses.empty() && s.options.unix_socket.empty()) {
    return Status::InvalidArgument("NBD: no address or unix_socket configured");
  }
  PAIL_RETURN_IF_ERROR(s.exports.EnsureDirectory());
  PAIL_RETURN_IF_ERROR(s.listeners.Open(s.options.addresses, s.options.unix_socket));
  s.started = true;
  s.workers = std::make_unique<asio::thread_pool>(std::max(1u, s.options.worker_threads));
  s.listeners.Start([&s](Socket socket, const net::Peer& from) { s.Admit(std::move(socket), from); });
  s.io_threads.Start(s.io, s.options.io_threads);
  std::string clients;
  for (const std::string& c : s.options.access.AllowedClientStrings()) {
    clients += (clients.empty() ? "" : " ") + c;
  }
  spdlog::info("nbd: serving the files of /{}/ on {}; TCP clients [{}], secure_port={}, max {} "
               "connections ({} per address)",
               kExportDirectory, s.listeners.Describe(), clients, s.options.access.secure_port,
               s.options.access.limits.max_connections,
               s.options.access.limits.max_connections_per_client);
  return Status::OK();
}

void NbdServer::Stop() {
  Impl& s = *impl_;
  if (!s.started) return;
  net::StopServing(s.connections, s.listeners, *s.workers, s.io_threads);
}

std::vector<uint16_t> NbdServer::bound_ports() const { return impl_->listeners.bound_ports(); }

}  // namespace pail::nbd
