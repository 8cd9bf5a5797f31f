# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# Helpers the bench/ scripts source: locating the built tools, starting
# `faultlun serve` (or any server that prints "listening on 127.0.0.1:PORT")
# on a free 127.0.0.1 port as a child, starting tgtd with one tmpfs LUN,
# describing the machine, medians, and CPU ticks from /proc/PID/stat.
# Sourcing sets $tmp (a scratch directory) and an EXIT trap that ends the
# servers it started (by pid).

. tests/lib/common.sh # fl_freeport
build=${BUILD:-build-bench}
fl=$build/cli/faultlun
load=$build/bench/fl_iscsi_load
for t in "$fl" "$load"; do
	[ -x "$t" ] || { echo "bench: $t not built" >&2; exit 77; }
done
tmp=$(mktemp -d)
flpid=""
tgtpid=""
bench_pids="" # every server serve_start started and no one stopped yet
# Ends the servers started here (fl_start, serve_start, tgt_start) and removes the scratch directory.
bench_cleanup() {
	for _p in $bench_pids; do server_stop "$_p"; done
	tgt_stop
	rm -rf "$tmp"
}
# shellcheck disable=SC2154
trap 'rc=$?; bench_cleanup; exit $rc' EXIT
trap 'exit 1' INT TERM

# Prints the machine: CPU model, cores, kernel.
machine() {
	echo "cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "cores: $(nproc) online; kernel: $(uname -r); memory: $(awk '/^MemTotal/ { print $2 / 1024 " MiB"; exit }' /proc/meminfo)"
	echo "load average at start: $(cut -d" " -f1-3 /proc/loadavg)"
}

# serve_start NAME CMD [ARGS...]: starts CMD in the background (output in
# $tmp/NAME.out, .err) and waits, 10 s at most, for its "listening on
# 127.0.0.1:PORT" line; sets ${NAME}pid and ${NAME}port.
serve_start() {
	_name=$1
	shift
	"$@" >"$tmp/$_name.out" 2>"$tmp/$_name.err" &
	_pid=$!
	bench_pids="$bench_pids $_pid"
	_port=""
	_n=0
	while [ -z "$_port" ] && [ $_n -lt 100 ]; do
		sleep 0.1
		_n=$((_n + 1))
		_port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/$_name.out" "$tmp/$_name.err" | head -1)
		kill -0 "$_pid" 2>/dev/null || break
	done
	if [ -z "$_port" ]; then
		echo "bench: $_name ($1) did not start:" >&2
		cat "$tmp/$_name.err" >&2
		exit 1
	fi
	eval "${_name}pid=\$_pid ${_name}port=\$_port"
}

# Ends the server of pid $1 that serve_start started.
server_stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	bench_pids=$(echo "$bench_pids" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ')
}

# Starts `faultlun serve ARGS... --listen 127.0.0.1:0` in the background; sets flpid, flport.
fl_start() {
	serve_start fl "$fl" serve "$@" --listen 127.0.0.1:0
}

# Ends the server fl_start started.
fl_stop() {
	if [ -n "$flpid" ]; then
		server_stop "$flpid"
		flpid=""
	fi
}

# Exits 77 unless tgtd, tgtadm and iscsi-perf are there and we are root.
tgt_check() {
	for _t in tgtd tgtadm iscsi-perf; do
		command -v $_t >/dev/null 2>&1 || [ -x /usr/sbin/$_t ] || { echo "bench: $_t missing" >&2; exit 77; }
	done
	if [ "$(id -u)" != 0 ]; then echo "bench: tgtd needs root" >&2; exit 77; fi
	PATH=$PATH:/usr/sbin
}

