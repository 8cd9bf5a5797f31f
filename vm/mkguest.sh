#!/bin/sh
# SPDX-License-Identifier: MIT
# mkguest.sh - assembles the VM lab's guest into a cache: a kernel, the subset
# of its modules the lab needs (SCSI, sd, sg, LIO with target_core_user,
# tcm_loop and the iSCSI target, iscsi_tcp, ext4, dm-multipath, the device
# handlers, scsi_debug, virtio + 9p + overlay for the root share) with a depmod'ed tree, and a busybox initramfs
# (cpio, newc) whose /init is vm/init.
#
#   vm/mkguest.sh CACHE_DIR                     Debian 12's stock kernel
#   vm/mkguest.sh CACHE_DIR debian:SUITE        linux-image-amd64 of SUITE
#                                               (bookworm, trixie, sid)
#   vm/mkguest.sh CACHE_DIR IMAGE [MODULE_DIR]  any x86-64 kernel image
#                                               (bzImage or vmlinux) and its
#                                               module tree (a build tree or
#                                               an installed /lib/modules/VER)
#   vm/mkguest.sh CACHE_DIR --debs debian:SUITE  only fetches SUITE's kernel
#                                               packages; prints their folder
#
# It prints the guest directory on its last line. The stock kernel is the
# linux-image-VERSION package that linux-image-amd64 depends on in the host's
# apt state. A suite's packages come from the host's own Debian mirror (the
# URI of its bookworm entry in /etc/apt/sources.list or sources.list.d/
# *.sources, the suite swapped) through apt state kept in CACHE_DIR/
# debian-SUITE (sources.list, lists/, cache/; the host's sources and lists
# are never touched; lists older than a day are refreshed); the downloaded
# .debs stay in CACHE_DIR/debian-SUITE/debs (the stock kernel's in
# CACHE_DIR/debs). Modules may be compressed (.ko.xz, .ko.zst, .ko.gz, as
# trixie and sid ship them): the guest gets them decompressed (busybox insmod
# loads plain .ko only).
#
# Before assembling, the kernel is checked for what the lab needs: 9p, virtio,
# overlayfs, configfs, sd, sg, the iSCSI initiator, LIO, TCMU, tcm_loop, built
# in or as modules. The kernel's config is read (boot/config-VER beside the
# image, MODULE_DIR/.config, MODULE_DIR/config, MODULE_DIR/build/.config,
# /boot/config-VER) and a "=m" needs its module in the tree; without a config,
# modules.builtin and the module files decide. What is missing is listed and
# the script exits 2.
#
# The guest directory (CACHE_DIR/guest-VERSION; guest-user-VERSION-KEY for an
# image of the user's, KEY a checksum of the image's and the tree's listing)
# holds vmlinuz, initrd.img, lib/modules/ (the tree to bind on /lib/modules in
# the guest) and a file "ready" written last. An existing ready guest is
# reused. Next to vmlinuz it keeps vmlinux, the uncompressed kernel taken out
# of the bzImage once (boot protocol 2.08+ payload fields; xz, gzip or zstd),
# kept only when it is an ELF with a PVH entry point (Xen note
# XEN_ELFNOTE_PHYS32_ENTRY); vmlinux.key is the checksum of the vmlinuz it
# came from (a changed vmlinuz is extracted again), vmlinux.none the checksum
# of a vmlinuz it could not be had from. An IMAGE that is itself a PVH vmlinux
# becomes vmlinux (there is then no vmlinuz). The caller boots vmlinux when
# it is there, else vmlinuz. The stock kernel package name is resolved with
# apt-cache only when the package lists change (CACHE_DIR/kernel-pkg: a
# checksum of the lists' and dpkg status's listing, then the name). Exit 77
# when the kernel package or a needed tool cannot be had (the caller reports a
# skip), 2 when the kernel lacks what the lab needs or an IMAGE is unusable.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${1:?usage: mkguest.sh CACHE_DIR [debian:SUITE | IMAGE [MODULE_DIR]]}
kspec=${2:-}
kmods=${3:-}
debs_only=0
if [ "$kspec" = --debs ]; then
	debs_only=1
	kspec=$kmods
	kmods=""
	case $kspec in debian:*) ;; *) refuse "--debs takes debian:SUITE" ;; esac
