#!/bin/sh
# SPDX-License-Identifier: MIT
# Scale: 256 LUNs, many sessions, 10,000 held commands. A scenario with 256
# memory LUNs holds every read on LUNs 1-255 (hold "until_release",
# docs/faults/hold.md); fl_iscsi_hold logs in SESSIONS sessions and leaves HELD
# reads outstanding over those LUNs; fl_iscsi_load measures 4 KiB random reads
# at QD 32 on LUN 0, which no rule touches, before and while the commands are
# held. Prints the server's resident memory (VmRSS of /proc/PID/status) at each
# step, the memory per held command, and LUN 0's latency before and during.
# The iSCSI front end gives each session a window of 128 commands, so SESSIONS
# must be at least HELD / 128.
#   bench/scale.sh [SECONDS [SESSIONS [HELD]]]    (defaults 5, 80, 10000)
set -eu
cd "$(dirname "$0")/.."
secs=${1:-5}
sessions=${2:-80}
held=${3:-10000}
. bench/common.sh
hold=$build/bench/fl_iscsi_hold
[ -x "$hold" ] || { echo "scale: $hold not built" >&2; exit 77; }
per=$(((held + sessions - 1) / sessions))
held=$((per * sessions))
iqn=iqn.2026-12.org.faultlun:bench

awk -v iqn="$iqn" 'BEGIN {
	printf "{\n  \"faultlun\": 1,\n  \"name\": \"bench-scale\",\n"
	printf "  \"description\": \"256 LUNs; reads on LUNs 1-255 are held until released.\",\n"
	printf "  \"target\": { \"iqn\": \"%s\" },\n  \"luns\": [", iqn
	for (i = 0; i < 256; i++)
		printf "%s\n    { \"lun\": %d, \"size\": \"%s\" }", i ? "," : "", i, i ? "4MiB" : "256MiB"
	printf "\n  ],\n  \"rules\": [ { \"id\": \"hold-1-255\", \"match\": { \"lun\": ["
	for (i = 1; i < 256; i++)
		printf "%s%d", (i > 1 ? ", " : ""), i
	printf "], \"class\": [\"read\"] }, \"action\": { \"hold\": \"until_release\" } } ]\n}\n"
}' >"$tmp/scale.json"

# Resident memory of the server in KiB.
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$flpid/status"; }
# LUN 0 latency line; $1 = label.
lun0() {
	out=$(timeout $((secs + 40)) "$load" -q 32 -b 4096 -t "$secs" "iscsi://127.0.0.1:$flport/$iqn/0")
	printf '  LUN 0 %-8s iops %7s  p50 %5s us  p99 %6s us  p99.9 %6s us\n' "$1" \
		"$(echo "$out" | field iops)" "$(echo "$out" | field p50_us)" \
		"$(echo "$out" | field p99_us)" "$(echo "$out" | field p999_us)"
}

echo "== machine"
machine
echo "256 LUNs, $sessions sessions x $per = $held held reads on LUNs 1-255; LUN 0 load $secs s"
fl_start "$tmp/scale.json" --ctl "$tmp/ctl"
r0=$(rss)
echo "  RSS after start:          $r0 KiB"
lun0 before
r1=$(rss)
echo "  RSS after LUN 0 load:     $r1 KiB"
# The sessions alone, nothing held: their memory is not the held commands'.
timeout 60 "$hold" -n "$sessions" -p 0 -f 1 -l 255 -t 2 "127.0.0.1:$flport" "$iqn" >/dev/null
r1=$(rss)
echo "  RSS after $sessions sessions logged in and out, nothing held: $r1 KiB"
timeout $((secs * 2 + 120)) "$hold" -n "$sessions" -p "$per" -f 1 -l 255 -t $((secs * 2 + 60)) \
	"127.0.0.1:$flport" "$iqn" >"$tmp/hold.out" 2>"$tmp/hold.err" &
hpid=$!
# Wait until the server reports the commands held.
n=0
got=0
still=0
while [ $n -lt 600 ]; do
	got=$("$fl" ctl "$tmp/ctl" counters 2>/dev/null | sed -n 's/.*"held":\([0-9]*\).*/\1/p')
	got=${got:-0}
	[ "$got" -ge "$held" ] && break
	# Stop waiting once the count has not grown for 2 s (the session windows are full).
	if [ "$got" = "${last:-}" ]; then
		still=$((still + 1))
		[ $still -lt 20 ] || break
	else
		still=0
		last=$got
	fi
	kill -0 "$hpid" 2>/dev/null || break
	sleep 0.1
	n=$((n + 1))
done
echo "  held now (faultlun ctl counters): $got after $((n / 10)).$((n % 10)) s"
r2=$(rss)
echo "  RSS with the commands held: $r2 KiB"
lun0 during
awk -v a="$r1" -v b="$r2" -v h="$got" 'BEGIN {
	printf "  memory per held command: %.0f bytes ((RSS held - RSS sessions only) / %d)\n", (b - a) * 1024 / h, h }'
kill "$hpid" 2>/dev/null || true
wait "$hpid" 2>/dev/null || true
cat "$tmp/hold.err" >&2
"$fl" ctl "$tmp/ctl" release --all >/dev/null 2>&1 || true
