#!/bin/sh
# SPDX-License-Identifier: MIT
# test-resize-huge.sh FAULTLUN: `faultlun ctl SOCKET act 0 '{"resize": SIZE}'`
# against `faultlun serve` (a 64 MiB memory LUN). Sizes the LUN cannot take
# (0, not a multiple of the block size, over 2^47 - 1 blocks) are answered
# with an error that names the value and the limit, and change nothing; a
# resize to 4096 TiB and back costs the target no memory (VmRSS) and the
# shrink returns at once. Prints the figures measured.
set -u
fl=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/run.sh" <<'SCRIPT'
fl=$1 sock=$2 target=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$target/status"; }
blocks() { "$fl" ctl "$sock" status | sed -n 's/.*"blocks":\([0-9]*\).*/\1/p'; }
ms() { echo $(($(date +%s%N) / 1000000)); }
[ "$(blocks)" = 131072 ] || fail "the LUN does not start with 131072 blocks: $(blocks)"
for bad in '0|at least one block' '"0blocks"|at least one block' \
	'1000|not a multiple of LUN 0'"'"'s block size (512 bytes)' \
	'"18446744073709551615"|more than the largest LUN, 140737488355327 blocks' \
	'"140737488355328blocks"|more than the largest LUN'; do
	size=${bad%%|*} says=${bad#*|}
	out=$("$fl" ctl "$sock" act 0 "{\"resize\": $size}" 2>&1) && fail "resize $size answered ok: $out"
	echo "$out" | grep -qF "$says" || fail "resize $size: \"$out\" does not say \"$says\""
	[ "$(blocks)" = 131072 ] || fail "resize $size changed the size to $(blocks) blocks"
done
rss0=$(rss)
t0=$(ms)
"$fl" ctl "$sock" act 0 '{"resize": "4096TiB"}' >/dev/null || fail "resize to 4096 TiB refused"
t1=$(ms)
[ "$(blocks)" = 8796093022208 ] || fail "4096 TiB gave $(blocks) blocks"
rss1=$(rss)
t2=$(ms)
"$fl" ctl "$sock" act 0 '{"resize": "64MiB"}' >/dev/null || fail "resize back to 64 MiB refused"
t3=$(ms)
[ "$(blocks)" = 131072 ] || fail "64 MiB gave $(blocks) blocks"
rss2=$(rss)
echo "VmRSS ${rss0} KiB at 64 MiB, ${rss1} KiB at 4096 TiB, ${rss2} KiB back at 64 MiB;" \
	"grow $((t1 - t0)) ms, shrink $((t3 - t2)) ms (each with a faultlun ctl start)"
[ $((rss1 - rss0)) -lt 16384 ] || fail "VmRSS grew by $((rss1 - rss0)) KiB at 4096 TiB"
[ $((t3 - t2)) -lt 2000 ] || fail "the shrink took $((t3 - t2)) ms"
SCRIPT
"$fl" serve -q --listen 127.0.0.1:0 --size 64MiB --ctl "$tmp/ctl.sock" \
	--run "sh '$tmp/run.sh' '$fl' '$tmp/ctl.sock' \$PPID"
