#!/bin/bash
# pailfs next to diod through the Linux kernel's 9P client, in one boot of
# the test VM (../shared/vm): both servers run in the VM's namespace at once,
# the guest mounts both with the same options and runs bench/ninep_vm_job.sh:
# a message-count pass (kernel trace events) and then alternating timed
# rounds of workloads_bench. Prints, per workload, the 9P requests per
# operation by type for each server, pailfs's own time per request, and the
# median ops/s of each server with the ratio. Must run as root.
#
#   bench/ninep_vm_bench.sh [--rounds R] [--ops N] [--only w1,w2] [--trace-ops "N1 N2"]
#                           [--opts 9P-MOUNT-OPTIONS] [--run-dir DIR] [--capture]
#
# Defaults: 3 rounds of 100 ops, the six workloads sequential-writes,
# data-modifications, single-file-append, empty-files, empty-dirs,
# random-reads; counting runs of 10 and 40 ops (--trace-ops "" skips them);
# mount options access=user,msize=1048576,cache=mmap (after
# trans=tcp,port=P,version=9p2000.L; diod also gets aname=EXPORT). pailfs
# runs with its default durability (writes acknowledged from memory).
# --capture records the tap with tcpdump (if installed) and prints, per
# server, the host side of each round trip (request in to reply out on the
# tap) beside the guest's side (reply out to next request in): which of the
# two the ops/s measure.
# Env: BUILD (default ./build: pailfs, workloads_bench), VM_DIR (default
# ../shared/vm). Raw results stay in the run directory (printed at the end).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
VM_DIR=$(cd "${VM_DIR:-$ROOT/../shared/vm}" && pwd)
ROUNDS=3 OPS=100 TRACE_OPS="10 40" RUN_DIR="" CAPTURE=""
WORKLOADS=sequential-writes,data-modifications,single-file-append,empty-files,empty-dirs,random-reads
P9_OPTS=access=user,msize=1048576,cache=mmap
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --ops) OPS=$2; shift 2 ;;
    --only) WORKLOADS=$2; shift 2 ;;
    --trace-ops) TRACE_OPS=$2; shift 2 ;;
    --opts) P9_OPTS=$2; shift 2 ;;
    --run-dir) RUN_DIR=$2; shift 2 ;;
    --capture) CAPTURE=1; shift ;;
    *) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 2 ;;
  esac
done
command -v diod > /dev/null || { echo "ninep_vm_bench: needs diod (apt-get install diod)" >&2; exit 2; }
RUN_DIR=${RUN_DIR:-$(mktemp -d /tmp/ninep-vm-bench.XXXXXX)}
# diod refuses an attach below a directory only root may search (mktemp's
# 0700): the guest's mount then fails with "cannot mount read-only".
chmod 755 "$RUN_DIR"
DATA=$RUN_DIR/data
mkdir -p "$DATA/diod-export"
SERVER_IP=${VM_SERVER_IP:-198.18.0.1}
GUEST_IP=${VM_GUEST_IP:-198.18.0.2}
PAIL_PORT=5564 DIOD_PORT=564 ADMIN_PORT=7390
cat > "$DATA/pailfs.toml" << CONF
[storage]
url = "file://$DATA/bucket"
encryption_password = "vm-bench"
[cache]
dir = "$DATA/cache"
[servers.ninep]
addresses = ["$SERVER_IP:$PAIL_PORT"]
# Only the guest, its uids trusted (as tests/vm/kernel_vm.sh does).
allowed_clients = ["$GUEST_IP/32"]
squash = "none"
[servers.admin]
# Reachable only inside the VM's private namespace: the guest reads /metrics.
addresses = ["$SERVER_IP:$ADMIN_PORT"]
CONF
# Both servers in the namespace at once; the harness stops the process group.
SERVER_CMD="diod -f -n -c /dev/null -L stderr -l $SERVER_IP:$DIOD_PORT -e '$DATA/diod-export' &
exec '$BUILD/pailfs' run -c '$DATA/pailfs.toml'"
if [ -n "$CAPTURE" ]; then
  command -v tcpdump > /dev/null || { echo "ninep_vm_bench: --capture needs tcpdump" >&2; exit 2; }
  # Headers only; the harness stops the whole process group at the end.
  SERVER_CMD="tcpdump -i vmtap0 -s 96 -w '$RUN_DIR/tap.pcap' tcp > '$RUN_DIR/tcpdump.log' 2>&1 &
