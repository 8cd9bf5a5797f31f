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
build=${BUILD:-build-bench}
fl=$build/cli/faultlun
load=$build/bench/fl_iscsi_load
for t in "$fl" "$load"; do
	[ -x "$t" ] || { echo "vs-tgt: $t not built" >&2; exit 77; }
done
for t in tgtd tgtadm iscsi-perf; do
	command -v $t >/dev/null 2>&1 || [ -x /usr/sbin/$t ] || { echo "vs-tgt: $t missing" >&2; exit 77; }
done
PATH=$PATH:/usr/sbin
if [ "$(id -u)" != 0 ]; then echo "vs-tgt: tgtd needs root" >&2; exit 77; fi
tmp=$(mktemp -d)
flpid=""
tgtpid=""
# Ends the servers this script started (by pid) and removes the scratch directory.
cleanup() {
	if [ -n "$flpid" ]; then
		kill "$flpid" 2>/dev/null || true
		wait "$flpid" 2>/dev/null || true
	fi
	if [ -n "$tgtpid" ]; then
		# tgtd stops on its own control requests; SIGKILL if it has not after 5 s.
		tgtadm -C "$ctl" --lld iscsi --op delete --mode target --tid 1 --force >/dev/null 2>&1 || true
		tgtadm -C "$ctl" --op delete --mode system >/dev/null 2>&1 || true
		n=0
		while kill -0 "$tgtpid" 2>/dev/null && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
		kill -9 "$tgtpid" 2>/dev/null || true
		wait "$tgtpid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
# shellcheck disable=SC2154
trap 'rc=$?; cleanup; exit $rc' EXIT
trap 'exit 1' INT TERM

hz=$(getconf CLK_TCK)
# Server CPU ticks (utime+stime) of pid $1.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# A port in 10000..29999 no socket uses.
freeport() {
	n=0
	while [ $n -lt 100 ]; do
		# Below the ephemeral range, and no TCP socket of any state on it.
		p=$((10000 + $(od -An -N2 -tu2 /dev/urandom) % 20000))
		ss -Htan "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
		n=$((n + 1))
	done
	return 1
}

echo "== machine"
echo "cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
echo "cores: $(nproc) online; kernel: $(uname -r); tgtd: $(tgtd -V 2>&1 | head -1)"
echo "load average at start: $(cut -d" " -f1-3 /proc/loadavg)"
echo "rounds: $rounds, seconds per run: $secs; client and servers share the machine"

# faultlun: port 0; the banner names the port it got.
"$fl" serve --listen 127.0.0.1:0 --size 256MiB >"$tmp/fl.out" 2>"$tmp/fl.err" &
flpid=$!
i=0
flport=""
while [ -z "$flport" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
	flport=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/fl.out" "$tmp/fl.err" | head -1)
done
[ -n "$flport" ] || { echo "vs-tgt: faultlun did not start" >&2; cat "$tmp/fl.err" >&2; exit 1; }
flurl="iscsi://127.0.0.1:$flport/iqn.2026-12.org.faultlun:target/0"

# tgtd: foreground child, its own control port (socket /var/run/tgtd/socket.N).
# tgtd takes control ports 0..32767 only; 0 is the system's own tgtd. A port
# whose socket exists belongs to another tgtd: never talk to it. If tgtd still
# cannot have the pair (control port locked, portal taken), try another.
mkdir -p /var/run/tgtd
img=/dev/shm/fl-bench-$$.img
trap 'rc=$?; cleanup; rm -f "$img"; exit $rc' EXIT
truncate -s 256M "$img"
iqn=iqn.2026-12.org.faultlun:tgt-bench
try=0
while :; do
	try=$((try + 1))
	[ $try -le 10 ] || { echo "vs-tgt: tgtd did not start on any control port" >&2; cat "$tmp/tgt.log" >&2 2>/dev/null; exit 1; }
	ctl=$((1024 + $(od -An -N2 -tu2 /dev/urandom) % 31744))
	[ -e "/var/run/tgtd/socket.$ctl" ] && continue
	tgtport=$(freeport)
	tgtd -f -C "$ctl" --iscsi "portal=127.0.0.1:$tgtport" >"$tmp/tgt.log" 2>&1 &
	tgtpid=$!
	i=0
	while kill -0 "$tgtpid" 2>/dev/null && [ $i -lt 50 ]; do
		tgtadm -C "$ctl" --lld iscsi --op new --mode target --tid 1 -T "$iqn" 2>/dev/null && break
		i=$((i + 1))
		sleep 0.1
	done
	if kill -0 "$tgtpid" 2>/dev/null && [ $i -lt 50 ]; then
		break
	fi
	echo "vs-tgt: tgtd on control port $ctl, portal $tgtport: no luck, another pair" >&2
	kill "$tgtpid" 2>/dev/null || true
	wait "$tgtpid" 2>/dev/null || true
	tgtpid=""
done
tgtadm -C "$ctl" --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 -b "$img"
tgtadm -C "$ctl" --lld iscsi --op bind --mode target --tid 1 -I ALL
tgturl="iscsi://127.0.0.1:$tgtport/$iqn/1"
ss -Htln "sport = :$tgtport" | grep -q . || { echo "vs-tgt: tgtd does not listen on $tgtport" >&2; cat "$tmp/tgt.log" >&2; exit 1; }

# Runs workload $1 against server $2 (fl|tgt); appends "wl server iops mbps cpu_us_per_io".
run() {
	wl=$1
	srv=$2
	if [ "$srv" = fl ]; then url=$flurl; pid=$flpid; else url=$tgturl; pid=$tgtpid; fi
	t0=$(ticks "$pid")
	s0=$(date +%s.%N)
	case $wl in
	rr4k_qd1) out=$(timeout -k 3 -s INT "$secs" iscsi-perf -m 1 -b 8 -r "$url" 2>&1 || true) ;;
	rr4k_qd32) out=$(timeout -k 3 -s INT "$secs" iscsi-perf -m 32 -b 8 -r "$url" 2>&1 || true) ;;
	sr128k_qd32) out=$(timeout -k 3 -s INT "$secs" iscsi-perf -m 32 -b 256 "$url" 2>&1 || true) ;;
	rw4k_qd32) out=$(timeout $((secs + 30)) "$load" -w -q 32 -b 4096 -t "$secs" "$url") ;;
	sw128k_qd32) out=$(timeout $((secs + 30)) "$load" -w -s -q 32 -b 131072 -t "$secs" "$url") ;;
	esac
	s1=$(date +%s.%N)
	t1=$(ticks "$pid")
	case $out in
	*"iops average"*) line=$(printf '%s\n' "$out" | tr '\r' '\n' | grep 'iops average' | tail -1)
	    iops=$(printf '%s\n' "$line" | sed -n 's/.*iops average \([0-9]*\) (\([0-9]*\) MB.*/\1/p')
	    mbps=$(printf '%s\n' "$line" | sed -n 's/.*iops average \([0-9]*\) (\([0-9]*\) MB.*/\2/p') ;;
	*) iops=$(printf '%s\n' "$out" | sed -n 's/.* iops=\([0-9.]*\).*/\1/p')
	   mbps=$(printf '%s\n' "$out" | sed -n 's/.* mbps=\([0-9.]*\).*/\1/p') ;;
	esac
	if [ -z "$iops" ] || [ "$iops" = 0 ]; then
		echo "vs-tgt: $wl on $srv produced no result:" >&2
		printf '%s\n' "$out" | tr '\r' '\n' | tail -5 >&2
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

# Median of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
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
