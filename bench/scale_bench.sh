#!/usr/bin/env bash
# scale_bench.sh: pailfs with one very large directory (issue 14, target 3).
#
#   bash bench/scale_bench.sh [--files N] [--block B] [--processes P]
#        [--spread-files M] [--spread-dirs K] [--spread-block B2]
#        [--samples K] [--memory-gb G] [--work-dir D] [--keep]
#
# Starts pailfs (FUSE, file:// bucket under the work directory, [cache]
# memory_size_gb = G, default 0.25) and prints:
# - with --spread-files M (default 0: skipped), first M empty files in K
#   (default 10000) directories, blocks of B2 (default 1000000), each
#   block's rate; then the big directory below, whose whole rate is set
#   beside the first spread block's ("the last million over the first");
# - the creation rate of each block of B (default 100000) empty files in one
#   directory of N (default 1000000), made by P (default 4) processes at
#   once (bigdir_bench create), and the last block's rate over the first's;
# - the server's RSS (VmRSS, and VmHWM, its peak) after the creates and
#   after listing, beside the configured memory cache;
# - `ls -f` of the directory: a first listing and two warm ones (seconds);
# - after a clean stop, the cache directory emptied and a restart: K
#   (default 1000) stat() of random files (bigdir_bench stat) and the
#   object-store GETs (get + get_range, from /metrics) they cost, per stat,
#   in the big directory and (with --spread-files) among the spread files;
#   beside them, the GETs of the open and of the metadata warm-up.
# Needs root, /dev/fuse and `cmake --build build --target pailfs
# bigdir_bench`. Prints numbers; never passes or fails on them.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
PAILFS=$BUILD/pailfs
BIGDIR=$BUILD/bigdir_bench
FILES=1000000
BLOCK=100000
PROCESSES=4
SAMPLES=1000
SPREAD_FILES=0
SPREAD_DIRS=10000
SPREAD_BLOCK=1000000
MEMORY_GB=0.25
WORK=/tmp/pailfs-scale-bench
KEEP=0

die() { echo "scale_bench: $*" >&2; exit 1; }
log() { echo "# $*" >&2; }

while [ $# -gt 0 ]; do
  case $1 in
    --files) FILES=$2; shift 2 ;;
    --block) BLOCK=$2; shift 2 ;;
    --processes) PROCESSES=$2; shift 2 ;;
    --samples) SAMPLES=$2; shift 2 ;;
    --spread-files) SPREAD_FILES=$2; shift 2 ;;
    --spread-dirs) SPREAD_DIRS=$2; shift 2 ;;
    --spread-block) SPREAD_BLOCK=$2; shift 2 ;;
    --memory-gb) MEMORY_GB=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done

[ "$(id -u)" = 0 ] || die "needs root (FUSE mount)"
[ -e /dev/fuse ] || die "needs /dev/fuse"
[ -x "$PAILFS" ] || die "no $PAILFS; build it first"
[ -x "$BIGDIR" ] || die "no $BIGDIR; build it first"

rm -rf "$WORK"
mkdir -p "$WORK/bucket" "$WORK/mnt" "$WORK/logs"
MNT=$WORK/mnt
CONFIG=$WORK/pailfs.toml
ADMIN_SOCK=$WORK/admin.sock
SERVER_LOG=$WORK/logs/server.log
SERVER_PID=""

cat > "$CONFIG" <<EOT
[storage]
url = "file://$WORK/bucket"
encryption_password = "scale-bench"
[cache]
dir = "$WORK/cache"
memory_size_gb = $MEMORY_GB
[servers.fuse]
mountpoint = "$MNT"
[servers.admin]
unix_socket = "$ADMIN_SOCK"
EOT

# shellcheck source=bench/pailfs_server.sh
source "$(dirname "${BASH_SOURCE[0]}")/pailfs_server.sh"

