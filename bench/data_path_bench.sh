#!/usr/bin/env bash
# data_path_bench.sh: the benchmark of issue 9 (file data at the object
# store's bandwidth, deleted data out of the bucket). One run prints every
# target's numbers beside its reference, measured in the same run on the
# same machine, so background load and the day's disk speed hit both alike.
#
#   bash bench/data_path_bench.sh [--store file|rgw|both] [--size-gb N] [--only LIST] [options]
#
# Targets (names for --only; their numbers work too):
#   1 seq       dd bs=1M conv=fsync of a --seq-gb file (default 4) through FUSE;
#               cold read after a restart with an empty cache; warm read.
#               Reference: file:// dd to/from a plain file in the bucket's
#               file system (and, as the FUSE ceiling, the same cold read
#               through bindfs); rgw `aws s3 cp` up and down (multipart, parallel).
#   2 rand      random 4 KiB pread()s from 8 threads over a cold --rand-gb file
#               (default 1): reads/s and GETs per read (server counters).
#               Reference: the same reads on a plain file (file://; and
#               through bindfs, the FUSE ceiling) or as ranged GETs of one
#               object at 8 concurrency (rgw).
#   3 space     bucket bytes against live bytes + 64 MiB after each of: write
#               --space-gb (default 2) as 8 files, overwrite the first half of
#               each in place, delete a quarter (2 files), --tar-cycles
#               (default 10) `tar -xf` / `rm -rf` cycles of a source tree;
#               after each, polls up to --settle-seconds (default 300) and
#               prints when the ratio came within 1.1x.
#   4 memory    write --mem-gb (default 10) at full speed; peak RSS (VmHWM,
#               and VmRSS sampled every 0.5 s) against memory cache +
#               write-back buffer + 256 MiB.
#   5 real      tar -xf of --tarball (default Debian's linux-source-6.1),
#               a parallel C build in the tree (--build: libbpf, the kernel's
#               tools/lib/bpf, about 35 s of CPU; objtool; tinyconfig),
#               git clone --no-local of a repository made once from the same
#               tree, rm -rf; on local disk, bindfs and pailfs (each store).
#   6 small     bench/workloads_bench (ten small-file workloads) on pailfs
#               and on bindfs, ops/s side by side.
#
# Options:
#   --store file|rgw|both    which bucket(s) pailfs runs on (default file)
#   --size-gb N              sets --seq-gb, --rand-gb, --space-gb and --mem-gb
#                            at once (decimals allowed: 0.25); to shrink a run
#   --seq-gb/--rand-gb/--space-gb/--mem-gb N   one target's size
#   --only LIST              comma-separated targets (default all)
#   --settle-seconds N       target 3's wait per step (default 300)
#   --tar-cycles N           target 3's cycles (default 10)
#   --cycle-subdir DIR       the tree target 3 cycles: DIR of the tarball's top
#                            directory (default fs; "" = the whole tree)
#   --rand-reads N           target 2's reads (default 8000) ...
#   --rand-seconds N         ... or until this many seconds (default 60)
#   --tarball FILE           target 5's source tarball (.tar, .tar.xz, .tar.gz)
#   --build libbpf|objtool|tinyconfig|none   target 5's make -j2 (default libbpf)
#   --workload-ops N         workloads_bench --ops (default its own)
#   --writeback-mib N        the write-back buffer for target 4's limit
#                            (default 64: FsOptions::write_back_bytes)
#   --work-dir DIR           buckets, mounts, logs (default /tmp/pailfs-bench.PID)
#   --cache-dir DIR          decompressed tarball and git repository, kept
#                            between runs (default /var/tmp/pailfs-bench-cache)
#   --build-dir DIR          where pailfs, data_io_bench and workloads_bench are
#                            (default build/)
#   --keep                   keep the work directory (buckets, logs)
#
# Needs root and /dev/fuse (FUSE mounts). rgw: the loopback Ceph RGW of
# shared/objstores (endpoint and keys from $OBJSTORES_ROOT/env, else
# /tmp/pailfs-objstores/env or /tmp/objstores/env) and the aws command. Missing
# benchmark-only tools (awscli, bindfs, linux-source-6.1, libelf-dev, and
# flex, bison, bc for tinyconfig) are installed with apt-get, saying so. Build first:
#   cmake --build build --target pailfs data_io_bench workloads_bench
# A benchmark: it prints numbers and never judges them; the exit status is
# nonzero only when it could not run. See docs/benchmarks.md.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
STORES="file"
SEQ_GB=4 RAND_GB=1 SPACE_GB=2 MEM_GB=10
ONLY=""
SETTLE_SECONDS=300
TAR_CYCLES=10
CYCLE_SUBDIR=fs
RAND_READS=8000 RAND_SECONDS=60
TARBALL=/usr/src/linux-source-6.1.tar.xz
BUILD=libbpf
WORKLOAD_OPS=""
WRITEBACK_MIB=64
WORK=/tmp/pailfs-bench.$$
CACHE=/var/tmp/pailfs-bench-cache
BUILD_DIR=$ROOT/build
KEEP=0

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "data_path_bench: $*" >&2; exit 1; }
is_number() { [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; }

while [ $# -gt 0 ]; do
  opt=$1
  [ $# -ge 2 ] || case $opt in --keep|-h|--help) ;; *) usage ;; esac
  case $opt in
    --store) STORES=$2 ;;
    --size-gb) SEQ_GB=$2 RAND_GB=$2 SPACE_GB=$2 MEM_GB=$2 ;;
    --seq-gb) SEQ_GB=$2 ;;
    --rand-gb) RAND_GB=$2 ;;
    --space-gb) SPACE_GB=$2 ;;
    --mem-gb) MEM_GB=$2 ;;
    --only) ONLY=$2 ;;
    --settle-seconds) SETTLE_SECONDS=$2 ;;
    --tar-cycles) TAR_CYCLES=$2 ;;
    --cycle-subdir) CYCLE_SUBDIR=$2 ;;
    --rand-reads) RAND_READS=$2 ;;
    --rand-seconds) RAND_SECONDS=$2 ;;
    --tarball) TARBALL=$2 ;;
    --build) BUILD=$2 ;;
    --workload-ops) WORKLOAD_OPS=$2 ;;
    --writeback-mib) WRITEBACK_MIB=$2 ;;
    --work-dir) WORK=$2 ;;
    --cache-dir) CACHE=$2 ;;
    --build-dir) BUILD_DIR=$2 ;;
    --keep) KEEP=1; shift; continue ;;
    -h|--help) usage ;;
    *) echo "unknown option $opt" >&2; usage ;;
  esac
  shift 2
