#!/usr/bin/env bash
# Operating pailfs, end to end with the real binary: the admin endpoint
# (/metrics checked by `promtool check metrics` while an NFS workload runs,
# /healthz, /status), counters that move as they should (a PUT per flush,
# cache hits on a re-read, per-protocol operations, NFS and NBD
# connections), `pailfs flush`, `pailfs cost` against the store's own
# request count, before and after a restart, an idle server scraped
# every second making no request, and (as root) a cache directory whose
# disk fills: reads still right, the refusals counted.
#   ops_test.sh PAILFS file|s3 [IDLE_SECONDS]
# s3: the loopback Ceph RGW of scripts/test.sh; skips (77) when it is not
# running, unless PAIL_REQUIRE_OBJSTORES=1.
set -uo pipefail
PAILFS=$1
STORE=${2:-file}
IDLE_SECONDS=${3:-30}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pail-ops-test.XXXXXX")
SERVER_PID=""
passed=0 failed=0
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
  fi
  if [ "$failed" -ne 0 ]; then echo "---- server log ----"; tail -n 30 "$WORK/server.log"; fi
  if grep -q " $WORK/small-disk " /proc/self/mounts; then umount -l "$WORK/small-disk"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $name"; fi
}
for tool in promtool curl nfs-cp nfs-cat nbdinfo; do
  command -v $tool >/dev/null || { echo "FAIL: $tool is missing (scripts/install-deps.sh installs it)"; exit 1; }
done

STORAGE_EXTRA=""
if [ "$STORE" = s3 ]; then
  ENV_FILE="${OBJSTORES_ROOT:-/tmp/objstores}/env"
  [ -f "$ENV_FILE" ] || ENV_FILE=/tmp/pailfs-objstores/env
  if [ -f "$ENV_FILE" ]; then set -a; . "$ENV_FILE"; set +a; fi
  if [ -z "${S3_ENDPOINT:-}" ] || ! curl -s -o /dev/null "$S3_ENDPOINT"; then
    if [ "${PAIL_REQUIRE_OBJSTORES:-0}" = 1 ]; then echo "FAIL: no RGW at ${S3_ENDPOINT:-?}"; exit 1; fi
    echo "SKIP: no S3 endpoint (start the object stores)"; exit 77
  fi
  URL="s3://pail-ops-$(date +%s)-$$/fs"
  STORAGE_EXTRA="[aws]
access_key_id = \"$S3_ACCESS_KEY\"
secret_access_key = \"$S3_SECRET_KEY\"
region = \"$S3_REGION\"
endpoint = \"$S3_ENDPOINT\"
allow_http = true
path_style = true"
else
  URL="file://$WORK/bucket"
fi

