#!/bin/sh
# SPDX-License-Identifier: MIT
# getting-started-guest.sh - runs inside a VM-lab guest (a `shell` workload
# step) the shell block of docs/getting-started-host.md, as a host would:
#   getting-started-guest.sh PAGE_BLOCK FAULTLUN_DIR
# starts what a host's init runs (iscsid, systemd-udevd), runs the block with
# `set -e` (each command traced with the guest's uptime) in /fl-results/gs
# (the results share: serve.log and fio.json land there), and records the
# guest's iSCSI sessions, their disks and the /dev/disk/by-id/wwn-* links
# just before fio (state-fio.txt; every by-id and by-path link in
# links-fio.txt) and after the block (state-after.txt, with the number of
# node records). Exits with the block's status (page.rc).
# tests/vm/test-vm-getting-started.sh judges what it leaves.
set -u
page=$1
PATH=$2:$PATH
export PATH
W=/fl-results/gs
# shellcheck source=tests/vm/page-block.sh
. "$(dirname "$0")/page-block.sh"
rm -rf "$W"
mkdir -p "$W" /etc/iscsi /var/lib/iscsi /run/lock/iscsi || exit 1
cd "$W" || exit 1

# Prints one line per fact, untraced: "sessions N", "iscsi_disk sdX",
# "wwn_link wwn-0x... /dev/sdX".
snapshot() {
	case $- in *x*) _x=1 && set +x ;; *) _x= ;; esac
	n=0
	for s in /sys/class/iscsi_session/session*; do
		[ -e "$s" ] || continue
		n=$((n + 1))
		for b in "$s"/device/target*/*:*:*:*/block/*; do
			[ -e "$b" ] && echo "iscsi_disk ${b##*/}"
		done
	done
	echo "sessions $n"
	for l in /dev/disk/by-id/wwn-*; do
		[ -L "$l" ] && echo "wwn_link ${l##*/} $(readlink -f "$l")"
	done
	[ -z "$_x" ] || set -x
}

# What a host's init runs: the iSCSI daemon (with an initiator name) and udev.
[ -s /etc/iscsi/initiatorname.iscsi ] ||
	echo "InitiatorName=iqn.2026-12.org.faultlun:gs-initiator" >/etc/iscsi/initiatorname.iscsi
iscsid || { echo "iscsid did not start" >"$W/page.out"; exit 1; }
/lib/systemd/systemd-udevd --daemon 2>"$W/udevd.log" ||
	{ echo "systemd-udevd did not start" >"$W/page.out"; exit 1; }

# fio as the page runs it, after a look at the logged-in disk (called by the block).
# shellcheck disable=SC2317
fio() {
	snapshot >"$W/state-fio.txt"
	ls -l /dev/disk/by-id /dev/disk/by-path >"$W/links-fio.txt" 2>&1
	command fio "$@"
}

page_block_run "$page"
# udev removes the disk's links a moment after the logout, as on any host.
udevadm settle --timeout=15 2>/dev/null
{
	snapshot
	echo "nodes $(iscsiadm -m node 2>/dev/null | grep -c .)"
} >"$W/state-after.txt"
exit "$rc"
