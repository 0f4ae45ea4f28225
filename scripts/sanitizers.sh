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
#  - TSan: PAIL_TSAN_TARGETS (a regex over target names): the engine unit
#    tests, the engine simulation (PAIL_TSAN_SIM_SEEDS seeds, 150 by default:
#    about a minute under TSan, against 1200 in the ordinary build) and the
#    RPC server's tests, the listeners, and a few quick ones (crypto, codec, byte-range
#    locks, 9P wire, server config). Debian's librocksdb, libstdc++ and libzstd are not
#    instrumented, so their synchronisation is invisible: RocksDB hands our
#    objects between its threads (the write-thread leader writing the WAL for
#    its followers, background jobs picking up files) through std::atomic
#    protocols TSan cannot see. scripts/tsan.supp suppresses reports with a
#    librocksdb frame and interceptor calls from those libraries, and says
#    why. fs_test is not in the default set yet: it still reports races
#    between two threads' rocksdb::WriteBatch::Put (filesystem_impl.cc
#    Commit and CreateNode/SetXattr); the call passes through librocksdb, but
#    an uninstrumented library leaves no frame in TSan's stacks, so the
#    module suppression cannot match it, and it was not triaged in time.
#    PAIL_TSAN_TARGETS='^(engine_test|engine_sim_test|fs_test)$' shows them.
#    engine_test's ConcurrentSyncsAreGrouped (PAIL_TSAN_EXCLUDE_CASES, a
#    regex over CTest names) intermittently gives the same report: each
#    thread's own WriteBatch::Put writing a string block TSan still thinks
#    belongs to another thread (the allocator's reuse of it not seen).
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
TSAN_TARGETS=${PAIL_TSAN_TARGETS:-^(engine_test|engine_sim_test|nfs_rpc_test|net_test|crypto_test|objstore_codec_test|byte_range_locks_test|ninep_wire_test|server_config_test)$}
TSAN_SIM_SEEDS=${PAIL_TSAN_SIM_SEEDS:-150}
# The ordinary build runs 1200 simulation seeds; ASan runs fewer to stay quick.
ASAN_SIM_SEEDS=${PAIL_ASAN_SIM_SEEDS:-300}
TSAN_EXCLUDE_CASES=${PAIL_TSAN_EXCLUDE_CASES:-^engine_test\.Engine\.ConcurrentSyncsAreGrouped$}

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
  ctest --test-dir "$dir" -L unit -R "^(${names%|})\\." ${EXCLUDE_CASES:+-E "$EXCLUDE_CASES"} \
    --output-on-failure -j"$JOBS" --timeout 900
}

run_asan() {
  local start=$SECONDS flags="-fsanitize=address,undefined -fno-sanitize-recover=all"
  configure build-asan "$flags"
  mapfile -t tests < <(grep -vE "$ASAN_EXCLUDE" build-asan/unit_tests.txt | grep .)
  cmake --build build-asan -j"$JOBS" --target "${tests[@]}" pailfs
  PAIL_SIM_SEEDS=$ASAN_SIM_SEEDS ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 \
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
  EXCLUDE_CASES=$TSAN_EXCLUDE_CASES PAIL_SIM_SEEDS=$TSAN_SIM_SEEDS \
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