done

case $STORES in file) STORES="file" ;; rgw) STORES="rgw" ;; both) STORES="file rgw" ;; *) usage ;; esac
for v in "$SEQ_GB" "$RAND_GB" "$SPACE_GB" "$MEM_GB"; do
  is_number "$v" && [ "$(awk -v v="$v" 'BEGIN { print (v > 0) }')" = 1 ] || die "bad size $v"
done
for v in "$SETTLE_SECONDS" "$TAR_CYCLES" "$RAND_READS" "$RAND_SECONDS" "$WRITEBACK_MIB"; do
  [[ $v =~ ^[0-9]+$ ]] || die "bad number $v"
done
[ -z "$WORKLOAD_OPS" ] || [[ $WORKLOAD_OPS =~ ^[1-9][0-9]*$ ]] || die "bad --workload-ops"
case $BUILD in libbpf|objtool|tinyconfig|none) ;; *) die "--build is libbpf, objtool, tinyconfig or none" ;; esac

# --only: names or numbers; TARGETS holds the names.
ALL_TARGETS="seq rand space memory real small"
TARGETS=""
for t in ${ONLY//,/ }; do
  case $t in
    1|seq) TARGETS+=" seq" ;; 2|rand) TARGETS+=" rand" ;; 3|space) TARGETS+=" space" ;;
    4|memory) TARGETS+=" memory" ;; 5|real) TARGETS+=" real" ;; 6|small) TARGETS+=" small" ;;
    *) die "unknown target $t (one of: $ALL_TARGETS, or 1-6)" ;;
  esac
done
[ -n "$TARGETS" ] || TARGETS=$ALL_TARGETS
wanted() { [[ " $TARGETS " == *" $1 "* ]]; }

PAILFS=$BUILD_DIR/pailfs
IO=$BUILD_DIR/data_io_bench
WORKLOADS=$BUILD_DIR/workloads_bench
for bin in "$PAILFS" "$IO"; do
  [ -x "$bin" ] || die "$bin is missing: cmake --build build --target pailfs data_io_bench workloads_bench"
done
if wanted small; then [ -x "$WORKLOADS" ] || die "$WORKLOADS is missing"; fi
[ "$(id -u)" = 0 ] && [ -c /dev/fuse ] || die "needs root and /dev/fuse for the FUSE mounts"

# ---------------------------------------------------------------- helpers

GiB=1073741824
MiB=1048576
bytes_of_gb() { awk -v g="$1" 'BEGIN { printf "%.0f\n", g * 1073741824 }'; }
# Whole MiB, so dd bs=1M counts come out exact.
mib_of_gb() { awk -v g="$1" 'BEGIN { printf "%.0f\n", g * 1024 }'; }
now() { echo "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }'; }
mbs() { awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f\n", b / 1e6 / s; else print "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "-" && b != "-" && b > 0) printf "%.2fx\n", a / b; else print "-" }'; }
human() { awk -v b="$1" 'BEGIN { if (b >= 1073741824) printf "%.2f GiB\n", b / 1073741824; else printf "%.1f MiB\n", b / 1048576 }'; }
kv() { grep -o "$1=[^ ]*" | head -1 | cut -d= -f2; }  # kv KEY < "a=1 b=2"
log() { echo "[$(date +%T)] $*" >&2; }
# Lines for the final summary go to stdout and to $SUMMARY.
out() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }

