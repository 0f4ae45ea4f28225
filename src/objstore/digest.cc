#include "objstore/digest.h"

#include <sodium.h>

#include <cstdlib>
#include <mutex>

namespace pail {
namespace {

void InitSodiumOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Only fails when no entropy source exists; randombytes would then abort.
    if (sodium_init() < 0) std::abort();
  });
}

std::string ToHex(const unsigned char* bytes, size_t n) {
  std::string hex(n * 2 + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), bytes, n);
  hex.pop_back();
  return hex;
}

}  // namespace

std::string Sha256(std::string_view data) {
  InitSodiumOnce();
  std::string digest(crypto_hash_sha256_BYTES, '\0');
  crypto_hash_sha256(reinterpret_cast<unsigned char*>(digest.data()),
                     reinterpret_cast<const unsigned char*>(data.data()), data.size());
  return digest;
}

std::string Sha256Hex(std::string_view data) {
  std::string digest = Sha256(data);
  return ToHex(reinterpret_cast<const unsigned char*>(digest.data()), digest.size());
}

std::string HmacSha256(std::string_view key, std::string_view message) {
  InitSodiumOnce();
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.data()), key.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(message.data()),
                                message.size());
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_final(&state, mac);
  sodium_memzero(&state, sizeof state);
  return std::string(reinterpret_cast<char*>(mac), sizeof mac);
}

std::string Base64Encode(std::string_view data) {
  InitSodiumOnce();
  const int variant = sodium_base64_VARIANT_ORIGINAL;
  std::string out(sodium_base64_ENCODED_LEN(data.size(), variant), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(data.data()),
                    data.size(), variant);
  out.resize(out.size() - 1);  // drop the terminating NUL
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  InitSodiumOnce();
  std::string out(text.size() / 4 * 3 + 3, '\0');
  size_t len = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(),
                        text.size(), " \r\n", &len, &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
      end != text.data() + text.size()) {
    return Status::InvalidArgument("value is not valid base64");
  }
  out.resize(len);
  return out;
}

std::string RandomHex(size_t bytes) {
  InitSodiumOnce();
  std::string raw(bytes, '\0');
  randombytes_buf(raw.data(), raw.size());
  return ToHex(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
}

}  // namespace pail
