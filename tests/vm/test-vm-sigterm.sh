#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-sigterm.sh - `faultlun vm` ended by SIGTERM (a CI job's timeout, a
# supervisor) takes its guest with it: QEMU must be gone within 5 s, not left
# running until its own time limit.
#   test-vm-sigterm.sh FAULTLUN SCENARIO OUTDIR
set -u
faultlun=$1 scen=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
"$faultlun" vm "$scen" --path iscsi --quiet --out "$out/run" >"$out/log" 2>&1 &
pid=$!
q="" i=0
while [ $i -lt 1200 ]; do
	q=$(pgrep -P "$pid" -f qemu-system-x86_64)
	[ -n "$q" ] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid"
		rc=$?
		cat "$out/log"
		[ "$rc" -eq 77 ] && exit 77
		echo "faultlun vm ended (exit $rc) before its guest started"
		exit 1
	fi
	sleep 0.1
	i=$((i + 1))
done
[ -n "$q" ] || { kill "$pid"; echo "no QEMU within 120 s"; exit 1; }
sleep 2
kill -TERM "$pid"
wait "$pid"
i=0
while kill -0 "$q" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
if kill -0 "$q" 2>/dev/null; then
	kill -KILL "$q"
	echo "QEMU ($q) outlived faultlun vm by 5 s"
	exit 1
fi
echo "QEMU ($q) ended with faultlun vm"
