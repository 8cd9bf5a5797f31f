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
# "ready" written last. An existing ready guest is reused. Next to vmlinuz it
# keeps vmlinux, the uncompressed kernel taken out of the bzImage once (boot
# protocol 2.08+ payload fields; xz, gzip or zstd), kept only when it is an ELF
# with a PVH entry point (Xen note XEN_ELFNOTE_PHYS32_ENTRY); vmlinux.key is
# the checksum of the vmlinuz it came from (a changed vmlinuz is extracted
# again), vmlinux.none the checksum of a vmlinuz it could not be had from.
# The caller boots vmlinux when it is there, else vmlinuz. The kernel package
# name is resolved with apt-cache only when the package lists change
# (CACHE_DIR/kernel-pkg: a checksum of the lists' and dpkg status's listing,
# then the name). Exit 77 when the kernel package or a needed tool cannot be
# had (the caller reports a skip).
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

# Checksum of the listing (names, sizes, mtimes) of what apt-cache's answer
# depends on: the package lists, the sources, the pins, dpkg's status.
apt_key() {
	# shellcheck disable=SC2012 # a listing to checksum, not names to parse
	ls -l --full-time /var/lib/apt/lists/ /etc/apt/sources.list /etc/apt/sources.list.d/ \
		/etc/apt/preferences /etc/apt/preferences.d/ /var/lib/dpkg/status 2>/dev/null |
		cksum | cut -d' ' -f1-2
}

# Checksum of file $1 (contents and size).
file_key() {
	cksum <"$1" | cut -d' ' -f1-2
}

# Writes $2 to file $1 through a temporary file and a rename.
put() {
	_t=$(mktemp "$1.XXXXXX") || return 1
	if printf '%s\n' "$2" >"$_t" && chmod 644 "$_t" && mv -f "$_t" "$1"; then
		return 0
	fi
	rm -f "$_t"
	return 1
}

# Extracts the uncompressed kernel from bzImage $1 into $2 when it is an ELF
# with a PVH entry point (what QEMU boots directly); fails otherwise.
extract_vmlinux() {
	_in=$1
	_out=$2
	[ "$(LC_ALL=C od -An -c -j 514 -N 4 "$_in" | tr -d ' ')" = HdrS ] || return 1
	_proto=$(od -An -tu2 -j 518 -N 2 "$_in" | tr -d ' ')
	[ "${_proto:-0}" -ge 520 ] || return 1 # 0x0208: payload_offset/length
	_ss=$(od -An -tu1 -j 497 -N 1 "$_in" | tr -d ' ')
	[ "${_ss:-0}" -eq 0 ] && _ss=4
	_poff=$(od -An -tu4 -j 584 -N 4 "$_in" | tr -d ' ')
	_plen=$(od -An -tu4 -j 588 -N 4 "$_in" | tr -d ' ')
	[ "${_plen:-0}" -gt 4 ] || return 1
	_start=$(((_ss + 1) * 512 + _poff))
	# The payload ends with the uncompressed size (4 bytes, little endian).
	_size=$(od -An -tu4 -j $((_start + _plen - 4)) -N 4 "$_in" | tr -d ' ')
	case $(od -An -tx1 -j "$_start" -N 4 "$_in" | tr -d ' ') in
	fd377a58) _dec="xz -dc" ;;
	1f8b*) _dec="gzip -dc" ;;
	28b52ffd) _dec="zstd -dcq" ;;
	*) return 1 ;;
	esac
	command -v "${_dec%% *}" >/dev/null 2>&1 || return 1
	command -v readelf >/dev/null 2>&1 || return 1
	_tmp=$(mktemp "$_out.XXXXXX") || return 1
	if tail -c +$((_start + 1)) "$_in" | head -c $((_plen - 4)) | $_dec >"$_tmp" 2>/dev/null &&
		[ "$(stat -c %s "$_tmp")" = "$_size" ] &&
		[ "$(od -An -tx1 -N 4 "$_tmp" | tr -d ' ')" = 7f454c46 ] &&
		LC_ALL=C readelf -n "$_tmp" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; then
		chmod 644 "$_tmp" && mv -f "$_tmp" "$_out"
		return
	fi
	rm -f "$_tmp"
	return 1
}

# Keeps guest $1's vmlinux in step with its vmlinuz (see the top of the file).
ensure_vmlinux() {
	_g=$1
	_k=$(file_key "$_g/vmlinuz") || return 0
	if [ -f "$_g/vmlinux" ] && [ "$(cat "$_g/vmlinux.key" 2>/dev/null)" = "$_k" ]; then
		return 0
	fi
	[ "$(cat "$_g/vmlinux.none" 2>/dev/null)" = "$_k" ] && return 0
	rm -f "$_g/vmlinux" "$_g/vmlinux.key" "$_g/vmlinux.none"
	if extract_vmlinux "$_g/vmlinuz" "$_g/vmlinux"; then
		put "$_g/vmlinux.key" "$_k" || rm -f "$_g/vmlinux"
	else
		echo "mkguest: no PVH kernel in $_g/vmlinuz; the bzImage is booted" >&2
		put "$_g/vmlinux.none" "$_k" || true
	fi
}

# Prints guest $1 as the answer, its uncompressed kernel made first.
done_guest() {
	ensure_vmlinux "$1"
	echo "$1"
	exit 0
}

# The kernel package the metapackage depends on (cached while the package
# lists stay the same); falls back to a cached guest.
pkgcache=$cache/kernel-pkg
key=$(apt_key)
pkg=""
if [ "$(sed -n 1p "$pkgcache" 2>/dev/null)" = "$key" ]; then
	pkg=$(sed -n 2p "$pkgcache")
fi
if [ -z "$pkg" ]; then
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1)
	[ -n "$pkg" ] && { put "$pkgcache" "$key
$pkg" || true; }
fi
if [ -z "$pkg" ]; then
	last=$(ls -d "$cache"/guest-*/ready 2>/dev/null | tail -n1 || true)
	[ -n "$last" ] && done_guest "$(dirname "$last")"
	skip "cannot resolve linux-image-amd64 (run apt-get update)"
fi
version=${pkg#linux-image-}
guest=$cache/guest-$version
[ -f "$guest/ready" ] && done_guest "$guest"

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
done_guest "$guest"
