#!/usr/bin/env bash
# Runs pail_posix_suite against a fresh directory on the local file system,
# which proves the cases themselves right. Usage: run_local.sh SUITE root|unprivileged
set -euo pipefail
suite=$1
mode=$2
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the suite switches users, so it must run as root"
  exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/pail-posix-local.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# Unprivileged identities must be able to reach the case directories.
chmod 0755 "$dir"
case "$mode" in
  root) exec_args=() ;;
  unprivileged) exec_args=(--uid 65510 --gid 65510 --groups 65510,65503) ;;
  *) echo "run_local.sh: mode must be root or unprivileged" >&2; exit 2 ;;
esac
"$suite" --dir "$dir" "${exec_args[@]}"
