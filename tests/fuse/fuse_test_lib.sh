# Shared by the FUSE tests: a pailfs server on a file:// bucket in a fresh
# temporary directory, mounted through FUSE, and helpers around it.
# Source it after setting PAILFS (the pailfs binary). Exit code 77 means
# "skipped" (CTest's SKIP_RETURN_CODE): no FUSE on this machine.

set -euo pipefail

if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ]; then
  # CI (scripts/test.sh) has both: there a skip would hide a broken setup.
  if [ "${PAIL_REQUIRE_FUSE:-0}" = 1 ]; then
    echo "FAIL: FUSE tests need root and /dev/fuse (PAIL_REQUIRE_FUSE=1)"
    exit 1
  fi
  echo "SKIP: FUSE tests need root and /dev/fuse"
  exit 77
fi

# World-searchable, so unprivileged test identities can reach the mount.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pail-fuse-test.XXXXXX")
chmod 0755 "$WORK"
MNT="$WORK/mnt"
BUCKET="$WORK/bucket"
mkdir -p "$MNT" "$BUCKET"
chmod 0755 "$MNT"
SERVER_PID=""
CACHE_GENERATION=0

# Seconds to wait for the mount to appear or the server to exit.
MOUNT_WAIT_SECONDS=60
STOP_WAIT_SECONDS=120

show_log() {
  echo "---- server log ($1) ----"
  tail -n 50 "$WORK/server.log" || true
  echo "----"
}

cleanup() {
  local rc=$?
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  # A crashed server leaves a dead mount behind.
  if grep -q " $MNT fuse" /proc/self/mounts; then umount -l "$MNT" 2>/dev/null || true; fi
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
    show_log "test failed with $rc"
    # PAIL_FUSE_TEST_KEEP=1 keeps the bucket, caches and logs for a look.
    if [ "${PAIL_FUSE_TEST_KEEP:-0}" = 1 ]; then
      echo "kept $WORK"
      return
    fi
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# Writes the config for the next start; each start gets a new, empty cache
# directory, as on a fresh machine.
write_config() {
  CACHE_GENERATION=$((CACHE_GENERATION + 1))
  CONFIG="$WORK/pailfs-$CACHE_GENERATION.toml"
  cat >"$CONFIG" <<CONF
[storage]
url = "file://$BUCKET"
encryption_password = "fuse-test-password"

[cache]
dir = "$WORK/cache-$CACHE_GENERATION"
disk_size_gb = 1.0
memory_size_gb = 0.25

[filesystem]
compression = "zstd-3"
flush_interval_ms = ${FLUSH_INTERVAL_MS:-1000}
max_size_gb = 10

[servers.fuse]
mountpoint = "$MNT"
${EXTRA_CONFIG:-}
CONF
}

mounted() { grep -q " $MNT fuse.pailfs " /proc/self/mounts; }

# FUSE's statfs f_type.
FUSE_SUPER_MAGIC=65735546

# A killed server leaves a dead mount whose cached root attributes can still
# answer stat, while listing it fails. The restarted server detaches it and
# mounts anew; in between, $MNT is the plain directory underneath, which
# lists fine, so the file system type is checked after the listing.
live_mount() {
  ls "$MNT" >/dev/null 2>&1 && [ "$(stat -f -c %t "$MNT" 2>/dev/null)" = "$FUSE_SUPER_MAGIC" ]
}

start_server() {
  write_config
  # The mount is not touched until the server says it mounted: a listing of
  # a dead mount left by crash_server (as live_mount makes) would show the
  # starting server that mount as dead even where it cannot tell itself.
  local mounted_before
  mounted_before=$(grep -c "fuse: mounted at" "$WORK/server.log" 2>/dev/null || true)
  "$PAILFS" run -c "$CONFIG" >>"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  local waited=0
  until [ "$(grep -c "fuse: mounted at" "$WORK/server.log" || true)" -gt "${mounted_before:-0}" ] &&
    live_mount; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      show_log "server exited before mounting"
      exit 1
    fi
    if [ "$waited" -ge $((MOUNT_WAIT_SECONDS * 10)) ]; then
      show_log "no mount after ${MOUNT_WAIT_SECONDS}s"
      exit 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  # One mount: a dead one left by crash_server must have been detached, not
  # buried under the new one (where it would outlive it).
  local mounts
  mounts=$(grep -c " $MNT fuse" /proc/self/mounts || true)
  if [ "$mounts" -ne 1 ]; then
    echo "FAIL: $mounts FUSE mounts at $MNT after the server started"
    exit 1
  fi
}

# SIGTERM, then the server must unmount, flush and exit 0.
stop_server() {
  kill -TERM "$SERVER_PID"
  await_clean_exit SIGTERM
}

# The server, told to stop by `$1`, must flush, exit 0 and leave no mount.
await_clean_exit() {
  local waited=0
  while kill -0 "$SERVER_PID" 2>/dev/null; do
    if [ "$waited" -ge $((STOP_WAIT_SECONDS * 10)) ]; then
      show_log "server still running ${STOP_WAIT_SECONDS}s after $1"
      exit 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  local rc=0
  wait "$SERVER_PID" || rc=$?
  SERVER_PID=""
  if [ "$rc" -ne 0 ]; then
    show_log "server exited with $rc after $1"
    exit 1
  fi
  if mounted; then
    echo "FAIL: $MNT still mounted after the server stopped"
    exit 1
  fi
}

crash_server() {
  # The kernel then holds the root's attributes, so the dead mount still
  # answers stat(): the restarted server must notice it all the same.
  stat "$MNT" >/dev/null
  kill -KILL "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# Offline consistency check of the bucket; fails the test on any problem.
run_fsck() {
  write_config
  if ! "$PAILFS" fsck -c "$CONFIG" >"$WORK/fsck.log" 2>&1; then
    echo "FAIL: pailfs fsck found problems:"
    cat "$WORK/fsck.log"
    exit 1
  fi
  grep 'fsck:' "$WORK/fsck.log" || true
}
