// The ONC RPC program numbers and versions this server answers.
#pragma once

#include <cstdint>

namespace pail::nfs {

constexpr uint32_t kPortmapProgram = 100000;
constexpr uint32_t kPortmapVersion = 2;
constexpr uint32_t kNfsProgram = 100003;
constexpr uint32_t kNfsVersion3 = 3;
constexpr uint32_t kMountProgram = 100005;
// MOUNT v1 and v2 differ from v3 only in the handle they return; NFSv3
// clients use v3, so only v3 is offered.
constexpr uint32_t kMountVersion3 = 3;
constexpr uint32_t kIpProtoTcp = 6;

}  // namespace pail::nfs
