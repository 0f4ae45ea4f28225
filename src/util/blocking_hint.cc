#include "util/blocking_hint.h"

namespace pail {

namespace {
thread_local BlockingHint::Callback tls_callback = nullptr;
thread_local void* tls_arg = nullptr;
}  // namespace

void BlockingHint::Listen(Callback callback, void* arg) {
  tls_callback = callback;
  tls_arg = arg;
}

void BlockingHint::AboutToBlock() {
  if (tls_callback != nullptr) tls_callback(tls_arg);
}

}  // namespace pail