ensure_packages() {  # ensure_packages CMD:PACKAGE ...
  local missing=()
  for pair in "$@"; do
    local probe=${pair%%:*} pkg=${pair#*:}
    if [[ $probe == /* ]]; then [ -e "$probe" ] && continue; else command -v "$probe" >/dev/null && continue; fi
    missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing benchmark-only packages: ${missing[*]} (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 \
    --no-install-recommends "${missing[@]}" > "$WORK/apt.log" 2>&1 ||
    { apt-get update -q >> "$WORK/apt.log" 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 \
        --no-install-recommends "${missing[@]}" >> "$WORK/apt.log" 2>&1; } ||
    die "apt-get install ${missing[*]} failed (see $WORK/apt.log)"
}

mkdir -p "$WORK" "$CACHE" || die "cannot create $WORK or $CACHE"
chmod 0755 "$WORK"
SUMMARY=$WORK/summary.txt
: > "$SUMMARY"
LOGS=$WORK/logs
mkdir -p "$LOGS"

# ---------------------------------------------------------------- stores

RGW_BUCKETS=()
RUN_ID=$(date +%s)-$$
if [[ " $STORES " == *" rgw "* ]]; then
  for f in "${OBJSTORES_ROOT:-}/env" /tmp/pailfs-objstores/env /tmp/objstores/env; do
    # shellcheck disable=SC1090
    if [ -f "$f" ]; then set -a; . "$f"; set +a; break; fi
  done
  [ -n "${S3_ENDPOINT:-}" ] || die "rgw: no object store env (start shared/objstores/objstores.sh)"
  curl -s -o /dev/null "$S3_ENDPOINT" || die "rgw: nothing answers at $S3_ENDPOINT"
  ensure_packages aws:awscli
  # aws talks to RGW with path-style URLs and without the flexible checksums
  # newer clients send by default, which older RGW releases reject.
  export AWS_CONFIG_FILE=$WORK/aws.config
  cat > "$AWS_CONFIG_FILE" <<EOF
[default]
region = ${S3_REGION:-us-east-1}
request_checksum_calculation = when_required
response_checksum_validation = when_required
s3 =
  addressing_style = path
EOF
  export AWS_ACCESS_KEY_ID=$S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET_KEY
  export AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true
  s3() { aws --endpoint-url "$S3_ENDPOINT" s3 "$@"; }
  REF_BUCKET=pfb-$RUN_ID-ref
  s3 mb "s3://$REF_BUCKET" > /dev/null || die "rgw: cannot create bucket $REF_BUCKET"
  RGW_BUCKETS+=("$REF_BUCKET")
fi

# new_bucket STORE TAG: sets URL (what pailfs serves) for a fresh bucket.
new_bucket() {
  if [ "$1" = file ]; then
    BUCKET_DIR=$WORK/$2/bucket
    rm -rf "$BUCKET_DIR"; mkdir -p "$BUCKET_DIR"
    URL="file://$BUCKET_DIR"
  else
    BUCKET_NAME=pfb-$RUN_ID-$2
    RGW_BUCKETS+=("$BUCKET_NAME")
    URL="s3://$BUCKET_NAME/fs"
  fi
}

# bucket_bytes STORE: "bytes objects" of everything in the current bucket.
bucket_bytes() {
  if [ "$1" = file ]; then
    find "$BUCKET_DIR" -type f -printf '%s\n' | awk '{ s += $1; n++ } END { printf "%.0f %d\n", s, n }'
  else
    s3 ls --recursive --summarize "s3://$BUCKET_NAME/" |
      awk '/Total Objects:/ { n = $3 } /Total Size:/ { s = $3 } END { printf "%.0f %d\n", s, n }'
  fi
}

drop_bucket() {  # frees a file:// bucket's disk at once; rgw buckets go at exit
  [ "$1" = file ] && [ "$KEEP" = 0 ] && rm -rf "$BUCKET_DIR"
  return 0
}

# ---------------------------------------------------------------- server

SERVER_PID=""
GEN=0
# The configs name it rather than hold it; every pailfs command reads it.
export PAILFS_BENCH_PASSWORD=data-path-bench
MNT=""
ADMIN_SOCK=""

# start_server STORE TAG [EXTRA_TOML]: serves the current URL on $WORK/TAG/mnt
# with a new, empty cache directory (as on a fresh machine).
start_server() {
  local store=$1 tag=$2 extra=${3:-}
  GEN=$((GEN + 1))
  MNT=$WORK/$tag/mnt
  ADMIN_SOCK=$WORK/$tag/admin.sock
  SERVER_LOG=$LOGS/server-$GEN-$store-$tag.log
  mkdir -p "$MNT"
  CONFIG=$WORK/$tag/pailfs-$GEN.toml
  local aws=""
  if [ "$store" = rgw ]; then
    aws="[aws]
access_key_id = \"\${S3_ACCESS_KEY}\"
secret_access_key = \"\${S3_SECRET_KEY}\"
region = \"${S3_REGION:-us-east-1}\"
endpoint = \"$S3_ENDPOINT\"
allow_http = true
path_style = true"
  fi
  # The defaults a new user gets, but for where things live.
  cat > "$CONFIG" <<EOF
[storage]
url = "$URL"
encryption_password = "\${PAILFS_BENCH_PASSWORD}"
[cache]
dir = "$WORK/$tag/cache-$GEN"
$extra
$aws
[servers.fuse]
mountpoint = "$MNT"
[servers.admin]
unix_socket = "$ADMIN_SOCK"
EOF
  "$PAILFS" run -c "$CONFIG" >> "$SERVER_LOG" 2>&1 &
  SERVER_PID=$!
  local i
  for i in $(seq 1200); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      tail -n 20 "$SERVER_LOG" >&2; SERVER_PID=""; die "pailfs exited while starting ($SERVER_LOG)"
    fi
    if grep -q " $MNT fuse.pailfs " /proc/self/mounts; then
      [ "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$ADMIN_SOCK" http://pailfs/healthz)" = 200 ] && return 0
    fi
    sleep 0.1
  done
  die "pailfs did not mount and become healthy in 120 s ($SERVER_LOG)"
}

# shellcheck source=bench/pailfs_server.sh
source "$(dirname "${BASH_SOURCE[0]}")/pailfs_server.sh"

scrape() { curl -sf --unix-socket "$ADMIN_SOCK" http://pailfs/metrics > "$1" || die "scraping /metrics failed"; }
# metric FILE NAME [LABEL-REGEX]: the sum of NAME's samples matching.
metric() {
  awk -v name="$2" -v want="${3:-}" '
    /^#/ { next }
    { series = $1; base = series; sub(/\{.*/, "", base) }
    base == name && (want == "" || series ~ want) { sum += $2 }
    END { printf "%.0f\n", sum }' "$1"
}
# delta A B NAME [LABEL-REGEX]
delta() { echo $(( $(metric "$2" "$3" "${4:-}") - $(metric "$1" "$3" "${4:-}") )); }
gets() { delta "$1" "$2" pailfs_objstore_requests_total 'op="get'; }
puts() { delta "$1" "$2" pailfs_objstore_requests_total 'op="put'; }
bytes_up() { delta "$1" "$2" pailfs_objstore_bytes_total 'direction="up"'; }
bytes_down() { delta "$1" "$2" pailfs_objstore_bytes_total 'direction="down"'; }
# has_metric FILE NAME: whether this build exports NAME (data segments are new).
has_metric() { grep -q "^$2[ {]" "$1"; }

# A restart reads nothing from the OS page cache of a file:// bucket either.
# Cold reads start from disk, for pailfs and its reference alike: the whole
# page cache goes (a file's own eviction with fadvise left most of it cached
# here, so the "cold" reference read ran at memory speed), which also makes
# the loopback RGW read its disk. `$1`: files to evict when dropping the
# page cache is not allowed.
drop_page_cache() {
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then echo 3 > /proc/sys/vm/drop_caches; return 0; fi
  [ $# -gt 0 ] && [ -e "$1" ] && "$IO" evict "$@" > /dev/null
  return 0
}

BINDFS_MNT=""
cleanup() {
  local rc=$?
  stop_server
  if [ -n "$BINDFS_MNT" ] && grep -q " $BINDFS_MNT " /proc/self/mounts; then umount "$BINDFS_MNT"; fi
  if [ "${#RGW_BUCKETS[@]}" -gt 0 ] && [ "$KEEP" = 0 ]; then
    for b in "${RGW_BUCKETS[@]}"; do s3 rb --force "s3://$b" > /dev/null 2>&1; done
  fi
  if [ "$KEEP" = 0 ] && [ "$rc" != 0 ] && [ -d "$LOGS" ]; then
    rm -rf "$WORK.logs"; mv "$LOGS" "$WORK.logs" && echo "logs kept in $WORK.logs" >&2
  fi
  if [ "$KEEP" = 0 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# mount_bindfs SRC MNT: bindfs (a FUSE file system that only passes calls
# through) over SRC; unmount_bindfs undoes it. Beside a file:// reference it
# shows what any FUSE file system reaches on this machine.
mount_bindfs() {
  mkdir -p "$2"
  bindfs "$1" "$2" || die "bindfs mount of $1 failed"
  BINDFS_MNT=$2
}
unmount_bindfs() { umount "$BINDFS_MNT"; BINDFS_MNT=""; }

# dd_time VAR IF OF [dd args]: sets VAR to dd's seconds (its own rate line
# is ignored).
dd_time() {
  local t; t=$(now)
  dd if="$2" of="$3" bs=1M "${@:4}" status=none || die "dd $2 -> $3 failed"
  printf -v "$1" '%s' "$(since "$t")"
}

# ---------------------------------------------------------------- target 1

target_seq() {
  local store=$1 tag=seq-$1
  local mib; mib=$(mib_of_gb "$SEQ_GB")
  local bytes=$((mib * MiB))
  mkdir -p "$WORK/$tag"
  local src=$WORK/$tag/source.bin
  log "seq/$store: generating $(human $bytes) of random data"
  "$IO" fill "$src" --bytes "$bytes" --seed 11 --no-fsync > /dev/null || die "fill failed"

  # Reference: the raw store.
  local ref_w ref_r ref_what ceiling_r=""
  if [ "$store" = file ]; then
    ref_what="dd to/from a local file"
    mkdir -p "$WORK/$tag/ref"
    local ref=$WORK/$tag/ref/reference.bin
    dd_time ref_w "$src" "$ref" conv=fsync
    drop_page_cache "$ref"
    dd_time ref_r "$ref" /dev/null
    mount_bindfs "$WORK/$tag/ref" "$WORK/$tag/bindfs"
    drop_page_cache "$ref"
    dd_time ceiling_r "$BINDFS_MNT/reference.bin" /dev/null
    unmount_bindfs
    rm -f "$ref"
  else
    ref_what="aws s3 cp (multipart)"
    local t; t=$(now)
    s3 cp --only-show-errors "$src" "s3://$REF_BUCKET/seq.bin" || die "aws s3 cp up failed"
    ref_w=$(since "$t")
    drop_page_cache
    t=$(now)
    s3 cp --only-show-errors "s3://$REF_BUCKET/seq.bin" "$WORK/$tag/download.bin" || die "aws s3 cp down failed"
    ref_r=$(since "$t")
    rm -f "$WORK/$tag/download.bin"
    s3 rm --only-show-errors "s3://$REF_BUCKET/seq.bin"
  fi

  # pailfs: write, then a restart with an empty cache, then a warm re-read.
  new_bucket "$store" "$tag"
  start_server "$store" "$tag"
  scrape "$WORK/$tag/m0"
  log "seq/$store: writing through FUSE"
  local w; dd_time w "$src" "$MNT/seq.bin" conv=fsync
  scrape "$WORK/$tag/m1"
  stop_server
  drop_page_cache "${BUCKET_DIR:-}"
  start_server "$store" "$tag"
  scrape "$WORK/$tag/m2"
  log "seq/$store: cold read"
  local cold; dd_time cold "$MNT/seq.bin" /dev/null
  scrape "$WORK/$tag/m3"
  # Warm: pailfs's caches hold the data, the kernel's page cache does not.
  "$IO" evict "$MNT/seq.bin" > /dev/null
  local warm; dd_time warm "$MNT/seq.bin" /dev/null
  scrape "$WORK/$tag/m4"
  local check=ok
  cmp -s "$src" "$MNT/seq.bin" || check=MISMATCH
  stop_server
  drop_bucket "$store"
  rm -f "$src"

  local gib; gib=$(awk -v b="$bytes" 'BEGIN { print b / 1073741824 }')
  local pw pc pk rw rr
  pw=$(mbs "$bytes" "$w"); pc=$(mbs "$bytes" "$cold"); pk=$(mbs "$bytes" "$warm")
  rw=$(mbs "$bytes" "$ref_w"); rr=$(mbs "$bytes" "$ref_r")
  out ""
  out "== Target 1: sequential $(human $bytes) through FUSE, store $store (reference: $ref_what)"
  out "$(printf '  %-22s %12s %14s %8s  %s' what 'pailfs MB/s' 'reference MB/s' ratio goal)"
  out "$(printf '  %-22s %12s %14s %8s  %s' 'write, fsync at end' "$pw" "$rw" "$(ratio "$pw" "$rw")" '>= 0.80x')"
  out "$(printf '  %-22s %12s %14s %8s  %s' 'cold read (restart)' "$pc" "$rr" "$(ratio "$pc" "$rr")" '>= 0.80x')"
  out "$(printf '  %-22s %12s %14s %8s  %s' 'warm read' "$pk" - - '>= 1000 MB/s')"
  if [ -n "$ceiling_r" ]; then
    local cr; cr=$(mbs "$bytes" "$ceiling_r")
    out "$(printf '  %-22s %12s %14s %8s  %s' 'cold read via bindfs' "$cr" "$rr" "$(ratio "$cr" "$rr")" \
      '(the reference read through a pass-through FUSE mount)')"
  fi
  local p u g d wg
  p=$(puts "$WORK/$tag/m0" "$WORK/$tag/m1"); u=$(bytes_up "$WORK/$tag/m0" "$WORK/$tag/m1")
  g=$(gets "$WORK/$tag/m2" "$WORK/$tag/m3"); d=$(bytes_down "$WORK/$tag/m2" "$WORK/$tag/m3")
  wg=$(gets "$WORK/$tag/m3" "$WORK/$tag/m4")
  out "$(awk -v p="$p" -v u="$u" -v g="$g" -v d="$d" -v wg="$wg" -v gib="$gib" -v b="$bytes" 'BEGIN {
    printf "  requests: write %d PUTs (%.1f per GiB), %.2fx the bytes uploaded; cold read %d GETs (%.1f per GiB), %.2fx downloaded; warm read %d GETs\n",
      p, p / gib, u / b, g, g / gib, d / b, wg }')"
  if has_metric "$WORK/$tag/m1" pailfs_data_segment_uploads_total; then
    local su sb
    su=$(delta "$WORK/$tag/m0" "$WORK/$tag/m1" pailfs_data_segment_uploads_total)
    sb=$(delta "$WORK/$tag/m0" "$WORK/$tag/m1" pailfs_data_segment_upload_bytes_total)
    out "$(awk -v n="$su" -v sb="$sb" -v gib="$gib" -v b="$bytes" 'BEGIN {
      printf "  data segments: %d uploaded (%.1f per GiB), %.2fx the bytes written\n", n, n / gib, sb / b }')"
  fi
  out "  data read back: $check"
}

# ---------------------------------------------------------------- target 2

target_rand() {
  local store=$1 tag=rand-$1
  local mib; mib=$(mib_of_gb "$RAND_GB")
  local bytes=$((mib * MiB))
  mkdir -p "$WORK/$tag"
  local args=(--threads 8 --block 4096 --reads "$RAND_READS" --seconds "$RAND_SECONDS" --seed 5)

  local ref ref_what ceiling=""
  if [ "$store" = file ]; then
    ref_what="pread of a plain local file"
    mkdir -p "$WORK/$tag/ref"
    local file=$WORK/$tag/ref/reference.bin
    "$IO" fill "$file" --bytes "$bytes" --seed 21 > /dev/null || die "fill failed"
    drop_page_cache "$file"
    ref=$("$IO" randread "$file" "${args[@]}") || die "randread failed: $ref"
    mount_bindfs "$WORK/$tag/ref" "$WORK/$tag/bindfs"
    drop_page_cache "$file"
    ceiling=$("$IO" randread "$BINDFS_MNT/reference.bin" "${args[@]}") || die "randread through bindfs failed: $ceiling"
    unmount_bindfs
    rm -f "$file"
  else
    ref_what="ranged GETs of one object, pail's S3 client"
    "$IO" fill "$WORK/$tag/reference.bin" --bytes "$bytes" --seed 21 --no-fsync > /dev/null || die "fill failed"
    s3 cp --only-show-errors "$WORK/$tag/reference.bin" "s3://$REF_BUCKET/rand.bin" || die "aws s3 cp failed"
    rm -f "$WORK/$tag/reference.bin"
    drop_page_cache
    ref=$("$IO" s3-randget "s3://$REF_BUCKET/rand.bin" "${args[@]}") || die "s3-randget failed: $ref"
    s3 rm --only-show-errors "s3://$REF_BUCKET/rand.bin"
  fi

  new_bucket "$store" "$tag"
  start_server "$store" "$tag"
  log "rand/$store: writing $(human $bytes)"
  "$IO" fill "$MNT/rand.bin" --bytes "$bytes" --seed 22 > /dev/null || die "fill through FUSE failed"
  stop_server
  drop_page_cache "${BUCKET_DIR:-}"
  start_server "$store" "$tag"
  stat "$MNT/rand.bin" > /dev/null
  scrape "$WORK/$tag/m0"
  log "rand/$store: random reads"
  local got; got=$("$IO" randread "$MNT/rand.bin" "${args[@]}") || die "randread through FUSE failed: $got"
  scrape "$WORK/$tag/m1"
  stop_server
  drop_bucket "$store"

  local reads rate ref_rate g
  reads=$(kv reads <<< "$got"); rate=$(kv reads_per_s <<< "$got"); ref_rate=$(kv reads_per_s <<< "$ref")
  g=$(gets "$WORK/$tag/m0" "$WORK/$tag/m1")
  out ""
  out "== Target 2: random 4 KiB reads, 8 threads, cold $(human $bytes) file, store $store (reference: $ref_what)"
  out "$(printf '  %-22s %12s %14s %8s  %s' what pailfs reference ratio goal)"
  out "$(printf '  %-22s %12s %14s %8s  %s' 'reads/s' "$rate" "$ref_rate" "$(ratio "$rate" "$ref_rate")" '>= 0.80x')"
  if [ -n "$ceiling" ]; then
    local cr; cr=$(kv reads_per_s <<< "$ceiling")
    out "$(printf '  %-22s %12s %14s %8s  %s' 'reads/s via bindfs' "$cr" "$ref_rate" "$(ratio "$cr" "$ref_rate")" \
      '(the reference read through a pass-through FUSE mount)')"
  fi
  out "$(awk -v g="$g" -v r="$reads" 'BEGIN { printf "  %-22s %12.2f %14s %8s  %s\n", "GETs per read", (r > 0 ? g / r : 0), "-", "-", "<= 1" }')"
  out "  ($reads reads through FUSE, $g GETs; reference: $(kv reads <<< "$ref") reads)"
}

# ---------------------------------------------------------------- target 3

# settle STORE STEP: flushes, then polls until bucket <= 1.1 x (live + 64 MiB)
# or SETTLE_SECONDS pass, counted from the end of the step; prints one row.
settle() {
  local store=$1 step=$2
  local start; start=$(now)
  "$PAILFS" flush -c "$CONFIG" > "$WORK/flush.out" 2>&1 || log "pailfs flush failed: $(tail -n 1 "$WORK/flush.out")"
  local live; live=$(du -sb "$MNT" | cut -f1)
  local b n r converged="not within ${SETTLE_SECONDS}s"
  while :; do
    read -r b n < <(bucket_bytes "$store")
    r=$(awk -v b="$b" -v l="$live" 'BEGIN { printf "%.2f\n", b / (l + 67108864) }')
    if awk -v r="$r" 'BEGIN { exit !(r <= 1.1) }'; then converged="after $(printf '%.0f' "$(since "$start")")s"; break; fi
    [ "$(awk -v s="$(since "$start")" -v m="$SETTLE_SECONDS" 'BEGIN { print (s >= m) }')" = 1 ] && break
    sleep 5
  done
  # pailfs's own view: segment bytes no file points at (new data path only).
  local garbage=-
  scrape "$WORK/settle.prom"
  if has_metric "$WORK/settle.prom" pailfs_data_segment_garbage_bytes; then
    garbage=$(human "$(metric "$WORK/settle.prom" pailfs_data_segment_garbage_bytes)")
  fi
  out "$(printf '  %-28s %12s %12s %8s %6sx %12s  %s' "$step" "$(human "$live")" "$(human "$b")" "$n" "$r" "$garbage" "$converged")"
}

target_space() {
  local store=$1 tag=space-$1
  local total_mib; total_mib=$(mib_of_gb "$SPACE_GB")
  local file_mib=$((total_mib / 8))
  [ "$file_mib" -ge 2 ] || die "--space-gb too small"
  mkdir -p "$WORK/$tag"
  new_bucket "$store" "$tag"
  start_server "$store" "$tag"
  out ""
  out "== Target 3: bucket bytes vs live data, store $store (goal: <= 1.10x (live + 64 MiB) within ${SETTLE_SECONDS}s)"
  out "$(printf '  %-28s %12s %12s %8s %7s %12s  %s' step live bucket objects ratio 'garbage' converged)"
  log "space/$store: writing 8 x $file_mib MiB"
  local i
  for i in $(seq 0 7); do
    "$IO" fill "$MNT/data-$i.bin" --bytes $((file_mib * MiB)) --seed $((100 + i)) > /dev/null || die "fill failed"
  done
  settle "$store" "write $(human $((file_mib * 8 * MiB)))"
  log "space/$store: overwriting half in place"
  for i in $(seq 0 7); do
    "$IO" fill "$MNT/data-$i.bin" --bytes $((file_mib / 2 * MiB)) --seed $((200 + i)) --no-truncate > /dev/null ||
      die "overwrite failed"
  done
  settle "$store" "overwrite half in place"
  rm -f "$MNT/data-6.bin" "$MNT/data-7.bin"
  settle "$store" "delete a quarter"
  log "space/$store: $TAR_CYCLES tar -xf / rm -rf cycles"
  local tree; tree=$(tarball_tar) || exit 1
  local top; top=$(tar_top "$tree")
  local member=$top
  [ -n "$CYCLE_SUBDIR" ] && member=$top/$CYCLE_SUBDIR
  local t; t=$(now)
  for i in $(seq "$TAR_CYCLES"); do
    mkdir -p "$MNT/tree"
    tar -xf "$tree" -C "$MNT/tree" "$member" || die "tar -xf into pailfs failed"
    rm -rf "$MNT/tree" || die "rm -rf on pailfs failed"
  done
  local cyc; cyc=$(since "$t")
  settle "$store" "$TAR_CYCLES tar/rm cycles ($(printf '%.0f' "$cyc")s)"
  out "  (tree: $member of $(basename "$TARBALL"); ratio = bucket / (live + 64 MiB); garbage: pailfs_data_segment_garbage_bytes)"
  stop_server
  drop_bucket "$store"
}

# ---------------------------------------------------------------- target 4

target_memory() {
  local store=$1 tag=memory-$1
  local mib; mib=$(mib_of_gb "$MEM_GB")
  local bytes=$((mib * MiB))
  mkdir -p "$WORK/$tag"
  new_bucket "$store" "$tag"
  start_server "$store" "$tag"
  local pid=$SERVER_PID samples=$WORK/$tag/rss
  : > "$samples"
  ( while [ ! -e "$WORK/$tag/stop" ] && kill -0 "$pid" 2>/dev/null; do
      awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" >> "$samples" 2>/dev/null
      sleep 0.5
    done ) &
  local sampler=$!
  log "memory/$store: writing $(human $bytes)"
  local got; got=$("$IO" fill "$MNT/big.bin" --bytes "$bytes" --seed 31) || die "fill through FUSE failed"
  touch "$WORK/$tag/stop"; wait "$sampler"
  local hwm; hwm=$(awk '/^VmHWM:/ { print $2 * 1024 }' "/proc/$pid/status")
  local peak; peak=$(sort -n "$samples" | tail -1); peak=$((${peak:-0} * 1024))
  stop_server
  drop_bucket "$store"
  # The configured memory cache is the default (1 GiB, [cache] memory_size_gb).
  local limit=$(( GiB + WRITEBACK_MIB * MiB + 256 * MiB ))
  out ""
  out "== Target 4: memory while writing $(human $bytes) at full speed ($(kv mb_per_s <<< "$got") MB/s), store $store"
  out "$(printf '  %-34s %12s' 'peak RSS (VmHWM)' "$(human "$hwm")")"
  out "$(printf '  %-34s %12s  (%d samples)' 'highest VmRSS sampled every 0.5 s' "$(human "$peak")" "$(wc -l < "$samples")")"
  out "$(printf '  %-34s %12s  = memory cache 1 GiB + write-back %d MiB + 256 MiB' 'limit' "$(human "$limit")" "$WRITEBACK_MIB")"
  out "$(printf '  %-34s %12s  (goal: below 1.00x)' 'peak / limit' "$(ratio "$hwm" "$limit")")"
}

# ---------------------------------------------------------------- target 5

# The tarball as a plain .tar in the cache (decompressed once, untimed).
tarball_tar() {
  case $TARBALL in
    *.tar) echo "$TARBALL"; return ;;
  esac
  local name; name=$(basename "$TARBALL"); name=${name%.xz}; name=${name%.gz}; name=${name%.tgz}
  [[ $name == *.tar ]] || name=$name.tar
  local tar=$CACHE/$name
  if [ ! -s "$tar" ]; then
    log "decompressing $TARBALL once into $tar"
    case $TARBALL in
      *.xz) xz -dc "$TARBALL" > "$tar.tmp" ;;
      *.gz|*.tgz) gzip -dc "$TARBALL" > "$tar.tmp" ;;
      *) die "unknown tarball type: $TARBALL" ;;
    esac || die "decompressing $TARBALL failed"
    mv "$tar.tmp" "$tar"
  fi
  echo "$tar"
}
tar_top() { tar -tf "$1" | head -1 | cut -d/ -f1; }

