#!/bin/sh
# SPDX-License-Identifier: MIT
# test-send.sh FAULTLUN SCENARIOS_DIR - `faultlun send` against the demo
# scenario (MEDIUM ERROR 11/00 on LBAs 4096-4103, INFORMATION = the LBA):
# the sense is decoded with its names and INFORMATION, a LUN reset completes
# and the next command sees its unit attention (29/00), raw CDBs and VPD
# pages work, --json gives one parseable object per item, and bad items are
# refused before anything is sent.
set -u
fl=$1 dir=$2
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir

"$fl" serve -q --listen 127.0.0.1:0 "$dir/demo.json" --run "\"$fl\" send \$FAULTLUN_URL \
	read:lba=4096,blocks=8 lun-reset read:lba=0 tur inquiry:vpd=0x83 \
	'raw:28 00 00 00 10 02 00 00 01 00,in=512' read:lba=0,nowait abort-task:last" \
	> "$tmp/out" 2>&1
rc=$?
[ $rc = 1 ] || fail "send exited $rc, not 1 (items ended in CHECK CONDITION): $(cat "$tmp/out")"
cat "$tmp/out"
grep -q '^#1 read.*CHECK_CONDITION, sense MEDIUM_ERROR/UNRECOVERED_READ_ERROR (11/00), fixed, INFORMATION 4096' "$tmp/out" || fail "item 1"
grep -q '^#2 lun-reset: FUNCTION COMPLETE' "$tmp/out" || fail "item 2"
grep -q '^#3 read.*UNIT_ATTENTION/POWER_ON_RESET' "$tmp/out" || fail "item 3: no 29/00 after the reset"
grep -q '^#4 tur: GOOD' "$tmp/out" || fail "item 4"
grep -q '^#5 inquiry:vpd=0x83: GOOD' "$tmp/out" || fail "item 5"
grep -q '^#6 raw.*MEDIUM_ERROR.*INFORMATION 4098' "$tmp/out" || fail "item 6: raw READ(10) of LBA 4098"
grep -q '^#7 read:lba=0,nowait: GOOD' "$tmp/out" || fail "item 7"
grep -q '^#8 abort-task:last: ' "$tmp/out" || fail "item 8"

"$fl" serve -q --listen 127.0.0.1:0 "$dir/demo.json" --run "\"$fl\" send --json -x \$FAULTLUN_URL \
	read:lba=4100 inquiry:len=36 sleep:ms=10 --ignore-status" > "$tmp/json" 2>/dev/null || fail "send --json --ignore-status exited $?"
python3 - "$tmp/json" <<'PY' || exit 1
import json, sys
items = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(items) == 3, items
r = items[0]
assert r["status_name"] == "CHECK_CONDITION" and r["sense"]["asc"] == 0x11
assert r["sense"]["information"] == 4100 and r["sense"]["format"] == "fixed"
assert bytes.fromhex(items[1]["data"])[8:16] == b"FAULTLUN"
print("json ok")
PY
for bad in 'reed:lba=1' 'read:lba=x' 'raw:28 0' 'abort-task:5' 'read:blocks=0'; do
	"$fl" send iscsi://127.0.0.1:9/iqn.x/0 "$bad" > /dev/null 2>&1
	[ $? = 2 ] || fail "item '$bad' was not refused with exit 2"
done
echo ok