# tgt_start SIZE: tgtd (foreground child, its own control port) serving one LUN of
# SIZE on a tmpfs file (/dev/shm, the rdwr backing store) as LUN 1; sets tgtpid,
# tgtport, tgturl. tgtd takes control ports 0..32767 only; 0 is the system's own
# tgtd. A port whose socket exists belongs to another tgtd: never talk to it. If
# tgtd still cannot have the pair (control port locked, portal taken), try another.
tgt_start() {
	mkdir -p /var/run/tgtd
	tgtimg=/dev/shm/fl-bench-$$.img
	truncate -s "$1" "$tgtimg"
	_iqn=iqn.2026-12.org.faultlun:tgt-bench
	_try=0
	while :; do
		_try=$((_try + 1))
		[ $_try -le 10 ] || { echo "bench: tgtd did not start on any control port" >&2; cat "$tmp/tgt.log" >&2 2>/dev/null; exit 1; }
		tgtctl=$((1024 + $(od -An -N2 -tu2 /dev/urandom) % 31744))
		[ -e "/var/run/tgtd/socket.$tgtctl" ] && continue
		tgtport=$(fl_freeport)
		tgtd -f -C "$tgtctl" --iscsi "portal=127.0.0.1:$tgtport" >"$tmp/tgt.log" 2>&1 &
		tgtpid=$!
		_n=0
		while kill -0 "$tgtpid" 2>/dev/null && [ $_n -lt 50 ]; do
			tgtadm -C "$tgtctl" --lld iscsi --op new --mode target --tid 1 -T "$_iqn" 2>/dev/null && break
			_n=$((_n + 1))
			sleep 0.1
		done
		if kill -0 "$tgtpid" 2>/dev/null && [ $_n -lt 50 ]; then
			break
		fi
		echo "bench: tgtd on control port $tgtctl, portal $tgtport: no luck, another pair" >&2
		kill "$tgtpid" 2>/dev/null || true
		wait "$tgtpid" 2>/dev/null || true
		tgtpid=""
	done
	tgtadm -C "$tgtctl" --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 -b "$tgtimg"
	tgtadm -C "$tgtctl" --lld iscsi --op bind --mode target --tid 1 -I ALL
	# shellcheck disable=SC2034 # for the scripts that source this file
	tgturl="iscsi://127.0.0.1:$tgtport/$_iqn/1"
	ss -Htln "sport = :$tgtport" | grep -q . || { echo "bench: tgtd does not listen on $tgtport" >&2; cat "$tmp/tgt.log" >&2; exit 1; }
}

# Ends the tgtd tgt_start started: tgtd stops on its own control requests;
# SIGKILL if it has not after 5 s. Removes its image.
tgt_stop() {
	if [ -n "$tgtpid" ]; then
		tgtadm -C "$tgtctl" --lld iscsi --op delete --mode target --tid 1 --force >/dev/null 2>&1 || true
		tgtadm -C "$tgtctl" --op delete --mode system >/dev/null 2>&1 || true
		_n=0
		while kill -0 "$tgtpid" 2>/dev/null && [ $_n -lt 50 ]; do sleep 0.1; _n=$((_n + 1)); done
		kill -9 "$tgtpid" 2>/dev/null || true
		wait "$tgtpid" 2>/dev/null || true
		tgtpid=""
		rm -f "$tgtimg"
	fi
}

# iscsi_perf_iops SECONDS ARGS...: iscsi-perf ARGS for SECONDS; prints "IOPS MB/s" of its
# last "iops average" line (nothing when it gave none).
iscsi_perf_iops() {
	_s=$1
	shift
	timeout -k 3 -s INT "$_s" iscsi-perf "$@" 2>&1 | tr '\r' '\n' | grep 'iops average' | tail -1 |
		sed -n 's/.*iops average \([0-9]*\) (\([0-9]*\) MB.*/\1 \2/p'
}

# CPU ticks (utime+stime, all threads) of pid $1.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# Median of the numbers on stdin.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Value of key $1 in the fl_iscsi_load line on stdin.
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p; s/^$1=\([0-9.]*\).*/\1/p" | head -1; }
