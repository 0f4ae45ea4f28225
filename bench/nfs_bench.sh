#!/usr/bin/env bash
# nfs_bench.sh: pailfs's NFS server under many clients at once, beside
# nfs-ganesha in the same run.
#
#   bash bench/nfs_bench.sh [--clients N] [--ops N] [--rounds R]
#        [--only name[,name]] [--baseline PAILFS] [--work-dir D] [--keep]
#
# In a private network namespace (only loopback, up) and mount namespace
# (a tmpfs on /run, so the rpcbind and ganesha started here cannot meet the
# host's), it starts pailfs (default configuration but for where things
# live: file:// bucket under the work directory, NFS on 127.0.0.1:12049,
# squash = "none" so the clients' root is root, as ganesha's
# No_Root_Squash makes it there) and nfs-ganesha 4 (FSAL VFS exporting a
# directory under the work directory, NFSv3 on 127.0.0.1:12050, MOUNT on
# 12051, with the rpcbind it insists on registering with). Then
# nfs_workloads_bench runs the ten workloads with --clients N (default 8)
# libnfs clients at once, each its own TCP connection and directory,
# --ops N (default 500) operations per client (N/20 for
# directory-traversal, whose operation walks a 258-directory tree), against
# each server in R rounds (default 3) that alternate which server goes
# first, so a burst of load from elsewhere on a shared machine hits both
# alike. With --baseline, a second pailfs from that binary (e.g. one built
# from main) serves a bucket of its own on 127.0.0.1:12052 and runs in the
# same rounds, so a change is measured before and after in one run. It
# prints aggregate ops/s (operations over time summed over the
# rounds) side by side with the ratio pailfs / ganesha, and each server's
# CPU time (user + system, from /proc, over the timed parts alone) per
# operation; then it stops the servers and runs `pailfs fsck` on the
# bucket(s).
#
# Needs root, nfs-ganesha and nfs-ganesha-vfs (installed with apt-get when
# missing, saying so), and a build:
#   cmake --build build --target pailfs nfs_workloads_bench
# Env PERF_PAILFS=FILE: record `perf record -g` of the pailfs server during
# its timed runs into FILE (the last round's). Prints numbers; never passes
# or fails on them (exit 1 only when the harness itself cannot run).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
PAILFS=$BUILD/pailfs
BENCH=$BUILD/nfs_workloads_bench
CLIENTS=8
OPS=500
ROUNDS=3
ONLY=""
WORK=/tmp/pailfs-nfs-bench
KEEP=0
BASELINE=""
PAIL_PORT=12049
BASE_PORT=12052
GANESHA_PORT=12050
GANESHA_MNT_PORT=12051

die() { echo "nfs_bench: $*" >&2; exit 1; }
log() { echo "# $*" >&2; }

ARGS=("$@")
while [ $# -gt 0 ]; do
  case $1 in
    --clients) CLIENTS=$2; shift 2 ;;
    --ops) OPS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --baseline) BASELINE=$(realpath "$2"); shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done

[ "$(id -u)" = 0 ] || die "needs root (namespaces, ganesha)"
[ -x "$PAILFS" ] || die "no $PAILFS; build it first"
[ -x "$BENCH" ] || die "no $BENCH; build it first"
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || die "--baseline $BASELINE is not an executable"
if ! command -v ganesha.nfsd >/dev/null || ! compgen -G "/usr/lib/*/ganesha/libfsalvfs.so" >/dev/null; then
  log "installing nfs-ganesha nfs-ganesha-vfs (apt-get), needed by this benchmark only"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nfs-ganesha nfs-ganesha-vfs >/dev/null ||
    die "apt-get install nfs-ganesha nfs-ganesha-vfs failed"
fi

# Everything below runs in the private namespaces.
if [ -z "${NFS_BENCH_IN_NAMESPACE:-}" ]; then
  NFS_BENCH_IN_NAMESPACE=1 exec unshare -n -m --propagation private -- bash "$0" "${ARGS[@]}"