# A git repository of the tarball's tree, one commit, packed without deltas
# (so every clone reuses the pack as is), made once.
git_repo() {
  local tar=$1
  local repo; repo=$CACHE/$(basename "$tar" .tar).git-src
  if [ ! -e "$repo/.git/bench-ready" ]; then
    log "making the git repository $repo once"
    rm -rf "$repo"; mkdir -p "$repo"
    tar -xf "$tar" -C "$repo" --strip-components=1 || die "tar -xf for the repository failed"
    # -f: Debian's linux-source tree ignores everything in its top .gitignore.
    ( cd "$repo" && git init -q && git add -A -f &&
      git -c user.name=bench -c user.email=bench@localhost commit -q -m "source tree" &&
      git repack -a -d -q --window=0 && git prune && touch .git/bench-ready ) ||
      die "making the git repository failed"
  fi
  echo "$repo"
}

# run_real NAME DIR: times the workloads in DIR; appends "NAME tar build clone rm" to $REAL_ROWS.
run_real() {
  local name=$1 dir=$2 tar=$3 repo=$4
  local top; top=$(tar_top "$tar")
  local t tar_s build_s=- clone_s rm_s
  # Untimed: nothing left dirty by the previous file system, and the
  # tarball and repository in the page cache, so only DIR's speed differs.
  sync
  cat "$tar" > /dev/null
  tar -cf - -C "$repo" .git > /dev/null
  log "real/$name: tar -xf"
  t=$(now); tar -xf "$tar" -C "$dir" || die "tar -xf on $name failed"; tar_s=$(since "$t")
  if [ "$BUILD" != none ]; then
    log "real/$name: build ($BUILD)"
    local blog=$LOGS/build-$name.log
    t=$(now)
    if [ "$BUILD" = libbpf ]; then
      make -j2 -C "$dir/$top/tools/lib/bpf" > "$blog" 2>&1
    elif [ "$BUILD" = objtool ]; then
      make -j2 -C "$dir/$top/tools/objtool" > "$blog" 2>&1
    else
      make -j2 -C "$dir/$top" tinyconfig > "$blog" 2>&1 && make -j2 -C "$dir/$top" >> "$blog" 2>&1
    fi || { tail -n 20 "$blog" >&2; die "build on $name failed (see $blog)"; }
    build_s=$(since "$t")
  fi
  log "real/$name: git clone"
  t=$(now); git clone -q --no-local "$repo" "$dir/clone" || die "git clone on $name failed"; clone_s=$(since "$t")
  log "real/$name: rm -rf"
  t=$(now); rm -rf "${dir:?}/$top" "$dir/clone" || die "rm -rf on $name failed"; rm_s=$(since "$t")
  echo "$name $tar_s $build_s $clone_s $rm_s" >> "$REAL_ROWS"
}

