#!/bin/sh
# SPDX-License-Identifier: MIT
# test-pdu-delay-pipelined.sh FAULTLUN LOAD SCENARIO: 16 writes, then 16
# reads, in flight for 2 s each (fl_iscsi_load) while every third command PDU
# is delayed 20 ms (SCENARIO). The connection reads ahead of the PDU in hand;
# those bytes raise no socket event, so a delayed PDU's successors must be
# taken when it has run. Each command then waits about 20 ms per three ahead
# of it (about 110 ms at most); a successor left for a later event waits up to
# the loop's idle second. Fails when the slowest 1% took 1 s or more, or
# fewer than 40 commands completed.
set -u
fl=$1 load=$2 scen=$3
out=$("$fl" serve -q --listen 127.0.0.1:0 "$scen" \
	--run "\"$load\" -w -q 16 -b 4096 -t 2 \"\$FAULTLUN_URL\" && \"$load\" -q 16 -b 4096 -t 2 \"\$FAULTLUN_URL\"" 2>&1) ||
	{ echo "$out"; echo "FAIL: serve or the load failed"; exit 1; }
echo "$out"
n=$(echo "$out" | grep -c '^ios=')
[ "$n" = 2 ] || { echo "FAIL: expected two load summaries, got $n"; exit 1; }
echo "$out" | grep '^ios=' | while read -r line; do
	ios=$(echo "$line" | sed -n 's/^ios=\([0-9]*\) .*/\1/p')
	p99=$(echo "$line" | sed -n 's/.* p99_us=\([0-9]*\) .*/\1/p')
	[ "${ios:-0}" -ge 40 ] || { echo "FAIL: $ios commands completed (at least 40 expected)"; exit 1; }
	[ "${p99:-9999999}" -lt 1000000 ] || { echo "FAIL: p99 $p99 us: a read-ahead PDU waited for a later event"; exit 1; }
done || exit 1
echo "delayed PDUs' successors taken at once"