fi
ip link set lo up || die "cannot bring lo up in the namespace"
mount -t tmpfs tmpfs /run || die "cannot mount a private /run"
mkdir -p /run/rpcbind /run/ganesha

rm -rf "$WORK"
mkdir -p "$WORK/bucket" "$WORK/export" "$WORK/logs"
CONFIG=$WORK/pailfs.toml
GANESHA_CONF=$WORK/ganesha.conf
SERVER_LOG=$WORK/logs/pailfs.log
SERVER_PID=""
BASE_PID=""
GANESHA_PID=""
RPCBIND_PID=""

cat > "$CONFIG" <<EOF
[storage]
url = "file://$WORK/bucket"
encryption_password = "nfs-bench"
[cache]
dir = "$WORK/cache"
[servers.nfs]
addresses = ["127.0.0.1:$PAIL_PORT"]
squash = "none"
[servers.admin]
unix_socket = "$WORK/admin.sock"
EOF
# The baseline's: the same but for its bucket, cache, port and socket.
sed -e "s|$WORK/bucket|$WORK/base-bucket|; s|$WORK/cache|$WORK/base-cache|" \
    -e "s|:$PAIL_PORT|:$BASE_PORT|; s|$WORK/admin.sock|$WORK/base-admin.sock|" "$CONFIG" > "$WORK/base.toml"

# No Bind_addr: ganesha resolves it with AI_ADDRCONFIG, which finds no
# address in a namespace with loopback alone; the wildcard address there
# is loopback all the same.
cat > "$GANESHA_CONF" <<EOF
NFS_CORE_PARAM {
    Protocols = 3;
    NFS_Port = $GANESHA_PORT;
    MNT_Port = $GANESHA_MNT_PORT;
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
}
NFS_KRB5 { Active_krb5 = false; }
EXPORT {
    Export_Id = 1;
    Path = $WORK/export;
    Pseudo = /export;
    Access_Type = RW;
    Squash = No_Root_Squash;
    Protocols = 3;
    Transports = TCP;
    SecType = sys;
    FSAL { Name = VFS; }
}
LOG { Default_Log_Level = EVENT; }
EOF

# shellcheck source=bench/pailfs_server.sh
source "$(dirname "${BASH_SOURCE[0]}")/pailfs_server.sh"

stop_ganesha() {
  if [ -n "$GANESHA_PID" ]; then
    kill -TERM "$GANESHA_PID" 2>/dev/null
    wait "$GANESHA_PID" 2>/dev/null
    GANESHA_PID=""
  fi
  if [ -n "$RPCBIND_PID" ]; then
    kill -TERM "$RPCBIND_PID" 2>/dev/null
    wait "$RPCBIND_PID" 2>/dev/null
    RPCBIND_PID=""
  fi
}

stop_baseline() {
  [ -n "$BASE_PID" ] || return 0
  kill -TERM "$BASE_PID" 2>/dev/null
  wait "$BASE_PID" || log "baseline pailfs exited with $? at stop"
  BASE_PID=""
}

