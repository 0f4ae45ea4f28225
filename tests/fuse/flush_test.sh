#!/usr/bin/env bash
# `pailfs flush` makes what was written through the mount durable: with the
# periodic flush an hour away, write through FUSE, run `pailfs flush`, then
# SIGKILL the server; a restart on an empty cache finds the data. A file
# written after the flush is the control: without a flush it is lost.
# Usage: flush_test.sh PAILFS
PAILFS=$1
FLUSH_INTERVAL_MS=3600000
source "$(dirname "$0")/fuse_test_lib.sh"
EXTRA_CONFIG="[servers.admin]
unix_socket = \"$WORK/admin.sock\""

start_server
head -c 5000000 /dev/urandom > "$WORK/expected.bin"
cp "$WORK/expected.bin" "$MNT/flushed.bin"
echo "small file" > "$MNT/small.txt"
mkdir "$MNT/dir"
"$PAILFS" flush -c "$CONFIG" > "$WORK/flush.out"
echo "pailfs flush: $(cat "$WORK/flush.out")"
echo "after the flush" > "$MNT/unflushed.txt"
crash_server
echo "server killed after the flush"

start_server
cmp "$WORK/expected.bin" "$MNT/flushed.bin" || { echo "FAIL: flushed.bin differs after the crash"; exit 1; }
[ "$(cat "$MNT/small.txt")" = "small file" ] || { echo "FAIL: small.txt lost"; exit 1; }
[ -d "$MNT/dir" ] || { echo "FAIL: dir lost"; exit 1; }
if [ -e "$MNT/unflushed.txt" ]; then
  echo "FAIL: unflushed.txt survived: the periodic flush ran, so this test proves nothing"
  exit 1
fi
stop_server
rc=0
"$PAILFS" flush -c "$CONFIG" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 3 ] || { echo "FAIL: flush with no server exited $rc, not 3"; exit 1; }
run_fsck
echo "PASS: flushed data survived SIGKILL; the control file did not"
