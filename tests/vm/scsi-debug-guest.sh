#!/bin/sh
# SPDX-License-Identifier: MIT
# scsi-debug-guest.sh - runs inside a VM-lab guest (a `shell` workload
# step): the same reads, through the kernel's block layer, of one of two
# disks, and what the kernel did with them:
#   scsi-debug-guest.sh sdebug RULES   Linux's scsi_debug, loaded with the
#        options of RULES' `options scsi_debug ...` line, its error-file
#        lines (TYPE COUNT OPCODE ...) written to the disk's debugfs
#        `error` file after its scan
#   scsi-debug-guest.sh faultlun       $DEV: the lab's disk (faultlun serving
#        the scenario `faultlun import --scsi-debug RULES` made, armed at the
#        workload, so the scan met no rule either)
# Each read is `dd` of 512 bytes with O_DIRECT at LBA 0, 0, 100, 103, 200;
# /fl-results/sd-MODE/reads.txt gets a line per read: the LBA and `ok` or
# the error dd reported; sense.txt the kernel's sense lines for them (sd's
# "Sense Key" and "Add. Sense", the device name and tag cut off). Exits 0 when every
# read ran. tests/vm/test-vm-scsi-debug.sh compares the two.
set -u
mode=$1
W=/fl-results/sd-$mode
rm -rf "$W"
mkdir -p "$W" || exit 1
if [ "$mode" = sdebug ]; then
	rules=$2
	opts=$(sed -n 's/^options scsi_debug //p' "$rules")
	# shellcheck disable=SC2086 # the options are words
	modprobe scsi_debug $opts || { echo "modprobe scsi_debug $opts failed" >"$W/setup.log"; exit 1; }
	dev=""
	i=0
	while [ -z "$dev" ]; do
		for b in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
			[ -e "$b" ] && dev=$b
		done
		i=$((i + 1))
		[ $i -gt 100 ] && { echo "no scsi_debug disk" >"$W/setup.log"; exit 1; }
		[ -n "$dev" ] || sleep 0.1
	done
	hctl=${dev%/block/*}
	hctl=${hctl##*/}
	DEV=/dev/${dev##*/}
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	grep -v '^[[:space:]]*#' "$rules" | grep -v '^options' | grep -v '^[[:space:]]*$' |
		while IFS= read -r l; do
			echo "$l" >"/sys/kernel/debug/scsi_debug/$hctl/error" ||
				echo "cannot write '$l' to the error file" >>"$W/setup.log"
		done
	cat "/sys/kernel/debug/scsi_debug/$hctl/error" >"$W/error-file.txt" 2>&1
fi
: >/dev/kmsg 2>/dev/null
echo "faultlun-probe: reads begin" >/dev/kmsg
for lba in 0 0 100 103 200; do
	if out=$(dd if="$DEV" of=/dev/null bs=512 skip=$lba count=1 iflag=direct 2>&1); then
		echo "$lba ok"
	else
		echo "$lba $(echo "$out" | sed -n 's/^dd: error reading [^:]*: //p' | head -1)"
	fi
done >"$W/reads.txt"
echo "faultlun-probe: reads end" >/dev/kmsg
dmesg -t | sed -n '/faultlun-probe: reads begin/,/faultlun-probe: reads end/p' |
	grep -E 'Sense Key|Add\. Sense' |
	sed 's/^sd [0-9:]*: \[sd[a-z]*\] *//; s/^tag#[0-9]* *//' >"$W/sense.txt"
[ "$(wc -l <"$W/reads.txt")" = 5 ]