cleanup() {
  stop_server
  if [ "$KEEP" = 0 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}
trap cleanup EXIT

start_server() {
  "$PAILFS" run -c "$CONFIG" >> "$SERVER_LOG" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 600); do
    kill -0 "$SERVER_PID" 2>/dev/null || { tail -n 20 "$SERVER_LOG" >&2; SERVER_PID=""; die "pailfs exited while starting"; }
    if grep -q " $MNT fuse.pailfs " /proc/self/mounts &&
       [ "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$ADMIN_SOCK" http://pailfs/healthz)" = 200 ]; then
      return 0
    fi
    sleep 0.1
  done
  die "pailfs did not mount"
}

metric() {  # metric NAME-AND-LABEL-REGEX: the sum of the matching samples
  curl -s --unix-socket "$ADMIN_SOCK" http://pailfs/metrics |
    awk -v re="$1" '$0 !~ /^#/ && $1 ~ re { s += $2 } END { printf "%.0f\n", s }'
}
gets() { metric '^pailfs_objstore_requests_total\{op="get(_range)?"'; }
rss() {  # "VmRSS VmHWM" of the server in MiB
  awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { printf "%.0f MiB (peak %.0f MiB)", r / 1024, h / 1024 }' \
    "/proc/$SERVER_PID/status"
}
seconds() {  # seconds COMMAND...: wall seconds of the command, its output dropped
  local t0 t1
  t0=$(date +%s.%N); "$@" > /dev/null; t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
list() { ls -f "$MNT/big" | wc -l > "$WORK/listed"; }

start_server
cache_mib=$(awk -v g="$MEMORY_GB" 'BEGIN { printf "%.0f", g * 1024 }')
first_spread_rate=""
if [ "$SPREAD_FILES" -gt 0 ]; then
  mkdir "$MNT/spread" || die "mkdir failed"
  echo "== create: $SPREAD_FILES empty files in $SPREAD_DIRS directories, blocks of $SPREAD_BLOCK, $PROCESSES processes"
  "$BIGDIR" create --dir "$MNT/spread" --files "$SPREAD_FILES" --dirs "$SPREAD_DIRS" \
    --block "$SPREAD_BLOCK" --processes "$PROCESSES" | tee "$WORK/spread.out" ||
    die "bigdir_bench create failed"
  first_spread_rate=$(awk '/^first block/ { print $3 }' "$WORK/spread.out")
  echo "server RSS after the spread files: $(rss), memory cache $cache_mib MiB"
fi
mkdir "$MNT/big" || die "mkdir failed"
echo "== create: $FILES empty files in one directory, blocks of $BLOCK, $PROCESSES processes"
t0=$(date +%s.%N)
"$BIGDIR" create --dir "$MNT/big" --files "$FILES" --block "$BLOCK" --processes "$PROCESSES" ||
  die "bigdir_bench create failed"
big_rate=$(awk -v a="$t0" -v b="$(date +%s.%N)" -v n="$FILES" 'BEGIN { printf "%.1f", n / (b - a) }')
echo "the whole directory: $big_rate files/s"
if [ -n "$first_spread_rate" ]; then
  awk -v a="$first_spread_rate" -v b="$big_rate" \
    'BEGIN { printf "the big directory (created last) / the first spread block: %.1f / %.1f files/s, %.2f\n", b, a, b / a }'
fi
echo "== memory: configured memory cache $cache_mib MiB (limit with 256 MiB: $((cache_mib + 256)) MiB)"
echo "server RSS after the creates: $(rss)"
echo "== ls -f (entries listed, seconds)"
first=$(seconds list); echo "first: $(cat "$WORK/listed") entries, ${first} s"
for i in 1 2; do warm=$(seconds list); echo "warm $i: ${warm} s"; done
echo "server RSS after listing: $(rss)"

echo "== restart with an empty cache directory, then $SAMPLES stat() of random files"
stop_server
rm -rf "$WORK/cache"
start_server
stat_gets() {  # stat_gets LABEL BIGDIR-STAT-ARGS...: random stats and the GETs they cost
  local label=$1 before after
  shift
  before=$(gets)
  "$BIGDIR" stat "$@" --samples "$SAMPLES" || die "bigdir_bench stat failed"
  after=$(gets)
  awk -v l="$label" -v a="$before" -v b="$after" -v n="$SAMPLES" \
    'BEGIN { printf "%sobject-store GETs: %d for %d stats, %.2f per stat\n", l, b - a, n, (b - a) / n }'
}
echo "GETs from the restart to the first stat: $(gets)"
stat_gets "" --dir "$MNT/big" --files "$FILES"
if [ "$SPREAD_FILES" -gt 0 ]; then
  stat_gets "spread files: " --dir "$MNT/spread" --files "$SPREAD_FILES" --dirs "$SPREAD_DIRS"
fi
# The metadata warm-up after open (docs/engine.md) may still run while the
# stats do; its GETs count in the lines above only if so.
for i in $(seq 3000); do
  [ "$(metric '^pailfs_cache_warming')" = 0 ] && break
  sleep 0.1
done
echo "metadata warmed into the disk cache after the restart: $(metric '^pailfs_cache_warmed_bytes') bytes; GETs since the restart, all told: $(gets)"
echo "server RSS after the stats: $(rss)"
