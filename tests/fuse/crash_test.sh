#!/usr/bin/env bash
# Crash rounds through the mount: write files and fsync some, SIGKILL the
# server, start it again on the same bucket with an empty cache directory,
# and every fsynced file must be intact; at the end fsck must be clean.
# Usage: crash_test.sh PAILFS CRASH_FILES [ROUNDS]
PAILFS=$1
CRASH_FILES=$2
ROUNDS=${3:-3}
source "$(dirname "$0")/fuse_test_lib.sh"

MANIFEST="$WORK/manifest"
: >"$MANIFEST"
for round in $(seq 1 "$ROUNDS"); do
  start_server
  if [ "$round" -gt 1 ]; then
    "$CRASH_FILES" verify --dir "$MNT" --manifest "$MANIFEST"
  fi
  "$CRASH_FILES" write --dir "$MNT" --manifest "$MANIFEST" --round "$round"
  crash_server
  echo "round $round: server killed"
done
start_server
"$CRASH_FILES" verify --dir "$MNT" --manifest "$MANIFEST"
stop_server
run_fsck
