#!/bin/bash
# Runs a guest job against `pailfs run` serving NFSv3 in the test VM of
# ../shared/vm (the Linux kernel NFS client). Must run as root.
#
#   tests/vm/nfs_vm.sh smoke                 the harness's NFS smoke job
#   tests/vm/nfs_vm.sh ci                    smoke + a POSIX suite subset, one boot
#                                            (what CI runs; NFSv3's known gaps skipped)
#   tests/vm/nfs_vm.sh posix [SUITE ARGS]    pail_posix_suite on the mount
#                                            (e.g. --only chmod,link,rename)
#   tests/vm/nfs_vm.sh bench [BENCH ARGS]    workloads_bench on the mount
#   tests/vm/nfs_vm.sh bench-ganesha [ARGS]  the same on nfs-ganesha exporting a
#                                            local directory (the reference)
#
# Env: BUILD (build directory with pailfs, pail_posix_suite, workloads_bench; default
# ./build), VM_DIR (default ../shared/vm), COMMIT (async|durable, default
# async), RUN_DIR (default a fresh temp directory, kept for its logs).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
VM_DIR=$(cd "${VM_DIR:-$ROOT/../shared/vm}" && pwd)
MODE=${1:?usage: nfs_vm.sh smoke|posix [suite args]}
shift
PORT=2049
SERVER_IP=${VM_SERVER_IP:-198.18.0.1}
GUEST_IP=${VM_GUEST_IP:-198.18.0.2}
RUN_DIR=${RUN_DIR:-$(mktemp -d /tmp/pail-nfs-vm.XXXXXX)}
DATA=$RUN_DIR/data
mkdir -p "$DATA"
cat > "$DATA/pailfs.toml" <<CONF
[storage]
url = "file://$DATA/bucket"
encryption_password = "vm-test"
[cache]
dir = "$DATA/cache"
[servers.nfs]
addresses = ["$SERVER_IP:$PORT"]
commit = "${COMMIT:-async}"
# The defaults serve loopback only and squash root. This job admits the
# guest (and only it), and trusts its uids: the POSIX suite runs as root in
# the guest and checks root's privileges (chown, permission overrides).
# The kernel client sends from a reserved port, so secure_port holds.
allowed_clients = ["$GUEST_IP/32"]
squash = "none"
secure_port = true
CONF
# Categories CI runs (the full suite takes ~90 s in the guest under TCG).
CI_CATEGORIES=chmod,chown,link,rename,open,unlink,truncate,symlink,mkdir,rmdir,permission
# What NFSv3 itself cannot do, whatever the server: the kernel client
# refuses renameat2 flags, keeps an unlinked open file alive by renaming it
# (.nfsXXXX, so nlink stays 1), and the protocol has no extended attributes.
NFS_V3_GAPS=rename/noreplace_fails_on_existing_target,rename/exchange_swaps_names,unlink/open_file_stays_usable_after_unlink,xattr
args=(--quiet --run-dir "$RUN_DIR/vm" --timeout "${VM_TIMEOUT:-3000}"
      --server "exec '$BUILD/pailfs' run -c '$DATA/pailfs.toml'" --wait-port "$PORT"
      --files "$VM_DIR/jobs/lib.sh" --env NFS_EXPORT=/ --env "NFS_PORT=$PORT")
case "$MODE" in
  smoke) args+=(--job "$VM_DIR/jobs/nfs-smoke.sh") ;;
  ci) args+=(--job "$ROOT/tests/vm/jobs/nfs_ci.sh" --files "$BUILD/pail_posix_suite"
             --env "POSIX_ARGS=--only $CI_CATEGORIES --skip $NFS_V3_GAPS") ;;
  posix) args+=(--job "$ROOT/tests/vm/jobs/nfs_posix.sh" --files "$BUILD/pail_posix_suite"
                --env "POSIX_ARGS=$*") ;;
  bench) args+=(--job "${BENCH_JOB:-$ROOT/tests/vm/jobs/nfs_bench.sh}" --files "$BUILD/workloads_bench"
                --env "BENCH_ARGS=$*") ;;
  bench-ganesha) ;;
  *) echo "nfs_vm.sh: unknown mode '$MODE'" >&2; exit 2 ;;
esac
rc=0
if [ "$MODE" = bench-ganesha ]; then
  # The harness's reference run, with our job instead of its smoke job.
  EXPORT_DIR=$DATA/ganesha-export "$VM_DIR/examples/nfs-ganesha.sh" --quiet --run-dir "$RUN_DIR/vm" \
      --timeout "${VM_TIMEOUT:-3000}" --job "${BENCH_JOB:-$ROOT/tests/vm/jobs/nfs_bench.sh}" \
      --files "$BUILD/workloads_bench" --env "BENCH_ARGS=$*" || rc=$?
else
  "$VM_DIR/run-vm.sh" "${args[@]}" || rc=$?
fi
cat "$RUN_DIR/vm/out/job.log" 2>/dev/null || true
echo "nfs_vm.sh $MODE: rc=$rc, logs in $RUN_DIR/vm ($(cat "$RUN_DIR/vm/timing" 2>/dev/null))"
exit $rc
