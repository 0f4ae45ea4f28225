#!/usr/bin/env bash
# Unit tests under clang's sanitizers, each build in its own directory:
#   build-asan  AddressSanitizer + UndefinedBehaviorSanitizer (leaks included)
#   build-tsan  ThreadSanitizer
# Unit tests are the pail_test binaries not marked INTEGRATION
# (tests/CMakeLists.txt writes them to <build>/unit_tests.txt and labels
# their cases `unit`); that includes the engine simulation tests.
#
# What runs where, chosen to keep CI well under 30 minutes on 2 cores:
#  - ASan+UBSan: every unit test except engine_durability_test and
#    engine_failpoint_test (process-level crash tests: they kill and
#    restart child processes; their time goes to process start-up, and the
#    engine code they drive runs here through engine_test and the simulation).
#  - TSan: the RPC server's tests (PAIL_TSAN_TARGETS, a regex over target
#    names). The engine, its simulation and the filesystem core are not run
#    under TSan yet: Debian's librocksdb is not instrumented, and RocksDB hands
#    our objects between its threads through std::atomic protocols TSan cannot
#    see (the write-thread leader writing the WAL for its followers, background
#    jobs picking up files), which gives a few dozen reports at that boundary.
#    scripts/tsan.supp holds the ones triaged so far; widen the regex, e.g.
#    PAIL_TSAN_TARGETS='^(engine_test|engine_sim.*|fs_test|nfs_rpc_test)$',
#    to work on the rest.
#  - Neither: tests that start the pailfs server or mount FUSE (nfs
#    integration, tests/fuse, the CLI and POSIX-suite scripts); scripts/test.sh
#    runs them in the ordinary build.
# Both builds make clang's -Wthread-safety and an ignored [[nodiscard]] result
# errors; the ASan build also builds the pailfs binary, so every layer (the
# FUSE and NFS servers too) passes the analysis.
#
#   scripts/sanitizers.sh [asan|tsan]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=${JOBS:-$(nproc)}
ASAN_EXCLUDE=${PAIL_ASAN_EXCLUDE:-^(engine_durability_test|engine_failpoint_test)$}
TSAN_TARGETS=${PAIL_TSAN_TARGETS:-^nfs_rpc_test$}

launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
checks="-Wthread-safety -Werror=thread-safety -Werror=unused-result"

configure() {
  local dir=$1 flags=$2
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer $checks" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags -fuse-ld=lld" "${launcher[@]}" >/dev/null
}

# run DIR TARGETS...: runs the unit-test cases of those targets.
run() {
  local dir=$1
  shift
  local names
  names=$(printf '%s|' "$@")
  ctest --test-dir "$dir" -L unit -R "^(${names%|})\\." --output-on-failure \
    -j"$JOBS" --timeout 900
}

run_asan() {
  local start=$SECONDS flags="-fsanitize=address,undefined -fno-sanitize-recover=all"
  configure build-asan "$flags"
  mapfile -t tests < <(grep -vE "$ASAN_EXCLUDE" build-asan/unit_tests.txt | grep .)
  cmake --build build-asan -j"$JOBS" --target "${tests[@]}" pailfs
  ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$ROOT/scripts/lsan.supp:print_suppressions=0 \
    run build-asan "${tests[@]}"
  echo "sanitizers: asan+ubsan build and tests took $((SECONDS - start)) s"
}

run_tsan() {
  local start=$SECONDS
  configure build-tsan "-fsanitize=thread"
  mapfile -t tests < <(grep -E "$TSAN_TARGETS" build-tsan/unit_tests.txt)
  cmake --build build-tsan -j"$JOBS" --target "${tests[@]}"
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$ROOT/scripts/tsan.supp \
    run build-tsan "${tests[@]}"
  echo "sanitizers: tsan build and tests took $((SECONDS - start)) s"
}

for which in ${@:-asan tsan}; do
  case $which in
    asan) run_asan ;;
    tsan) run_tsan ;;
    *) echo "usage: $0 [asan|tsan]..." >&2; exit 2 ;;
  esac
done
