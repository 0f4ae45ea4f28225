#!/bin/bash
# Guest job for CI: the kernel NBD client with ext4 on pailfs. The export
# file is made through NFS (as `truncate` on a mount would); the host kills
# and restarts the server half way (tests/vm/nbd_server_loop.sh) and the
# filesystem must come back intact.
. /job/files/lib.sh
DEV=/dev/nbd0
MNT=/mnt/nbd
attach() {
  nbd-client "$SERVER_IP" "$NBD_PORT" "$DEV" -N "$NBD_NAME" && echo "size $(blockdev --getsize64 $DEV)"
}
check "mount nfs" mount_nfs /mnt/nfs || { summary; exit 1; }
check "create the export: truncate -s 512M .nbd/$NBD_NAME" truncate -s 512M "/mnt/nfs/.nbd/$NBD_NAME"
check "umount nfs" umount /mnt/nfs
check "nbd-client attach" attach || { summary; exit 1; }
check "raw O_DIRECT write/read 4 MiB" sh -c "
    dd if=/dev/urandom of=/tmp/blk bs=1M count=4 status=none &&
    dd if=/tmp/blk of=$DEV bs=1M seek=1 oflag=direct status=none &&
    dd if=$DEV of=/tmp/blk2 bs=1M skip=1 count=4 iflag=direct status=none && cmp /tmp/blk /tmp/blk2"
check "mkfs.ext4" mkfs.ext4 -q -F "$DEV"
mkdir -p "$MNT"
check "mount ext4" mount "$DEV" "$MNT" || { nbd-client -d "$DEV"; summary; exit 1; }
df -h "$MNT"
fs_smoke "$MNT"
check "write files" sh -c "
    mkdir -p $MNT/data/sub && dd if=/dev/urandom of=$MNT/data/big bs=1M count=24 status=none &&
    for i in \$(seq 200); do echo file \$i > $MNT/data/sub/f\$i; done &&
    cp /tmp/blk $MNT/data/blk"
check "checksums" sh -c "cd $MNT/data && find . -type f | sort | xargs md5sum > /tmp/sums"
check "read files back" sh -c "cd $MNT/data && md5sum -c --quiet /tmp/sums"
check "sync" sync
check "umount ext4" umount "$MNT"
check "e2fsck -fn clean" e2fsck -fn "$DEV"
check "nbd-client disconnect" nbd-client -d "$DEV"

# The server dies without warning and comes back on the same bucket.
touch "$OUT/restart-request"
for _ in $(seq 600); do [ -e "$OUT/restarted-1" ] && break; sleep 0.2; done
check "server restarted" test -e "$OUT/restarted-1"
check "nbd-client reattach" attach || { summary; exit 1; }
check "e2fsck -fn clean after restart" e2fsck -fn "$DEV"
check "mount ext4 again" mount "$DEV" "$MNT" || { nbd-client -d "$DEV"; summary; exit 1; }
check "files intact" sh -c "cd $MNT/data && md5sum -c --quiet /tmp/sums"
check "write after restart" sh -c "echo again > $MNT/data/after && sync && cat $MNT/data/after | grep -q again"
check "umount ext4 again" umount "$MNT"
check "e2fsck -fn clean at the end" e2fsck -fn "$DEV"
check "nbd-client disconnect again" nbd-client -d "$DEV"
summary
