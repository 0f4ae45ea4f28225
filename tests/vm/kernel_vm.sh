#!/bin/bash
# Runs a guest job against `pailfs run` in the test VM of ../shared/vm,
# through the Linux kernel's NFSv3 or 9P2000.L client. Must run as root.
#
#   tests/vm/kernel_vm.sh PROTO smoke                 the harness's smoke job
#   tests/vm/kernel_vm.sh PROTO ci                    smoke, data checks and a POSIX suite
#                                                     subset, one boot
#                                                     (what CI runs; the protocol's known gaps skipped)
#   tests/vm/kernel_vm.sh PROTO posix [SUITE ARGS]    pail_posix_suite on the mount
#                                                     (e.g. --only chmod,link,rename)
#   tests/vm/kernel_vm.sh PROTO bench [BENCH ARGS]    workloads_bench on the mount
#   tests/vm/kernel_vm.sh PROTO bench-ref [ARGS]      the same on the reference server exporting
#                                                     a local directory (nfs: nfs-ganesha, 9p: diod)
# PROTO: nfs or 9p.
#
# Env: BUILD (build directory with pailfs, pail_posix_suite, workloads_bench; default
# ./build), VM_DIR (default ../shared/vm), COMMIT (NFS: async|durable, default
# async), P9_OPTS (9P mount options after trans/port/version; default
# access=user,msize=1048576,cache=mmap), RUN_DIR (default a fresh temp directory,
# kept for its logs).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
VM_DIR=$(cd "${VM_DIR:-$ROOT/../shared/vm}" && pwd)
USAGE="usage: kernel_vm.sh nfs|9p smoke|ci|posix|bench|bench-ref [args]"
PROTO=${1:?$USAGE}
MODE=${2:?$USAGE}
shift 2
SERVER_IP=${VM_SERVER_IP:-198.18.0.1}
GUEST_IP=${VM_GUEST_IP:-198.18.0.2}
RUN_DIR=${RUN_DIR:-$(mktemp -d "/tmp/pail-$PROTO-vm.XXXXXX")}
DATA=$RUN_DIR/data
mkdir -p "$DATA"
# Categories CI runs (the full suite takes minutes in the guest under TCG).
CI_CATEGORIES=chmod,chown,link,rename,open,unlink,truncate,symlink,mkdir,rmdir,permission
case "$PROTO" in
  nfs)
    PORT=2049
    SERVER_SECTION="[servers.nfs]
