# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# Helpers the bench/ scripts source: locating the built tools, starting
# `faultlun serve` on a free 127.0.0.1 port as a child, describing the machine,
# medians, and CPU ticks from /proc/PID/stat. Sourcing sets $tmp (a scratch
# directory) and an EXIT trap that ends the server it started (by pid).

build=${BUILD:-build-bench}
fl=$build/cli/faultlun
load=$build/bench/fl_iscsi_load
for t in "$fl" "$load"; do
	[ -x "$t" ] || { echo "bench: $t not built" >&2; exit 77; }
done
tmp=$(mktemp -d)
flpid=""
# Ends the server started by fl_start and removes the scratch directory.
bench_cleanup() {
	fl_stop
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

# Starts `faultlun serve ARGS... --listen 127.0.0.1:0` in the background; sets flpid, flport.
fl_start() {
	"$fl" serve "$@" --listen 127.0.0.1:0 >"$tmp/fl.out" 2>"$tmp/fl.err" &
	flpid=$!
	flport=""
	_n=0
	while [ -z "$flport" ] && [ $_n -lt 100 ]; do
		sleep 0.1
		_n=$((_n + 1))
		flport=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/fl.out" "$tmp/fl.err" | head -1)
		kill -0 "$flpid" 2>/dev/null || break
	done
	if [ -z "$flport" ]; then
		echo "bench: faultlun serve did not start:" >&2
		cat "$tmp/fl.err" >&2
		exit 1
	fi
}

# Ends the server fl_start started.
fl_stop() {
	if [ -n "$flpid" ]; then
		kill "$flpid" 2>/dev/null || true
		wait "$flpid" 2>/dev/null || true
		flpid=""
	fi
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
