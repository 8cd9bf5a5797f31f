#!/bin/sh
# SPDX-License-Identifier: MIT
# targetcli-guest.sh - runs inside a VM-lab guest (a `shell` workload step)
# the shell block of docs/tcmu.md "With targetcli", as root on a host with the
# packages installed would:
#   targetcli-guest.sh PAGE_BLOCK HANDLER_SO SCENARIOS_DIR
# first puts the built handler where tcmu-runner looks by default and the
# shipped scenarios where the package installs them (both in the guest's
# writable layer: the host's files are not touched), then runs the block with
# `set -e` (each command traced with the guest's uptime) in /fl-results/tcli
# (the results share). Records the LIO objects and disks after the block
# (state-after.txt), the trace and tcmu-runner's log, the handlers
# tcmu-runner offered on the bus (bus.txt), and what targetcli said to a
# cfgstring naming no scenario (refused.out). Exits with the block's status
# (page.rc). tests/vm/test-vm-targetcli.sh judges what it leaves.
set -u
page=$1 handler=$2 scenarios=$3
W=/fl-results/tcli
# shellcheck source=tests/vm/page-block.sh
. "$(dirname "$0")/page-block.sh"
rm -rf "$W"
mkdir -p "$W" || exit 1
cd "$W" || exit 1
# targetcli's own state (~/.targetcli, /etc/target) stays in the guest.
HOME=/root
export HOME
mkdir -p "$HOME" /etc/target

hdir=$(tcmu-runner --help 2>&1 | sed -n 's/^[[:space:]]*default is \(\/.*tcmu-runner\)$/\1/p')
[ -n "$hdir" ] || { echo "no default handler directory in tcmu-runner --help" >"$W/page.out"; exit 1; }
mkdir -p "$hdir" /usr/share/faultlun/scenarios
if ! cp "$handler" "$hdir/handler_faultlun.so" || ! cp "$scenarios"/*.json /usr/share/faultlun/scenarios/; then
	echo "cannot install the handler or the scenarios" >"$W/page.out"
	exit 1
fi

page_block_run "$page"
# A cfgstring naming no scenario: targetcli must refuse it with the handler's reason.
[ "$rc" = 0 ] && targetcli /backstores/user:faultlun create name=bad size=1M \
	cfgstring='scenario=/nonexistent/none.json' >"$W/refused.out" 2>&1
{
	for d in /sys/kernel/config/target/core/user_*/*/; do
		[ -d "$d" ] && echo "user_backstore ${d%/}"
	done
	for d in /sys/kernel/config/target/loopback/naa.*; do
		[ -d "$d" ] && echo "loopback ${d##*/}"
	done
	for b in /sys/class/scsi_disk/*/device/block/*; do
		[ -e "$b" ] && echo "disk ${b##*/}"
	done
} >"$W/state-after.txt" 2>&1
dbus-send --system --print-reply --dest=org.kernel.TCMUService1 /org/kernel/TCMUService1 \
	org.freedesktop.DBus.ObjectManager.GetManagedObjects >"$W/bus.txt" 2>&1
cp /var/log/faultlun-fl0.jsonl "$W/trace.jsonl" 2>/dev/null
cp /var/log/tcmu-runner.log "$W/tcmu-runner.log" 2>/dev/null
exit "$rc"
