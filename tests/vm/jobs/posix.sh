#!/bin/bash
# Guest job: mount pailfs (MOUNT_FS=nfs|9p; see the harness's lib.sh for
# NFS_EXPORT, NFS_PORT, P9_PORT, P9_OPTS) and run pail_posix_suite (shipped
# with --files) in a fresh directory on the mount. Env: POSIX_ARGS (extra
# suite arguments, e.g. "--only chmod,link").
. /job/files/lib.sh
mnt=/mnt/$MOUNT_FS
check "mount $MOUNT_FS" "mount_$MOUNT_FS" "$mnt" || { summary; exit 1; }
dir=$mnt/posix.$$
mkdir -p "$dir" && chmod 0755 "$dir"
# shellcheck disable=SC2086
/job/files/pail_posix_suite --dir "$dir" $POSIX_ARGS > "$OUT/posix.log" 2>&1
rc=$?
grep -E "^(FAIL|[a-z_]+: [0-9]+/[0-9]+|  [a-z_]+ +[0-9]+/[0-9]+|[0-9]+ passed)" "$OUT/posix.log" | tail -80
umount "$mnt"
exit $rc
