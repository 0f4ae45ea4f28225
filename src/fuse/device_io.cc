#include "fuse/device_io.h"

#include <linux/fuse.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "fuse/fuse_ops.h"

namespace pail::fuse {

namespace {

InitHandshake& HandshakeOf(void* userdata) { return static_cast<FuseContext*>(userdata)->init; }

ssize_t ReadDevice(int fd, void* buf, size_t len, void* userdata) {
  ssize_t n = read(fd, buf, len);
  constexpr size_t kInitFlagsEnd =
      sizeof(fuse_in_header) + offsetof(fuse_init_in, flags) + sizeof(uint32_t);
  if (n < static_cast<ssize_t>(kInitFlagsEnd)) return n;
  fuse_in_header in;
  std::memcpy(&in, buf, sizeof in);
  if (in.opcode != FUSE_INIT) return n;
  uint32_t flags;
  std::memcpy(&flags, static_cast<const char*>(buf) + sizeof in + offsetof(fuse_init_in, flags),
              sizeof flags);
  InitHandshake& h = HandshakeOf(userdata);
  h.unique = in.unique;
  h.offers_kill_priv_v2 = (flags & FUSE_HANDLE_KILLPRIV_V2) != 0;
  h.reply_pending.store(true, std::memory_order_release);
  return n;
}

// libfuse writes a reply as its header in iov[0] and the body in iov[1].
void AskForKillPrivV2(InitHandshake& h, struct iovec* iov, int count) {
  if (count < 2 || iov[0].iov_len < sizeof(fuse_out_header)) return;
  fuse_out_header out;
  std::memcpy(&out, iov[0].iov_base, sizeof out);
  if (out.unique != h.unique || out.error != 0) return;
  h.reply_pending.store(false, std::memory_order_relaxed);
  constexpr size_t kFlagsAt = offsetof(fuse_init_out, flags);
  if (!h.offers_kill_priv_v2 || iov[1].iov_len < kFlagsAt + sizeof(uint32_t)) return;
  char* body = static_cast<char*>(iov[1].iov_base);
  uint32_t flags;
  std::memcpy(&flags, body + kFlagsAt, sizeof flags);
  flags |= FUSE_HANDLE_KILLPRIV_V2;
  std::memcpy(body + kFlagsAt, &flags, sizeof flags);
}

ssize_t WriteDevice(int fd, struct iovec* iov, int count, void* userdata) {
  InitHandshake& h = HandshakeOf(userdata);
  if (h.reply_pending.load(std::memory_order_acquire)) AskForKillPrivV2(h, iov, count);
  return writev(fd, iov, count);
}

}  // namespace

int UseDeviceIo(fuse_session* session) {
  fuse_custom_io io{};
  io.read = ReadDevice;
  io.writev = WriteDevice;
  return fuse_session_custom_io(session, &io, fuse_session_fd(session));
}

}  // namespace pail::fuse
