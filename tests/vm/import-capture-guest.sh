#!/bin/sh
# SPDX-License-Identifier: MIT
# import-capture-guest.sh - runs inside a VM-lab guest (a `shell` workload
# step on the lab's lio path): a target no one here wrote serves a 32 MiB
# LUN on the guest's loopback (127.0.0.1:3261) while tcpdump captures the
# traffic: the kernel's own iSCSI initiator (iscsid, iscsi_tcp) logs in
# with scsi_dh_alua loaded, as on a host with multipath-tools, and reads
# the disk; then libiscsi's iscsi-test-cu runs TESTS against the LUN with
# two initiators:
#   import-capture-guest.sh lio|lio2|tgt TESTS
# lio: the kernel's own target (iscsi_target_mod), a ramdisk LUN 0 with a
# unit serial (as targetcli sets one); lio2: the same LUN through two
# portals, 127.0.0.1:3261 (tpgt_1, LIO's default ALUA group 0,
# active/optimized) and 127.0.0.2:3261 (tpgt_2, ALUA group 2 "ctlb",
# standby): the kernel logs in through both; tgt: tgtd, a file LUN 1 (LUN
# 0 is its controller).
# Leaves in /fl-results/cap (the results share): target.pcap, the capture;
# kernel-view.txt, the disks as the kernel saw them, one line each: the
# LUN, sysfs vendor, model, rev, wwid, dh_state and access_state; testcu.out,
# iscsi-test-cu's report; tcpdump.err; setup.log, what was done; page.rc,
# the exit status. Logs out and removes the target after. Exits 0 when the
# capture holds both, else 1. tests/vm/test-vm-import-capture.sh judges it.
set -u
kind=$1 tests=$2
W=/fl-results/cap
CFS=/sys/kernel/config/target
IQN=iqn.2026-12.org.faultlun:$kind-capture
rd=$CFS/core/rd_mcp_77/cap0
tpg=$CFS/iscsi/$IQN/tpgt_1
tpg2=$CFS/iscsi/$IQN/tpgt_2
lun=0
[ "$kind" = tgt ] && lun=1
rm -rf "$W"
mkdir -p "$W" || exit 1
exec 3>"$W/setup.log"
say() { echo "$*" >&3; }
put() { printf '%s' "$2" >"$1" 2>>"$W/setup.log" || { say "cannot write $2 to $1"; return 1; }; }

lio2_teardown() {
	if [ -d "$tpg2" ]; then
		put "$tpg2/enable" 0
		rm -f "$tpg2/lun/lun_0/cap0"
		rmdir "$tpg2/lun/lun_0" "$tpg2/np/127.0.0.2:3261" "$tpg2" 2>>"$W/setup.log"
	fi
	rmdir "$rd/alua/ctlb" 2>>"$W/setup.log"
	lio_teardown
}

lio_teardown() {
	[ -d "$tpg" ] || return 0
	put "$tpg/enable" 0
	rm -f "$tpg/lun/lun_0/cap0"
	rmdir "$tpg/lun/lun_0" "$tpg/np/127.0.0.1:3261" "$tpg" "$CFS/iscsi/$IQN" 2>>"$W/setup.log"
	rmdir "$rd" 2>>"$W/setup.log"
}