target_real() {
  local tar; tar=$(tarball_tar) || exit 1
  local repo; repo=$(git_repo "$tar") || exit 1
  REAL_ROWS=$WORK/real.rows
  : > "$REAL_ROWS"
  mkdir -p "$WORK/real/local" "$WORK/real/bindfs-src"
  run_real local "$WORK/real/local" "$tar" "$repo"
  mount_bindfs "$WORK/real/bindfs-src" "$WORK/real/bindfs"
  run_real bindfs "$BINDFS_MNT" "$tar" "$repo"
  unmount_bindfs
  local store
  for store in $STORES; do
    new_bucket "$store" "real-$store"
    start_server "$store" "real-$store"
    run_real "pailfs-$store" "$MNT" "$tar" "$repo"
    stop_server
    drop_bucket "$store"
  done
  out ""
  out "== Target 5: real-world workloads, seconds (ratio: pailfs / bindfs, goal <= 1.5x)"
  out "   tarball $(basename "$TARBALL"), build: $BUILD (make -j2), git clone --no-local of a repository of that tree"
  local header; header=$(printf '  %-10s' workload)
  local names; names=$(cut -d' ' -f1 "$REAL_ROWS")
  local n
  for n in $names; do header+=$(printf ' %13s' "$n"); done
  for n in $names; do [[ $n == pailfs-* ]] && header+=$(printf ' %12s' "${n#pailfs-}/bindfs"); done
  out "$header"
  local col w
  for col in 2 3 4 5; do
    w=$(echo "tar-xf build git-clone rm-rf" | cut -d' ' -f$((col - 1)))
    local line; line=$(printf '  %-10s' "$w")
    local bind; bind=$(awk -v c="$col" '$1 == "bindfs" { print $c }' "$REAL_ROWS")
    for n in $names; do line+=$(printf ' %13s' "$(awk -v c="$col" -v n="$n" '$1 == n { print $c }' "$REAL_ROWS")"); done
    for n in $names; do
      [[ $n == pailfs-* ]] || continue
      line+=$(printf ' %12s' "$(ratio "$(awk -v c="$col" -v n="$n" '$1 == n { print $c }' "$REAL_ROWS")" "$bind")")
    done
    out "$line"
  done
}

