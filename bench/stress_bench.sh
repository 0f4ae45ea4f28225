#!/usr/bin/env bash
# stress_bench.sh: pailfs under concurrent load, beside bindfs in the same run.
#
#   bash bench/stress_bench.sh [--only stress,workloads] [--seconds S]
#        [--rounds R] [--instances N] [--stressors LIST] [--processes P]
#        [--ops N] [--work-dir D] [--keep]
#
# Part "stress": stress-ng runs the filesystem stressors (default: dir,
# rename, chmod, dentry, filename, link, symlink, open, utime, xattr) all at
# once, N instances each, with --verify, in a directory of the pailfs FUSE
# mount (file:// bucket) and of a bindfs mount over a local directory, for S
# seconds (default 30) on each. The time is split into R rounds (default 3)
# that alternate between the two mounts, so a burst of load from elsewhere
# on a shared machine hits both alike. It prints bogo ops/s (bogo ops over
# real time, summed over the rounds) of each stressor side by side with the
# ratio pailfs / bindfs, and any stressor that failed or whose verification
# failed. After the mix, sync_cost_bench shows what an fsync of a
# directory and of a file costs on each mount and on the disk under bindfs:
# bindfs answers no directory fsync (the kernel stops sending them once
# libfuse says it lacks one), so a stressor that fsyncs its directory, as
# the rename stressor does once a loop, compares durable syncs with none.
#
# Part "workloads": workloads_bench --processes P (default 8): the ten
# small-file workloads, each run by P processes at once in directories of
# their own, --ops N (default 2000) operations per process (N/20 for
# directory-traversal, whose operation walks a 258-directory tree),
# aggregate ops/s (summed over R rounds that alternate the mounts), on both
# mounts, side by side. Each timed part starts
# with the server settled (bench/settle_server.sh: the setup's data made
# durable with `pailfs flush` or `sync`, then the server idle).
#
# Then the pailfs server is stopped and `pailfs fsck` checks the bucket.
# Needs root, /dev/fuse, stress-ng and bindfs (installed with apt-get when
# missing, saying so), and a build:
#   cmake --build build --target pailfs workloads_bench sync_cost_bench
# Prints numbers; never passes or fails on them (exit 1 only when the
# harness itself cannot run).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
PAILFS=$BUILD/pailfs
WORKLOADS=$BUILD/workloads_bench
SYNC_COST=$BUILD/sync_cost_bench
ONLY=stress,workloads
SECONDS_PER_RUN=30
ROUNDS=3
INSTANCES=1
STRESSORS=dir,rename,chmod,dentry,filename,link,symlink,open,utime,xattr
PROCESSES=8
OPS=2000
WORK=/tmp/pailfs-stress-bench
KEEP=0

die() { echo "stress_bench: $*" >&2; exit 1; }
log() { echo "# $*" >&2; }

while [ $# -gt 0 ]; do
  case $1 in
    --only) ONLY=$2; shift 2 ;;
    --seconds) SECONDS_PER_RUN=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --instances) INSTANCES=$2; shift 2 ;;
    --stressors) STRESSORS=$2; shift 2 ;;
    --processes) PROCESSES=$2; shift 2 ;;
    --ops) OPS=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
wanted() { [[ ,$ONLY, == *,$1,* ]]; }

[ "$(id -u)" = 0 ] || die "needs root (FUSE mounts, bindfs)"
[ -e /dev/fuse ] || die "needs /dev/fuse"
[ -x "$PAILFS" ] || die "no $PAILFS; build it first"
if wanted workloads; then [ -x "$WORKLOADS" ] || die "no $WORKLOADS; build it first"; fi
for pkg in stress-ng bindfs; do
  if ! command -v "$pkg" >/dev/null; then
    log "installing $pkg (apt-get), needed by this benchmark only"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null || die "apt-get install $pkg failed"
  fi
done

rm -rf "$WORK"
mkdir -p "$WORK/bucket" "$WORK/pailfs" "$WORK/bindfs-src" "$WORK/bindfs" "$WORK/logs"
PAIL_MNT=$WORK/pailfs
BIND_MNT=$WORK/bindfs
CONFIG=$WORK/pailfs.toml
ADMIN_SOCK=$WORK/admin.sock
SERVER_LOG=$WORK/logs/server.log
SERVER_PID=""

