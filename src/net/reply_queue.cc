#include "net/reply_queue.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace pail::net {

ReplyQueue::Pushed ReplyQueue::Push(int fd, std::string reply) {
  if (!writing_ && replies_.empty()) {
    ssize_t n = ::send(fd, reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(reply.size())) return Pushed::kSent;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return Pushed::kFailed;
    front_sent_ = n > 0 ? static_cast<size_t>(n) : 0;
  }
  replies_.push_back(std::move(reply));
  if (writing_) return Pushed::kQueued;
  writing_ = true;
  return Pushed::kStartWriter;
}

std::vector<asio::const_buffer> ReplyQueue::NextWrite() const {
  const size_t count = std::min(replies_.size(), kMaxRepliesPerWrite);
  std::vector<asio::const_buffer> buffers;
  buffers.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t skip = i == 0 ? front_sent_ : 0;
    buffers.push_back(asio::buffer(replies_[i].data() + skip, replies_[i].size() - skip));
  }
  return buffers;
}

size_t ReplyQueue::Pop(size_t count, bool* more) {
  size_t bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    bytes += replies_.front().size();
    replies_.pop_front();
  }
  front_sent_ = 0;
  *more = !replies_.empty();
  writing_ = *more;
  return bytes;
}

}  // namespace pail::net
