#!/usr/bin/env bash
# Installs every Debian 12 package that building, testing and serving pailfs needs.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# Another apt (a fresh machine's own updates, a second script) may hold
# apt's locks for a while: wait for them instead of failing. apt-get
# update does not honour DPkg::Lock::Timeout for its lists lock, so it is
# retried while that is the error.
apt_get() {
  local out attempt
  for attempt in $(seq 1 150); do
    if out=$($SUDO apt-get -o DPkg::Lock::Timeout=300 "$@" 2>&1); then
      [ -z "$out" ] || printf '%s\n' "$out"
      return 0
    fi
    grep -q "Could not get lock" <<<"$out" || break
    sleep 2
  done
  printf '%s\n' "$out" >&2
  return 1
}
apt_get update -qq
apt_get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config git ca-certificates curl \
  librocksdb-dev libcurl4-openssl-dev libsodium-dev libargon2-dev libzstd-dev liblz4-dev \
  libsnappy-dev libbz2-dev zlib1g-dev libgflags-dev liburing-dev \
  libasio-dev libfuse3-dev fuse3 libtomlplusplus-dev libcli11-dev \
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libnfs-dev libnfs-utils libnbd-dev libnbd-bin nbdkit diod bindfs attr libexpat1-dev stress-ng sqlite3 \
  clang-14 libclang-rt-14-dev lld ccache \
  libmicrohttpd-dev prometheus systemd \
  >/dev/null
