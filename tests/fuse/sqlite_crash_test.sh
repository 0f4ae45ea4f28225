#!/usr/bin/env bash
# A database on the mount keeps every committed transaction when the server
# is killed: sqlite3 (rollback journal, synchronous=EXTRA, so a commit
# fsyncs the journal, the database and the directory) commits one row at a
# time into a database of a few MiB, noting each committed row outside the
# mount; the server is SIGKILLed mid-run and restarted on an empty cache,
# and the database must pass its integrity check and hold every noted row.
# With the periodic flush an hour away only the fsyncs make anything
# durable; their few pages into a big file are committed inline (fs
# CommitInline) and still inline at the crash.
# Usage: sqlite_crash_test.sh PAILFS [ROUNDS]
PAILFS=$1
ROUNDS=${2:-3}
FLUSH_INTERVAL_MS=3600000
source "$(dirname "$0")/fuse_test_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is not installed"; exit 1; }

DB="$MNT/app.db"
NOTED="$WORK/committed"
BASE_ROWS=1000

# Commits rows from $1 on, one transaction each (plus an update of an older
# row), until a statement fails: the server is gone.
commit_rows() {
  local id=$1
  while sqlite3 "$DB" "pragma synchronous=extra;
      insert or replace into t(id, body) values($id, randomblob(1000 + $id % 6000));
      update t set body = randomblob(3000) where id = $((id % BASE_ROWS + 1));" 2>/dev/null; do
    echo "$id" >"$NOTED"
    id=$((id + 1))
  done
}

check_database() {
  local noted result
  noted=$(cat "$NOTED")
  result=$(sqlite3 "$DB" "pragma integrity_check;")
  [ "$result" = ok ] || { echo "FAIL: integrity check after round $1: $result"; exit 1; }
  result=$(sqlite3 "$DB" "select count(*) from t where id between 1 and $noted;")
  [ "$result" = "$noted" ] || { echo "FAIL: round $1: $result of rows 1..$noted left"; exit 1; }
  echo "round $1: all $noted committed rows there"
}

start_server
sqlite3 "$DB" "pragma page_size=4096; create table t(id integer primary key, body blob);
  with recursive n(i) as (select 1 union all select i + 1 from n where i < $BASE_ROWS)
  insert into t(id, body) select i, randomblob(3000) from n;"
echo "$BASE_ROWS" >"$NOTED"
for round in $(seq 1 "$ROUNDS"); do
  commit_rows $(($(cat "$NOTED") + 1)) &
  WRITER=$!
  sleep 3
  crash_server
  wait "$WRITER" || true
  start_server
  check_database "$round"
done
[ "$(cat "$NOTED")" -gt "$BASE_ROWS" ] || { echo "FAIL: no transaction committed"; exit 1; }
stop_server
run_fsck
echo "PASS: every committed transaction survived $ROUNDS kills"