fi
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# Modules the initramfs loads to reach the root share, and the guest's set.
boot_mods="virtio_pci 9pnet_virtio 9p overlay"
lab_mods="$boot_mods configfs scsi_mod sd_mod sg loop uio target_core_mod target_core_user
 tcm_loop iscsi_target_mod target_core_file target_core_iblock iscsi_tcp libiscsi
 scsi_transport_iscsi ext4 crc32c_generic crc32c-intel crct10dif_generic crct10dif-pclmul
 crc64_rocksoft_generic t10-pi dm_multipath dm_mod scsi_dh_alua scsi_dh_emc scsi_dh_rdac scsi_dh_hp_sw
 dm_service_time dm_round_robin dm_queue_length scsi_debug"
# A guest assembled with another module set is assembled again.
modset=$(echo $lab_mods | cksum | cut -d' ' -f1)

# Is guest $1 assembled and ready, with this module set?
is_ready() {
	[ -f "$1/ready" ] && [ "$(cat "$1/modset" 2>/dev/null)" = "$modset" ]
}

# Reports a missing prerequisite and exits 77.
skip() {
	echo "mkguest: $*" >&2
	exit 77
}

# Reports an unusable kernel and exits 2.
refuse() {
	echo "mkguest: $*" >&2
	exit 2
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

# What the lab needs of a kernel: "what CONFIG_SYMBOL module" per line.
needs="9p-transport NET_9P_VIRTIO 9pnet_virtio
9p-filesystem 9P_FS 9p
virtio-pci VIRTIO_PCI virtio_pci
overlayfs OVERLAY_FS overlay
configfs CONFIGFS_FS configfs
scsi-disk BLK_DEV_SD sd_mod
scsi-generic CHR_DEV_SG sg
iscsi-initiator ISCSI_TCP iscsi_tcp
lio TARGET_CORE target_core_mod
tcmu TCM_USER2 target_core_user
tcm_loop LOOPBACK_TARGET tcm_loop"

# Is module $2 (any spelling, - or _) built into the tree at $1 or a file in it?
have_module() {
	_re="/$(printf '%s' "$2" | sed 's/[-_]/[-_]/g')\.ko"
	grep -q "$_re\$" "$1/modules.builtin" 2>/dev/null && return 0
	grep -q "$_re\(\.[a-z]*\)\{0,1\}:" "$1/modules.dep" 2>/dev/null
}

# Checks the kernel (config file $1, may be empty; depmod'ed staging tree $2)
# for what the lab needs; lists what is missing and exits 2.
check_kernel() {
	_missing=""
	while read -r _what _sym _mod; do
		if [ -n "$1" ]; then
			_v=$(sed -n "s/^CONFIG_$_sym=//p" "$1" | head -n1)
			case $_v in
			y) continue ;;
			m)
				have_module "$2" "$_mod" && continue
				_missing="$_missing
  $_what (CONFIG_$_sym=m, but no $_mod module in the tree)"
				;;
			*) _missing="$_missing
  $_what (CONFIG_$_sym is not set)" ;;
			esac
		else
			have_module "$2" "$_mod" && continue
			_missing="$_missing
  $_what (module $_mod: neither built in nor in the tree)"
		fi
	done <<NEEDS
$needs
NEEDS
	[ -z "$_missing" ] && return 0
	echo "mkguest: the kernel lacks what the VM lab needs (${1:-no config found; judged by modules.builtin and the module files}):$_missing" >&2
	exit 2
}

# Prints the first of files $2... that is a kernel config (kernel version $1).
find_config() {
	shift
	for _c in "$@"; do
		[ -f "$_c" ] && grep -q '^CONFIG_' "$_c" && { echo "$_c"; return 0; }
	done
	return 0
}

# Stages module tree $2 of kernel version $1 into $work/stage (symlinks, then
# depmod), so that closure() and check_kernel() read one layout; sets $kmod.
stage_modules() {
	_s=$work/stage/lib/modules/$1
	rm -rf "$work/stage"
	mkdir -p "$_s/kernel"
	if [ -n "$2" ]; then
		_abs=$(cd "$2" && pwd)
		# One symlink per file, at its path under the tree (depmod skips
		# directories named build or source: the tree's own paths only).
		cp -rs "$_abs/." "$_s/kernel/" 2>/dev/null || true
		rm -f "$_s/kernel/build" "$_s/kernel/source" "$_s"/kernel/modules.*
		for _f in modules.builtin modules.builtin.modinfo; do
			[ -f "$_abs/$_f" ] && cp "$_abs/$_f" "$_s/"
		done
	fi
	depmod -b "$work/stage" "$1" 2>/dev/null || refuse "depmod of the module tree failed"
	kmod=$_s
}

