#!/bin/sh
# SPDX-License-Identifier: MIT
# test-serve-tools.sh FAULTLUN TOOL: runs one libiscsi command-line tool
# against `faultlun serve` (64 MiB memory LUN) and checks what it prints.
set -u
fl=$1
tool=$2
command -v "${tool%-*}" >/dev/null 2>&1 || command -v "$tool" >/dev/null 2>&1 ||
	{ echo "$tool not installed: skipped"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$out" >&2; exit 1; }
serve() { "$fl" serve -q --listen 127.0.0.1:0 --size 64MiB --run "$1" >"$out" 2>&1; }

case $tool in
iscsi-inq)
	serve 'iscsi-inq "$FAULTLUN_URL"' || fail "iscsi-inq failed"
	grep -qi "DIRECT_ACCESS\|Direct" "$out" || fail "no direct-access device type"
	serve 'iscsi-inq -e 1 -c 0x80 "$FAULTLUN_URL"' || fail "iscsi-inq of VPD 0x80 failed"
	;;
iscsi-readcapacity16)
	serve 'iscsi-readcapacity16 "$FAULTLUN_URL"' || fail "iscsi-readcapacity16 failed"
	grep -q "Total size:67108864" "$out" || fail "size is not 64 MiB"
	grep -q "LOGICAL BLOCK LENGTH IN BYTES:512" "$out" || fail "block size is not 512"
	;;
iscsi-ls)
	serve 'iscsi-ls -s "iscsi://$FAULTLUN_ADDR:$FAULTLUN_PORT"' || fail "iscsi-ls failed"
	grep -q "Target:iqn" "$out" || fail "no target listed"
	grep -q "Lun:0" "$out" || fail "LUN 0 not listed"
	;;
iscsi-ls-luns)
	# Several LUNs from a scenario, each with its own size and block size.
	"$fl" serve -q --listen 127.0.0.1:0 "$3" \
		--run 'iscsi-ls -s "iscsi://$FAULTLUN_ADDR:$FAULTLUN_PORT" &&
		       iscsi-readcapacity16 "iscsi://$FAULTLUN_ADDR:$FAULTLUN_PORT/$FAULTLUN_IQN/3"' \
		>"$out" 2>&1 || fail "iscsi-ls / readcapacity16 on LUN 3 failed"
	grep -q "Lun:0" "$out" || fail "LUN 0 not listed"
	grep -q "Lun:3" "$out" || fail "LUN 3 not listed"
	grep -q "LOGICAL BLOCK LENGTH IN BYTES:4096" "$out" || fail "LUN 3 is not 4096-byte blocks"
	grep -q "Total size:33554432" "$out" || fail "LUN 3 is not 32 MiB"
	;;
iscsi-inq-ipv6)
	# An IPv6 portal, when the host has ::1.
	if ! "$fl" serve -q --listen '[::1]:0' --run true >/dev/null 2>&1; then
		echo "no IPv6 loopback: skipped"
		exit 77
	fi
	"$fl" serve -q --listen '[::1]:0' --run 'iscsi-inq "$FAULTLUN_URL"' >"$out" 2>&1 ||
		fail "iscsi-inq over IPv6 failed"
	grep -q "DIRECT_ACCESS" "$out" || fail "no direct-access device over IPv6"
	;;
iscsi-perf)
	# A few seconds of reads with 32 outstanding requests; then SIGINT ends it.
	serve 'iscsi-perf -m 32 -b 16 "$FAULTLUN_URL" & p=$!; sleep 3; kill -INT $p; wait $p; exit 0' ||
		fail "iscsi-perf run failed"
	grep -q "IOPS\|iops\|MB/s" "$out" || fail "no throughput printed"
	;;
*)
	echo "unknown tool $tool" >&2
	exit 2
	;;
esac
echo "$tool: ok"
