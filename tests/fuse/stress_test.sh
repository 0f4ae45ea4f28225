#!/usr/bin/env bash
# Concurrent random namespace and data changes through the mount, then the
# server stops cleanly and an offline fsck must find nothing wrong.
# Usage: stress_test.sh PAILFS STRESS [SECONDS]
PAILFS=$1
STRESS=$2
SECONDS_TO_RUN=${3:-20}
source "$(dirname "$0")/fuse_test_lib.sh"

start_server
rc=0
"$STRESS" --dir "$MNT" --threads 4 --seconds "$SECONDS_TO_RUN" --seed "$RANDOM" || rc=$?
stop_server
run_fsck
exit "$rc"
