#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-own-kernel.sh - `faultlun vm --kernel IMAGE --modules DIR` boots a
# kernel of the user's: Debian 12's linux-image package (fetched through the
# lab's own apt state, vm/mkguest.sh --debs debian:bookworm) is unpacked with
# dpkg -x into a scratch folder, and SCENARIO runs on path iscsi with
# --kernel UNPACKED/boot/vmlinuz-VER --modules UNPACKED/lib/modules/VER.
# Asserts: the run passes, the guest was assembled from that image
# (guest-user-VER-*), the kernel the guest reports is VER. Then the same image
# with a config beside it that lacks tcm_loop (CONFIG_LOOPBACK_TARGET unset) is
# refused before anything boots: exit 2, the message names tcm_loop.
#   test-vm-own-kernel.sh FAULTLUN MKGUEST SCENARIO WORKDIR
# Exit 77 when qemu or the package cannot be had.
set -u
fl=$1
mkguest=$2
scenario=$3
work=$4

cache=$("$fl" vm --where | sed -n 's/^cache //p')
debs=$(sh "$mkguest" "$cache" --debs debian:bookworm | tail -n1)
rc=$?
[ "$rc" = 77 ] && { echo "SKIP: the bookworm kernel package cannot be had"; exit 77; }
[ -d "$debs" ] || { echo "FAIL: mkguest --debs printed no folder ($debs)"; exit 1; }
set -- "$debs"/linux-image-*.deb
[ -f "$1" ] || { echo "SKIP: no linux-image package in $debs"; exit 77; }

un=$work/unpacked
rm -rf "$un" "$work/run" "$work/refused"
mkdir -p "$un"
for d in "$debs"/*.deb; do
	dpkg -x "$d" "$un" || { echo "FAIL: dpkg -x $d"; exit 1; }
done
image=$(ls "$un"/boot/vmlinuz-* 2>/dev/null | head -n1)
[ -n "$image" ] || { echo "FAIL: no boot/vmlinuz-* in the package"; exit 1; }
ver=${image##*/vmlinuz-}
mods=$un/lib/modules/$ver
[ -d "$mods" ] || { echo "FAIL: no lib/modules/$ver in the package"; exit 1; }

"$fl" vm "$scenario" --path iscsi --quiet --timeout 420 --kernel "$image" --modules "$mods" \
	--out "$work/run" >"$work/run.log" 2>&1
rc=$?
cat "$work/run.log"
[ "$rc" = 77 ] && { echo "SKIP: no qemu"; exit 77; }
[ "$rc" = 0 ] || { echo "FAIL: the run on $image exited $rc"; exit 1; }
res=$(ls "$work"/run/*/result.json | head -n1)
grep -q "\"guest\": \"[^\"]*/guest-user-$ver-" "$res" ||
	{ echo "FAIL: $res was not booted from a guest made of $image"; exit 1; }
grep -q "\"kernel\": \"$ver\"" "$res" ||
	{ echo "FAIL: the guest did not report kernel $ver"; exit 1; }

# A kernel without tcm_loop is refused, with what is missing.
mkdir -p "$work/refused"
cp "$image" "$work/refused/"
sed 's/^CONFIG_LOOPBACK_TARGET=.*/# CONFIG_LOOPBACK_TARGET is not set/' "$un/boot/config-$ver" \
	>"$work/refused/config-$ver"
"$fl" vm "$scenario" --path iscsi --quiet --kernel "$work/refused/vmlinuz-$ver" --modules "$mods" \
	--out "$work/refused/run" >"$work/refused.log" 2>&1
rc=$?
cat "$work/refused.log"
[ "$rc" = 2 ] || { echo "FAIL: a kernel without tcm_loop: exit $rc, expected 2"; exit 1; }
grep -q "tcm_loop (CONFIG_LOOPBACK_TARGET is not set)" "$work/refused.log" ||
	{ echo "FAIL: the refusal does not name tcm_loop"; exit 1; }
[ ! -e "$work/refused/run/"*/console.log ] ||
	{ echo "FAIL: a guest booted for a refused kernel"; exit 1; }
echo "PASS: $ver booted from $image with $mods; a kernel without tcm_loop was refused"
