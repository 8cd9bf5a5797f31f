#!/bin/sh
# SPDX-License-Identifier: MIT
# Data integrity across a restart: writes through libiscsi under the faults of
# integrity.json with a file store, then a fresh `faultlun serve` on the same
# file verifies that every write acknowledged with GOOD reads back exactly.
#   test-integrity.sh FAULTLUN INTEGRITY SCENARIO WORKDIR [COUNT]
# The client runs as the target's direct child (exec) and bounds its own time:
# if the target dies it stops at once (exit 3), and this script reports the
# target's exit status and the tail of its stderr. It also ends a client that
# outlives a failed phase, so no process holds the test's output open.
set -u
fl=$1
prog=$2
scen=$3
work=$4
count=${5:-400}
mkdir -p "$work"
img=$work/integrity.img
journal=$work/integrity.journal
rm -f "$img" "$journal"

# check NAME STATUS: reports a failed phase (the target's status and stderr tail).
check() {
	[ "$2" -eq 0 ] && { cat "$work/$1-serve.err"; return; }
	cpid=$(cat "$work/$1-client.pid" 2>/dev/null)
	# A live client (not a zombie) after its target ended: end it.
	if [ -n "$cpid" ] && [ -r "/proc/$cpid/status" ] &&
		! grep -q '^State:[[:space:]]*Z' "/proc/$cpid/status"; then
		echo "FAIL: $1 phase: the client (pid $cpid) outlived the target: ending it"
		kill "$cpid"
	fi
	if [ "$2" -gt 128 ]; then
		echo "FAIL: $1 phase: faultlun serve was killed by signal $(($2 - 128))"
	else
		echo "FAIL: $1 phase: faultlun serve exited with status $2 (the client's own" \
			"status if the target lived until the client ended)"
	fi
	echo "--- last lines of faultlun serve's stderr:"
	tail -n 20 "$work/$1-serve.err"
	exit 1
}

# The client's stderr goes to ours (fd 3), the target's to a file; the client
# writes its pid first, then becomes the target's direct child.
run="echo \$\$ >'$work/write-client.pid'; exec '$prog' write '$journal' \"\$FAULTLUN_URL\""
"$fl" serve -q --listen 127.0.0.1:0 "$scen" --store "file:$img" \
	--run "$run $count 1 2>&3" 3>&2 2>"$work/write-serve.err"
check write $?
[ -s "$journal" ] || { echo "FAIL: empty journal"; exit 1; }
# A new target process on the same file, no faults.
run="echo \$\$ >'$work/verify-client.pid'; exec '$prog' verify '$journal' \"\$FAULTLUN_URL\""
"$fl" serve -q --listen 127.0.0.1:0 --size 16MiB --store "file:$img" \
	--run "$run 2>&3" 3>&2 2>"$work/verify-serve.err"
check verify $?
echo "PASS"
