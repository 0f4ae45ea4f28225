#!/bin/bash
# Runs the Linux kernel NBD client in the test VM of ../shared/vm against
# `pailfs run` serving NBD (and NFS, through which the guest makes the
# export file, as a user would with `truncate` on a mount). Must run as root.
#
#   tests/vm/nbd_vm.sh ci      ext4 on /dev/nbd0: mkfs, mount, files, sync,
#                              umount, e2fsck -fn; then the server is killed
#                              (SIGKILL) and restarted, and the guest
#                              reconnects and finds the filesystem intact
#   tests/vm/nbd_vm.sh smoke   the harness's own NBD smoke job
#
# Env: BUILD (build directory with pailfs; default ./build), VM_DIR (default
# ../shared/vm), RUN_DIR (default a fresh temp directory, kept for its logs).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
VM_DIR=$(cd "${VM_DIR:-$ROOT/../shared/vm}" && pwd)
MODE=${1:?usage: nbd_vm.sh ci|smoke}
NFS_PORT=2049
NBD_PORT=10809
SERVER_IP=${VM_SERVER_IP:-198.18.0.1}
GUEST_IP=${VM_GUEST_IP:-198.18.0.2}
RUN_DIR=${RUN_DIR:-$(mktemp -d /tmp/pail-nbd-vm.XXXXXX)}
DATA=$RUN_DIR/data
mkdir -p "$DATA"
cat > "$DATA/pailfs.toml" <<CONF
[storage]
url = "file://$DATA/bucket"
encryption_password = "vm-test"
[cache]
dir = "$DATA/cache"
# The defaults serve loopback only (and NFS squashes root). Only the guest
# is admitted; its root makes the export file over NFS, so it keeps its uid.
[servers.nfs]
addresses = ["$SERVER_IP:$NFS_PORT"]
allowed_clients = ["$GUEST_IP/32"]
squash = "none"
[servers.nbd]
addresses = ["$SERVER_IP:$NBD_PORT"]
allowed_clients = ["$GUEST_IP/32"]
CONF
case "$MODE" in
  ci) JOB=$ROOT/tests/vm/jobs/nbd_ci.sh ;;
  smoke) JOB=$VM_DIR/jobs/nbd-smoke.sh ;;
  *) echo "nbd_vm.sh: unknown mode '$MODE'" >&2; exit 2 ;;
esac
rc=0
"$VM_DIR/run-vm.sh" --quiet --run-dir "$RUN_DIR/vm" --timeout "${VM_TIMEOUT:-1800}" \
    --server "exec bash '$ROOT/tests/vm/nbd_server_loop.sh' '$BUILD/pailfs' '$DATA/pailfs.toml'" \
    --wait-port "$NBD_PORT" --job "$JOB" --files "$VM_DIR/jobs/lib.sh" \
    --env NFS_EXPORT=/ --env "NFS_PORT=$NFS_PORT" --env "NBD_PORT=$NBD_PORT" \
    --env NBD_NAME=disk1 || rc=$?
cat "$RUN_DIR/vm/out/job.log" 2>/dev/null || true
echo "nbd_vm.sh $MODE: rc=$rc, logs in $RUN_DIR/vm ($(cat "$RUN_DIR/vm/timing" 2>/dev/null))"
exit $rc
