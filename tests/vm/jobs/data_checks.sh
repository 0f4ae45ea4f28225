# Guest-side data checks through the kernel client's page cache and
# write-back (sourced by ci.sh after the harness's lib.sh):
#   data_checks MOUNT_POINT
# A tree of real files is copied in, and one file gets unaligned overwrites,
# extensions and truncations mirrored on the guest's own disk; both must
# match the originals while cached, after the guest drops its caches, and
# after a remount (so the bytes come from the server, not the client).

# Byte offsets and lengths spread over a few MiB, from bash's seeded RANDOM.
random_below() { echo $(( (RANDOM * 32768 + RANDOM) % $1 )); }

compare_data() {
    local when=$1 d=$2 ref=$3 src=$4
    check "patched file matches ($when)" cmp "$d/patched" "$ref/patched"
    check "tree matches ($when)" diff -r "$src" "$d/tree"
}

data_checks() {
    local mnt=$1 d=$1/data.$$ ref=/tmp/data-ref.$$ src
    for src in /usr/lib/x86_64-linux-gnu/perl-base /usr/share/perl /usr/share/doc; do
        [ -d "$src" ] && break
    done
    mkdir -p "$d" "$ref"
    check "copy $src ($(du -sh "$src" | cut -f1), $(find "$src" | wc -l) entries)" \
        cp -a "$src" "$d/tree"
    RANDOM=7
    local i off len size
    for i in $(seq 48); do
        off=$(random_below $((3 << 20)))
        len=$(( $(random_below 200000) + 1 ))
        head -c "$len" /dev/urandom > "$ref/chunk"
        for f in "$d/patched" "$ref/patched"; do
            dd if="$ref/chunk" of="$f" bs="$len" count=1 seek="$off" oflag=seek_bytes \
                conv=notrunc status=none
        done
        if [ $((i % 12)) = 0 ]; then
            size=$(random_below $((2 << 20)))
            truncate -s "$size" "$d/patched" "$ref/patched"
        fi
    done
    compare_data cached "$d" "$ref" "$src"
    sync
    echo 3 > /proc/sys/vm/drop_caches
    compare_data "caches dropped" "$d" "$ref" "$src"
    check "umount" umount "$mnt"
    check "mount again" "mount_$MOUNT_FS" "$mnt"
    compare_data remounted "$d" "$ref" "$src"
    check "remove the data" rm -rf "$d"
    rm -rf "$ref"
}
