// The key file: the bucket's data key, wrapped under the password.
//
// At first start a random 256-bit data key is made and stored in the object
// kKeyFileObject, wrapped with XChaCha20-Poly1305 under a key derived from the
// password with Argon2id. It is created with put-if-absent, so two first
// starts agree on one data key. Changing the password rewraps the same data
// key (conditional on the file's etag); no data object changes.
//
// Format (all integers little-endian):
//   magic       8 bytes  "PAILKEY1"
//   passes      u32      Argon2id time cost
//   memory_kib  u32      Argon2id memory cost
//   lanes       u32      Argon2id parallelism
//   salt        16 bytes random
//   nonce       24 bytes random
//   wrapped     48 bytes the 32-byte data key encrypted, then its 16-byte tag
// The AEAD's associated data is every byte before `wrapped`, so no
// parameter can be changed unnoticed.
#pragma once

#include "crypto/keys.h"
#include "objstore/object_store.h"

namespace pail::crypto {

constexpr char kKeyFileObject[] = "pailfs.key";

// Loads the data key, creating the key file when the bucket has none.
// A wrong password: Status::PermissionDenied, and nothing is written.
Result<Key> LoadOrCreateDataKey(ObjectStore& store, std::string_view password,
                                const Argon2Params& params = {});

// Rewraps the data key under `new_password`.
Status ChangePassword(ObjectStore& store, std::string_view old_password,
                      std::string_view new_password, const Argon2Params& params = {});

}  // namespace pail::crypto
