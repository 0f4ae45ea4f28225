#!/bin/bash
# The --server command of nbd_vm.sh, run by the VM harness in its network
# namespace: `pailfs run`, killed with SIGKILL and started again on the
# same bucket whenever the guest writes out/restart-request into the job
# share; out/restarted-N tells the guest the N-th new server is listening.
# The harness stops the whole process group at the end.
set -u
PAILFS=$1 CONFIG=$2
OUT=$RUN_DIR/out
generation=0
while true; do
  "$PAILFS" run -c "$CONFIG" &
  pid=$!
  if [ "$generation" -gt 0 ]; then
    # Listening again (the harness's port probe only covers the first start).
    for _ in $(seq 300); do
      (exec 3<>"/dev/tcp/$SERVER_IP/10809") 2>/dev/null && break
      sleep 0.1
    done
    touch "$OUT/restarted-$generation"
  fi
  while kill -0 "$pid" 2>/dev/null && [ ! -e "$OUT/restart-request" ]; do sleep 0.2; done
  if [ ! -e "$OUT/restart-request" ]; then
    wait "$pid"
    exit $?
  fi
  rm -f "$OUT/restart-request"
  echo "nbd_server_loop: SIGKILL to pailfs $pid, starting it again"
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  generation=$((generation + 1))
done