# The release an image $1 announces (the bzImage header's kernel_version string).
image_release() {
	[ "$(LC_ALL=C od -An -c -j 514 -N 4 "$1" | tr -d ' ')" = HdrS ] || return 0
	_kv=$(od -An -tu2 -j 526 -N 2 "$1" | tr -d ' ')
	[ "${_kv:-0}" -gt 0 ] || return 0
	tail -c +$((_kv + 512 + 1)) "$1" | head -c 200 | tr '\0' '\n' | head -n1 | cut -d' ' -f1
}

# Is file $1 an ELF kernel with a PVH entry point?
is_pvh_elf() {
	[ "$(od -An -tx1 -N 4 "$1" | tr -d ' ')" = 7f454c46 ] &&
		LC_ALL=C readelf -n "$1" 2>/dev/null | grep -q 'Xen.*(0x00000012)'
}

# Options that point apt at a suite's private state in $apt.
apt_opts() {
	echo "-o Dir::Etc::SourceList=$apt/sources.list -o Dir::Etc::SourceParts=/dev/null
 -o Dir::State::Lists=$apt/lists -o Dir::Cache=$apt/cache -o Dir::State::status=/dev/null"
}

# The URI of the host's bookworm entry (deb822 .sources first, then one-line lists).
host_debian_uri() {
	for _f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$_f" ] || continue
		awk '
		function flush() { if (ok && uri != "") { print uri; found = 1; exit } ok = 0; uri = "" }
		/^[ \t]*$/ { flush(); next }
		/^#/ { next }
		tolower($1) == "uris:" { uri = $2 }
		tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == "bookworm") ok = 1 }
		END { if (!found) flush() }' "$_f"
	done | head -n1 | grep . && return 0
	for _f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$_f" ] || continue
		sed -e 's/\[[^]]*\]//' "$_f" | awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }'
	done | head -n1 | grep .
}

