#!/bin/sh
# SPDX-License-Identifier: MIT
# test-dh-rdac.sh FAULTLUN SCENARIOS - the RDAC personality over two portals,
# through the real libiscsi client (`faultlun send`), with the library
# scenario dh-rdac-not-owned (port A on controller A, the owner and preferred
# controller; port B on controller B):
#  - standard INQUIRY NETAPP / INF-01-00 without TPGS; VPD 00h lists C2h C4h
#    C8h C9h; C9h "vace" per port: owned (CVP) and preferred through A, neither
#    through B; C4h "subs" slot id 01 / 02; C8h "edid" with LUN 0; C2h "swr4"
#    with 255 LUNs (the expanded form);
#  - reads through B get ILLEGAL REQUEST 94/01, TUR and READ CAPACITY do not;
#  - MODE SELECT(10) with page 2Ch subpage 01h (PF zero, RDAC MODE 02h, LUN 0
#    marked 81h: what scsi_dh_rdac sends) through B moves the LUN: B reads, A
#    gets 94/01, C9h through B says owned; MODE SELECT(6) with the legacy page
#    through A moves it back; `ctl act 0 {"owner": 2}` moves it as the array's
#    management would;
#  - each transfer is one "owner_moved" trace event with its cause
#    (mode_select twice, then management), none for the refused reads.
set -u
fl=$1 scen=$2
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir

"$fl" serve --ctl "$tmp/ctl" --trace "$tmp/trace" --listen 127.0.0.1:0 --listen 127.0.0.2:0 \
	"$scen/dh-rdac-not-owned.json" 2> "$tmp/banner" &
pid=$!
fl_two_portals "$tmp/banner"

# Expects item $2 of `faultlun send` output file $1 to start with $3.
expect() {
	grep -q "^#$2 .*: $3" "$1" || fail "item $2 of $(basename "$1"): want $3, got: $(cat "$1")"
}

# C9h through URL $1: prints "CVP PRIO" (byte 8 bit 0, byte 9).
c9() {
	"$fl" send -u --json -x "$1" inquiry:vpd=0xc9 > "$tmp/c9.json" || fail "C9h through $1"
	python3 -c '
import json, sys
c = bytes.fromhex([json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][0]["data"])
assert c[1] == 0xC9 and c[3] == 0x2C and c[4:8] == b"vace", c[:8]
print(c[8] & 1, c[9] & 15)
' "$tmp/c9.json"
}

"$fl" send -u --json -x "$A" inquiry inquiry:vpd=0 inquiry:vpd=0xc4 inquiry:vpd=0xc8 \
	inquiry:vpd=0xc2 > "$tmp/a.json" || fail "send through A"
"$fl" send -u --json -x "$B" inquiry:vpd=0xc4 > "$tmp/b.json" || fail "send through B"
fl_send_check "$tmp/a.json" "$tmp/b.json" <<'PY' || exit 1
std = std_no_tpgs(a[0], b"NETAPP  ", b"INF-01-00", "multipathd would take the alua prioritizer")
pages = bytes.fromhex(a[1]["data"])
assert pages[4:4 + pages[3]].endswith(bytes([0xC2, 0xC4, 0xC8, 0xC9])), pages
c4a, c4b = bytes.fromhex(a[2]["data"]), bytes.fromhex(b[0]["data"])
assert c4a[4:8] == b"subs" and c4a[28:30] == b"01" and c4b[28:30] == b"02", (c4a, c4b)
assert c4a[8:24] == c4b[8:24], "one array, one subsystem id through both controllers"
c8 = bytes.fromhex(a[3]["data"])
assert c8[4:8] == b"edid" and c8[89] == 16 and c8[174] == 0, c8[:12]
c2 = bytes.fromhex(a[4]["data"])
assert c2[4:8] == b"swr4" and c2[15] == 255, c2[:16]
print("rdac: identity, VPD 00h, C4h per port, C8h, C2h: ok")
PY
[ "$(c9 "$A")" = "1 1" ] || fail "C9h through A: $(c9 "$A"), want owned, preferred"
[ "$(c9 "$B")" = "0 2" ] || fail "C9h through B: $(c9 "$B"), want not owned, secondary"

# The parameter lists scsi_dh_rdac sends: mode header, page 2Ch (expanded:
# subpage 01h, length 128h; legacy: length 68h), RDAC MODE 02h, quiescence
# timeout 20 s, forced quiescence, LUN table entry 0 = 81h.
page() {
	python3 -c '
import sys
x = sys.argv[1] == "expanded"
p = bytearray(308 if x else 110)
o = 12 if x else 6
p[o - 4:o] = b"\x6c\x01\x01\x28" if x else b"\x00\x00\x2c\x68"
p[o + 33], p[o + 36], p[o + 37], p[o + 38] = 2, 20, 2, 0x81
print(bytes(p).rstrip(bytes(1)).hex())
' "$1"
}
# data= up to the last non-zero byte; the rest of the list is zeroes (pattern 0)
expanded="raw:55 00 00 00 00 00 00 01 34 00,out=308,pattern=0,data=$(page expanded)"
legacy="raw:15 00 00 00 6e 00,out=110,pattern=0,data=$(page legacy)"
"$fl" send -u "$A" read > "$tmp/r1" 2>&1
expect "$tmp/r1" 1 GOOD
"$fl" send -u "$B" read tur readcap > "$tmp/r2" 2>&1
expect "$tmp/r2" 1 'CHECK_CONDITION, sense ILLEGAL_REQUEST/94/01'
expect "$tmp/r2" 2 GOOD
expect "$tmp/r2" 3 GOOD
"$fl" send -u "$B" "$expanded" read > "$tmp/r3" 2>&1
expect "$tmp/r3" 1 GOOD
expect "$tmp/r3" 2 GOOD
"$fl" send -u "$A" read > "$tmp/r4" 2>&1
expect "$tmp/r4" 1 'CHECK_CONDITION, sense ILLEGAL_REQUEST/94/01'
[ "$(c9 "$B")" = "1 2" ] || fail "C9h through B after the transfer: $(c9 "$B"), want owned, secondary"
"$fl" send -u "$A" "$legacy" read > "$tmp/r5" 2>&1
expect "$tmp/r5" 1 GOOD
expect "$tmp/r5" 2 GOOD
[ "$(c9 "$A")" = "1 1" ] || fail "C9h through A after the legacy transfer: $(c9 "$A")"
"$fl" ctl "$tmp/ctl" act 0 '{"owner": 2}' > /dev/null || fail "ctl act owner"
"$fl" send -u "$A" read > "$tmp/r6" 2>&1
expect "$tmp/r6" 1 'CHECK_CONDITION, sense ILLEGAL_REQUEST/94/01'
"$fl" send -u "$B" read > "$tmp/r7" 2>&1
expect "$tmp/r7" 1 GOOD
moves=$(python3 -c '
import json, sys
print(" ".join("%s:%d>%d" % (e["cause"], e["from"], e["to"])
               for e in map(json.loads, open(sys.argv[1])) if e["event"] == "owner_moved"))
' "$tmp/trace")
[ "$moves" = "mode_select:1>2 mode_select:2>1 management:1>2" ] ||
	fail "owner_moved trace events: '$moves', want mode_select:1>2 mode_select:2>1 management:1>2"
echo "rdac: 94/01 on the non-owner, MODE SELECT(10) expanded and (6) legacy transfers, owner action, traced: ok"
echo ok
