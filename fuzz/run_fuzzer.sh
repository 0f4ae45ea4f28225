#!/usr/bin/env bash
# Builds a fuzz target with clang (libFuzzer + ASan + UBSan, every library
# instrumented) in build-fuzz/ and runs it on a copy of its seed corpus.
#   fuzz/run_fuzzer.sh [SECONDS] [TARGET]   default 600 s, target nfs_rpc
# TARGET: nfs_rpc (RPC/XDR, NFS, MOUNT), ninep (9P2000.L) or nbd (handshake
# and transmission); the binary is TARGET_fuzzer, the seeds fuzz/corpus/TARGET.
# Needs clang and libclang-rt-dev (Debian clang-14). Crashes land in
# build-fuzz/artifacts/; new corpus entries stay in build-fuzz/corpus/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-600}
TARGET=${2:-nfs_rpc}
B=${FUZZ_BUILD:-build-fuzz}
CC=clang CXX=clang++ cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" \
  -DCMAKE_PROJECT_pailfs_INCLUDE="$PWD/fuzz/attach.cmake" >/dev/null
cmake --build "$B" -j"$(nproc)" --target "${TARGET}_fuzzer"
mkdir -p "$B/corpus/$TARGET" "$B/artifacts"
cp -n fuzz/corpus/"$TARGET"/* "$B/corpus/$TARGET/"
"$B/fuzz/${TARGET}_fuzzer" -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=4096 \
  -artifact_prefix="$B/artifacts/" -print_final_stats=1 "$B/corpus/$TARGET"
