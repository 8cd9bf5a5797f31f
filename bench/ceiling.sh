#!/bin/sh
# SPDX-License-Identifier: MIT
# How close faultlun comes to the ceiling: the least work an iSCSI target must do
# per command on this machine with the same client. Four servers, one 256 MiB LUN
# each, started once and measured in the same run, rounds alternating them (the
# order rotates every round):
#   null    build-bench/bench/fl_null_target: login, then GOOD and the data asked
#           for from one static buffer (the ceiling)
#   flnull  faultlun serve --store null: the iSCSI layer, the engine and the core,
#           no store
#   flmem   faultlun serve (its memory store): what users run
#   tgt     tgtd, a tmpfs file (rdwr backing store), as in vs-tgt.sh
# Workloads (writes first, so that the memory store holds data when it is read):
#   rw4k_qd32  fl_iscsi_load -w -q 32 -b 4096   4 KiB random write, QD 32
#   rw4k_qd1   fl_iscsi_load -w -q 1 -b 4096    4 KiB random write, QD 1
#   rr4k_qd32  fl_iscsi_load -q 32 -b 4096      4 KiB random read, QD 32
#   rr4k_qd1   fl_iscsi_load -q 1 -b 4096       4 KiB random read, QD 1
#   pr4k_qd32  iscsi-perf -m 32 -b 8 -r         4 KiB random read, QD 32 (libiscsi's tool)
# Prints every run, then the median IOPS of each server, each as a fraction of the
# null target's, the server CPU per I/O (utime+stime of /proc/PID/stat over the
# run), and faultlun's memory store over tgtd at 4 KiB random write QD 32.
#   bench/ceiling.sh [ROUNDS [SECONDS]]     (defaults 3 and 5)
#   BUILD=build-bench (cli/faultlun, bench/fl_iscsi_load, bench/fl_null_target)
#   WORKLOADS="rw4k_qd32 ..." runs only those workloads
#   COMPARE=PATH adds a fifth server, `PATH serve` (memory store) as "cmp": another
#   build of faultlun measured in the same run (before / after a change)
# Exits 77 when a tool is missing (tgtd, iscsi-perf, root), 1 when a server or
# client fails.
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-5}
# iscsi-perf reports once a second: shorter runs would give no number.
[ "$secs" -ge 2 ] || secs=2
. bench/common.sh
null=$build/bench/fl_null_target
[ -x "$null" ] || { echo "ceiling: $null not built" >&2; exit 77; }
tgt_check
hz=$(getconf CLK_TCK)
iqn=iqn.2026-12.org.faultlun:target

echo "== machine"
machine
echo "tgtd: $(tgtd -V 2>&1 | head -1)"
echo "rounds: $rounds, seconds per run: $secs; client and servers share the machine"

serve_start null "$null" -s 268435456
serve_start flnull "$fl" serve --store null --size 256MiB --listen 127.0.0.1:0
serve_start flmem "$fl" serve --size 256MiB --listen 127.0.0.1:0
tgt_start 256M
servers="null flnull flmem tgt"
if [ -n "${COMPARE:-}" ]; then
	[ -x "$COMPARE" ] || { echo "ceiling: COMPARE=$COMPARE is not a program" >&2; exit 1; }
	serve_start cmp "$COMPARE" serve --size 256MiB --listen 127.0.0.1:0
	servers="$servers cmp"
fi

# Runs workload $1 against server $2; appends "wl server iops cpu_us_per_io".
run() {
	wl=$1
	srv=$2
	case $srv in
	tgt) url=$tgturl pid=$tgtpid ;;
	*) port=""
	   eval "pid=\$${srv}pid port=\$${srv}port"
	   url="iscsi://127.0.0.1:$port/$iqn/0" ;;
	esac
	t0=$(ticks "$pid")
	s0=$(date +%s.%N)
	case $wl in
	rw4k_qd32) out=$(timeout $((secs + 30)) "$load" -w -q 32 -b 4096 -t "$secs" "$url") ;;
	rw4k_qd1) out=$(timeout $((secs + 30)) "$load" -w -q 1 -b 4096 -t "$secs" "$url") ;;
	rr4k_qd32) out=$(timeout $((secs + 30)) "$load" -q 32 -b 4096 -t "$secs" "$url") ;;
	rr4k_qd1) out=$(timeout $((secs + 30)) "$load" -q 1 -b 4096 -t "$secs" "$url") ;;
	pr4k_qd32) out=$(iscsi_perf_iops "$secs" -m 32 -b 8 -r "$url") ;;
	*) echo "ceiling: unknown workload $wl" >&2; exit 1 ;;
	esac
	case $out in
	*iops=*) out=$(printf '%s\n' "$out" | field iops) ;;
	*) out=${out% *} ;;
	esac
	s1=$(date +%s.%N)
	t1=$(ticks "$pid")
	if [ -z "$out" ] || [ "$out" = 0 ]; then
		echo "ceiling: $wl on $srv produced no result" >&2
		[ "$srv" = tgt ] && tail -5 "$tmp/tgt.log" >&2
		[ "$srv" != tgt ] && tail -5 "$tmp/$srv.err" >&2
		exit 1
	fi
	cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v i="$out" -v s0="$s0" -v s1="$s1" \
		'BEGIN { printf "%.2f", (b - a) / hz * 1e6 / (i * (s1 - s0)) }')
	echo "$wl $srv $out $cpu" >>"$tmp/results"
	printf '  %-10s %-7s iops %8.0f  server CPU us/IO %6s\n' "$wl" "$srv" "$out" "$cpu"
}

workloads=${WORKLOADS:-rw4k_qd32 rw4k_qd1 rr4k_qd32 rr4k_qd1 pr4k_qd32}
r=1
while [ $r -le "$rounds" ]; do
	echo "== round $r"
	# this round's order: the servers rotated by r
	order=$(echo "$servers" | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r - 1) % NF + 1) }')
	for wl in $workloads; do
		for srv in $order; do run "$wl" "$srv"; done
	done
	r=$((r + 1))
done

# med WL SERVER COLUMN: the median of that column over the rounds.
med() { awk -v w="$1" -v s="$2" -v k="$3" '$1 == w && $2 == s { print $k }' "$tmp/results" | median; }
echo "== medians over $rounds rounds: IOPS, then each server as a fraction of the null target"
printf '%-10s' workload
for srv in $servers; do printf ' %9s' "$srv"; done
for srv in $servers; do [ "$srv" = null ] || printf ' %9s' "$srv/n"; done
echo
for wl in $workloads; do
	n=$(med "$wl" null 3)
	printf '%-10s' "$wl"
	for srv in $servers; do printf ' %9.0f' "$(med "$wl" "$srv" 3)"; done
	for srv in $servers; do
		[ "$srv" = null ] || awk -v a="$(med "$wl" "$srv" 3)" -v b="$n" 'BEGIN { printf " %9.2f", a / b }'
	done
	echo
done
echo "== medians: server CPU us per I/O"
printf '%-10s' workload
for srv in $servers; do printf ' %9s' "$srv"; done
echo
for wl in $workloads; do
	printf '%-10s' "$wl"
	for srv in $servers; do printf ' %9s' "$(med "$wl" "$srv" 4)"; done
	echo
done
if grep -q '^rw4k_qd32 ' "$tmp/results"; then
	awk -v a="$(med rw4k_qd32 flmem 3)" -v b="$(med rw4k_qd32 tgt 3)" \
		'BEGIN { printf "faultlun (memory) / tgtd, 4 KiB random write QD 32: %.2fx\n", a / b }'
fi
