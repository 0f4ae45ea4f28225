#include "net/listeners.h"

#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <charconv>
#include <type_traits>
#include <utility>

namespace pail::net {

Status ParseListenAddress(const std::string& address, std::string* host, uint16_t* port) {
  std::string port_text;
  if (!address.empty() && address[0] == '[') {
    size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return Status::InvalidArgument("listen address '" + address + "': expected [v6]:port");
    }
    *host = address.substr(1, close - 1);
    port_text = address.substr(close + 2);
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string::npos || address.find(':') != colon) {
      return Status::InvalidArgument("listen address '" + address +
                                     "': expected host:port (IPv6 as [addr]:port)");
    }
    *host = address.substr(0, colon);
    port_text = address.substr(colon + 1);
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || value > 65535 ||
      port_text.empty()) {
    return Status::InvalidArgument("listen address '" + address + "': bad port '" + port_text + "'");
  }
  asio::error_code parse_error;
  asio::ip::make_address(*host, parse_error);
  if (parse_error) {
    return Status::InvalidArgument("listen address '" + address + "': '" + *host +
                                   "' is not an IP address");
  }
  *port = static_cast<uint16_t>(value);
  return Status::OK();
}

Listeners::Listeners(asio::io_context& io, std::string name)
    : io_(io), strand_(asio::make_strand(io)), name_(std::move(name)), retry_timer_(strand_) {}

Listeners::~Listeners() = default;

Status Listeners::Open(const std::vector<std::string>& addresses, const std::string& unix_socket) {
  auto fail = [&](const std::string& where, const asio::error_code& ec) {
    tcp_.clear();
    local_.reset();
    return Status::IOError(name_ + ": cannot listen on " + where + ": " + ec.message());
  };
  for (const std::string& address : addresses) {
    std::string host;
    uint16_t port = 0;
    PAIL_RETURN_IF_ERROR(ParseListenAddress(address, &host, &port));
    Tcp::endpoint endpoint(asio::ip::make_address(host), port);
    auto acceptor = std::make_unique<Tcp::acceptor>(io_);
    asio::error_code ec;
    acceptor->open(endpoint.protocol(), ec);
    if (!ec) acceptor->set_option(Tcp::acceptor::reuse_address(true), ec);
    if (!ec && endpoint.address().is_v6()) acceptor->set_option(asio::ip::v6_only(true), ec);
    if (!ec) acceptor->bind(endpoint, ec);
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return fail(address, ec);
    tcp_.push_back(std::move(acceptor));
  }
  if (!unix_socket.empty()) {
    struct stat st;
    if (::lstat(unix_socket.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        tcp_.clear();
        return Status::InvalidArgument(name_ + ": unix_socket " + unix_socket +
                                       " exists and is not a socket; not replacing it");
      }
      ::unlink(unix_socket.c_str());  // left by an earlier run
    }
    Local::endpoint endpoint(unix_socket);
    auto acceptor = std::make_unique<Local::acceptor>(io_);
    asio::error_code ec;
    acceptor->open(endpoint.protocol(), ec);
    if (!ec) acceptor->bind(endpoint, ec);
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return fail(unix_socket, ec);
    local_ = std::move(acceptor);
  }
  addresses_ = addresses;
  unix_socket_ = unix_socket;
  return Status::OK();
}

void Listeners::Start(Accepted accepted) {
  accepted_ = std::move(accepted);
  asio::dispatch(strand_, [this] {
    for (auto& acceptor : tcp_) Accept(acceptor.get());
    if (local_) Accept(local_.get());
  });
}

template <typename Acceptor>
void Listeners::Accept(Acceptor* acceptor) {
  acceptor->async_accept(asio::bind_executor(strand_, [this, acceptor](
      asio::error_code ec, typename Acceptor::protocol_type::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
      spdlog::warn("{}: accept failed: {}", name_, ec.message());
      RetryLater(acceptor);
      return;
    }
    asio::error_code ignored;
    Peer peer;
    if constexpr (std::is_same_v<Acceptor, Tcp::acceptor>) {
      socket.set_option(Tcp::no_delay(true), ignored);
      auto endpoint = socket.remote_endpoint(ignored);
      if (ignored) {
        // Gone before we looked: nothing to serve.
        socket.close(ignored);
        Accept(acceptor);
        return;
      }
      peer.address = endpoint.address().to_string();
      peer.port = endpoint.port();
      auto local = socket.local_endpoint(ignored);
      peer.local_port = ignored ? 0 : local.port();
    }
    auto protocol = socket.local_endpoint(ignored).protocol();
    Socket generic(io_, asio::generic::stream_protocol(protocol.family(), protocol.protocol()),
                   socket.release(ignored));
    accepted_(std::move(generic), peer);
    Accept(acceptor);
  }));
}

template <typename Acceptor>
void Listeners::RetryLater(Acceptor* acceptor) {
  if constexpr (std::is_same_v<Acceptor, Tcp::acceptor>) {
    tcp_retry_.push_back(acceptor);
  } else {
    local_retry_ = true;
  }
  if (retry_armed_) return;
  retry_armed_ = true;
  retry_timer_.expires_after(kAcceptRetryDelay);
  retry_timer_.async_wait([this](asio::error_code ec) {
    retry_armed_ = false;
    if (ec) return;  // closed
    for (Tcp::acceptor* acceptor : std::exchange(tcp_retry_, {})) {
      if (acceptor->is_open()) Accept(acceptor);
    }
    if (std::exchange(local_retry_, false) && local_->is_open()) Accept(local_.get());
  });
}

void Listeners::Close() {
  asio::dispatch(strand_, [this] {
    retry_timer_.cancel();
    asio::error_code ignored;
    for (auto& acceptor : tcp_) acceptor->close(ignored);
    if (local_) local_->close(ignored);
  });
}

void Listeners::RemoveUnixSocket() {
  if (local_) ::unlink(unix_socket_.c_str());
}

std::vector<uint16_t> Listeners::bound_ports() const {
  std::vector<uint16_t> ports;
  for (auto& acceptor : tcp_) {
    asio::error_code ec;
    auto endpoint = acceptor->local_endpoint(ec);
    ports.push_back(ec ? 0 : endpoint.port());
  }
  return ports;
}

std::string Listeners::Describe() const {
  std::string where;
  std::vector<uint16_t> ports = bound_ports();
  for (size_t i = 0; i < ports.size(); i++) {
    where += (i ? ", " : "") + addresses_[i] + " (port " + std::to_string(ports[i]) + ")";
  }
  if (local_) where += (where.empty() ? "" : ", ") + unix_socket_;
  return where;
}

}  // namespace pail::net
