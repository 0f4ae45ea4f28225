#!/usr/bin/env bash
# Random data operations through the mount against a model
# (pail_fuse_data_model), then the files are compared with the model's
# final contents after the server restarts: once after SIGKILL (the program
# fsynced every file last, so nothing may be lost), once after a clean stop.
# Then an offline fsck. Usage: data_model_test.sh PAILFS MODEL [STEPS]
PAILFS=$1
MODEL=$2
STEPS=${3:-2000}
source "$(dirname "$0")/fuse_test_lib.sh"

# compare_with DIR: each file of $WORK/expected-DIR equals $MNT/DIR/its name.
compare_with() {
  local f
  for f in "$WORK/expected-$1"/*; do
    if ! cmp "$f" "$MNT/$1/$(basename "$f")"; then
      echo "FAIL: $1/$(basename "$f") differs from the model after a restart"
      exit 1
    fi
  done
}

seed=$RANDOM
echo "seeds $seed and $((seed + 1))"
start_server
for run in killed stopped; do
  mkdir -p "$MNT/$run" "$WORK/expected-$run"
  "$MODEL" --dir "$MNT/$run" --steps "$STEPS" --seed "$seed" --expect "$WORK/expected-$run"
  seed=$((seed + 1))
done
crash_server
start_server
compare_with killed
compare_with stopped
stop_server
start_server
compare_with stopped
stop_server
run_fsck
