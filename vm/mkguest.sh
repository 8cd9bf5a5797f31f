#!/bin/sh
# SPDX-License-Identifier: MIT
# mkguest.sh - assembles the VM lab's guest from Debian packages into a cache:
# the stock kernel (linux-image-amd64 -> linux-image-VERSION), the subset of its
# modules the lab needs (SCSI, sd, sg, LIO with target_core_user, tcm_loop and
# the iSCSI target, iscsi_tcp, ext4, dm-multipath, virtio + 9p + overlay for
# the root share) with a depmod'ed tree, and a busybox initramfs (cpio, newc)
# whose /init is vm/init.
#
#   vm/mkguest.sh CACHE_DIR        prints the guest directory on its last line
#
# The guest directory CACHE_DIR/guest-VERSION holds vmlinuz, initrd.img,
# lib/modules/ (the tree to bind on /lib/modules in the guest) and a file
# "ready" written last. An existing ready guest is reused. Exit 77 when the
# kernel package or a needed tool cannot be had (the caller reports a skip).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${1:?usage: mkguest.sh CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# Modules the initramfs loads to reach the root share, and the guest's set.
boot_mods="virtio_pci 9pnet_virtio 9p overlay"
lab_mods="$boot_mods configfs scsi_mod sd_mod sg loop uio target_core_mod target_core_user
 tcm_loop iscsi_target_mod target_core_file target_core_iblock iscsi_tcp libiscsi
 scsi_transport_iscsi ext4 crc32c_generic crc32c-intel crct10dif_generic crct10dif-pclmul
 crc64_rocksoft_generic t10-pi dm_multipath dm_mod scsi_dh_alua scsi_dh_emc scsi_dh_rdac"

# Reports a missing prerequisite and exits 77.
skip() {
	echo "mkguest: $*" >&2
	exit 77
}

for tool in apt-get dpkg depmod cpio; do
	command -v "$tool" >/dev/null 2>&1 || skip "missing tool: $tool"
done
[ -x /bin/busybox ] || skip "missing /bin/busybox (Debian package busybox-static)"
file_bb=$(LC_ALL=C od -An -c -N 4 /bin/busybox | tr -d ' ')
[ "$file_bb" = "177ELF" ] || skip "/bin/busybox is not an ELF binary"

# The kernel package the metapackage depends on; falls back to a cached guest.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1)
if [ -z "$pkg" ]; then
	last=$(ls -d "$cache"/guest-*/ready 2>/dev/null | tail -n1 || true)
	[ -n "$last" ] && { dirname "$last"; exit 0; }
	skip "cannot resolve linux-image-amd64 (run apt-get update)"
fi
version=${pkg#linux-image-}
guest=$cache/guest-$version
if [ -f "$guest/ready" ]; then
	echo "$guest"
	exit 0
fi

work=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "mkguest: assembling guest for kernel $version in $guest" >&2
(cd "$work" && apt-get download "$pkg" >/dev/null 2>&1) ||
	skip "apt-get download $pkg failed"
dpkg -x "$work"/"$pkg"_*.deb "$work/root" || skip "dpkg -x failed"
kroot=$work/root
kmod=$kroot/lib/modules/$version
[ -f "$kroot/boot/vmlinuz-$version" ] || skip "no vmlinuz in $pkg"
depmod -b "$kroot" "$version"

# Prints the modules.dep entries (relative paths) of the closure of the named
# modules, dependencies before dependents.
closure() {
	awk -v want="$*" '
	function norm(p,  b) { b = p; sub(/.*\//, "", b); sub(/\.ko$/, "", b); gsub(/-/, "_", b); return b }
	function visit(m,  n, i, d) {
		if (m in seen) return
		seen[m] = 1
		if (!(m in path)) return
		n = split(deps[m], d, " ")
		for (i = n; i >= 1; i--) visit(norm(d[i]))
		print path[m]
	}
	{ p = $1; sub(/:$/, "", p); m = norm(p); path[m] = p; deps[m] = ""
	  for (i = 2; i <= NF; i++) deps[m] = deps[m] " " $i }
	END { n = split(want, w, /[ \t\n]+/)
	      for (i = 1; i <= n; i++) if (w[i] != "") { x = w[i]; gsub(/-/, "_", x); visit(x) } }
	' "$kmod/modules.dep"
}

rm -rf "$work/guest"
mkdir -p "$work/guest/lib/modules/$version"
gmod=$work/guest/lib/modules/$version
cp "$kroot/boot/vmlinuz-$version" "$work/guest/vmlinuz"
for f in modules.builtin modules.builtin.modinfo modules.order; do
	cp "$kmod/$f" "$gmod/"
done
closure $lab_mods >"$work/lab.list"
while read -r rel; do
	mkdir -p "$gmod/$(dirname "$rel")"
	cp "$kmod/$rel" "$gmod/$rel"
done <"$work/lab.list"
depmod -b "$work/guest" "$version"

# The initramfs: busybox, the boot modules in load order, /init.
ird=$work/initramfs
mkdir -p "$ird/bin" "$ird/sbin" "$ird/proc" "$ird/sys" "$ird/dev" "$ird/newroot" \
	"$ird/lower" "$ird/rw" "$ird/mods"
cp /bin/busybox "$ird/bin/busybox"
for app in sh mount umount mkdir insmod switch_root poweroff echo cat sleep ls mknod; do
	ln -sf busybox "$ird/bin/$app"
done
closure $boot_mods >"$work/boot.list"
: >"$ird/mods/order"
while read -r rel; do
	cp "$kmod/$rel" "$ird/mods/"
	basename "$rel" >>"$ird/mods/order"
done <"$work/boot.list"
cp "$here/init" "$ird/init"
chmod 755 "$ird/init"
(cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$work/guest/initrd.img"

echo "$version" >"$work/guest/version"
rm -rf "$guest"
mv "$work/guest" "$guest"
date -u +%FT%TZ >"$guest/ready"
echo "$guest"
