// ReplyQueue on a socket pair: replies leave at once while the socket has
// room, wait in order once it has not (the first resuming where the kernel
// stopped taking it), and a dead peer is reported, not hidden.
#include "net/reply_queue.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

namespace pail::net {
namespace {

class ReplyQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    int small = 4096;  // the kernel rounds it up; still far below the replies below
    ASSERT_EQ(::setsockopt(fds_[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
  }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }

  // Everything the peer can read now.
  std::string Drain() {
    std::string out;
    char buf[65536];
    for (;;) {
      ssize_t n = ::recv(fds_[1], buf, sizeof(buf), MSG_DONTWAIT);
      if (n <= 0) return out;
      out.append(buf, static_cast<size_t>(n));
    }
  }

  // What a strand's write would send: the buffers of NextWrite, in order.
  static std::string Flatten(const std::vector<asio::const_buffer>& buffers) {
    std::string out;
    for (const auto& b : buffers) out.append(static_cast<const char*>(b.data()), b.size());
    return out;
  }

  int fds_[2] = {-1, -1};
};

TEST_F(ReplyQueueTest, SendsAtOnceThenQueuesInOrderBehindWhatTheSocketRefused) {
  ReplyQueue queue;
  EXPECT_EQ(queue.Push(fds_[0], "first"), ReplyQueue::Pushed::kSent);
  EXPECT_EQ(Drain(), "first");

  // Bigger than the send buffer: part goes out, the rest waits, and the
  // caller is told to start the writer, once.
  const std::string big(1 << 20, 'b');
  EXPECT_EQ(queue.Push(fds_[0], big), ReplyQueue::Pushed::kStartWriter);
  EXPECT_EQ(queue.Push(fds_[0], "after"), ReplyQueue::Pushed::kQueued);
  // Queued replies never go out ahead of the ones waiting, room or not.
  const std::string sent_at_once = Drain();
  ASSERT_GT(sent_at_once.size(), 0u);
  ASSERT_LT(sent_at_once.size(), big.size());
  EXPECT_EQ(queue.Push(fds_[0], "last"), ReplyQueue::Pushed::kQueued);
  EXPECT_EQ(Drain(), "");

  // The writer's view: the unsent rest of the big reply, then the others.
  EXPECT_EQ(Flatten(queue.NextWrite()), big.substr(sent_at_once.size()) + "after" + "last");
  bool more = true;
  EXPECT_EQ(queue.Pop(3, &more), big.size() + 5 + 4);
  EXPECT_FALSE(more);
  // Written out: the next reply goes at once again.
  EXPECT_EQ(queue.Push(fds_[0], "again"), ReplyQueue::Pushed::kSent);
  EXPECT_EQ(Drain(), "again");
}

TEST_F(ReplyQueueTest, PopLeavesTheWriterOnWhileRepliesRemain) {
  ReplyQueue queue;
  const std::string big(1 << 20, 'x');
  ASSERT_EQ(queue.Push(fds_[0], big), ReplyQueue::Pushed::kStartWriter);
  ASSERT_EQ(queue.Push(fds_[0], "tail"), ReplyQueue::Pushed::kQueued);
  bool more = false;
  EXPECT_EQ(queue.Pop(1, &more), big.size());
  EXPECT_TRUE(more);
  EXPECT_EQ(Flatten(queue.NextWrite()), "tail");  // the new front, whole
  EXPECT_EQ(queue.Push(fds_[0], "queued behind"), ReplyQueue::Pushed::kQueued);
  EXPECT_EQ(queue.Pop(2, &more), 4u + 13u);
  EXPECT_FALSE(more);
}

TEST_F(ReplyQueueTest, AWriteCarriesAtMostSixtyFourReplies) {
  ReplyQueue queue;
  ASSERT_EQ(queue.Push(fds_[0], std::string(1 << 20, 'x')), ReplyQueue::Pushed::kStartWriter);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(queue.Push(fds_[0], "r"), ReplyQueue::Pushed::kQueued);
  EXPECT_EQ(queue.NextWrite().size(), 64u);
  bool more = false;
  queue.Pop(64, &more);
  EXPECT_TRUE(more);
  EXPECT_EQ(queue.NextWrite().size(), 37u);
}

TEST_F(ReplyQueueTest, ADeadPeerIsAFailure) {
  ReplyQueue queue;
  ::close(fds_[1]);
  fds_[1] = -1;
  EXPECT_EQ(queue.Push(fds_[0], "into the void"), ReplyQueue::Pushed::kFailed);
}

}  // namespace
}  // namespace pail::net