# ---------------------------------------------------------------- target 6

target_small() {
  local ops=()
  [ -n "$WORKLOAD_OPS" ] && ops=(--ops "$WORKLOAD_OPS")
  local results=()
  mkdir -p "$WORK/small/bindfs-src"
  mount_bindfs "$WORK/small/bindfs-src" "$WORK/small/bindfs"
  sync
  log "small/bindfs: workloads_bench"
  "$WORKLOADS" --dir "$BINDFS_MNT" "${ops[@]}" > "$WORK/small/bindfs.out" || log "workloads_bench on bindfs had errors"
  unmount_bindfs
  results+=(bindfs)
  local store
  for store in $STORES; do
    new_bucket "$store" "small-$store"
    start_server "$store" "small-$store"
    sync
    log "small/$store: workloads_bench"
    "$WORKLOADS" --dir "$MNT" "${ops[@]}" > "$WORK/small/pailfs-$store.out" ||
      log "workloads_bench on pailfs-$store had errors"
    stop_server
    drop_bucket "$store"
    results+=("pailfs-$store")
  done
  out ""
  out "== Target 6: small-file workloads (workloads_bench), ops/s; ratio pailfs / bindfs (goal: no regression vs today)"
  local header; header=$(printf '  %-20s' workload)
  local r
  for r in "${results[@]}"; do header+=$(printf ' %13s' "$r"); done
  for r in "${results[@]:1}"; do header+=$(printf ' %12s' "${r#pailfs-}/bindfs"); done
  out "$header"
  local w
  for w in $(awk 'NR > 2 { print $1 }' "$WORK/small/bindfs.out"); do
    local line; line=$(printf '  %-20s' "$w")
    local bind; bind=$(awk -v w="$w" '$1 == w { print $3 }' "$WORK/small/bindfs.out")
    for r in "${results[@]}"; do line+=$(printf ' %13s' "$(awk -v w="$w" '$1 == w { print $3 }' "$WORK/small/$r.out")"); done
    for r in "${results[@]:1}"; do
      line+=$(printf ' %12s' "$(ratio "$(awk -v w="$w" '$1 == w { print $3 }' "$WORK/small/$r.out")" "$bind")")
    done
    out "$line"
  done
}

