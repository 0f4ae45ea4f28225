#!/usr/bin/env bash
# `systemd-analyze verify` accepts packaging/systemd's units. They name
# /usr/local/bin/pailfs, which verify requires to exist: the copies checked
# here name the binary just built instead, and nothing else changes.
#   systemd_units_test.sh PAILFS UNIT_DIR
set -euo pipefail
PAILFS=$(readlink -f "$1")
UNITS=$2
command -v systemd-analyze >/dev/null || { echo "FAIL: systemd-analyze missing (package systemd)"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for unit in pailfs.service pailfs@.service; do
  sed "s|/usr/local/bin/pailfs|$PAILFS|g" "$UNITS/$unit" > "$WORK/$unit"
done
cp "$WORK/pailfs@.service" "$WORK/pailfs@example.service"
cd "$WORK"
out=$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no ./pailfs.service ./pailfs@example.service 2>&1) || {
  echo "$out"; echo "FAIL: systemd-analyze verify rejected the units"; exit 1; }
# verify reports some problems as messages without failing: none expected
# about our units.
if echo "$out" | grep -E "pailfs(@[a-z]*)?\.service" ; then
  echo "FAIL: systemd-analyze verify complained"; exit 1
fi
"$PAILFS" --version | grep -q "^pailfs [0-9]" || { echo "FAIL: --version"; exit 1; }
echo "PASS: systemd-analyze verify accepts pailfs.service and pailfs@.service"
