# Sourced by the benchmark scripts: stopping the pailfs server they started.
# Expects SERVER_PID (empty when none runs), SERVER_LOG and a log function.

# Stops the server with SIGTERM, as a service manager would, and waits for
# its clean exit (the final flush included).
stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  kill -TERM "$SERVER_PID" 2>/dev/null
  local rc=0
  wait "$SERVER_PID" || rc=$?
  SERVER_PID=""
  [ "$rc" = 0 ] || log "pailfs exited with $rc at stop (see $SERVER_LOG)"
}