# ---------------------------------------------------------------- main

if wanted real || wanted small || { [[ " $STORES " == *" file "* ]] && { wanted seq || wanted rand; }; }; then
  ensure_packages bindfs:bindfs
fi
if wanted space || wanted real; then
  if [ "$TARBALL" = /usr/src/linux-source-6.1.tar.xz ]; then
    ensure_packages /usr/src/linux-source-6.1.tar.xz:linux-source-6.1
  fi
  [ -f "$TARBALL" ] || die "no tarball $TARBALL"
fi
if wanted real; then
  case $BUILD in
    libbpf|objtool) ensure_packages /usr/include/gelf.h:libelf-dev /usr/include/zlib.h:zlib1g-dev make:make gcc:gcc ;;
    tinyconfig) ensure_packages flex:flex bison:bison bc:bc /usr/include/gelf.h:libelf-dev make:make gcc:gcc ;;
  esac
fi

out "data_path_bench: stores [$STORES], targets [${TARGETS# }], $(nproc) CPUs, $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
for store in $STORES; do
  wanted seq && target_seq "$store"
  wanted rand && target_rand "$store"
  wanted space && target_space "$store"
  wanted memory && target_memory "$store"
done
wanted real && target_real
wanted small && target_small

echo
echo "==================== summary ===================="
cat "$SUMMARY"
