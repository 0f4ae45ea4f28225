#!/usr/bin/env bash
# settle_server.sh PID COMMAND [PHASE WORKLOAD]: settles a server before a
# timed part of a benchmark, so the timed part measures its workload and not the setup's
# leftovers. Runs COMMAND through the shell (it makes the setup's data
# durable: `pailfs flush -c CONFIG` for pailfs, whose writes are
# acknowledged from memory and uploaded in the background; `sync` for a
# server over a local filesystem, whose writes sit in the page cache), then
# waits until process PID has used no CPU time for 200 ms (at most 10 s).
# As the --around command of workloads_bench or nfs_workloads_bench
# (which append PHASE and WORKLOAD), it acts at "start" only. Exit 1 when
# PID is gone.
set -u
[ "${3:-start}" = start ] || exit 0
ticks() {  # utime + stime of PID (fields 14 and 15 of /proc/PID/stat)
  local f
  read -r -a f < <(sed 's/^.*) //' "/proc/$1/stat") || return 1
  echo $(( f[11] + f[12] ))
}
bash -c "$2" > /dev/null 2>&1 || echo "settle_server: '$2' failed" >&2
last=$(ticks "$1") || exit 1
for _ in $(seq 50); do
  sleep 0.2
  now=$(ticks "$1") || exit 1
  [ "$now" = "$last" ] && exit 0
  last=$now
done
