#!/bin/sh
# SPDX-License-Identifier: MIT
# Delay accuracy: a scenario delays every read by 5 ms (action delay_ms, see
# docs/faults/delay.md); fl_iscsi_load keeps 4 KiB random reads outstanding at
# QD 32 (and QD 1) and reports completion latency percentiles. Prints the
# observed latency minus 5 ms at p50, p99 and p99.9 (medians over the rounds),
# beside the same load without the scenario (the service time the delay adds to)
# and the machine's own floor: fl_sleep_probe sleeps 5 ms over and over during
# the delayed QD 32 run and reports how late it woke (any timer pays that), and
# spins alone between runs, reporting the CPU time taken from a running thread.
# Goal: p99 error at most 1 ms at QD 32.
#   bench/delay-accuracy.sh [ROUNDS [SECONDS]]     (defaults 3 and 5)
#   COMPARE=PATH/TO/faultlun  also runs the delayed loads against that binary in
#                             every round (rows *_cmp), e.g. a build of an older
#                             commit, for before/after numbers from one run.
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

probe=$build/bench/fl_sleep_probe
[ -x "$probe" ] || { echo "bench: $probe not built" >&2; exit 77; }
compare=${COMPARE:-}
if [ -n "$compare" ] && [ ! -x "$compare" ]; then
	echo "bench: COMPARE=$compare is not an executable" >&2
	exit 2
fi

# Appends the probe line in $2 to results under label $1 and prints it.
record_probe() {
	p50=$(echo "$2" | field p50_us)
	p99=$(echo "$2" | field p99_us)
	p999=$(echo "$2" | field p999_us)
	echo "$1 $p50 $p99 $p999 0" >>"$tmp/results"
	printf '  %-14s p50 %6s us  p99 %6s us  p99.9 %6s us\n' "$1" "$p50" "$p99" "$p999"
}

# Runs QD $1 against the current server; appends "label p50 p99 p999 iops" to
# results. With $3 = probe, the sleep probe runs beside the load.
measure() {
	if [ "${3:-}" = probe ]; then
		"$probe" -m sleep -u 5000 -t "$secs" >"$tmp/probe.out" &
		ppid=$!
	fi
	out=$(timeout $((secs + 40)) "$load" -q "$1" -b 4096 -t "$secs" \
		"iscsi://127.0.0.1:$flport/$iqn/0")
	if [ "${3:-}" = probe ]; then
		wait "$ppid"
		record_probe sleep_floor "$(cat "$tmp/probe.out")"
	fi
	p50=$(echo "$out" | field p50_us)
	p99=$(echo "$out" | field p99_us)
	p999=$(echo "$out" | field p999_us)
	iops=$(echo "$out" | field iops)
	echo "$2 $p50 $p99 $p999 $iops" >>"$tmp/results"
	printf '  %-14s p50 %6s us  p99 %6s us  p99.9 %6s us  iops %7s\n' "$2" "$p50" "$p99" "$p999" "$iops"
}

# The delayed runs against the binary $1, labels suffixed with $2.
delayed() {
	_fl=$fl
	fl=$1
	fl_start "$tmp/delay.json"
	fl=$_fl
	measure 32 "delay_qd32$2" ${3:-}
	measure 1 "delay_qd1$2"
	fl_stop
}

labels="delay_qd32 delay_qd1"
[ -z "$compare" ] || labels="$labels delay_qd32_cmp delay_qd1_cmp"
labels="$labels nodelay_qd32 sleep_floor spin_floor"
r=1
while [ $r -le "$rounds" ]; do
	echo "== round $r"
	if [ -n "$compare" ] && [ $((r % 2)) = 0 ]; then
		delayed "$compare" _cmp
		delayed "$fl" "" probe
	elif [ -n "$compare" ]; then
		delayed "$fl" "" probe
		delayed "$compare" _cmp
	else
		delayed "$fl" "" probe
	fi
	fl_start --iqn "$iqn" --size 256MiB
	measure 32 nodelay_qd32
	fl_stop
	record_probe spin_floor "$("$probe" -m spin -u 5000 -t "$secs")"
	r=$((r + 1))
done

echo "== medians over $rounds rounds (error = observed - 5000 us for the delayed runs;"
echo "   sleep_floor: lateness of a 5 ms sleep beside the delayed QD 32 load;"
echo "   spin_floor: largest time a spinning thread lost per 5 ms, run alone between loads)"
printf '%-14s %9s %9s %9s %8s %10s %10s\n' run p50_us p99_us p999_us iops p50_err_us p99_err_us
for l in $labels; do
	a=$(awk -v l=$l '$1 == l { print $2 }' "$tmp/results" | median)
	b=$(awk -v l=$l '$1 == l { print $3 }' "$tmp/results" | median)
	c=$(awk -v l=$l '$1 == l { print $4 }' "$tmp/results" | median)
	d=$(awk -v l=$l '$1 == l { print $5 }' "$tmp/results" | median)
	awk -v l=$l -v a="$a" -v b="$b" -v c="$c" -v d="$d" 'BEGIN {
		if (l ~ /^delay/) { e = a - 5000; f = b - 5000 } else { e = "-"; f = "-" }
		if (l ~ /floor$/) d = "-"; else d = sprintf("%.0f", d)
		printf "%-14s %9s %9s %9s %8s %10s %10s\n", l, a, b, c, d, e, f }'
done
