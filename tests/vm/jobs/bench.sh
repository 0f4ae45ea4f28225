#!/bin/bash
# Guest job: mount a file server (MOUNT_FS=nfs|9p, any server; see the
# harness's lib.sh for NFS_EXPORT, NFS_PORT, P9_PORT, P9_ANAME, P9_OPTS) and
# run workloads_bench (shipped with --files) on it. Env: BENCH_ARGS (e.g.
# "--ops 1000").
. /job/files/lib.sh
mnt=/mnt/$MOUNT_FS
check "mount $MOUNT_FS" "mount_$MOUNT_FS" "$mnt" || { summary; exit 1; }
mount | grep " $mnt "
dir=$mnt/bench.$$
mkdir -p "$dir"
# shellcheck disable=SC2086
/job/files/workloads_bench --dir "$dir" $BENCH_ARGS | tee "$OUT/bench.txt"
rc=${PIPESTATUS[0]}
rm -rf "$dir"
umount "$mnt"
exit $rc
