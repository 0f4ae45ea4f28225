#!/usr/bin/env bash
# Unmounting from outside (fusermount -u, as a user or a desktop would)
# stops a server that serves nothing else the way SIGTERM does: it flushes
# and exits 0. With the periodic flush an hour away, a file written just
# before the unmount is there after a restart only if that exit flushed it.
# Then SIGTERM while processes keep writing into the mount: the server
# still exits 0 and keeps what was written before. Neither stop logs an
# error.
# Usage: unmount_test.sh PAILFS
PAILFS=$1
FLUSH_INTERVAL_MS=3600000
source "$(dirname "$0")/fuse_test_lib.sh"

start_server
head -c 3000000 /dev/urandom > "$WORK/expected.bin"
cp "$WORK/expected.bin" "$MNT/written.bin"
# What libfuse or the server report as failed, ours or libfuse's own lines.
errors_logged() { grep -c "\[error\]\|failed to unmount" "$WORK/server.log" || true; }

fusermount3 -u "$MNT"
await_clean_exit "fusermount3 -u"
grep -q "was unmounted; shutting down" "$WORK/server.log" || { show_log "no unmount message"; exit 1; }
[ "$(errors_logged)" -eq 0 ] || { show_log "errors logged by a stop after an unmount from outside"; exit 1; }

start_server
cmp "$WORK/expected.bin" "$MNT/written.bin" || { echo "FAIL: written.bin differs after the unmount"; exit 1; }
# Writers that hold their files open and never stop on their own.
writers=()
for i in 1 2 3; do
  (exec 3>"$MNT/busy$i"; while :; do head -c 65536 /dev/urandom >&3 || exit 0; done) 2>/dev/null &
  writers+=($!)
done
sleep 1
stop_server
kill "${writers[@]}" 2>/dev/null || true
wait "${writers[@]}" 2>/dev/null || true
[ "$(errors_logged)" -eq 0 ] || { show_log "errors logged by a stop with writers busy"; exit 1; }
start_server
cmp "$WORK/expected.bin" "$MNT/written.bin" || { echo "FAIL: written.bin differs after the busy stop"; exit 1; }
stop_server
run_fsck
echo "PASS: an unmount from outside flushed and stopped the server; so did SIGTERM with writers busy"