lio_setup() {
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

# A second portal in a TPG of its own whose LUN is in ALUA group 2, standby
# (a dual-controller array's passive side).
lio2_setup() {
	lio_setup || return 1
	mkdir -p "$rd/alua/ctlb" && put "$rd/alua/ctlb/tg_pt_gp_id" 2 || return 1
	mkdir -p "$tpg2/lun/lun_0" || return 1
	ln -s "$rd" "$tpg2/lun/lun_0/cap0" || return 1
	put "$tpg2/lun/lun_0/alua_tg_pt_gp" ctlb || return 1
	put "$rd/alua/ctlb/alua_access_state" 2 || return 1
	mkdir "$tpg2/np/127.0.0.2:3261" || return 1
	put "$tpg2/attrib/generate_node_acls" 1 && put "$tpg2/attrib/cache_dynamic_acls" 1 &&
		put "$tpg2/attrib/demo_mode_write_protect" 0 && put "$tpg2/attrib/authentication" 0 &&
		put "$tpg2/enable" 1
}

tgt_setup() {
	mkdir -p /var/run/tgtd
	truncate -s 32M /tmp/tgt-lun1.img || return 1
	tgtd -f -C 77 --iscsi portal=127.0.0.1:3261 >"$W/tgtd.err" 2>&1 &
	tgtpid=$!
	i=0
	until tgtadm -C 77 --lld iscsi --op new --mode target --tid 1 -T "$IQN" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && { say "tgtd did not start"; return 1; }
		sleep 0.1
	done
	tgtadm -C 77 --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 -b /tmp/tgt-lun1.img &&
		tgtadm -C 77 --lld iscsi --op bind --mode target --tid 1 -I ALL
}

tgt_teardown() {
	[ -n "${tgtpid:-}" ] || return 0
	tgtadm -C 77 --op delete --mode system >/dev/null 2>&1
	i=0
	while kill -0 "$tgtpid" 2>/dev/null && [ $i -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$tgtpid" 2>/dev/null
	wait "$tgtpid" 2>/dev/null
}

if ! "${kind}_setup"; then
	say "setup failed"
	"${kind}_teardown"
	exit 1
fi
say "$kind target $IQN on 127.0.0.1:3261"
tcpdump -i lo -B 32768 -s 0 -U -w "$W/target.pcap" tcp port 3261 2>"$W/tcpdump.err" &
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
	echo "InitiatorName=iqn.2026-12.org.faultlun:$kind-kernel" >/etc/iscsi/initiatorname.iscsi
	iscsid || { say "iscsid failed"; return 1; }
	sleep 0.3
	# lio2: every portal discovery lists (both)
	portal="-p 127.0.0.1:3261"
	[ "$kind" = lio2 ] && portal=""
	iscsiadm -m discovery -t sendtargets -p 127.0.0.1:3261 >>"$W/setup.log" 2>&1 &&
		iscsiadm -m node -T "$IQN" $portal --login >>"$W/setup.log" 2>&1 ||
		{ say "iscsiadm login failed"; return 1; }
	want=1
	[ "$kind" = lio2 ] && want=2
	i=0
	dev=""
	while :; do
		n=0
		for s in /sys/class/iscsi_session/session*/device/target*/*:$lun/block/*; do
			[ -e "$s" ] && { n=$((n + 1)); [ -n "$dev" ] || dev=$s; }
		done
		[ $n -ge $want ] && break
		i=$((i + 1))
		[ $i -gt 300 ] && { say "$n disk(s) of LUN $lun after the login, not $want"; return 1; }
		sleep 0.1
	done
	# scsi_dh_alua reads the states after the scan (its RTPG work): up to 10 s
	[ "$kind" = lio2 ] && for i in $(seq 1 100); do
		grep -qs standby /sys/class/iscsi_session/session*/device/target*/*:$lun/access_state && break
		sleep 0.1
	done
	for d in /sys/class/iscsi_session/session*/device/target*/*:*:*:*; do
		[ -e "$d/block" ] || continue
		printf '%s' "${d##*:}"
		for f in vendor model rev wwid dh_state access_state; do
			v=$(cat "$d/$f" 2>/dev/null) || v="-"
			printf ' %s=%s' $f "$(echo "$v" | sed 's/ *$//')"
		done
		echo
	done >"$W/kernel-view.txt"
	dd if="/dev/${dev##*/}" of=/dev/null bs=64k count=16 iflag=direct 2>>"$W/setup.log"
	say "the kernel saw: $(cat "$W/kernel-view.txt")"
}
kernel_view || say "the kernel's view failed"
iscsiadm -m node -T "$IQN" --logout >>"$W/setup.log" 2>&1
iscsi-test-cu -i "iqn.2026-12.org.faultlun:$kind-testcu-1" -I "iqn.2026-12.org.faultlun:$kind-testcu-2" \
	-t "$tests" "iscsi://127.0.0.1:3261/$IQN/$lun" >"$W/testcu.out" 2>&1
say "iscsi-test-cu exited $?"
sleep 1
kill "$td"
wait "$td"
"${kind}_teardown"
# page.rc / page.out: what tests/lib/common.sh's fl_page_run reads
rc=1
[ "$(grep -c "^$lun " "$W/kernel-view.txt")" -ge "${want:-1}" ] && grep -q "Suite: " "$W/testcu.out" &&
	[ -s "$W/target.pcap" ] && rc=0
tail -3 "$W/testcu.out" >"$W/page.out"
echo "$rc" >"$W/page.rc"
exit "$rc"
