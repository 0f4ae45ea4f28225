#!/bin/bash
# Guest job for CI: one mount (MOUNT_FS=nfs|9p, with the harness's lib.sh
# settings), the harness's smoke checks, the data checks (data_checks.sh),
# then a subset of pail_posix_suite (shipped with --files; POSIX_ARGS
# selects the subset).
. /job/files/lib.sh
. /job/files/data_checks.sh
mnt=/mnt/$MOUNT_FS
check "mount $MOUNT_FS" "mount_$MOUNT_FS" "$mnt" || { summary; exit 1; }
fs_smoke "$mnt"
data_checks "$mnt"
dir=$mnt/posix.$$
mkdir -p "$dir" && chmod 0755 "$dir"
# shellcheck disable=SC2086
check "pail_posix_suite $POSIX_ARGS" /job/files/pail_posix_suite --dir "$dir" $POSIX_ARGS \
    > "$OUT/posix.log" 2>&1
grep -E "^(FAIL|  [a-z_]+ +[0-9]+/[0-9]+|[0-9]+ passed)" "$OUT/posix.log"
check "umount" umount "$mnt"
summary
