#!/bin/bash
# Guest job of bench/nbd_vm_bench.sh (runs inside ../shared/vm's guest, as
# root): makes pailfs's export through NFS (as `truncate` on a mount would),
# attaches it as /dev/nbd0 and nbdkit's as /dev/nbd1 with the kernel's NBD
# client, then runs ROUNDS rounds of block_io_bench on each, the two
# alternating (pailfs first in odd rounds). Results go to $OUT/rounds.
# Env: PAIL_PORT, NBDKIT_PORT, SIZE_MIB, SEQ_MIB, RANDOM_OPS, ROUNDS.
. /job/files/lib.sh
set -u
bench=/job/files/block_io_bench
check "mount nfs" mount_nfs /mnt/nfs || { summary; exit 1; }
check "create the export" truncate -s "${SIZE_MIB}M" /mnt/nfs/.nbd/bench
check "umount nfs" umount /mnt/nfs
check "attach pailfs" nbd-client "$SERVER_IP" "$PAIL_PORT" /dev/nbd0 -N bench || { summary; exit 1; }
check "attach nbdkit" nbd-client "$SERVER_IP" "$NBDKIT_PORT" /dev/nbd1 -N bench || { summary; exit 1; }
mkdir -p "$OUT/rounds"
for round in $(seq 1 "$ROUNDS"); do
  order="pailfs nbdkit"
  [ $((round % 2)) = 0 ] && order="nbdkit pailfs"
  for server in $order; do
    dev=/dev/nbd0
    [ $server = nbdkit ] && dev=/dev/nbd1
    f=$OUT/rounds/$round.$server.txt
    check "round $round $server" sh -c "'$bench' $dev --seq-mib $SEQ_MIB --random-ops $RANDOM_OPS > '$f' 2>&1"
    sed "s/^/round $round $server /" "$f"
  done
done
check "detach pailfs" nbd-client -d /dev/nbd0
check "detach nbdkit" nbd-client -d /dev/nbd1
summary
