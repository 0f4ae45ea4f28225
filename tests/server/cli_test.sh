#!/usr/bin/env bash
# The pailfs command line end to end: init, run until SIGTERM (exit 0 after a
# final flush), persistence across runs with an empty cache, wrong password,
# change-password, fsck, bad config, the open-file limit raised.
set -uo pipefail
PAILFS=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
passed=0 failed=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $name"; fi
}

"$PAILFS" init - > "$WORK/starter.toml"
check "init - prints a config" grep -q '^\[storage\]' "$WORK/starter.toml"
"$PAILFS" init "$WORK/written.toml" >/dev/null
check "init PATH writes it" test -s "$WORK/written.toml"
"$PAILFS" init "$WORK/written.toml" >/dev/null 2>&1
check "init refuses to overwrite" test $? -ne 0
check "init writes the config 0600" test "$(stat -c %a "$WORK/written.toml")" = 600

write_config() {  # write_config PASSWORD CACHE_DIR
  cat > "$WORK/cfg.toml" <<EOT
[storage]
url = "file://$WORK/bucket"
encryption_password = "\${PAIL_CLI_PW}"
[cache]
dir = "$2"
[servers.nfs]
addresses = ["127.0.0.1:0"]
EOT
  export PAIL_CLI_PW=$1
}

write_config first "$WORK/cache1"
# Started with a low soft open-file limit, as from a shell (1024 there).
hard=$(ulimit -Hn)
prlimit --nofile=256:"$hard" "$PAILFS" run -c "$WORK/cfg.toml" 2>"$WORK/run1.log" &
pid=$!
sleep 2
check "server is running" kill -0 $pid
soft_now=$(awk '/^Max open files/ {print $4}' /proc/$pid/limits)
check "the soft open-file limit is raised to the hard one ($soft_now, hard $hard)" \
  test "$soft_now" = "$hard" -o "$hard" = unlimited
kill -TERM $pid
wait $pid
check "SIGTERM exits 0" test $? -eq 0
check "bucket has a key file" test -e "$WORK/bucket/pailfs.key.o"
check "the key file is 0600" test "$(stat -c %a "$WORK/bucket/pailfs.key.o")" = 600
check "no exposed-secret warning for \${ENV}" bash -c "! grep -q 'readable by other users' '$WORK/run1.log'"

write_config wrong "$WORK/cache2"
"$PAILFS" run -c "$WORK/cfg.toml" 2>"$WORK/wrong.log"
code=$?
check "wrong password exits non-zero" test $code -ne 0
check "wrong password is named" grep -q "wrong encryption password" "$WORK/wrong.log"

write_config first "$WORK/cache3"
echo "second" | "$PAILFS" change-password -c "$WORK/cfg.toml" >/dev/null 2>&1
check "change-password succeeds" test $? -eq 0
"$PAILFS" fsck -c "$WORK/cfg.toml" >/dev/null 2>&1
check "old password refused after change" test $? -ne 0
write_config second "$WORK/cache4"
"$PAILFS" fsck -c "$WORK/cfg.toml" > "$WORK/fsck.out" 2>&1
check "fsck with the new password is clean" test $? -eq 0
check "fsck says clean" grep -q "clean" "$WORK/fsck.out"

check "fsck checks the bucket" grep -q "fsck: bucket: CURRENT of epoch" "$WORK/fsck.out"
check "fsck reads the database files back" grep -Eq "fsck: bucket: [1-9][0-9]* database files" "$WORK/fsck.out"

