#!/bin/bash
# Guest job: mount pailfs over NFSv3 and run pail_posix_suite (shipped with
# --files) in a fresh directory on the mount. Env: NFS_EXPORT, NFS_PORT (see
# the harness's lib.sh), POSIX_ARGS (extra suite arguments, e.g. "--only chmod,link").
. /job/files/lib.sh
check "mount nfs" mount_nfs /mnt/nfs || { summary; exit 1; }
dir=/mnt/nfs/posix.$$
mkdir -p "$dir" && chmod 0755 "$dir"
# shellcheck disable=SC2086
/job/files/pail_posix_suite --dir "$dir" $POSIX_ARGS > "$OUT/posix.log" 2>&1
rc=$?
grep -E "^(FAIL|[a-z_]+: [0-9]+/[0-9]+|[0-9]+ passed)" "$OUT/posix.log" | tail -60
umount /mnt/nfs
exit $rc