$SERVER_CMD"
fi
echo "ninep_vm_bench: $ROUNDS rounds x $OPS ops of $WORKLOADS; counting runs: ${TRACE_OPS:-none}"
echo "mount -t 9p -o trans=tcp,port=P,version=9p2000.L,$P9_OPTS (diod: + aname=$DATA/diod-export)"
rc=0
"$VM_DIR/run-vm.sh" --quiet --run-dir "$RUN_DIR/vm" --timeout "${VM_TIMEOUT:-5400}" \
  --server "$SERVER_CMD" --wait-port "$PAIL_PORT" --wait-port "$DIOD_PORT" \
  --job "$ROOT/bench/ninep_vm_job.sh" --files "$VM_DIR/jobs/lib.sh" --files "$BUILD/workloads_bench" \
  --env "PAIL_PORT=$PAIL_PORT" --env "DIOD_PORT=$DIOD_PORT" --env "DIOD_ANAME=$DATA/diod-export" \
  --env "ADMIN_PORT=$ADMIN_PORT" --env "P9_OPTS=$P9_OPTS" --env "WORKLOADS=$WORKLOADS" \
  --env "OPS=$OPS" --env "ROUNDS=$ROUNDS" --env "TRACE_OPS=$TRACE_OPS" || rc=$?
OUT=$RUN_DIR/vm/out
[ "$rc" = 0 ] || { tail -30 "$OUT/job.log" 2>/dev/null; echo "ninep_vm_bench: VM run failed ($rc), logs in $RUN_DIR/vm"; }

