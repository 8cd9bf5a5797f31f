#!/bin/sh
# SPDX-License-Identifier: MIT
# faultlun beside tgtd (Linux SCSI target framework), same run, same clients.
# Both serve one 256 MiB memory-backed LUN on 127.0.0.1 (faultlun: its memory store;
# tgtd: a tmpfs file under /dev/shm, rdwr backing store). Rounds alternate the two
# servers (the order flips every round); each round runs every workload:
#   rr4k_qd1    iscsi-perf -m 1  -b 8   -r   4 KiB random read, QD 1
#   rr4k_qd32   iscsi-perf -m 32 -b 8   -r   4 KiB random read, QD 32
#   sr128k_qd32 iscsi-perf -m 32 -b 256      128 KiB sequential read, QD 32
#   rw4k_qd32   fl_iscsi_load -w -q 32 -b 4096        4 KiB random write, QD 32
#   sw128k_qd32 fl_iscsi_load -w -s -q 32 -b 131072   128 KiB sequential write, QD 32
# and the server's CPU time (utime+stime of /proc/PID/stat, all threads) over the run
# divided by the I/Os done. Prints per-round numbers, then medians and faultlun/tgtd.
#   bench/vs-tgt.sh [ROUNDS [SECONDS]]     (defaults 3 and 5)
#   BUILD=build-bench (directory holding cli/faultlun and bench/fl_iscsi_load)
#   WORKLOADS="rr4k_qd32 ..." runs only those workloads
# Exits 77 when a tool is missing, 1 when a server or client fails.
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-5}
# iscsi-perf reports once a second: shorter runs would give no number.
[ "$secs" -ge 2 ] || secs=2
. bench/common.sh
tgt_check

hz=$(getconf CLK_TCK)

echo "== machine"
echo "cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
echo "cores: $(nproc) online; kernel: $(uname -r); tgtd: $(tgtd -V 2>&1 | head -1)"
echo "load average at start: $(cut -d" " -f1-3 /proc/loadavg)"
echo "rounds: $rounds, seconds per run: $secs; client and servers share the machine"

fl_start --size 256MiB
# shellcheck disable=SC2154 # set by fl_start
flurl="iscsi://127.0.0.1:$flport/iqn.2026-12.org.faultlun:target/0"
tgt_start 256M

# Runs workload $1 against server $2 (fl|tgt); appends "wl server iops mbps cpu_us_per_io".
run() {
	wl=$1
	srv=$2
	if [ "$srv" = fl ]; then url=$flurl; pid=$flpid; else url=$tgturl; pid=$tgtpid; fi
	t0=$(ticks "$pid")
	s0=$(date +%s.%N)
	out=""
	case $wl in
	rr4k_qd1) out=$(iscsi_perf_iops "$secs" -m 1 -b 8 -r "$url") ;;
	rr4k_qd32) out=$(iscsi_perf_iops "$secs" -m 32 -b 8 -r "$url") ;;
	sr128k_qd32) out=$(iscsi_perf_iops "$secs" -m 32 -b 256 "$url") ;;
	rw4k_qd32) out=$(timeout $((secs + 30)) "$load" -w -q 32 -b 4096 -t "$secs" "$url") ;;
	sw128k_qd32) out=$(timeout $((secs + 30)) "$load" -w -s -q 32 -b 131072 -t "$secs" "$url") ;;
	esac
	s1=$(date +%s.%N)
	t1=$(ticks "$pid")
	case $out in
	*iops=*) iops=$(printf '%s\n' "$out" | field iops)
	   mbps=$(printf '%s\n' "$out" | field mbps) ;;
	*) iops=${out% *}
	   mbps=${out#* } ;;
	esac
	if [ -z "$iops" ] || [ "$iops" = 0 ]; then
		echo "vs-tgt: $wl on $srv produced no result:" >&2
		printf '%s\n' "$out" | tail -5 >&2
		[ "$srv" = tgt ] && tail -5 "$tmp/tgt.log" >&2
		exit 1
	fi
	cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v i="$iops" -v s0="$s0" -v s1="$s1" \
		'BEGIN { printf "%.2f", (b - a) / hz * 1e6 / (i * (s1 - s0)) }')
	echo "$wl $srv $iops $mbps $cpu" >>"$tmp/results"
	printf '  %-12s %-8s iops %8s  MB/s %7s  server CPU us/IO %6s\n' "$wl" "$srv" "$iops" "$mbps" "$cpu"
}

workloads=${WORKLOADS:-rr4k_qd1 rr4k_qd32 sr128k_qd32 rw4k_qd32 sw128k_qd32}
r=1
while [ $r -le "$rounds" ]; do
	echo "== round $r"
	for wl in $workloads; do
		if [ $((r % 2)) = 1 ]; then run "$wl" fl; run "$wl" tgt; else run "$wl" tgt; run "$wl" fl; fi
	done
	r=$((r + 1))
done

echo "== medians over $rounds rounds (ratio = faultlun / tgtd; CPU ratio below 1 is better)"
printf '%-12s %10s %10s %8s %8s %8s %7s %7s %6s\n' workload fl_iops tgt_iops ratio fl_MB/s tgt_MB/s fl_cpu tgt_cpu ratio
for wl in $workloads; do
	for k in 3 4 5; do
		eval "f$k=\$(awk -v w=$wl -v k=$k '\$1 == w && \$2 == \"fl\" { print \$k }' \"\$tmp/results\" | median)"
		eval "g$k=\$(awk -v w=$wl -v k=$k '\$1 == w && \$2 == \"tgt\" { print \$k }' \"\$tmp/results\" | median)"
	done
	# shellcheck disable=SC2154
	awk -v w="$wl" -v a="$f3" -v b="$g3" -v c="$f4" -v d="$g4" -v e="$f5" -v f="$g5" 'BEGIN {
		printf "%-12s %10.0f %10.0f %7.2fx %8.1f %8.1f %8.2f %7.2f %5.2fx\n",
			w, a, b, a / b, c, d, e, f, e / f }'
done
