#!/usr/bin/env bash
# The POSIX conformance suite through a pailfs FUSE mount, as root or as an
# unprivileged uid, then an offline fsck of the bucket.
# Usage: posix_suite_test.sh PAILFS SUITE root|unprivileged
PAILFS=$1
SUITE=$2
MODE=$3
source "$(dirname "$0")/fuse_test_lib.sh"

case "$MODE" in
  root) identity=() ;;
  # Member of the suite's shared group (65503), like the suite's "bob".
  unprivileged) identity=(--uid 65510 --gid 65510 --groups 65510,65503) ;;
  *) echo "mode must be root or unprivileged"; exit 2 ;;
esac

start_server
rc=0
"$SUITE" --dir "$MNT" "${identity[@]}" || rc=$?
stop_server
run_fsck
exit "$rc"
