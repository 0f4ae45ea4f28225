#!/usr/bin/env bash
# Unmounting from outside (fusermount -u, as a user or a desktop would)
# stops a server that serves nothing else the way SIGTERM does: it flushes
# and exits 0. With the periodic flush an hour away, a file written just
# before the unmount is there after a restart only if that exit flushed it.
# Usage: unmount_test.sh PAILFS
PAILFS=$1
FLUSH_INTERVAL_MS=3600000
source "$(dirname "$0")/fuse_test_lib.sh"

start_server
head -c 3000000 /dev/urandom > "$WORK/expected.bin"
cp "$WORK/expected.bin" "$MNT/written.bin"
fusermount3 -u "$MNT"
await_clean_exit "fusermount3 -u"
grep -q "was unmounted; shutting down" "$WORK/server.log" || { show_log "no unmount message"; exit 1; }

start_server
cmp "$WORK/expected.bin" "$MNT/written.bin" || { echo "FAIL: written.bin differs after the unmount"; exit 1; }
stop_server
run_fsck
echo "PASS: an unmount from outside flushed and stopped the server"