GEN=0
start_server() {  # a fresh, empty cache directory on every start
  GEN=$((GEN + 1))
  CONFIG="$WORK/pailfs-$GEN.toml"
  cat >"$CONFIG" <<CONF
[storage]
url = "$URL"
encryption_password = "ops-test"
[cache]
dir = "${CACHE_PARENT:-$WORK}/cache-$GEN"
disk_size_gb = 1.0
memory_size_gb = 0.1
[filesystem]
flush_interval_ms = 300
$STORAGE_EXTRA
[servers.nfs]
addresses = ["127.0.0.1:0"]
# The test writes as root into the root-owned root directory.
squash = "none"
[servers.nbd]
addresses = ["127.0.0.1:0"]
[servers.admin]
addresses = ["127.0.0.1:0"]
unix_socket = "$WORK/admin.sock"
CONF
  "$PAILFS" run -c "$CONFIG" 2>>"$WORK/server.log" &
  SERVER_PID=$!
  for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$WORK/admin.sock" http://pailfs/healthz)" = 200 ] && break
    sleep 0.2
  done
  NFS_PORT=$(grep "nfs: NFSv3" "$WORK/server.log" | tail -1 | grep -o "(port [0-9]*)" | grep -o "[0-9]*")
  NBD_PORT=$(grep "nbd: serving" "$WORK/server.log" | tail -1 | grep -o "(port [0-9]*)" | grep -o "[0-9]*")
  ADMIN_TCP=$(grep -o "admin endpoint on 127.0.0.1:[0-9]*" "$WORK/server.log" | tail -1 | sed 's/.* on //')
}
stop_server() {
  kill -TERM "$SERVER_PID"; wait "$SERVER_PID"; local rc=$?; SERVER_PID=""; return $rc
}
nfs_url() { echo "nfs://127.0.0.1//$1?version=3&nfsport=$NFS_PORT&mountport=$NFS_PORT"; }
scrape() { curl -sf --unix-socket "$WORK/admin.sock" http://pailfs/metrics; }
# metric FILE NAME [LABEL-REGEX]: the sum of the samples of NAME matching.
metric() {
  awk -v name="$2" -v want="${3:-}" '
    /^#/ { next }
    { series = $1; base = series; sub(/\{.*/, "", base) }
    base == name && (want == "" || series ~ want) { sum += $2 }
    END { printf "%.0f\n", sum }' "$1"
}
json_number() { grep -o "\"$2\":[0-9.e+-]*" "$1" | head -1 | cut -d: -f2; }

start_server
check "server became healthy" test -n "$NFS_PORT"
curl -s -i --unix-socket "$WORK/admin.sock" http://pailfs/healthz > "$WORK/health"
check "healthz is 200 ok" grep -q "^ok" "$WORK/health"
check "TCP endpoint serves metrics too" curl -sf -o /dev/null "http://$ADMIN_TCP/metrics"
check "admin socket is private (0600)" test "$(stat -c %a "$WORK/admin.sock")" = 600
check "unknown path is 404" test "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$WORK/admin.sock" http://pailfs/nope)" = 404
check "GET /flush is refused (405)" test "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$WORK/admin.sock" http://pailfs/flush)" = 405

# Scrape continuously while an NFS workload runs; every page must pass promtool.
head -c 3000000 /dev/urandom > "$WORK/data.bin"
scrape > "$WORK/m0"
( i=0; while [ ! -e "$WORK/stop-scraping" ]; do
    i=$((i + 1)); scrape > "$WORK/during.$i" || echo "scrape $i failed" >> "$WORK/scrape-errors"
    sleep 0.1
  done ) &
SCRAPER=$!
for n in 1 2 3; do nfs-cp "$WORK/data.bin" "$(nfs_url file$n.bin)" >/dev/null; done
touch "$WORK/stop-scraping"; wait $SCRAPER
check "scrapes during the workload all answered" test ! -e "$WORK/scrape-errors"
bad=0; pages=0
for page in "$WORK"/during.*; do
  pages=$((pages + 1))
  promtool check metrics < "$page" > "$WORK/promtool.out" 2>&1 || { bad=$((bad + 1)); cat "$WORK/promtool.out"; }
done
check "promtool accepts all $pages pages scraped during the workload" test "$bad" -eq 0 -a "$pages" -gt 0

# A flush: durable, and every upload it makes is counted as a PUT.
scrape > "$WORK/m1"
"$PAILFS" flush -c "$CONFIG" > "$WORK/flush.out"
check "pailfs flush exits 0" test $? -eq 0
check "pailfs flush says durable" grep -q durable "$WORK/flush.out"
scrape > "$WORK/m2"
promtool check metrics < "$WORK/m2"
check "promtool accepts the page after the workload" test $? -eq 0
syncs=$(( $(metric "$WORK/m2" pailfs_engine_syncs_total) - $(metric "$WORK/m0" pailfs_engine_syncs_total) ))
puts=$(( $(metric "$WORK/m2" pailfs_objstore_requests_total 'op="put' ) - $(metric "$WORK/m0" pailfs_objstore_requests_total 'op="put') ))
echo "workload: $syncs syncs, $puts PUTs"
check "the workload made syncs" test "$syncs" -ge 1
check "at least one PUT counted per sync" test "$puts" -ge "$syncs"
up=$(( $(metric "$WORK/m2" pailfs_objstore_bytes_total 'direction="up"') - $(metric "$WORK/m0" pailfs_objstore_bytes_total 'direction="up"') ))
check "bytes up cover the 9 MB written (got $up)" test "$up" -ge 9000000
writes=$(metric "$WORK/m2" pailfs_protocol_operations_total 'protocol="nfs",op="write"')
check "NFS WRITE operations counted ($writes)" test "$writes" -ge 3
check "NFS latency histogram has the writes" test "$(metric "$WORK/m2" pailfs_protocol_operation_duration_seconds_count 'protocol="nfs",op="write"')" = "$writes"
check "NFS connections counted" test "$(metric "$WORK/m2" pailfs_protocol_connections_accepted_total 'protocol="nfs"')" -ge 3
# NBD's too (every socket server counts through net::ConnectionTable):
# nbdinfo lists the exports and hangs up.
nbdinfo --list "nbd://127.0.0.1:$NBD_PORT" > /dev/null 2>&1
check "nbdinfo --list through the NBD server" test $? -eq 0
for _ in $(seq 50); do
  scrape > "$WORK/m2n"
  [ "$(metric "$WORK/m2n" pailfs_protocol_connections 'protocol="nbd"')" = 0 ] && break
  sleep 0.1
done
check "NBD connection counted" test "$(metric "$WORK/m2n" pailfs_protocol_connections_accepted_total 'protocol="nbd"')" = 1
check "NBD connection closed" test "$(metric "$WORK/m2n" pailfs_protocol_connections 'protocol="nbd"')" = 0
nfs-cat "$(nfs_url missing.bin)" >/dev/null 2>&1
scrape > "$WORK/m2b"
missing=$(( $(metric "$WORK/m2b" pailfs_protocol_errors_total 'protocol="nfs",errno="ENOENT"') - $(metric "$WORK/m2" pailfs_protocol_errors_total 'protocol="nfs",errno="ENOENT"') ))
check "NFS errors counted by errno (LOOKUP of a missing file: $missing ENOENT)" test "$missing" -ge 1
check "dirty bytes back to 0 after the flush" test "$(metric "$WORK/m2" pailfs_writeback_dirty_bytes)" = 0
check "not fenced" test "$(metric "$WORK/m2" pailfs_engine_fenced)" = 0
inodes=$(metric "$WORK/m2" pailfs_cache_bytes 'cache="inodes"')
check "the workload's inodes are cached ($inodes bytes)" test "$inodes" -gt 0
check "within the inode cache's capacity" \
  test "$inodes" -le "$(metric "$WORK/m2" pailfs_cache_capacity_bytes 'cache="inodes"')"
dentries=$(metric "$WORK/m2" pailfs_cache_bytes 'cache="dentries"')
check "the workload's names are cached ($dentries bytes)" test "$dentries" -gt 0
check "within the dentry cache's capacity" \
  test "$dentries" -le "$(metric "$WORK/m2" pailfs_cache_capacity_bytes 'cache="dentries"')"

"$PAILFS" status -c "$CONFIG" > "$WORK/status.txt"
check "pailfs status exits 0" test $? -eq 0
check "status names the bucket" grep -q "${URL%%/fs}" "$WORK/status.txt"
"$PAILFS" status -c "$CONFIG" --json > "$WORK/status.json"
check "status --json has request totals" grep -q '"requests_total":[1-9]' "$WORK/status.json"

# Cost: the ledger's count is exactly the counting store's (no activity
# between the scrape and the report, whose own listing comes after).
sleep 2
scrape > "$WORK/m3"
run1=$(metric "$WORK/m3" pailfs_objstore_requests_total)
"$PAILFS" cost -c "$CONFIG" --json --provider aws-s3 > "$WORK/cost1.json"
check "pailfs cost exits 0" test $? -eq 0
cost1=$(json_number "$WORK/cost1.json" requests_total)
echo "run 1: store counted $run1 requests, cost report $cost1"
check "cost request count matches the store's count" test "$cost1" = "$run1"
check "cost names its price date" grep -q '"prices_date":"20' "$WORK/cost1.json"
stored=$(json_number "$WORK/cost1.json" stored_bytes)
check "cost sees the 9 MB stored ($stored)" test "$stored" -ge 9000000
"$PAILFS" cost -c "$CONFIG" --provider r2 > "$WORK/cost1.txt"
check "cost text report" grep -q "projected per month" "$WORK/cost1.txt"
"$PAILFS" cost -c "$CONFIG" --provider nope >/dev/null 2>&1
check "unknown provider is a usage error (2)" test $? -eq 2

scrape > "$WORK/m4"
before_stop=$(metric "$WORK/m4" pailfs_objstore_requests_total)
stop_server
check "SIGTERM exits 0" test $? -eq 0

# Restart with an empty cache: the counts survive, and a re-read hits the cache.
start_server
scrape > "$WORK/m5"
run2=$(metric "$WORK/m5" pailfs_objstore_requests_total)
"$PAILFS" cost -c "$CONFIG" --json > "$WORK/cost2.json"
cost2=$(json_number "$WORK/cost2.json" requests_total)
echo "restart: run 1 made at least $before_stop, run 2 so far $run2, cost report $cost2"
check "request counts survive the restart" test "$cost2" -ge $((before_stop + run2))
check "the ledger misses at most the shutdown's own requests" test "$cost2" -le $((before_stop + run2 + 40))

nfs-cat "$(nfs_url file2.bin)" > "$WORK/read1" 2>/dev/null
check "file read back after restart" cmp -s "$WORK/read1" "$WORK/data.bin"
scrape > "$WORK/m6"
nfs-cat "$(nfs_url file2.bin)" > "$WORK/read2" 2>/dev/null
scrape > "$WORK/m7"
check "re-read is right" cmp -s "$WORK/read2" "$WORK/data.bin"
hits=$(( $(metric "$WORK/m7" pailfs_cache_hits_total) - $(metric "$WORK/m6" pailfs_cache_hits_total) ))
gets=$(( $(metric "$WORK/m7" pailfs_objstore_requests_total 'op="get') - $(metric "$WORK/m6" pailfs_objstore_requests_total 'op="get') ))
misses1=$(( $(metric "$WORK/m6" pailfs_cache_misses_total 'cache="disk"') - $(metric "$WORK/m5" pailfs_cache_misses_total 'cache="disk"') ))
echo "first read: $misses1 disk-cache misses; re-read: $hits cache hits, $gets GETs"
check "the first read after a restart missed the disk cache" test "$misses1" -ge 1
check "the re-read hit the caches" test "$hits" -ge 1
check "the re-read made no GET" test "$gets" -eq 0
check "NFS READ operations counted" test "$(metric "$WORK/m7" pailfs_protocol_operations_total 'protocol="nfs",op="read"')" -ge 2

# Idle stays idle: scraping (and health and status) every second for
# IDLE_SECONDS makes no object-store request.
sleep 3
scrape > "$WORK/idle0"
for _ in $(seq "$IDLE_SECONDS"); do
  scrape > /dev/null
  curl -sf -o /dev/null --unix-socket "$WORK/admin.sock" http://pailfs/healthz
  curl -sf -o /dev/null --unix-socket "$WORK/admin.sock" http://pailfs/status
  sleep 1
done
scrape > "$WORK/idle1"
idle=$(( $(metric "$WORK/idle1" pailfs_objstore_requests_total) - $(metric "$WORK/idle0" pailfs_objstore_requests_total) ))
echo "idle for ${IDLE_SECONDS}s with scrapes every second: $idle object-store requests"
check "an idle server makes no object-store request" test "$idle" -eq 0

stop_server
check "second SIGTERM exits 0" test $? -eq 0
"$PAILFS" flush -c "$CONFIG" >/dev/null 2>&1
check "flush without a server exits 3" test $? -eq 3

# The cache directory on a small disk that something else fills: reads are
# answered from the bucket (they failed with EIO before), the server keeps
# serving, and the metric counts what the disk refused.
mkdir -p "$WORK/small-disk"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=16m tmpfs "$WORK/small-disk"; then
  CACHE_PARENT="$WORK/small-disk" start_server
  dd if=/dev/zero of="$WORK/small-disk/filler" bs=1M 2>/dev/null
  for n in 1 2 3; do
    nfs-cat "$(nfs_url file$n.bin)" > "$WORK/full-read$n" 2>/dev/null
    check "file$n.bin read right with the cache's disk full" cmp -s "$WORK/full-read$n" "$WORK/data.bin"
  done
  scrape > "$WORK/m8"
  refused=$(metric "$WORK/m8" pailfs_cache_local_write_failures_total)
  echo "full cache disk: $refused local write failures"
  check "the refused cache writes are counted" test "$refused" -ge 1
  check "the disk cache's capacity was capped to the small disk" \
    test "$(metric "$WORK/m8" pailfs_cache_capacity_bytes 'cache="disk"')" -le $((16 << 20))
  stop_server
  check "SIGTERM with a full cache disk exits 0" test $? -eq 0
  umount -l "$WORK/small-disk"
else
  echo "note: not root or no tmpfs: the full cache disk case is skipped"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
