#!/bin/bash
# Guest job of bench/ninep_vm_bench.sh (runs inside ../shared/vm's guest, as
# root): mounts pailfs and diod with the same kernel 9P client options, then
#   1. counts the 9P requests the client sends per workload to each server,
#      from the kernel's own 9p_client_req/9p_client_res trace events (the
#      same instrument for both servers), with each request's round trip as
#      the client sees it; two runs of different lengths per workload, so the
#      host can take the per-operation difference (setup and cleanup cancel);
#      pailfs's /metrics is saved around each of its runs;
#   2. runs ROUNDS timed rounds, workload by workload, the two servers
#      alternating (pailfs first in odd rounds, diod first in even ones).
# Everything raw goes to $OUT (the host parses it).
# Env: PAIL_PORT, DIOD_PORT, DIOD_ANAME, ADMIN_PORT, P9_OPTS, WORKLOADS
# (comma list), OPS, ROUNDS, TRACE_OPS ("N1 N2"; empty: no counting pass).
. /job/files/lib.sh
set -u
bench=/job/files/workloads_bench
tracing=/sys/kernel/tracing

mount_one() {  # mount_one NAME PORT [ANAME]
  P9_PORT=$2 P9_ANAME=${3:-} mount_9p "/mnt/$1" || return 1
  mkdir -p "/mnt/$1/bench"
}
check "mount pailfs" mount_one pailfs "$PAIL_PORT" || { summary; exit 1; }
check "mount diod" mount_one diod "$DIOD_PORT" "$DIOD_ANAME" || { summary; exit 1; }
mount | grep ' type 9p ' | tee "$OUT/mounts.txt"

run_bench() {  # run_bench SERVER WORKLOAD OPS OUTFILE
  "$bench" --dir "/mnt/$1/bench" --only "$2" --ops "$3" > "$4" 2>&1
}

metrics() {  # metrics FILE: pailfs's 9P counters now
  busybox wget -q -O "$1" "http://$SERVER_IP:$ADMIN_PORT/metrics" || echo "metrics: wget failed" > "$1"
}

if [ -n "${TRACE_OPS:-}" ]; then
  mkdir -p "$OUT/trace"
  mountpoint -q $tracing || mount -t tracefs tracefs $tracing
  echo 8192 > $tracing/buffer_size_kb
  for w in ${WORKLOADS//,/ }; do
    for ops in $TRACE_OPS; do
      for server in pailfs diod; do
        tag=$server.$w.$ops
        [ $server = pailfs ] && metrics "$OUT/trace/$tag.metrics-before"
        echo > $tracing/trace
        echo 1 > $tracing/events/9p/9p_client_req/enable
        echo 1 > $tracing/events/9p/9p_client_res/enable
        run_bench $server "$w" "$ops" "$OUT/trace/$tag.bench"
        echo 0 > $tracing/events/9p/9p_client_req/enable
        echo 0 > $tracing/events/9p/9p_client_res/enable
        grep -E '9p_client_(req|res):' $tracing/trace > "$OUT/trace/$tag.events"
        [ $server = pailfs ] && metrics "$OUT/trace/$tag.metrics-after"
        echo "traced $tag: $(grep -c 9p_client_req "$OUT/trace/$tag.events") requests"
      done
    done
  done
fi

mkdir -p "$OUT/rounds"
for round in $(seq 1 "$ROUNDS"); do
  order="pailfs diod"
  [ $((round % 2)) = 0 ] && order="diod pailfs"
  for w in ${WORKLOADS//,/ }; do
    for server in $order; do
      f=$OUT/rounds/$round.$server.$w.txt
      run_bench $server "$w" "$OPS" "$f"
      echo "round $round $server $(grep -E "^$w " "$f")"
    done
  done
done
umount /mnt/pailfs
umount /mnt/diod
summary
