#!/usr/bin/env bash
# Installs everything, builds, starts the loopback object stores and runs
# every test. This is exactly what CI (.ci/run) runs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

bash scripts/install-deps.sh

# Real S3 (Ceph RGW) and Azure Blob (Azurite) servers on loopback, from the
# workplace's shared/ folder beside the repository. Without it the cloud
# tests skip; with it they are required.
OBJSTORES="$ROOT/../shared/objstores/objstores.sh"
if [ -f "$OBJSTORES" ]; then
  if curl -s -o /dev/null http://127.0.0.1:7480/ && curl -s -o /dev/null http://127.0.0.1:10000/; then
    # Started by an earlier run of this script, or by hand with the default root.
    for root in "${OBJSTORES_ROOT:-}" "${PAILFS_OBJSTORES_ROOT:-/tmp/pailfs-objstores}" /tmp/objstores; do
      if [ -n "$root" ] && [ -f "$root/env" ]; then export OBJSTORES_ROOT=$root; break; fi
    done
    echo "object stores already running; using ${OBJSTORES_ROOT:-/tmp/objstores}/env"
  else
    # A fresh cluster each run: restarting one left by a killed run is not
    # reliable, and the tests need no data from earlier runs.
    export OBJSTORES_ROOT=${PAILFS_OBJSTORES_ROOT:-/tmp/pailfs-objstores}
    bash "$OBJSTORES" stop >/dev/null 2>&1 || true
    rm -rf "$OBJSTORES_ROOT/rgw" "$OBJSTORES_ROOT/azurite-data"
    bash "$OBJSTORES" install
    bash "$OBJSTORES" start
  fi
  export PAIL_REQUIRE_OBJSTORES=1
else
  echo "note: $OBJSTORES not found; S3/Azure tests will be skipped" >&2
fi

# In CI (root, /dev/fuse) the FUSE tests must run: a skip there is a failure.
if [ "${CI:-}" = true ]; then export PAIL_REQUIRE_FUSE=1; fi

# ccache (installed by install-deps.sh) makes a rebuild of an unchanged tree
# cheap; keyed relative to the checkout so any clone shares the cache.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
cmake --build build -j"$(nproc)"

# The Linux kernel's NFSv3 and 9P2000.L clients, in the small VM of shared/vm (root only:
# it makes a network namespace): the smoke job and a POSIX suite subset.
VM_DIR="$ROOT/../shared/vm"
if [ -d "$VM_DIR" ] && [ "$(id -u)" -eq 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends \
    qemu-system-x86 debootstrap busybox-static e2fsprogs cpio kmod iproute2 >/dev/null
  bash "$VM_DIR/build-image.sh" >/tmp/pailfs-vm-image.log 2>&1 ||
    { tail -20 /tmp/pailfs-vm-image.log; exit 1; }
  BUILD="$ROOT/build" bash tests/vm/kernel_vm.sh nfs ci
  BUILD="$ROOT/build" bash tests/vm/kernel_vm.sh 9p ci
  # The kernel NBD client: ext4 on an export, across a server SIGKILL.
  BUILD="$ROOT/build" bash tests/vm/nbd_vm.sh ci
fi

ctest --test-dir build --output-on-failure -j2 --timeout 900

# The unit and simulation tests again, built with clang under ASan+UBSan and
# under TSan (-Wthread-safety as an error); see the script for what runs.
bash scripts/sanitizers.sh
