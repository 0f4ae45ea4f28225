#!/bin/bash
# pailfs next to nbdkit through the Linux kernel's NBD client, in one boot
# of the test VM (../shared/vm): pailfs (file:// bucket, default durability:
# writes acknowledged from memory, FLUSH waits for the bucket) and nbdkit's
# file plugin on a local file both serve the VM's namespace; the guest
# attaches both and runs bench/nbd_vm_job.sh, i.e. block_io_bench (1 MiB
# sequential and 4 KiB random I/O with O_DIRECT, --depth 16 threads, writes
# ending in fsync) on each device in alternating rounds. Prints each
# workload's median MiB/s per server and the ratio. Must run as root.
#
#   bench/nbd_vm_bench.sh [--rounds R] [--size-mib N] [--seq-mib N] [--random-ops N] [--run-dir DIR]
#
# Defaults: 3 rounds, a 256 MiB export, 256 MiB sequential, 4096 random
# requests (the guest is emulated: every request costs it far more than
# the servers). Env: BUILD (default ./build: pailfs, block_io_bench),
# VM_DIR (default ../shared/vm). Raw results stay in the run directory.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
VM_DIR=$(cd "${VM_DIR:-$ROOT/../shared/vm}" && pwd)
ROUNDS=3 SIZE_MIB=256 SEQ_MIB=256 RANDOM_OPS=4096 RUN_DIR=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --size-mib) SIZE_MIB=$2; shift 2 ;;
    --seq-mib) SEQ_MIB=$2; shift 2 ;;
    --random-ops) RANDOM_OPS=$2; shift 2 ;;
    --run-dir) RUN_DIR=$2; shift 2 ;;
    *) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 2 ;;
  esac
done
command -v nbdkit > /dev/null || { echo "nbd_vm_bench: needs nbdkit (apt-get install nbdkit)" >&2; exit 2; }
[ "$SEQ_MIB" -le "$SIZE_MIB" ] || { echo "nbd_vm_bench: --seq-mib exceeds --size-mib" >&2; exit 2; }
RUN_DIR=${RUN_DIR:-$(mktemp -d /tmp/nbd-vm-bench.XXXXXX)}
DATA=$RUN_DIR/data
mkdir -p "$DATA"
truncate -s "${SIZE_MIB}M" "$DATA/nbdkit.img"
SERVER_IP=${VM_SERVER_IP:-198.18.0.1}
GUEST_IP=${VM_GUEST_IP:-198.18.0.2}
NFS_PORT=2049 PAIL_PORT=10809 NBDKIT_PORT=10810
cat > "$DATA/pailfs.toml" << CONF
[storage]
url = "file://$DATA/bucket"
encryption_password = "vm-bench"
[cache]
dir = "$DATA/cache"
# Only the guest; its root makes the export file over NFS, so it keeps its uid.
[servers.nfs]
addresses = ["$SERVER_IP:$NFS_PORT"]
allowed_clients = ["$GUEST_IP/32"]
squash = "none"
[servers.nbd]
addresses = ["$SERVER_IP:$PAIL_PORT"]
allowed_clients = ["$GUEST_IP/32"]
CONF
# Both servers in the namespace at once; the harness stops the process group.
SERVER_CMD="nbdkit -f -i $SERVER_IP -p $NBDKIT_PORT file file='$DATA/nbdkit.img' &
exec '$BUILD/pailfs' run -c '$DATA/pailfs.toml'"
echo "nbd_vm_bench: $ROUNDS rounds; ${SIZE_MIB} MiB exports, ${SEQ_MIB} MiB sequential, $RANDOM_OPS random requests, depth 16"
rc=0
"$VM_DIR/run-vm.sh" --quiet --run-dir "$RUN_DIR/vm" --timeout "${VM_TIMEOUT:-3600}" \
  --server "$SERVER_CMD" --wait-port "$PAIL_PORT" --wait-port "$NBDKIT_PORT" \
  --job "$ROOT/bench/nbd_vm_job.sh" --files "$VM_DIR/jobs/lib.sh" --files "$BUILD/block_io_bench" \
  --env NFS_EXPORT=/ --env "NFS_PORT=$NFS_PORT" --env "PAIL_PORT=$PAIL_PORT" \
  --env "NBDKIT_PORT=$NBDKIT_PORT" --env "SIZE_MIB=$SIZE_MIB" --env "SEQ_MIB=$SEQ_MIB" \
  --env "RANDOM_OPS=$RANDOM_OPS" --env "ROUNDS=$ROUNDS" || rc=$?
OUT=$RUN_DIR/vm/out
[ "$rc" = 0 ] || { tail -30 "$OUT/job.log" 2>/dev/null; echo "nbd_vm_bench: VM run failed ($rc), logs in $RUN_DIR/vm"; }

median() { sort -g | awk 'NF { v[++n] = $1 } END {
  if (n == 0) print "-"; else if (n % 2) print v[(n + 1) / 2]; else print (v[n / 2] + v[n / 2 + 1]) / 2 }'; }
if [ -d "$OUT/rounds" ]; then
  echo
  echo "MiB/s, medians of $ROUNDS rounds (per round: pailfs/nbdkit), and their ratio:"
  printf "%-11s %9s %9s %7s  %s\n" workload pailfs nbdkit ratio rounds
  for w in seq-write seq-read rand-write rand-read; do
    rounds="" p_all="" n_all=""
    for r in $(seq 1 "$ROUNDS"); do
      p=$(awk -v w=$w '$1 == w { print $4 }' "$OUT/rounds/$r.pailfs.txt" 2>/dev/null)
      n=$(awk -v w=$w '$1 == w { print $4 }' "$OUT/rounds/$r.nbdkit.txt" 2>/dev/null)
      rounds="$rounds ${p:--}/${n:--}" p_all="$p_all $p" n_all="$n_all $n"
    done
    p=$(echo $p_all | tr ' ' '\n' | median) n=$(echo $n_all | tr ' ' '\n' | median)
    ratio=$(awk -v p="$p" -v n="$n" 'BEGIN { if (p == "-" || n == "-" || n == 0) print "-"; else printf "%.2f", p / n }')
    printf "%-11s %9s %9s %7s %s\n" $w "$p" "$n" "$ratio" "$rounds"
  done
  grep -h ERRORS "$OUT"/rounds/*.txt && rc=1
fi
echo
echo "nbd_vm_bench: rc=$rc, raw results in $RUN_DIR/vm/out ($(cat "$RUN_DIR/vm/timing" 2>/dev/null))"
exit $rc
