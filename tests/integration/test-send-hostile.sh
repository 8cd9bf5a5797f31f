#!/bin/sh
# SPDX-License-Identifier: MIT
# test-send-hostile.sh FAULTLUN - `faultlun send` against a hostile target
# (hostile-target.py, one misbehaviour per run; docs/send.md, "A hostile
# target"): a block size of 1 GiB or 0xfffffe00 is refused (exit 3, nothing
# allocated for it), 256 KiB of data-in for a 255-byte INQUIRY counts as 255
# bytes and an overrun, VPD lengths beyond the bytes received are not
# followed, a target that never answers the logout or never gives libiscsi
# back (MaxRecvDataSegmentLength=0) does not hold send past its deadline, and
# a session that fails leaves its items unanswered with exit 3.
set -u
fl=$1
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir python3

# Runs send with a time limit; $rc its exit status, $secs the seconds it took.
run() {
	t0=$(date +%s)
	timeout 60 "$fl" send "$@" > "$tmp/out" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	cat "$tmp/out"
}

for mode in bs-1g bs-odd; do
	fl_hostile_target "$mode"
	run -t 5 "$url" read:blocks=16
	[ $rc = 3 ] || fail "$mode: exit $rc, not 3"
	grep -q "faultlun send: LUN 0: the target's block size [0-9]* is out of range (a power of two, 512 to 65536)" \
		"$tmp/out" || fail "$mode: no message about the block size"
	! grep -q '^#1 read: GOOD' "$tmp/out" || fail "$mode: the read was sent"
done
fl_hostile_target bs-1g
run -t 5 "$url" read:blocks=300,bs=65536
[ $rc = 2 ] || fail "300 blocks of 64 KiB: exit $rc, not 2"
grep -q 'more than one command may move (16777216)' "$tmp/out" || fail "no message about the 16 MiB bound"

fl_hostile_target overrun
run -t 5 "$url" inquiry
[ $rc = 0 ] || fail "overrun: exit $rc"
grep -q '^#1 inquiry: GOOD, 255 bytes in (the target sent 262144: overrun of the allocation length 255)' \
	"$tmp/out" || fail "overrun: the byte count is not clamped to the allocation length"
run -t 5 --json -x "$url" inquiry
python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["data_in"] == 255 and r["overrun"] == 262144 and len(r["data"]) == 510, r
' "$tmp/out" || fail "overrun: JSON"

fl_hostile_target short-vpd
run -t 5 --json "$url" inquiry:vpd=0x83
python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())
d = r["decoded"]
assert r["data_in"] == 12 and d["page_length"] == 512 and d["truncated"], r
assert d["designators"] == [{"type": "naa", "association": "logical_unit", "code_set": 1,
                             "id": "01020304", "truncated": True}], d
' "$tmp/out" || fail "short VPD page: decoded past the bytes received"

fl_hostile_target no-logout
run -t 2 "$url" tur
[ $rc = 0 ] || fail "no-logout: exit $rc"
grep -q 'no answer to the logout within 2000 ms' "$tmp/out" || fail "no-logout: no message"
[ "$secs" -le 6 ] || fail "no-logout: send took $secs s"

fl_hostile_target vanish
run -t 10 "$url" tur inquiry tur
[ $rc = 3 ] || fail "vanish: exit $rc, not 3"
grep -q '^#2 inquiry: no answer (the session failed)' "$tmp/out" || fail "vanish: #2"
grep -q '^#3 tur: no answer (the session failed)' "$tmp/out" || fail "vanish: #3"
! grep -q 'no answer to the logout' "$tmp/out" || fail "vanish: a logout waited on a closed connection"
# a closed connection ends the waits at once (not -t 10 per item, spinning on the socket)
[ "$secs" -le 3 ] || fail "vanish: send took $secs s with the connection gone"

fl_hostile_target mrdsl0
run -t 1 "$url" write
[ $rc = 3 ] || fail "mrdsl0: exit $rc, not 3"
grep -q 'no progress within the deadline' "$tmp/out" || fail "mrdsl0: no message"
[ "$secs" -le 15 ] || fail "mrdsl0: send took $secs s"
echo ok
