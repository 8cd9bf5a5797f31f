#!/bin/sh
# SPDX-License-Identifier: MIT
# Fault-engine overhead through the whole iSCSI path: the same load (4 KiB random
# reads at QD 32, confined to the first 128 MiB of a 1 GiB memory LUN) against
# scenarios with 0, 10, 100 and 1,000 armed rules (a scenario holds at most 1024) that never match it: half are
# read rules on LBA ranges past the loaded region, half are rules for opcodes the
# load never sends (SYNCHRONIZE CACHE(10)/(16), VERIFY(10)). Rounds interleave the
# configurations; prints median IOPS, server CPU per I/O, and % lost against 0 rules.
# Goal: at most 2% lost at 1,000 rules.
#   bench/rule-overhead.sh [ROUNDS [SECONDS]]     (defaults 3 and 5)
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-5}
. bench/common.sh

iqn=iqn.2026-12.org.faultlun:bench
counts="0 10 100 1000"
hz=$(getconf CLK_TCK)
# Writes the scenario with $1 non-matching rules to $tmp/rules-$1.json.
gen() {
	awk -v n="$1" -v iqn="$iqn" 'BEGIN {
		split("0x35 0x91 0x2f", ops, " ")
		printf "{\n  \"faultlun\": 1,\n  \"name\": \"bench-rules-%d\",\n", n
		printf "  \"description\": \"%d armed rules that the benchmark load never matches.\",\n", n
		printf "  \"target\": { \"iqn\": \"%s\" },\n", iqn
		printf "  \"luns\": [ { \"lun\": 0, \"size\": \"1GiB\" } ],\n  \"rules\": ["
		for (i = 0; i < n; i++) {
			printf "%s\n    { \"id\": \"r%d\", ", i ? "," : "", i
			if (i % 2 == 0) {
				first = 300000 + i * 16
				printf "\"match\": { \"class\": [\"read\"], \"lba\": { \"first\": %d, \"last\": %d } }, ", first, first + 7
			} else {
				printf "\"match\": { \"opcode\": \"%s\" }, ", ops[(i % 3) + 1]
			}
			printf "\"action\": { \"sense\": \"MEDIUM_ERROR/UNRECOVERED_READ_ERROR\" } }"
		}
		printf "\n  ]\n}\n"
	}' >"$tmp/rules-$1.json"
}
for n in $counts; do gen "$n"; done

echo "== machine"
machine
echo "rounds: $rounds, seconds per run: $secs; 4 KiB random reads, QD 32, first 128 MiB of the LUN"

r=1
while [ $r -le "$rounds" ]; do
	echo "== round $r"
	for n in $counts; do
		fl_start "$tmp/rules-$n.json"
		t0=$(ticks "$flpid")
		out=$(timeout $((secs + 40)) "$load" -q 32 -b 4096 -R 134217728 -t "$secs" \
			"iscsi://127.0.0.1:$flport/$iqn/0")
		t1=$(ticks "$flpid")
		fl_stop
		iops=$(echo "$out" | field iops)
		ios=$(echo "$out" | field ios)
		errs=$(echo "$out" | field errors)
		cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v n="$ios" 'BEGIN { printf "%.2f", (b - a) / hz * 1e6 / n }')
		echo "$n $iops $cpu" >>"$tmp/results"
		printf '  %5s rules  iops %7s  server CPU us/IO %6s  errors %s\n' "$n" "$iops" "$cpu" "$errs"
	done
	r=$((r + 1))
done

echo "== medians over $rounds rounds (lost = 1 - iops/iops(0 rules); CPU = server us per I/O)"
printf '%6s %9s %8s %9s %9s\n' rules iops lost cpu_us cpu_added
base=$(awk '$1 == 0 { print $2 }' "$tmp/results" | median)
basec=$(awk '$1 == 0 { print $3 }' "$tmp/results" | median)
for n in $counts; do
	i=$(awk -v n="$n" '$1 == n { print $2 }' "$tmp/results" | median)
	c=$(awk -v n="$n" '$1 == n { print $3 }' "$tmp/results" | median)
	awk -v n="$n" -v i="$i" -v b="$base" -v c="$c" -v bc="$basec" 'BEGIN {
		printf "%6d %9.0f %7.1f%% %9.2f %8.1f%%\n", n, i, (1 - i / b) * 100, c, (c / bc - 1) * 100 }'
done