# Copies module file $1 to $2, decompressed.
copy_module() {
	case $1 in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -dcq "$1" >"$2" ;;
	*.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# Prints the modules.dep entries (relative paths) of the closure of the named
# modules, dependencies before dependents.
closure() {
	awk -v want="$*" '
	function norm(p,  b) { b = p; sub(/.*\//, "", b); sub(/\.ko(\.[a-z]+)?$/, "", b); gsub(/-/, "_", b); return b }
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

# Assembles the guest directory $guest for kernel version $1 from image $2 and
# the staged module tree ($kmod).
assemble() {
	_version=$1
	_image=$2
	rm -rf "$work/guest"
	gmod=$work/guest/lib/modules/$_version
	mkdir -p "$gmod"
	if is_pvh_elf "$_image"; then
		cp "$_image" "$work/guest/vmlinux"
	else
		cp "$_image" "$work/guest/vmlinuz"
	fi
	for f in modules.builtin modules.builtin.modinfo; do
		[ -f "$kmod/$f" ] && cp "$kmod/$f" "$gmod/"
	done
	closure $lab_mods >"$work/lab.list"
	while read -r rel; do
		mkdir -p "$gmod/$(dirname "$rel")"
		copy_module "$kmod/$rel" "$gmod/${rel%.ko*}.ko" || refuse "cannot decompress $rel"
	done <"$work/lab.list"
	depmod -b "$work/guest" "$_version" 2>/dev/null

	# The initramfs: busybox, the boot modules in load order, /init.
	ird=$work/initramfs
	rm -rf "$ird"
	mkdir -p "$ird/bin" "$ird/sbin" "$ird/proc" "$ird/sys" "$ird/dev" "$ird/newroot" \
		"$ird/lower" "$ird/rw" "$ird/mods"
	cp /bin/busybox "$ird/bin/busybox"
	for app in sh mount umount mkdir insmod switch_root poweroff echo cat sleep ls mknod; do
		ln -sf busybox "$ird/bin/$app"
	done
	closure $boot_mods >"$work/boot.list"
	: >"$ird/mods/order"
	while read -r rel; do
		b=$(basename "${rel%.ko*}.ko")
		copy_module "$kmod/$rel" "$ird/mods/$b" || refuse "cannot decompress $rel"
		echo "$b" >>"$ird/mods/order"
	done <"$work/boot.list"
	cp "$here/init" "$ird/init"
	chmod 755 "$ird/init"
	(cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$work/guest/initrd.img"

	echo "$_version" >"$work/guest/version"
	rm -rf "$guest"
	mv "$work/guest" "$guest"
	echo "$modset" >"$guest/modset"
	date -u +%FT%TZ >"$guest/ready"
}

# Finds, in unpacked Debian kernel package(s) $1 of version $2, the image
# ($deb_image), the module tree ($deb_mods) and the config ($deb_config).
debian_parts() {
	deb_image=""
	for _i in "$1/boot/vmlinuz-$2" "$1/usr/lib/modules/$2/vmlinuz" "$1/lib/modules/$2/vmlinuz"; do
		[ -f "$_i" ] && { deb_image=$_i; break; }
	done
	deb_mods=""
	for _m in "$1/lib/modules/$2" "$1/usr/lib/modules/$2"; do
		[ -d "$_m" ] && { deb_mods=$_m; break; }
	done
	[ -n "$deb_image" ] || skip "no kernel image in the packages of $2"
	[ -n "$deb_mods" ] || skip "no module tree in the packages of $2"
	deb_config=$(find_config "$2" "$1/boot/config-$2" "$deb_mods/config")
}

# Makes the scratch directory $work (removed on exit).
new_work() {
	work=$(mktemp -d "$cache/.build.XXXXXX")
	trap 'rm -rf "$work"' EXIT
}

# --- an image of the user's --------------------------------------------------
case $kspec in
"" | debian:*) ;;
*)
	[ -f "$kspec" ] || refuse "$kspec: no such kernel image"
	image=$(cd "$(dirname "$kspec")" && pwd)/$(basename "$kspec")
	if [ -n "$kmods" ]; then
		[ -d "$kmods" ] || refuse "$kmods: no such module directory"
		kmods=$(cd "$kmods" && pwd)
	fi
	version=""
	[ -n "$kmods" ] && [ -f "$kmods/include/config/kernel.release" ] &&
		version=$(cat "$kmods/include/config/kernel.release")
	[ -z "$version" ] && [ -n "$kmods" ] && [ ! -f "$kmods/Makefile" ] && version=$(basename "$kmods")
	[ -z "$version" ] && version=$(image_release "$image")
	if [ "$(LC_ALL=C od -An -c -j 514 -N 4 "$image" | tr -d ' ')" != HdrS ] && ! is_pvh_elf "$image"; then
		refuse "$kspec: neither a bzImage nor a vmlinux with a PVH entry point"
	fi
	[ -n "$version" ] || refuse "$kspec: cannot tell the kernel's release; give --modules DIR"
	# shellcheck disable=SC2012 # a listing to checksum
	ukey=$({
		ls -lL --full-time "$image"
		[ -n "$kmods" ] && ls -lL --full-time "$kmods" "$kmods"/modules.* 2>/dev/null
	} | cksum | cut -d' ' -f1)
	guest=$cache/guest-user-$version-$ukey
	is_ready "$guest" && done_guest "$guest"
	new_work
	stage_modules "$version" "$kmods"
	config=$(find_config "$version" "$(dirname "$image")/config-$version" \
		${kmods:+"$kmods/.config" "$kmods/config" "$kmods/build/.config"} "/boot/config-$version")
	check_kernel "$config" "$kmod"
	echo "mkguest: assembling guest for kernel $version (your image) in $guest" >&2
	assemble "$version" "$image"
	done_guest "$guest"
	;;
esac

# --- a Debian suite ------------------------------------------------------------
case $kspec in
debian:bookworm | debian:trixie | debian:sid)
	suite=${kspec#debian:}
	apt=$cache/debian-$suite
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
	uri=$(host_debian_uri) || skip "no Debian bookworm entry in the host's apt sources to take the mirror from"
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -f "$keyring" ] || skip "missing $keyring (Debian package debian-archive-keyring)"
	want="deb [signed-by=$keyring] $uri $suite main"
	if [ "$(cat "$apt/sources.list" 2>/dev/null)" != "$want" ]; then
		put "$apt/sources.list" "$want"
		rm -f "$apt/updated"
	fi
	if [ -z "$(find "$apt/updated" -mmin -1440 2>/dev/null)" ]; then
		# shellcheck disable=SC2046
		if apt-get -q $(apt_opts) update >"$apt/update.log" 2>&1; then
			date -u +%FT%TZ >"$apt/updated"
		else
			echo "mkguest: apt-get update for $suite failed (see $apt/update.log)" >&2
		fi
	fi
	# The package, resolved again only when the suite's lists change.
	# shellcheck disable=SC2012 # a listing to checksum
	skey=$(ls -l --full-time "$apt/lists/" "$apt/sources.list" 2>/dev/null | cksum | cut -d' ' -f1-2)
	pkg=""
	[ "$(sed -n 1p "$apt/kernel-pkg" 2>/dev/null)" = "$skey" ] && pkg=$(sed -n 2p "$apt/kernel-pkg")
	if [ -z "$pkg" ]; then
		# shellcheck disable=SC2046
		pkg=$(apt-cache $(apt_opts) depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1)
		[ -n "$pkg" ] && { put "$apt/kernel-pkg" "$skey
$pkg" || true; }
	fi
	if [ -z "$pkg" ]; then
		last=$(cat "$apt/last-guest" 2>/dev/null || true)
		[ -n "$last" ] && is_ready "$last" && done_guest "$last"
		skip "linux-image-amd64 of $suite cannot be had from $uri"
	fi
	version=${pkg#linux-image-}
	guest=$cache/guest-$version
	if [ "$debs_only" = 1 ] || ! is_ready "$guest"; then
		# The image package and the packages of the same version it depends on
		# (sid: linux-binary-VER, linux-modules-VER, linux-base-VER).
		# shellcheck disable=SC2046
		pkgs="$pkg $(apt-cache $(apt_opts) depends "$pkg" 2>/dev/null |
			sed -n "s/^ *Depends: \(linux-[a-z]*-$version\)\$/\1/p" | tr '\n' ' ')"
		if [ "$(cat "$apt/debs/packages" 2>/dev/null)" != "$pkgs" ]; then
			# shellcheck disable=SC2046,SC2086
			(cd "$apt/debs" && rm -f ./*.deb packages &&
				apt-get -q $(apt_opts) download $pkgs >"$apt/download.log" 2>&1) ||
				skip "apt-get download $pkgs failed (see $apt/download.log)"
			put "$apt/debs/packages" "$pkgs"
		fi
		if [ "$debs_only" = 1 ]; then
			echo "$apt/debs"
			exit 0
		fi
		new_work
		echo "mkguest: assembling guest for kernel $version (Debian $suite) in $guest" >&2
		for d in "$apt"/debs/*.deb; do
			dpkg -x "$d" "$work/root" || skip "dpkg -x $d failed"
		done
		debian_parts "$work/root" "$version"
		stage_modules "$version" "$deb_mods"
		check_kernel "$deb_config" "$kmod"
		assemble "$version" "$deb_image"
	fi
	put "$apt/last-guest" "$guest" || true
	done_guest "$guest"
	;;
debian:*) refuse "$kspec: unknown suite (bookworm, trixie, sid)" ;;
esac

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
	last=$cache/guest-$(sed -n 2p "$pkgcache" 2>/dev/null | sed 's/^linux-image-//')
	is_ready "$last" && done_guest "$last"
	skip "cannot resolve linux-image-amd64 (run apt-get update)"
fi
version=${pkg#linux-image-}
guest=$cache/guest-$version
is_ready "$guest" && done_guest "$guest"

new_work
echo "mkguest: assembling guest for kernel $version in $guest" >&2
mkdir -p "$cache/debs"
(cd "$cache/debs" && rm -f ./*.deb && apt-get download "$pkg" >/dev/null 2>&1) ||
	skip "apt-get download $pkg failed"
dpkg -x "$cache/debs/$pkg"_*.deb "$work/root" || skip "dpkg -x failed"
debian_parts "$work/root" "$version"
stage_modules "$version" "$deb_mods"
check_kernel "$deb_config" "$kmod"
assemble "$version" "$deb_image"
done_guest "$guest"