cleanup() {
  stop_server
  stop_baseline
  stop_ganesha
  if [ "$KEEP" = 0 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}
trap cleanup EXIT

port_open() { timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

wait_port() {  # PORT PID WHAT
  for _ in $(seq 600); do
    port_open "$1" && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

"$PAILFS" run -c "$CONFIG" >> "$SERVER_LOG" 2>&1 &
SERVER_PID=$!
wait_port "$PAIL_PORT" "$SERVER_PID" || { tail -n 20 "$SERVER_LOG" >&2; die "pailfs did not start"; }
if [ -n "$BASELINE" ]; then
  mkdir -p "$WORK/base-bucket"
  "$BASELINE" run -c "$WORK/base.toml" >> "$WORK/logs/baseline.log" 2>&1 &
  BASE_PID=$!
  wait_port "$BASE_PORT" "$BASE_PID" || { tail -n 20 "$WORK/logs/baseline.log" >&2; die "baseline did not start"; }
fi

# ganesha 4.3 will not start without an rpcbind to register with.
rpcbind -f > "$WORK/logs/rpcbind.log" 2>&1 &
RPCBIND_PID=$!
wait_port 111 "$RPCBIND_PID" || die "rpcbind did not start"
ganesha.nfsd -F -L "$WORK/logs/ganesha.log" -f "$GANESHA_CONF" -p /run/ganesha/ganesha.pid &
GANESHA_PID=$!
wait_port "$GANESHA_PORT" "$GANESHA_PID" && wait_port "$GANESHA_MNT_PORT" "$GANESHA_PID" ||
  { tail -n 20 "$WORK/logs/ganesha.log" >&2; die "ganesha did not start"; }
# ganesha answers with NFS3ERR_JUKEBOX during its grace period at start.
sleep "${GANESHA_GRACE_WAIT:-1}"

ALL=sequential-writes,data-modifications,single-file-append,empty-files,empty-dirs,random-reads
ALL+=,file-moves,file-deletion,directory-traversal,metadata-ops
ONLY=${ONLY:-$ALL}
WALKS=$(( OPS / 20 > 0 ? OPS / 20 : 1 ))
NOWALK=$(echo "$ONLY" | tr , '\n' | grep -vx directory-traversal | paste -sd,)

# The --around command: "WORKLOAD PHASE TICKS" of a server's CPU time
# (utime + stime, fields 14 and 15 of /proc/PID/stat) appended to a file;
# before the timed part it settles the server (bench/settle_server.sh).
SETTLE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/settle_server.sh
cat > "$WORK/cpu_around.sh" <<'EOF'
#!/usr/bin/env bash
# cpu_around.sh SETTLE-SCRIPT PID OUT SETTLE-COMMAND PHASE WORKLOAD
bash "$1" "$2" "$4" "$5" || exit 1
read -r -a f < <(sed 's/^.*) //' "/proc/$2/stat") || exit 1
echo "$6 $5 $(( f[11] + f[12] ))" >> "$3"
EOF
HZ=$(getconf CLK_TCK)

# run_bench NAME PID SETTLE ARGS...: one round against the server NAME
# (process PID, settled by the command SETTLE); appends "workload ops
# seconds cpu-seconds" to $WORK/NAME.rounds.
run_bench() {
  local name=$1 pid=$2 settle=$3 out=$WORK/logs/$1.round cpu=$WORK/logs/$1.cpu
  shift 3
  : > "$out"
  : > "$cpu"
  local around="bash $WORK/cpu_around.sh $SETTLE $pid $cpu '$settle'"
  if [ -n "$NOWALK" ]; then
    "$BENCH" "$@" --clients "$CLIENTS" --ops "$OPS" --only "$NOWALK" --around "$around" >> "$out" 2>&1 ||
      log "$name: nfs_workloads_bench reported errors (see below)"
  fi
  if [[ ,$ONLY, == *,directory-traversal,* ]]; then
    "$BENCH" "$@" --clients "$CLIENTS" --ops "$WALKS" --only directory-traversal --around "$around" \
      >> "$out" 2>&1 || log "$name: nfs_workloads_bench reported errors (see below)"
  fi
  cat "$out" >> "$WORK/logs/$name.all"
  awk -v hz="$HZ" 'NR == FNR { if ($2 == "start") s[$1] = $3; else c[$1] = ($3 - s[$1]) / hz; next }
       $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9.]+$/ && $3 > 0 { print $1, $2, $2 / $3, c[$1] + 0 }' \
    "$cpu" "$out" >> "$WORK/$name.rounds"
}

PERF_PID=""
run_pailfs() {
  if [ -n "${PERF_PAILFS:-}" ]; then
    perf record -g -o "$PERF_PAILFS" -p "$SERVER_PID" > "$WORK/logs/perf.log" 2>&1 &
    PERF_PID=$!
    sleep 0.5
  fi
  run_bench pailfs "$SERVER_PID" "$PAILFS flush -c $CONFIG" --port "$PAIL_PORT" --export /
  if [ -n "$PERF_PID" ]; then kill -INT "$PERF_PID"; wait "$PERF_PID"; PERF_PID=""; fi
}
run_ganesha() {
  run_bench ganesha "$GANESHA_PID" sync --port "$GANESHA_PORT" --mount-port "$GANESHA_MNT_PORT" --export "$WORK/export"
}
run_baseline() { run_bench baseline "$BASE_PID" "$BASELINE flush -c $WORK/base.toml" --port "$BASE_PORT" --export /; }

SERVERS=(pailfs ganesha)
[ -z "$BASELINE" ] || SERVERS+=(baseline)
for r in $(seq "$ROUNDS"); do
  log "round $r of $ROUNDS: $CLIENTS clients, $OPS ops each ($WALKS for directory-traversal)"
  # Each round starts with the next server in turn.
  for i in $(seq 0 $(( ${#SERVERS[@]} - 1 ))); do
    "run_${SERVERS[$(( (r - 1 + i) % ${#SERVERS[@]} ))]}"
  done
done

# Sums the rounds: "workload ops/s cpu-us/op".
sum_rounds() {
  awk '{ ops[$1] += $2; t[$1] += $3; c[$1] += $4; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
       END { for (i = 0; i < n; i++) { w = order[i];
               printf "%s %.2f %.1f\n", w, (t[w] > 0 ? ops[w] / t[w] : 0), (ops[w] > 0 ? c[w] * 1e6 / ops[w] : 0) } }' "$1"
}
sum_rounds "$WORK/pailfs.rounds" > "$WORK/pailfs.sum"
sum_rounds "$WORK/ganesha.rounds" > "$WORK/ganesha.sum"
if [ -n "$BASELINE" ]; then sum_rounds "$WORK/baseline.rounds" > "$WORK/baseline.sum"; else : > "$WORK/baseline.sum"; fi
echo "== nfs_workloads_bench: $CLIENTS libnfs clients at once, $OPS ops each, $ROUNDS rounds in turn; aggregate ops/s,"
echo "   ratio to ganesha, server CPU time per operation${BASELINE:+; baseline: $BASELINE}"
awk -v base="$BASELINE" '
  FILENAME ~ /ganesha.sum$/ { g[$1] = $2; gc[$1] = $3; next }
  FILENAME ~ /baseline.sum$/ { b[$1] = $2; bc[$1] = $3; next }
  FNR == 1 {
    printf "%-20s %9s %9s %6s", "workload", "pailfs", "ganesha", "ratio"
    if (base != "") printf " %9s %6s", "baseline", "ratio"
    printf " %9s %9s%s\n", "cpu/op", "ganesha", (base != "" ? sprintf(" %9s", "baseline") : "")
  }
  { ratio = ($1 in g && g[$1] > 0) ? sprintf("%.2f", $2 / g[$1]) : "-"
    printf "%-20s %9.1f %9.1f %6s", $1, $2, g[$1], ratio
    if (base != "") printf " %9.1f %6s", b[$1], (g[$1] > 0 ? sprintf("%.2f", b[$1] / g[$1]) : "-")
    printf " %7.0fus %7.0fus%s\n", $3, gc[$1], (base != "" ? sprintf(" %7.0fus", bc[$1]) : "") }' \
  "$WORK/ganesha.sum" "$WORK/baseline.sum" "$WORK/pailfs.sum"
grep -h "first error" "$WORK"/logs/*.all 2>/dev/null | sed 's/^/  errors: /'

stop_server
stop_baseline
stop_ganesha
# fsck_bucket NAME BINARY CONFIG
fsck_bucket() {
  echo "== pailfs fsck ($1)"
  if "$2" fsck -c "$3" > "$WORK/logs/fsck.$1.log" 2>&1; then
    echo "clean: $(grep -c . "$WORK/logs/fsck.$1.log") lines of report"; tail -n 1 "$WORK/logs/fsck.$1.log"
  else
    echo "PROBLEMS:"; cat "$WORK/logs/fsck.$1.log"
  fi
}
fsck_bucket pailfs "$PAILFS" "$CONFIG"
[ -z "$BASELINE" ] || fsck_bucket baseline "$BASELINE" "$WORK/base.toml"
