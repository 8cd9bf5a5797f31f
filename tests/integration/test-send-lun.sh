#!/bin/sh
# SPDX-License-Identifier: MIT
# test-send-lun.sh FAULTLUN - `faultlun send URL/N` addresses
# LUN N (docs/send.md): scenario multi-lun has LUN 0 (512-byte blocks) and
# LUN 3 (4096-byte blocks). READ CAPACITY through .../3 says 4096, a read
# through .../3 moves 4096 bytes, an item's lun=0 still goes to LUN 0, and
# .../7 gets LOGICAL UNIT NOT SUPPORTED (25/00), as iscsi-inq does.
set -u
fl=$1
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir

"$fl" serve -q --listen 127.0.0.1:0 "$(dirname "$0")/scenarios/multi-lun.json" --run "u=\${FAULTLUN_URL%/0}
	\"$fl\" send -u -i \$u/3 readcap read readcap:lun=0 > $tmp/three 2>&1
	\"$fl\" send -i \$u/7 tur > $tmp/seven 2>&1; :" > "$tmp/serve" 2>&1 ||
	fail "serve: $(cat "$tmp/serve")"
cat "$tmp/three" "$tmp/seven"
grep -q '^#1 readcap: GOOD' "$tmp/three" || fail "readcap through /3"
[ "$(grep -m1 'block_size:' "$tmp/three")" = "  block_size: 4096" ] || fail "LUN 3's block size is not 4096"
grep -q '^#2 read: GOOD, 4096 bytes in' "$tmp/three" || fail "a read through /3 is not one 4096-byte block"
grep -A3 '^#3 readcap:lun=0: GOOD' "$tmp/three" | grep -q 'block_size: 512' || fail "readcap:lun=0 did not answer for LUN 0"
grep -q '^#1 tur: CHECK_CONDITION, sense ILLEGAL_REQUEST/LOGICAL_UNIT_NOT_SUPPORTED (25/00)' "$tmp/seven" ||
	fail "LUN 7 (none) was not refused with 25/00"
echo ok
