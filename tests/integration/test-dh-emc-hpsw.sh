#!/bin/sh
# SPDX-License-Identifier: MIT
# test-dh-emc-hpsw.sh FAULTLUN SCENARIOS - the EMC CLARiiON / VNX and HP
# active/passive personalities over two portals, through the real libiscsi
# client (`faultlun send`), with the library scenarios dh-emc-not-owned and
# dh-hpsw-failover (port A on the owning controller, port B on the other):
#  - emc: standard INQUIRY DGC / VRAID without TPGS and with the SP model in
#    its extended part; VPD C0h per port (owned through A, bound through B);
#    reads through B get NOT READY 04/03; the long trespass (MODE SELECT(10),
#    PF zero, page 22h, as Linux sends it) through B moves the LUN: B reads,
#    A gets 04/03 and C0h follows; the short trespass (MODE SELECT(6))
#    through A moves it back; `ctl act 0 {"owner": 2}` moves it as the array
#    would;
#  - hp_sw: TEST UNIT READY and reads through B get NOT READY 04/02 while A
#    serves; START STOP UNIT (START) through B makes B active and A passive.
set -u
fl=$1 scen=$2
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir

# Serves scenario $1 on free ports of 127.0.0.1 and 127.0.0.2; sets A, B.
serve() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -f "$tmp/ctl"
	"$fl" serve --ctl "$tmp/ctl" --listen 127.0.0.1:0 --listen 127.0.0.2:0 "$1" \
		2> "$tmp/banner" &
	pid=$!
	fl_two_portals "$tmp/banner"
}

# Expects item $2 of `faultlun send` output file $1 to start with $3.
expect() {
	grep -q "^#$2 .*: $3" "$1" || fail "item $2 of $(basename "$1"): want $3, got: $(cat "$1")"
}

long='raw:55 00 00 00 00 00 00 00 13 00,data=00000000000000002209'81ffff000000000000
short='raw:15 10 00 00 08 00,data=0000000022028'1ff

# --- EMC CLARiiON / VNX ---
serve "$scen/dh-emc-not-owned.json"
"$fl" send -u --json -x "$A" inquiry inquiry:vpd=0xc0 inquiry:vpd=0 > "$tmp/a.json" ||
	fail "send through A"
"$fl" send -u --json -x "$B" inquiry:vpd=0xc0 > "$tmp/b.json" || fail "send through B"
fl_send_check "$tmp/a.json" "$tmp/b.json" <<'PY' || exit 1
std = std_no_tpgs(a[0], b"DGC     ", b"VRAID", "scsi_dh_alua would take the LUN")
n = std[4] + 5
slen, mlen = std[160], std[99]
assert n >= 161 + slen + mlen and std[161 + slen:161 + slen + mlen] == b"VNX5300", std[96:]
ca, cb = bytes.fromhex(a[1]["data"]), bytes.fromhex(b[0]["data"])
assert (ca[1], ca[4], ca[5], ca[8], ca[27], ca[28], ca[30] & 4) == (0xC0, 2, 0, 0, 3, 4, 4), ca[:32]
assert (cb[4], cb[5], cb[8]) == (1, 0, 0), cb[:16]
pages = bytes.fromhex(a[2]["data"])
assert 0xC0 in pages[4:4 + pages[3]], pages
print("emc: identity, extended INQUIRY, VPD C0h per port: ok")
PY
"$fl" send -u "$A" read > "$tmp/r1" 2>&1
expect "$tmp/r1" 1 GOOD
"$fl" send -u "$B" read tur > "$tmp/r2" 2>&1
expect "$tmp/r2" 1 'CHECK_CONDITION, sense NOT_READY/.*(04/03)'
expect "$tmp/r2" 2 'CHECK_CONDITION, sense NOT_READY/.*(04/03)'
"$fl" send -u "$B" "$long" read > "$tmp/r3" 2>&1
expect "$tmp/r3" 1 GOOD
expect "$tmp/r3" 2 GOOD
"$fl" send -u "$A" read > "$tmp/r4" 2>&1
expect "$tmp/r4" 1 'CHECK_CONDITION, sense NOT_READY/.*(04/03)'
"$fl" send -u --json -x "$B" inquiry:vpd=0xc0 > "$tmp/c0b.json"
python3 -c '
import json, sys
c = bytes.fromhex([json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][0]["data"])
assert (c[4], c[5], c[8]) == (2, 0, 1), c[:16]
' "$tmp/c0b.json" || fail "VPD C0h through B after the trespass"
"$fl" send -u "$A" "$short" read > "$tmp/r5" 2>&1
expect "$tmp/r5" 1 GOOD
expect "$tmp/r5" 2 GOOD
"$fl" ctl "$tmp/ctl" act 0 '{"owner": 2}' > /dev/null || fail "ctl act owner"
"$fl" send -u "$A" read > "$tmp/r6" 2>&1
expect "$tmp/r6" 1 'CHECK_CONDITION, sense NOT_READY/.*(04/03)'
"$fl" send -u "$B" read > "$tmp/r7" 2>&1
expect "$tmp/r7" 1 GOOD
echo "emc: 04/03 on the peer SP, long and short trespass, owner action: ok"

# --- HP active/passive ---
serve "$scen/dh-hpsw-failover.json"
"$fl" send -u "$A" tur read > "$tmp/h1" 2>&1
expect "$tmp/h1" 1 GOOD
expect "$tmp/h1" 2 GOOD
"$fl" send -u "$B" tur read inquiry:vpd=0x80 readcap > "$tmp/h2" 2>&1
expect "$tmp/h2" 1 'CHECK_CONDITION, sense NOT_READY/.*(04/02)'
expect "$tmp/h2" 2 'CHECK_CONDITION, sense NOT_READY/.*(04/02)'
expect "$tmp/h2" 3 GOOD
expect "$tmp/h2" 4 GOOD
"$fl" send -u "$B" 'raw:1b 00 00 00 01 00' tur read > "$tmp/h3" 2>&1
expect "$tmp/h3" 1 GOOD
expect "$tmp/h3" 2 GOOD
expect "$tmp/h3" 3 GOOD
"$fl" send -u "$A" tur > "$tmp/h4" 2>&1
expect "$tmp/h4" 1 'CHECK_CONDITION, sense NOT_READY/.*(04/02)'
echo "hp_sw: 04/02 on the passive controller, START STOP UNIT activates: ok"
echo ok
