#!/usr/bin/env bash
# Installs every Debian 12 package that building, testing and serving pailfs needs.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config git ca-certificates curl \
  librocksdb-dev libcurl4-openssl-dev libsodium-dev libargon2-dev libzstd-dev liblz4-dev \
  libsnappy-dev libbz2-dev zlib1g-dev libgflags-dev liburing-dev \
  libasio-dev libfuse3-dev fuse3 libtomlplusplus-dev libcli11-dev \
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libnfs-dev libnfs-utils libnbd-dev libnbd-bin nbdkit diod bindfs attr libexpat1-dev stress-ng sqlite3 \
  clang-14 libclang-rt-14-dev lld ccache \
  libmicrohttpd-dev prometheus systemd \
  >/dev/null
