#include "net/io_threads.h"

#include <algorithm>

namespace pail::net {

unsigned DefaultIoThreads() {
  return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

void IoThreads::Start(asio::io_context& io, unsigned configured) {
  busy_.emplace(io.get_executor());
  const unsigned count = configured ? configured : DefaultIoThreads();
  for (unsigned i = 0; i < count; i++) threads_.emplace_back([&io] { io.run(); });
}

void IoThreads::Drain() {
  busy_.reset();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

}  // namespace pail::net
