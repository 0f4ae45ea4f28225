#!/usr/bin/env bash
# Installs everything, builds pailfs and serves a filesystem whose bucket is
# a local directory (./pailfs-data/bucket), over NFSv3 on 127.0.0.1:2049,
# 9P2000.L on 127.0.0.1:5564 and a FUSE mount at ./pailfs-data/mnt. Ctrl-C stops it after a final flush.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target pailfs

DATA=$(pwd)/pailfs-data
mkdir -p "$DATA/mnt"
CONFIG=$DATA/pailfs.toml
if [ ! -f "$CONFIG" ]; then
  PASSWORD=${PAILFS_PASSWORD:-$(head -c 18 /dev/urandom | base64)}
  echo "$PASSWORD" > "$DATA/password"
  chmod 600 "$DATA/password"
  # The config holds the password: readable by this user only.
  (umask 077; cat > "$CONFIG") <<EOT
[storage]
url = "file://$DATA/bucket"
encryption_password = "$PASSWORD"

[cache]
dir = "$DATA/cache"
disk_size_gb = 2.0
memory_size_gb = 0.25

[filesystem]
compression = "zstd-3"
flush_interval_ms = 1000

[servers.nfs]
addresses = ["127.0.0.1:2049"]
commit = "async"

[servers.ninep]
addresses = ["127.0.0.1:5564"]

[servers.fuse]
mountpoint = "$DATA/mnt"
EOT
  echo "wrote $CONFIG (the password is in $DATA/password)"
fi
chmod 600 "$CONFIG"  # also an older quickstart's config
echo "serving: NFS at 127.0.0.1:2049 (export /), 9P at 127.0.0.1:5564, FUSE at $DATA/mnt; Ctrl-C stops"
exec build/pailfs run -c "$CONFIG"
