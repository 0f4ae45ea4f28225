// ReplyQueue: a connection's replies on their way out, in the order they
// were handed over. A reply with nothing ahead of it is sent at once by the
// thread that produced it, with a non-blocking send: no thread switch in
// the common case of a socket with room. What the socket does not take
// waits for the connection's strand, which writes up to kMaxRepliesPerWrite
// replies at a time (gathered into one sendmsg).
//
// Not thread-safe: the connection guards it with a lock of its own, under
// which it also keeps its flow control (NFS counts calls and bytes in
// flight; 9P pairs each Tflush's Rflush with the reply it follows, which
// must leave in that order).
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include <asio/buffer.hpp>

namespace pail::net {

class ReplyQueue {
 public:
  enum class Pushed {
    kSent,         // all of it went out
    kQueued,       // it waits for the write already under way
    kStartWriter,  // it waits; the caller starts the strand's write
    kFailed,       // the socket failed: the caller closes the connection
  };

  // Sends `reply` on the socket `fd` now if nothing waits ahead of it,
  // else queues it.
  Pushed Push(int fd, std::string reply);

  // The strand's next write: the first replies' unsent bytes. The buffers
  // stay valid until Pop, however many replies are pushed meanwhile
  // (deque elements do not move when others are added at the back).
  std::vector<asio::const_buffer> NextWrite() const;

  // After that write: drops its `count` replies and returns their sizes'
  // sum. While `*more`, the writer stays on and writes again.
  size_t Pop(size_t count, bool* more);

 private:
  static constexpr size_t kMaxRepliesPerWrite = 64;

  bool writing_ = false;  // the strand owns the socket's sending side
  std::deque<std::string> replies_;
  size_t front_sent_ = 0;  // bytes of replies_.front() already sent
};

}  // namespace pail::net
