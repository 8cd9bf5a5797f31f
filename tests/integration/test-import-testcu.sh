#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-testcu.sh FAULTLUN: libiscsi's iscsi-test-cu against tgtd, captured
# (tcpdump on lo) and imported: two initiators taking SPC-2 reservations,
# conflicting, and losing them to a logout, an I_T nexus loss and a LUN RESET;
# reads past the end and with RDPROTECT set; INQUIRY's pages. The scenario
# must verify with 0 differences: the conflicts are the LUN's own (no rule),
# the connections' ends and the reset are replayed, and the ILLEGAL REQUEST
# answers faultlun's LUN gives those commands itself get no rule
# (docs/import.md). Exit 77 when tcpdump, tgtd or iscsi-test-cu is missing.
set -u
. "$(dirname "$0")/../lib/common.sh"
fl=$1
PATH=$PATH:/usr/sbin
fl_tmpdir iscsi-test-cu tcpdump
tdpid=""
tgtpid=""
ctl=""
trap '[ -n "$tdpid" ] && kill "$tdpid" 2>/dev/null; fl_tgtd_stop; rm -rf "$tmp"' EXIT
port=$(fl_freeport) || fail "no free port"
iqn=iqn.2026-12.org.faultlun:import-testcu
truncate -s 32M "$tmp/lun1.img"
fl_tgtd "$port" "$iqn" "$tmp/lun1.img"
fl_capture "$port" "$tmp/cap.pcap"
tests=ALL.Reserve6.Simple,ALL.Reserve6.Logout,ALL.Reserve6.ITNexusLoss,ALL.Reserve6.LUNReset
tests=$tests,ALL.Read10.BeyondEol,ALL.Read10.ReadProtect,ALL.Inquiry,ALL.ReadCapacity10
tests=$tests,ALL.Verify10.Mismatch,ALL.PrinServiceactionRange,ALL.GetLBAStatus.Simple
tests=$tests,ALL.Prefetch10.Simple,ALL.Prefetch10.BeyondEol,ALL.CompareAndWrite.Simple
timeout 60 iscsi-test-cu --dataloss -i iqn.2026-12.org.faultlun:testcu-1 -I iqn.2026-12.org.faultlun:testcu-2 \
	-t "$tests" "iscsi://127.0.0.1:$port/$iqn/1" >"$tmp/testcu.out" 2>&1
fl_capture_end
grep -q "Suite: Reserve6" "$tmp/testcu.out" || { cat "$tmp/testcu.out"; fail "iscsi-test-cu did not run"; }
grep "packets dropped by kernel" "$tmp/cap.pcap.err"

"$fl" import "$tmp/cap.pcap" --verify -o "$tmp/imported.json" >"$tmp/verify.out" 2>"$tmp/verify.err"
rc=$?
cat "$tmp/verify.out"
[ $rc = 0 ] || { cat "$tmp/verify.err"; fail "verify exits $rc, not 0 (no differences)"; }
grep -Eq '^verify: ([5-9][0-9]|[1-9][0-9]{2,}) commands, 0 differences' "$tmp/verify.out" ||
	fail "verify did not replay the run's commands"
# VERIFY with BYTCHK compares data the capture's writes carried: not compared.
grep -Eq 'not compared:.* [1-9][0-9]* comparing data not kept' "$tmp/verify.out" ||
	fail "verify compared VERIFY's data comparisons"
"$fl" lint "$tmp/imported.json" >"$tmp/lint.out" 2>&1 || { cat "$tmp/lint.out"; fail "the scenario does not lint"; }
# Every answer of the run is one faultlun's LUN gives itself (PERSISTENT
# RESERVE IN's service actions out of range, GET LBA STATUS, ...) but the
# MISCOMPARE of VERIFY (data) and tgtd's refusal of PERSISTENT RESERVE IN
# READ FULL STATUS, which faultlun's LUN supports: a rule for that service
# action only (READ KEYS, the same opcode, stays GOOD).
python3 - "$tmp/imported.json" <<'PY' || fail "the rules are not what the run needs"
import json, sys
s = json.load(open(sys.argv[1]))
rules = s.get("rules", [])
# MISCOMPARE compares data the LUN compares itself: no rule, a note
assert not [r for r in rules if r["action"].get("sense", "").startswith("MISCOMPARE")], rules
refs = s["emulates"]["references"]
assert any("MISCOMPARE answers" in l for l in refs), refs
# PRE-FETCH (10) past the end, 21/00, at many LBAs (some wrapping past
# 2^32): one class per answer, not one per range, the LUN's own answer
pf = [l for l in refs if l.startswith("no rule: ILLEGAL_REQUEST/21/00 to PRE-FETCH(10)")]
assert 1 <= len(pf) <= 2, pf
assert not any("answer classes past" in l for l in refs), refs
# an opcode tgtd does not support: one rule, whatever the LBA
atomic = [r for r in rules if r["match"].get("opcode") == "0x89"]
assert len(atomic) == 1 and "lba" not in atomic[0]["match"], atomic
assert atomic[0]["action"] == {"sense": "ILLEGAL_REQUEST/20/00"}, atomic
other = [r for r in rules if r["match"].get("opcode") != "0x89"]
assert len(other) == 1, other
m = other[0]["match"]
assert m["opcode"] == "0x5e" and m["service_action"] == 3 and "after" not in m, other
assert other[0]["action"] == {"sense": "ILLEGAL_REQUEST/24/00"}, other
# tgtd answers PRE-FETCH GOOD, not CONDITION MET: the LUN says so
assert [l for l in s["luns"] if l["lun"] == 1][0]["prefetch"] == "good", s["luns"]
PY
grep -q 'no rule: RESERVATION CONFLICT to TEST UNIT READY on LUN 1' "$tmp/imported.json" ||
	fail "no line says the conflicts are the LUN's own"
for a in "21/00 to READ(10)" "24/00 to READ(10)"; do
	grep -q "no rule: ILLEGAL_REQUEST/$a on LUN 1, [0-9]* time(s) (first command frame [0-9]*): faultlun.s LUN gives that command that answer itself" \
		"$tmp/imported.json" || fail "no line says ILLEGAL_REQUEST/$a is faultlun's own answer"
done
# The same capture against a scenario that makes every TEST UNIT READY a
# conflict: told apart.
python3 - "$tmp/imported.json" "$tmp/alt.json" <<'PY' || fail "cannot write the altered scenario"
import json, sys
s = json.load(open(sys.argv[1]))
s["rules"] = [{"id": "tur", "match": {"opcode": "0x00"},
               "action": {"status": "reservation_conflict"}}] + s.get("rules", [])
json.dump(s, open(sys.argv[2], "w"))
PY
"$fl" import "$tmp/cap.pcap" --verify-scenario "$tmp/alt.json" >"$tmp/alt.out" 2>&1
[ $? = 1 ] || { cat "$tmp/alt.out"; fail "verify of a scenario with a conflict rule is not exit 1"; }
grep -q 'TEST UNIT READY: status: capture status 0x00 GOOD, replay status 0x18' "$tmp/alt.out" ||
	fail "verify does not name the TEST UNIT READY that differs"
echo "import (iscsi-test-cu against tgtd): $(tail -1 "$tmp/verify.out")"