# A bucket whose CURRENT is gone: fsck says so, run refuses, nothing is deleted.
mkdir -p "$WORK/saved"
# (file:// keeps key "db/<epoch>/CURRENT" as db.d/<epoch>.d/CURRENT.o)
for f in "$WORK"/bucket/db.d/*.d/CURRENT.o; do mv "$f" "$WORK/saved/$(basename "$(dirname "$f")")"; done
check "the bucket had a CURRENT" test -n "$(ls "$WORK/saved")"
objects_before=$(find "$WORK/bucket/db.d" -type f | wc -l)
write_config second "$WORK/cache5"
"$PAILFS" fsck -c "$WORK/cfg.toml" > "$WORK/fsck-damaged.out" 2>&1
check "fsck fails on a bucket without CURRENT" test $? -ne 0
check "fsck names the missing CURRENT" grep -q "but no CURRENT" "$WORK/fsck-damaged.out"
timeout 60 "$PAILFS" run -c "$WORK/cfg.toml" 2>"$WORK/damaged-run.log"
check "run refuses a bucket without CURRENT" test $? -ne 0
check "run says why" grep -q "no CURRENT" "$WORK/damaged-run.log"
objects_after=$(find "$WORK/bucket/db.d" -type f | wc -l)
check "nothing was deleted" test "$objects_after" -ge "$objects_before"
for f in "$WORK"/saved/*; do mv "$f" "$WORK/bucket/db.d/$(basename "$f")/CURRENT.o"; done
write_config second "$WORK/cache6"
"$PAILFS" fsck -c "$WORK/cfg.toml" > "$WORK/fsck-restored.out" 2>&1
check "fsck is clean again once CURRENT is restored" test $? -eq 0

# A password written out in a world-readable config: a warning at start, and
# a config error never repeats the password.
sed 's/\${PAIL_CLI_PW}/Lit3ral-pw/' "$WORK/cfg.toml" > "$WORK/literal.toml"
chmod 644 "$WORK/literal.toml"
"$PAILFS" run -c "$WORK/literal.toml" 2>"$WORK/literal.log" &
pid=$!
sleep 2
kill -TERM $pid 2>/dev/null
wait $pid
check "exposed literal secret is warned about" grep -q "readable by other users" "$WORK/literal.log"
check "the warning does not print it" bash -c "! grep -q 'Lit3ral-pw' '$WORK/literal.log'"
sed 's/\${PAIL_CLI_PW}/Br0ken-\${pw/' "$WORK/cfg.toml" > "$WORK/broken.toml"
"$PAILFS" run -c "$WORK/broken.toml" 2>"$WORK/broken.log"
check "broken config is refused" test $? -ne 0
check "its error does not echo the password" bash -c "! grep -q 'Br0ken' '$WORK/broken.log'"

unset PAIL_CLI_PW
"$PAILFS" run -c "$WORK/cfg.toml" 2>"$WORK/unset.log"
check "unset variable is refused" test $? -ne 0
check "unset variable is named" grep -q "PAIL_CLI_PW" "$WORK/unset.log"

# The S3 endpoint goes away while the server runs (a loopback forwarder to
# the test RGW is killed: connections are refused): SIGTERM still ends the
# server in bounded time, and the bucket opens once the endpoint is back.
OBJSTORES_ENV=${OBJSTORES_ENV:-/tmp/pailfs-objstores/env}
if [ -z "${S3_ENDPOINT:-}" ] && [ -r "$OBJSTORES_ENV" ]; then source "$OBJSTORES_ENV"; fi
# An env file left by stores that have since stopped names an endpoint
# nobody answers: that is "no object stores", not an outage to test.
if [ -n "${S3_ENDPOINT:-}" ] && ! curl -s -o /dev/null --max-time 5 "$S3_ENDPOINT"; then
  if [ "${PAIL_REQUIRE_OBJSTORES:-0}" = 1 ]; then echo "FAIL: no RGW at $S3_ENDPOINT"; exit 1; fi
  S3_ENDPOINT=""
fi
if [ -n "${S3_ENDPOINT:-}" ]; then
  s3_port=${S3_ENDPOINT##*:}
  s3_prefix="cli-outage-$RANDOM$RANDOM"
  start_proxy() {
    rm -f "$WORK/proxy.port"
    python3 "$(dirname "$0")/tcp_proxy.py" "$s3_port" > "$WORK/proxy.port" &
    proxy=$!
    for _ in $(seq 50); do [ -s "$WORK/proxy.port" ] && break; sleep 0.1; done
    proxy_port=$(cat "$WORK/proxy.port")
  }
  write_s3_config() {  # write_s3_config CACHE_DIR
    cat > "$WORK/s3.toml" <<EOT
[storage]
url = "s3://pail-test/$s3_prefix"
encryption_password = "\${PAIL_CLI_PW}"
[aws]
access_key_id = "\${S3_ACCESS_KEY}"
secret_access_key = "\${S3_SECRET_KEY}"
region = "${S3_REGION:-us-east-1}"
endpoint = "http://127.0.0.1:$proxy_port"
allow_http = true
[cache]
dir = "$1"
[servers.nfs]
addresses = ["127.0.0.1:0"]
EOT
  }
  export PAIL_CLI_PW=outage S3_ACCESS_KEY S3_SECRET_KEY
  start_proxy
  write_s3_config "$WORK/cache-s3a"
  "$PAILFS" run -c "$WORK/s3.toml" 2>"$WORK/outage.log" &
  pid=$!
  sleep 3
  check "server on S3 is running" kill -0 $pid
  kill $proxy; wait $proxy 2>/dev/null
  started=$SECONDS
  kill -TERM $pid
  ( sleep 150; kill -KILL $pid 2>/dev/null ) &
  watchdog=$!
  wait $pid
  code=$?
  kill $watchdog 2>/dev/null
  took=$((SECONDS - started))
  echo "shutdown with the S3 endpoint gone: exit $code after ${took}s"
  check "shutdown with the endpoint gone ends in bounded time" test "$code" -ne 137 -a "$took" -lt 150
  check "shutdown with the endpoint gone says what failed" grep -Eq "shut|flush|bucket" "$WORK/outage.log"
  start_proxy
  write_s3_config "$WORK/cache-s3b"
  timeout 120 "$PAILFS" fsck -c "$WORK/s3.toml" > "$WORK/outage-fsck.out" 2>&1
  code=$?
  [ "$code" -eq 0 ] || tail -n 5 "$WORK/outage.log" "$WORK/outage-fsck.out"
  check "the bucket opens clean once the endpoint is back" test "$code" -eq 0
  kill $proxy; wait $proxy 2>/dev/null
else
  echo "skipped: S3 outage at shutdown (no S3 endpoint answers)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