addresses = [\"$SERVER_IP:$PORT\"]
commit = \"${COMMIT:-async}\"
# The defaults serve loopback only and squash root. This job admits the
# guest (and only it), and trusts its uids: the POSIX suite runs as root in
# the guest and checks root's privileges (chown, permission overrides).
# The kernel client sends from a reserved port, so secure_port holds.
allowed_clients = [\"$GUEST_IP/32\"]
squash = \"none\"
secure_port = true"
    # What NFSv3 itself cannot do, whatever the server: the kernel client
    # refuses renameat2 flags, keeps an unlinked open file alive by renaming it
    # (.nfsXXXX, so nlink stays 1), and the protocol has no extended attributes.
    GAPS=rename/noreplace_fails_on_existing_target,rename/exchange_swaps_names,unlink/open_file_stays_usable_after_unlink,xattr
    MOUNT_ENV=(--env NFS_EXPORT=/ --env "NFS_PORT=$PORT")
    SMOKE_JOB=$VM_DIR/jobs/nfs-smoke.sh
    ;;
  9p)
    PORT=5564
    SERVER_SECTION="[servers.ninep]
addresses = [\"$SERVER_IP:$PORT\"]
# As for NFS: only the guest, its uids trusted (the suite runs as root).
allowed_clients = [\"$GUEST_IP/32\"]
squash = \"none\""
    # What 9P2000.L or the Linux 9P client cannot carry, whatever the server
    # (docs/ninep.md): the protocol has no supplementary groups (a group the
    # caller is only a supplementary member of is unknown to the server), and
    # the kernel client refuses renameat2 flags.
    GROUP_CASES=chown/owner_may_change_group_to_own_group,chown/updates_ctime,chown/non_root_owner_clears_setuid_and_setgid,chown/follows_symlink,chown/lchown_changes_link_not_target,chown/fchown_on_open_descriptor,chown/fchownat_nofollow_changes_link,chmod/setgid_kept_when_owner_in_file_group,permission/open_group_r_for_member,permission/open_group_rw_for_member,permission/supplementary_group_grants_directory_write
    GAPS=$GROUP_CASES,rename/noreplace_fails_on_existing_target,rename/exchange_swaps_names
    P9_OPTS=${P9_OPTS:-access=user,msize=1048576,cache=mmap}
    MOUNT_ENV=(--env "P9_PORT=$PORT" --env "P9_OPTS=$P9_OPTS")
    SMOKE_JOB=$VM_DIR/jobs/9p-smoke.sh
    ;;
  *) echo "$USAGE" >&2; exit 2 ;;
esac
cat > "$DATA/pailfs.toml" <<CONF
[storage]
url = "file://$DATA/bucket"
encryption_password = "vm-test"
[cache]
dir = "$DATA/cache"
$SERVER_SECTION
CONF
SKIP=${GAPS:+--skip $GAPS}
args=(--quiet --run-dir "$RUN_DIR/vm" --timeout "${VM_TIMEOUT:-3000}"
      --server "exec '$BUILD/pailfs' run -c '$DATA/pailfs.toml'" --wait-port "$PORT"
      --files "$VM_DIR/jobs/lib.sh" --env "MOUNT_FS=$PROTO" "${MOUNT_ENV[@]}")
case "$MODE" in
  smoke) args+=(--job "$SMOKE_JOB") ;;
  ci) args+=(--job "$ROOT/tests/vm/jobs/ci.sh" --files "$BUILD/pail_posix_suite"
             --files "$ROOT/tests/vm/jobs/data_checks.sh"
             --env "POSIX_ARGS=--only $CI_CATEGORIES $SKIP") ;;
  posix) args+=(--job "$ROOT/tests/vm/jobs/posix.sh" --files "$BUILD/pail_posix_suite"
                --env "POSIX_ARGS=$*") ;;
  bench) args+=(--job "${BENCH_JOB:-$ROOT/tests/vm/jobs/bench.sh}" --files "$BUILD/workloads_bench"
                --env "BENCH_ARGS=$*") ;;
  bench-ref) ;;
  *) echo "$USAGE" >&2; exit 2 ;;
esac
rc=0
if [ "$MODE" = bench-ref ]; then
  # The harness's reference run, with our job instead of its smoke job.
  ref_args=(--quiet --run-dir "$RUN_DIR/vm" --timeout "${VM_TIMEOUT:-3000}"
            --job "${BENCH_JOB:-$ROOT/tests/vm/jobs/bench.sh}" --env "MOUNT_FS=$PROTO"
            --files "$BUILD/workloads_bench" --env "BENCH_ARGS=$*")
  if [ "$PROTO" = nfs ]; then
    EXPORT_DIR=$DATA/ganesha-export "$VM_DIR/examples/nfs-ganesha.sh" "${ref_args[@]}" || rc=$?
  else
    EXPORT_DIR=$DATA/diod-export "$VM_DIR/examples/diod-9p.sh" "${ref_args[@]}" \
      --env "P9_OPTS=$P9_OPTS" || rc=$?
  fi
else
  "$VM_DIR/run-vm.sh" "${args[@]}" || rc=$?
fi
cat "$RUN_DIR/vm/out/job.log" 2>/dev/null || true
echo "kernel_vm.sh $PROTO $MODE: rc=$rc, logs in $RUN_DIR/vm ($(cat "$RUN_DIR/vm/timing" 2>/dev/null))"
exit $rc
