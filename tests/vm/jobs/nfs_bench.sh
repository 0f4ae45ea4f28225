#!/bin/bash
# Guest job: mount an NFSv3 export (any server; see the harness's lib.sh for
# NFS_EXPORT, NFS_PORT, NFS_MOUNTPORT) and run workloads_bench (shipped with
# --files) on it. Env: BENCH_ARGS (e.g. "--ops 1000").
. /job/files/lib.sh
check "mount nfs" mount_nfs /mnt/nfs || { summary; exit 1; }
dir=/mnt/nfs/bench.$$
mkdir -p "$dir"
# shellcheck disable=SC2086
/job/files/workloads_bench --dir "$dir" $BENCH_ARGS | tee "$OUT/bench.txt"
rc=${PIPESTATUS[0]}
rm -rf "$dir"
umount /mnt/nfs
exit $rc
