#!/bin/sh
# SPDX-License-Identifier: MIT
# Delay accuracy: a scenario delays every read by 5 ms (action delay_ms, see
# docs/faults/delay.md); fl_iscsi_load keeps 4 KiB random reads outstanding at
# QD 32 (and QD 1) and reports completion latency percentiles. Prints the
# observed latency minus 5 ms at p50, p99 and p99.9 (medians over the rounds),
# beside the same load without the scenario (the service time the delay adds to).
# Goal: p99 error at most 1 ms at QD 32.
#   bench/delay-accuracy.sh [ROUNDS [SECONDS]]     (defaults 3 and 5)
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-5}
. bench/common.sh

iqn=iqn.2026-12.org.faultlun:bench
cat >"$tmp/delay.json" <<EOF
{
  "faultlun": 1,
  "name": "bench-delay-5ms",
  "description": "Every read is delayed by 5 ms, then executes.",
  "target": { "iqn": "$iqn" },
  "luns": [ { "lun": 0, "size": "256MiB" } ],
  "rules": [ { "id": "delay-reads", "match": { "class": ["read"] }, "action": { "delay_ms": 5 } } ]
}
EOF

echo "== machine"
machine
echo "rounds: $rounds, seconds per run: $secs; 4 KiB random reads; injected delay 5 ms"

# Runs QD $1 against the current server; appends "label p50 p99 p999 iops" to results.
measure() {
	out=$(timeout $((secs + 40)) "$load" -q "$1" -b 4096 -t "$secs" \
		"iscsi://127.0.0.1:$flport/$iqn/0")
	p50=$(echo "$out" | field p50_us)
	p99=$(echo "$out" | field p99_us)
	p999=$(echo "$out" | field p999_us)
	iops=$(echo "$out" | field iops)
	echo "$2 $p50 $p99 $p999 $iops" >>"$tmp/results"
	printf '  %-14s p50 %6s us  p99 %6s us  p99.9 %6s us  iops %7s\n' "$2" "$p50" "$p99" "$p999" "$iops"
}

r=1
while [ $r -le "$rounds" ]; do
	echo "== round $r"
	fl_start "$tmp/delay.json"
	measure 32 delay_qd32
	measure 1 delay_qd1
	fl_stop
	fl_start --iqn "$iqn" --size 256MiB
	measure 32 nodelay_qd32
	fl_stop
	r=$((r + 1))
done

echo "== medians over $rounds rounds (error = observed - 5000 us for the delayed runs)"
printf '%-14s %9s %9s %9s %8s %10s %10s\n' run p50_us p99_us p999_us iops p50_err_us p99_err_us
for l in delay_qd32 delay_qd1 nodelay_qd32; do
	a=$(awk -v l=$l '$1 == l { print $2 }' "$tmp/results" | median)
	b=$(awk -v l=$l '$1 == l { print $3 }' "$tmp/results" | median)
	c=$(awk -v l=$l '$1 == l { print $4 }' "$tmp/results" | median)
	d=$(awk -v l=$l '$1 == l { print $5 }' "$tmp/results" | median)
	awk -v l=$l -v a="$a" -v b="$b" -v c="$c" -v d="$d" 'BEGIN {
		if (l ~ /^delay/) { e = a - 5000; f = b - 5000 } else { e = "-"; f = "-" }
		printf "%-14s %9s %9s %9s %8.0f %10s %10s\n", l, a, b, c, d, e, f }'
done
