#!/usr/bin/env bash
# The unit tests under clang's sanitizers, each build in its own directory:
#   build-asan  AddressSanitizer + UndefinedBehaviorSanitizer (leaks included)
#   build-tsan  ThreadSanitizer
# "Unit tests" are the ctest label `unit`: every pail_test not marked
# INTEGRATION (tests/CMakeLists.txt), which includes the engine simulation.
# Left out: tests that start the pailfs server or mount FUSE (nfs integration,
# tests/fuse, the CLI and POSIX-suite scripts); scripts/test.sh runs them in
# the ordinary build. Both builds also make clang's -Wthread-safety and an
# ignored [[nodiscard]] result errors, and build the pailfs binary so every
# layer (FUSE and NFS servers too) is checked.
#
#   scripts/sanitizers.sh [asan|tsan]...   (default: both)
# PAIL_TSAN_TESTS: ctest regex of the unit tests run under TSan (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=${JOBS:-$(nproc)}

launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
checks="-Wthread-safety -Werror=thread-safety -Werror=unused-result"

# build DIR SANITIZER_FLAGS: configures with clang and builds the unit tests.
build() {
  local dir=$1 flags=$2
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer $checks" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags -fuse-ld=lld" "${launcher[@]}" >/dev/null
  cmake --build "$dir" -j"$JOBS" --target unit_tests pailfs
}

run_asan() {
  local start=$SECONDS
  build build-asan "-fsanitize=address,undefined -fno-sanitize-recover=all"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$ROOT/scripts/lsan.supp:print_suppressions=0 \
    ctest --test-dir build-asan -L unit --output-on-failure -j"$JOBS" --timeout 900
  echo "sanitizers: asan+ubsan build and tests took $((SECONDS - start)) s"
}

run_tsan() {
  local start=$SECONDS
  build build-tsan "-fsanitize=thread"
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$ROOT/scripts/tsan.supp \
    ctest --test-dir build-tsan -L unit -R "${PAIL_TSAN_TESTS:-.}" --output-on-failure \
      -j"$JOBS" --timeout 900
  echo "sanitizers: tsan build and tests took $((SECONDS - start)) s"
}

for which in "${@:-asan tsan}"; do
  for w in $which; do
    case $w in
      asan) run_asan ;;
      tsan) run_tsan ;;
      *) echo "usage: $0 [asan|tsan]..." >&2; exit 2 ;;
    esac
  done
done
