#!/bin/sh
# SPDX-License-Identifier: MIT
# test-multipath.sh FAULTLUN SCENARIO - one target behind two portals
# (docs/multipath.md), with scenarios/multipath-two-ports.json of
# tests/integration: port A (127.0.0.1, relative port 1, group 1,
# active/optimized) and port B (127.0.0.2, relative port 2, group 2,
# standby). Through `faultlun send`:
#  - INQUIRY VPD 83h through each portal names its own relative port and
#    target port group (SPC-4 r37 7.8.6.7, 7.8.6.8);
#  - REPORT TARGET PORT GROUPS lists both groups with their states and ports;
#  - a read through B (standby) gets NOT READY 04/0B while A reads;
#  - SendTargets (iscsi-ls, when installed) lists both portals, tags 1 and 2;
#  - `faultlun ctl SOCKET alua 2 active_optimized` while a session is open on
#    each portal: the next command of each gets UNIT ATTENTION 2A/06;
#  - a transport rule dropping every PDU on port A leaves B serving;
#  - a SCSI rule on port_group 2 answers B's reads with 04/0A, A's read works.
set -u
fl=$1 scen=$2
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir

"$fl" serve --ctl "$tmp/ctl" "$scen" 2> "$tmp/banner" &
pid=$!
fl_two_portals "$tmp/banner"
cat "$tmp/banner"
case $b in 127.0.0.2:*) ;; *) fail "port B is not on 127.0.0.2: $b" ;; esac
for r in port-a-cut group2-transitioning; do
	"$fl" ctl "$tmp/ctl" disarm $r > /dev/null || fail "ctl disarm $r"
done
rtpg="raw:a3 0a 00 00 00 00 00 00 01 00 00 00,in=256"

# VPD 83h and RTPG through each portal, in JSON
"$fl" send -u --json -x "$A" inquiry:vpd=0x83 "$rtpg" read > "$tmp/a.json" || fail "send through A"
"$fl" send -u --json -x "$B" inquiry:vpd=0x83 "$rtpg" read > "$tmp/b.json"
python3 - "$tmp/a.json" "$tmp/b.json" <<'PY' || exit 1
import json, sys

def items(path):
    return [json.loads(l) for l in open(path) if l.startswith("{")]

def designators(data):
    """(relative port, target port group) of a VPD 83h page."""
    rel = tpg = None
    off, end = 4, 4 + int.from_bytes(data[2:4], "big")
    while off + 4 <= end:
        assoc, kind, n = (data[off + 1] >> 4) & 3, data[off + 1] & 15, data[off + 3]
        if assoc == 1 and kind == 4:
            rel = int.from_bytes(data[off + 6:off + 8], "big")
        if assoc == 1 and kind == 5:
            tpg = int.from_bytes(data[off + 6:off + 8], "big")
        off += 4 + n
    return rel, tpg

def groups(data):
    """{group: (state, [relative ports])} of REPORT TARGET PORT GROUPS."""
    out, off, end = {}, 4, 4 + int.from_bytes(data[0:4], "big")
    while off + 8 <= end:
        state, gid, n = data[off] & 15, int.from_bytes(data[off + 2:off + 4], "big"), data[off + 7]
        ports = [int.from_bytes(data[off + 8 + 4 * i + 2:off + 8 + 4 * i + 4], "big") for i in range(n)]
        out[gid] = (state, ports)
        off += 8 + 4 * n
    return out

a, b = items(sys.argv[1]), items(sys.argv[2])
assert len(a) == 3 and len(b) == 3, (a, b)
da, db = designators(bytes.fromhex(a[0]["data"])), designators(bytes.fromhex(b[0]["data"]))
assert da == (1, 1), f"VPD 83h through A: relative port, group {da}"
assert db == (2, 2), f"VPD 83h through B: relative port, group {db}"
for x in (a, b):
    g = groups(bytes.fromhex(x[1]["data"]))
    assert g == {1: (0, [1]), 2: (2, [2])}, f"RTPG: {g}"
assert a[2]["status_name"] == "GOOD", a[2]
assert b[2]["status_name"] == "CHECK_CONDITION", b[2]
assert (b[2]["sense"]["key"], b[2]["sense"]["asc"], b[2]["sense"]["ascq"]) == (2, 4, 0x0b), b[2]
print("VPD 83h, RTPG and the standby read: ok")
PY

# SendTargets: every portal with its tag
if command -v iscsi-ls > /dev/null 2>&1; then
	iscsi-ls "iscsi://$a" > "$tmp/ls" 2>&1
	cat "$tmp/ls"
	grep -q "Portal:$a,1" "$tmp/ls" || fail "SendTargets does not list $a,1"
	grep -q "Portal:$b,2" "$tmp/ls" || fail "SendTargets does not list $b,2"
else
	echo "iscsi-ls not installed: SendTargets not checked"
fi

# A state change during a session on each portal: 2A/06 for both nexuses
"$fl" send -u "$A" tur sleep:ms=1500 read > "$tmp/ua-a" 2>&1 &
sa=$!
"$fl" send -u "$B" inquiry sleep:ms=1500 read > "$tmp/ua-b" 2>&1 &
sb=$!
sleep 0.7
"$fl" ctl "$tmp/ctl" alua 2 active_optimized || fail "ctl alua"
wait $sa
wait $sb
cat "$tmp/ua-a" "$tmp/ua-b"
grep -q '^#3 read: CHECK_CONDITION, sense UNIT_ATTENTION/ASYMMETRIC_ACCESS_STATE_CHANGED (2A/06)' \
	"$tmp/ua-a" || fail "no 2A/06 on A's nexus"
grep -q '^#3 read: CHECK_CONDITION, sense UNIT_ATTENTION/ASYMMETRIC_ACCESS_STATE_CHANGED (2A/06)' \
	"$tmp/ua-b" || fail "no 2A/06 on B's nexus"
"$fl" send -u "$B" read > "$tmp/b2" 2>&1
grep -q '^#1 read: GOOD' "$tmp/b2" || fail "B does not read once group 2 is active: $(cat "$tmp/b2")"
"$fl" ctl "$tmp/ctl" alua 9 standby > /dev/null 2>&1 && fail "ctl alua of an unknown group succeeded"

# Port A drops every PDU; B serves
"$fl" ctl "$tmp/ctl" arm port-a-cut > /dev/null || fail "ctl arm port-a-cut"
"$fl" send -u -t 2 "$A" read > "$tmp/cut-a" 2>&1 && fail "A answered while cut: $(cat "$tmp/cut-a")"
"$fl" send -u "$B" read write:lba=8 read:lba=8 > "$tmp/cut-b" 2>&1 || fail "B while A is cut: $(cat "$tmp/cut-b")"
grep -q '^#3 read:lba=8: GOOD' "$tmp/cut-b" || fail "B while A is cut"

# A rule on port group 2: B's reads get 04/0A, A's work
"$fl" ctl "$tmp/ctl" disarm port-a-cut > /dev/null || fail "ctl disarm port-a-cut"
"$fl" ctl "$tmp/ctl" arm group2-transitioning > /dev/null || fail "ctl arm group2-transitioning"
"$fl" send -u "$B" read > "$tmp/tr-b" 2>&1
grep -q '^#1 read: CHECK_CONDITION, sense NOT_READY/.*(04/0A)' "$tmp/tr-b" || fail "B in transit: $(cat "$tmp/tr-b")"
"$fl" send -u "$A" read > "$tmp/tr-a" 2>&1
grep -q '^#1 read: GOOD' "$tmp/tr-a" || fail "A in transit: $(cat "$tmp/tr-a")"
echo ok
