#!/bin/sh
# SPDX-License-Identifier: MIT
# import-lio-guest.sh - runs inside a VM-lab guest (a `shell` workload step
# on the lab's lio path): the kernel's own iSCSI target (LIO,
# iscsi_target_mod) serves a 32 MiB ramdisk LUN on the guest's loopback
# (127.0.0.1:3261) while tcpdump captures the traffic: the kernel's own
# iSCSI initiator (iscsid, iscsi_tcp) logs in with scsi_dh_alua loaded, as on
# a host with multipath-tools, and reads the disk; then libiscsi's
# iscsi-test-cu runs TESTS against it with two initiators:
#   import-lio-guest.sh TESTS
# Leaves in /fl-results/liocap (the results share): lio.pcap, the capture;
# kernel-view.txt, the disk as the kernel saw it (sysfs vendor, model, rev,
# dh_state, access_state); testcu.out, iscsi-test-cu's report;
# tcpdump.err; setup.log, what was done; page.rc, the exit status. Logs
# out and removes the target after. Exits 0 when the capture holds both,
# else 1.
# tests/vm/test-vm-import-lio.sh judges it.
set -u
tests=$1
W=/fl-results/liocap
CFS=/sys/kernel/config/target
IQN=iqn.2026-12.org.faultlun:lio-capture
rd=$CFS/core/rd_mcp_77/cap0
tpg=$CFS/iscsi/$IQN/tpgt_1
rm -rf "$W"
mkdir -p "$W" || exit 1
exec 3>"$W/setup.log"
say() { echo "$*" >&3; }
put() { printf '%s' "$2" >"$1" 2>>"$W/setup.log" || { say "cannot write $2 to $1"; return 1; }; }

teardown() {
	[ -d "$tpg" ] || return 0
	put "$tpg/enable" 0
	rm -f "$tpg/lun/lun_0/cap0"
	rmdir "$tpg/lun/lun_0" "$tpg/np/127.0.0.1:3261" "$tpg" "$CFS/iscsi/$IQN" 2>>"$W/setup.log"
	rmdir "$rd" 2>>"$W/setup.log"
}

setup() {
	modprobe iscsi_target_mod || { say "modprobe iscsi_target_mod failed"; return 1; }
	mkdir -p "$rd" || return 1
	put "$rd/control" "rd_pages=8192" || return 1
	put "$rd/enable" 1 || return 1
	# A unit serial, as targetcli sets one: without it LIO lists no VPD page.
	put "$rd/wwn/vpd_unit_serial" "a5e1f0c2-77d4-4b1e-9c3a-faultlun0001" || return 1
	mkdir -p "$tpg/lun/lun_0" || return 1
	ln -s "$rd" "$tpg/lun/lun_0/cap0" || return 1
	mkdir "$tpg/np/127.0.0.1:3261" || return 1
	# any initiator, no CHAP, read-write (LIO's demo mode)
	put "$tpg/attrib/generate_node_acls" 1 && put "$tpg/attrib/cache_dynamic_acls" 1 &&
		put "$tpg/attrib/demo_mode_write_protect" 0 && put "$tpg/attrib/authentication" 0 &&
		put "$tpg/enable" 1
}

if ! setup; then
	say "setup failed"
	teardown
	exit 1
fi
say "LIO target $IQN on 127.0.0.1:3261 (rd_mcp, 32 MiB)"
tcpdump -i lo -B 32768 -s 0 -U -w "$W/lio.pcap" tcp port 3261 2>"$W/tcpdump.err" &
td=$!
i=0
while ! grep -q "listening on" "$W/tcpdump.err" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 300 ] && { say "tcpdump did not start"; break; }
	sleep 0.1
done
# The kernel's initiator: its scan, the handler's REPORT TARGET PORT GROUPS, a read.
kernel_view() {
	modprobe iscsi_tcp && modprobe scsi_dh_alua || { say "modprobe iscsi_tcp scsi_dh_alua failed"; return 1; }
	echo "InitiatorName=iqn.2026-12.org.faultlun:lio-kernel" >/etc/iscsi/initiatorname.iscsi
	iscsid || { say "iscsid failed"; return 1; }
	sleep 0.3
	iscsiadm -m discovery -t sendtargets -p 127.0.0.1:3261 >>"$W/setup.log" 2>&1 &&
		iscsiadm -m node -T "$IQN" -p 127.0.0.1:3261 --login >>"$W/setup.log" 2>&1 ||
		{ say "iscsiadm login failed"; return 1; }
	i=0
	dev=""
	while [ -z "$dev" ]; do
		for s in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
			[ -e "$s" ] && dev=$s
		done
		i=$((i + 1))
		[ $i -gt 300 ] && { say "no disk after the login"; return 1; }
		[ -n "$dev" ] || sleep 0.1
	done
	d=${dev%/block/*}
	for f in vendor model rev dh_state access_state; do
		printf '%s=' $f
		cat "$d/$f"
	done >"$W/kernel-view.txt" 2>&1
	dd if="/dev/${dev##*/}" of=/dev/null bs=64k count=16 iflag=direct 2>>"$W/setup.log"
	say "kernel saw ${dev##*/}: $(tr '\n' ' ' <"$W/kernel-view.txt")"
}
kernel_view || say "the kernel's view failed"
iscsiadm -m node -T "$IQN" -p 127.0.0.1:3261 --logout >>"$W/setup.log" 2>&1
iscsi-test-cu -i iqn.2026-12.org.faultlun:lio-testcu-1 -I iqn.2026-12.org.faultlun:lio-testcu-2 \
	-t "$tests" "iscsi://127.0.0.1:3261/$IQN/0" >"$W/testcu.out" 2>&1
say "iscsi-test-cu exited $?"
sleep 1
kill "$td"
wait "$td"
teardown
# page.rc / page.out: what tests/lib/common.sh's fl_page_run reads
rc=1
grep -q "Suite: " "$W/testcu.out" && grep -q "^dh_state=" "$W/kernel-view.txt" &&
	[ -s "$W/lio.pcap" ] && rc=0
tail -3 "$W/testcu.out" >"$W/page.out"
echo "$rc" >"$W/page.rc"
exit "$rc"