# --- message counts: requests per operation by type, from the difference
# between the long and the short counting run (setup and cleanup cancel).
# A trace line: "... TIMESTAMP: 9p_client_req: client C request P9_TWALK tag  T".
count_events() {  # count_events FILE -> "TYPE COUNT TOTAL_RTT_US" lines
  awk '{
    for (i = 1; i <= NF; i++) if ($i ~ /^9p_client_(req|res):$/) break
    if (i > NF) next
    t = $(i - 1); sub(/:$/, "", t)
    key = $(i + 2) " " $(i + 6)
    if ($i == "9p_client_req:") { start[key] = t; n[$(i + 4)]++ }
    else if (key in start) { rtt[$(i + 4)] += (t - start[key]) * 1e6; delete start[key] }
  } END { for (k in n) printf "%s %d %.0f\n", k, n[k], rtt[k] }' "$1"
}
metric_diff() {  # metric_diff BEFORE AFTER -> "op count seconds" for 9P ops
  awk '
    /^pailfs_protocol_operations_total\{/ && /protocol="9p"/ {
      match($0, /op="[^"]*"/); op = substr($0, RSTART + 4, RLENGTH - 5)
      c[op] += (FILENAME == ARGV[1] ? -1 : 1) * $NF
    }
    /^pailfs_protocol_operation_duration_seconds_sum\{/ && /protocol="9p"/ {
      match($0, /op="[^"]*"/); op = substr($0, RSTART + 4, RLENGTH - 5)
      s[op] += (FILENAME == ARGV[1] ? -1 : 1) * $NF
    }
    END { for (op in c) if (c[op] > 0) printf "%s %d %.6f\n", op, c[op], s[op] }' "$1" "$2"
}
if [ -n "$TRACE_OPS" ] && [ -d "$OUT/trace" ]; then
  read -r N1 N2 <<< "$TRACE_OPS"
  echo
  echo "9P requests per operation (kernel trace, ($N2-op run - $N1-op run) / $((N2 - N1))), and mean"
  echo "round trip per request as the guest kernel sees it (us, $N2-op run):"
  for w in ${WORKLOADS//,/ }; do
    echo "$w:"
    for server in pailfs diod; do
      short=$OUT/trace/$server.$w.$N1.events long=$OUT/trace/$server.$w.$N2.events
      [ -f "$short" ] && [ -f "$long" ] || continue
      { count_events "$short" | sed 's/^/S /'; count_events "$long" | sed 's/^/L /'; } |
        awk -v server="$server" -v d=$((N2 - N1)) '
          { k = $2; sub(/^P9_T/, "", k); if ($1 == "S") s[k] = $3; else { l[k] = $3; rtt[k] = $4 } }
          END {
            line = ""; total = 0; rt = 0; n = 0
            for (k in l) { per = (l[k] - s[k]) / d; total += per; rt += rtt[k]; n += l[k]
                           if (per != 0) line = line sprintf(" %s=%.2f", tolower(k), per) }
            printf "  %-7s %6.2f req/op:%s  (mean rtt %.0f us)\n", server, total, line, n ? rt / n : 0
          }'
    done
    before=$OUT/trace/pailfs.$w.$N2.metrics-before after=$OUT/trace/pailfs.$w.$N2.metrics-after
    if [ -f "$before" ] && [ -f "$after" ]; then
      metric_diff "$before" "$after" | sort |
        awk '{ line = line sprintf(" %s=%d/%.0fus", $1, $2, $2 ? $3 / $2 * 1e6 : 0); n += $2; t += $3 }
             END { printf "  pailfs server side (%s-op run): %d requests, mean %.0f us in the server:%s\n",
                          "'"$N2"'", n, n ? t / n * 1e6 : 0, line }'
    fi
  done
fi

# --- timed rounds: median ops/s per server and workload, and the ratio.
if [ -d "$OUT/rounds" ]; then
  echo
  echo "ops/s, $ROUNDS rounds of $OPS ops (per round: pailfs/diod), medians and their ratio;"
  echo "paired: the median of the rounds' own ratios (each pair ran back to back);"
  echo "pooled: diod's total time over pailfs's; won: rounds pailfs was faster in:"
  printf "%-20s %-40s %9s %9s %7s %7s %7s %6s\n" workload "rounds" "pailfs" "diod" "ratio" "paired" "pooled" "won"
  for w in ${WORKLOADS//,/ }; do
    declare -A med=()
    rounds=""
    for server in pailfs diod; do
      vals=$(for f in "$OUT"/rounds/*."$server.$w.txt"; do
               [ -f "$f" ] && awk -v w="$w" '$1 == w { print $3 }' "$f"; done | sort -g)
      med[$server]=$(echo "$vals" | awk 'NF { v[++n] = $1 } END {
        if (n == 0) print "-"; else if (n % 2) print v[(n + 1) / 2]; else print (v[n / 2] + v[n / 2 + 1]) / 2 }')
    done
    pairs=""
    for r in $(seq 1 "$ROUNDS"); do
      p=$(awk -v w="$w" '$1 == w { print $3 }' "$OUT/rounds/$r.pailfs.$w.txt" 2>/dev/null)
      d=$(awk -v w="$w" '$1 == w { print $3 }' "$OUT/rounds/$r.diod.$w.txt" 2>/dev/null)
      rounds="$rounds ${p:--}/${d:--}"
      [ -n "$p" ] && [ -n "$d" ] && pairs="$pairs $p $d"
    done
    ratio=$(awk -v p="${med[pailfs]}" -v d="${med[diod]}" 'BEGIN {
      if (p == "-" || d == "-" || d == 0) print "-"; else printf "%.2f", p / d }')
    # Pairs with a zero rate (a failed round) are left out.
    read -r paired pooled won <<< "$(echo "$pairs" | awk '{
      for (i = 1; i < NF; i += 2) if ($i > 0 && $(i + 1) > 0) {
        r[++n] = $i / $(i + 1); tp += 1 / $i; td += 1 / $(i + 1); if ($i > $(i + 1)) w++ }
      if (n == 0) { print "- - -"; exit }
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
      m = n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
      printf "%.2f %.2f %d/%d\n", m, td / tp, w, n }')"
    printf "%-20s %-40s %9s %9s %7s %7s %7s %6s\n" "$w" "$rounds" "${med[pailfs]}" "${med[diod]}" "$ratio" \
      "$paired" "$pooled" "$won"
  done
fi
# --- the tap capture: per server, each request's time on the host side
# (its last segment in to the reply's first segment out) and the guest's
# side (reply out to the next request in; gaps over 50 ms, between
# workloads and rounds, left out). Data segments only.
if [ -n "$CAPTURE" ] && [ -f "$RUN_DIR/tap.pcap" ]; then
  echo
  echo "round trips on the tap (us; whole run, both counting and timed):"
  for server in pailfs:$PAIL_PORT diod:$DIOD_PORT; do
    port=${server#*:}
    tcpdump -r "$RUN_DIR/tap.pcap" -nn -tt "tcp port $port" 2>/dev/null |
      awk -v me="$SERVER_IP.$port" '$NF > 0 {
        if ($3 == me) { if (req) print "host", ($1 - req) * 1e6; req = 0; last = $1 }
        else { if (last && ($1 - last) < 0.05) print "guest", ($1 - last) * 1e6; last = 0; req = $1 } }' |
      sort -k1,1 -k2g | awk -v name="${server%%:*}" '
        { v[$1, ++n[$1]] = $2; s[$1] += $2 }
        END { line = sprintf("  %-7s", name)
              for (k in n) line = line sprintf("  %s side: n=%d mean=%.0f p50=%.0f p90=%.0f", k, n[k],
                                                s[k] / n[k], v[k, int(n[k] / 2) + 1], v[k, int(n[k] * 0.9) + 1])
              print line }'
  done
fi

echo
echo "ninep_vm_bench: rc=$rc, raw results in $RUN_DIR/vm/out ($(cat "$RUN_DIR/vm/timing" 2>/dev/null))"