# The defaults a new user gets, but for where things live.
cat > "$CONFIG" <<EOF
[storage]
url = "file://$WORK/bucket"
encryption_password = "stress-bench"
[cache]
dir = "$WORK/cache"
[servers.fuse]
mountpoint = "$PAIL_MNT"
[servers.admin]
unix_socket = "$ADMIN_SOCK"
EOF

# shellcheck source=bench/pailfs_server.sh
source "$(dirname "${BASH_SOURCE[0]}")/pailfs_server.sh"

cleanup() {
  stop_server
  if grep -q " $BIND_MNT " /proc/self/mounts; then umount "$BIND_MNT"; fi
  if [ "$KEEP" = 0 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}
trap cleanup EXIT

"$PAILFS" run -c "$CONFIG" >> "$SERVER_LOG" 2>&1 &
SERVER_PID=$!
for i in $(seq 600); do
  kill -0 "$SERVER_PID" 2>/dev/null || { tail -n 20 "$SERVER_LOG" >&2; SERVER_PID=""; die "pailfs exited while starting"; }
  if grep -q " $PAIL_MNT fuse.pailfs " /proc/self/mounts &&
     [ "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$ADMIN_SOCK" http://pailfs/healthz)" = 200 ]; then
    break
  fi
  sleep 0.1
done
grep -q " $PAIL_MNT fuse.pailfs " /proc/self/mounts || die "pailfs did not mount"
bindfs "$WORK/bindfs-src" "$BIND_MNT" || die "bindfs mount failed"
BIND_PID=$(pgrep -f "^bindfs $WORK/bindfs-src " | head -n 1)
[ -n "$BIND_PID" ] || die "cannot find the bindfs process"

# run_stress NAME DIR SECONDS: one round of stress-ng in DIR/stress; appends
# "stressor bogo-ops real-seconds" to $WORK/NAME.rounds.
run_stress() {
  local name=$1 dir=$2/stress args=() s
  mkdir -p "$dir"
  for s in ${STRESSORS//,/ }; do args+=("--$s" "$INSTANCES"); done
  log "$name: stress-ng ${STRESSORS} x $INSTANCES for ${3}s"
  (cd "$dir" && stress-ng --temp-path "$dir" "${args[@]}" --timeout "${3}s" \
     --metrics-brief --verify) >> "$WORK/logs/$name.stress-ng" 2>&1
  echo "exit $?" >> "$WORK/logs/$name.stress-ng"
  # "metrc: [pid] stressor bogo-ops real usr sys ops/s(real) ops/s(usr+sys)"
  awk '$2 == "metrc:" && NF == 10 && $5 ~ /^[0-9]+$/ { print $4, $5, $6 }' \
    "$WORK/logs/$name.stress-ng" | tail -n "$(echo "$STRESSORS" | tr , '\n' | grep -c .)" \
    >> "$WORK/$name.rounds"
  rm -rf "$dir"
}

# Sums the rounds: "stressor bogo-ops/s".
sum_rounds() {
  awk '{ ops[$1] += $2; t[$1] += $3; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
       END { for (i = 0; i < n; i++) printf "%s %.2f\n", order[i], (t[order[i]] > 0 ? ops[order[i]] / t[order[i]] : 0) }' "$1"
}

# side_by_side A B COLUMN-TITLE: rows "key value" of files A (pailfs) and B.
side_by_side() {
  printf '%-20s %12s %12s %8s\n' "$3" pailfs bindfs ratio
  awk 'NR == FNR { b[$1] = $2; next }
       { r = ($1 in b && b[$1] > 0) ? sprintf("%.2f", $2 / b[$1]) : "-";
         printf "%-20s %12.1f %12.1f %8s\n", $1, $2, ($1 in b ? b[$1] : 0), r }' "$2" "$1"
}

stress_problems() {
  grep -E "fail|FAIL|error|verif" "$WORK/logs/$1.stress-ng" | grep -v "^stress-ng: metrc" | sed "s/^/  $1: /"
  grep "^exit" "$WORK/logs/$1.stress-ng" | sort | uniq -c | sed "s/^/  $1: stress-ng /"
}

if wanted stress; then
  round_seconds=$(( SECONDS_PER_RUN / ROUNDS > 0 ? SECONDS_PER_RUN / ROUNDS : 1 ))
  for r in $(seq "$ROUNDS"); do
    run_stress pailfs "$PAIL_MNT" "$round_seconds"
    run_stress bindfs "$BIND_MNT" "$round_seconds"
  done
  sum_rounds "$WORK/pailfs.rounds" > "$WORK/pailfs.stress"
  sum_rounds "$WORK/bindfs.rounds" > "$WORK/bindfs.stress"
  echo "== stress-ng: ${STRESSORS//,/ } at once, $INSTANCES instance(s) each, $ROUNDS x ${round_seconds}s alternating, --verify; bogo ops/s (real time)"
  side_by_side "$WORK/pailfs.stress" "$WORK/bindfs.stress" stressor
  echo "stress-ng messages (failures, verification, exit codes):"
  stress_problems pailfs
  stress_problems bindfs
  echo "== sync_cost_bench: what an fsync costs, after the mix, idle (bindfs-src is the disk under bindfs)"
  if [ -x "$SYNC_COST" ]; then
    "$SYNC_COST" --dir "$PAIL_MNT" --dir "$BIND_MNT" --dir "$WORK/bindfs-src" ||
      log "sync_cost_bench failed"
  else
    log "no $SYNC_COST: skipped (cmake --build build --target sync_cost_bench)"
  fi
fi

# run_workloads NAME DIR PID SETTLE: workload -> aggregate ops/s in
# $WORK/NAME.workloads. Before each timed part the server (process PID) is
# settled by bench/settle_server.sh with the command SETTLE.
run_workloads() {
  local walks=$(( OPS / 20 > 0 ? OPS / 20 : 1 ))
  local around="bash $(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/settle_server.sh $3 '$4'"
  local others=sequential-writes,data-modifications,single-file-append,empty-files,empty-dirs
  others+=,random-reads,file-moves,file-deletion,metadata-ops
  log "$1: workloads_bench --processes $PROCESSES --ops $OPS (directory-traversal: $walks)"
  : > "$WORK/logs/$1.workloads"
  "$WORKLOADS" --dir "$2" --ops "$OPS" --processes "$PROCESSES" --only "$others" --around "$around" \
    >> "$WORK/logs/$1.workloads" 2>&1 || log "$1: workloads_bench reported errors (see below)"
  "$WORKLOADS" --dir "$2" --ops "$walks" --processes "$PROCESSES" --only directory-traversal \
    --around "$around" >> "$WORK/logs/$1.workloads" 2>&1 || log "$1: workloads_bench reported errors (see below)"
  # "workload ops seconds", for sum_rounds.
  awk '$1 != "dir" && $1 != "workload" && NF >= 7 && $3 > 0 { print $1, $2, $2 / $3 }' \
    "$WORK/logs/$1.workloads" >> "$WORK/$1.workload-rounds"
  cat "$WORK/logs/$1.workloads" >> "$WORK/logs/$1.workloads-all"
}

if wanted workloads; then
  # Rounds alternate which mount goes first, as the stress rounds do.
  for r in $(seq "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then
      run_workloads pailfs "$PAIL_MNT" "$SERVER_PID" "$PAILFS flush -c $CONFIG"
      run_workloads bindfs "$BIND_MNT" "$BIND_PID" sync
    else
      run_workloads bindfs "$BIND_MNT" "$BIND_PID" sync
      run_workloads pailfs "$PAIL_MNT" "$SERVER_PID" "$PAILFS flush -c $CONFIG"
    fi
  done
  sum_rounds "$WORK/pailfs.workload-rounds" > "$WORK/pailfs.workloads"
  sum_rounds "$WORK/bindfs.workload-rounds" > "$WORK/bindfs.workloads"
  echo "== workloads_bench: $PROCESSES processes at once, $OPS ops each, $ROUNDS rounds alternating; aggregate ops/s"
  side_by_side "$WORK/pailfs.workloads" "$WORK/bindfs.workloads" workload
  grep -h "first error" "$WORK/logs/pailfs.workloads-all" "$WORK/logs/bindfs.workloads-all" | sed 's/^/  errors: /'
fi

stop_server
echo "== pailfs fsck"
if "$PAILFS" fsck -c "$CONFIG" > "$WORK/logs/fsck.log" 2>&1; then
  echo "clean: $(grep -c . "$WORK/logs/fsck.log") lines of report"; tail -n 3 "$WORK/logs/fsck.log"
else
  echo "PROBLEMS:"; cat "$WORK/logs/fsck.log"
fi
