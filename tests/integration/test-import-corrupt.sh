#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-corrupt.sh FAULTLUN: `faultlun import` on a hand-made capture
# (import-pcap.py: joined mid-session, a retransmission, segments out of
# order, non-iSCSI traffic, a reservation) finds the identity and the
# medium error and verifies with no difference (--verify); then the same
# file cut around every record boundary and at every 7th byte, and with
# bytes flipped (one in five also verified): each run ends with a message
# or a scenario, never a crash (exit 0, 1 or 2), and a file cut inside a
# frame is reported with the frame's number.
set -u
fl=$1
here=$(dirname "$0")
command -v python3 >/dev/null 2>&1 || { echo "python3 missing: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
python3 "$here/import-pcap.py" "$tmp/good.pcap" || fail "cannot write the capture"
"$fl" import "$tmp/good.pcap" -o "$tmp/good.json" 2>"$tmp/err" || { cat "$tmp/err"; fail "import failed"; }
"$fl" lint "$tmp/good.json" >/dev/null 2>&1 || fail "the scenario does not lint"
python3 - "$tmp/good.json" <<'PY' || fail "the scenario is not what the capture says"
import json, sys
s = json.load(open(sys.argv[1]))
lun = s["luns"][0]
assert lun["vendor"] == "ACME" and lun["product"] == "TESTDISK" and lun["revision"] == "1.0", lun
rules = {r["match"]["opcode"]: r for r in s["rules"]}
r = rules["0x28"]
assert r["match"]["lba"] == {"first": 104, "last": 104}, r
assert r["action"] == {"sense": "MEDIUM_ERROR/11/00", "info": "lba"}, r
assert r["id"].startswith("f5-"), r["id"]
h = rules["0x2a"]
assert h["action"] == {"hold": "forever"} and h["match"]["times"] == 1, h
PY
# Verify: replayed against the scenario, the five commands answer as
# captured (the INQUIRY's identity, the medium error, the write never
# answered: held, the reservation taken with the key of the parameter
# lists); without the hold rule the write is a difference, exit 1.
"$fl" import "$tmp/good.pcap" --verify >"$tmp/verify.out" 2>&1 || { cat "$tmp/verify.out"; fail "verify: differences"; }
grep -q '^verify: 5 commands, 0 differences' "$tmp/verify.out" || { cat "$tmp/verify.out"; fail "verify: not 5 commands"; }
python3 - "$tmp/good.json" "$tmp/nohold.json" <<'PY' || fail "cannot write the altered scenario"
import json, sys
s = json.load(open(sys.argv[1]))
s["rules"] = [r for r in s["rules"] if "hold" not in r["action"]]
json.dump(s, open(sys.argv[2], "w"))
PY
"$fl" import "$tmp/good.pcap" --verify-scenario "$tmp/nohold.json" >"$tmp/verify.out" 2>&1
[ $? = 1 ] || { cat "$tmp/verify.out"; fail "verify without the hold is not exit 1"; }
grep -q '^frame [0-9]*: LUN 0 WRITE(10) LBA 200+1: answer: capture no answer, replay status 0x00 GOOD' "$tmp/verify.out" ||
	{ cat "$tmp/verify.out"; fail "verify does not name the write answered"; }
# A SCSI Response the capture lost: the read it answered and the write still
# outstanding are no holds (not compared), the TEST UNIT READYs answered
# after the hole are read.
python3 "$here/import-pcap.py" "$tmp/gap.pcap" gap || fail "cannot write the capture with a gap"
"$fl" import "$tmp/gap.pcap" --verify -o "$tmp/gap.json" >"$tmp/verify.out" 2>&1 ||
	{ cat "$tmp/verify.out"; fail "verify of the capture with a gap: differences"; }
grep -q '^verify: 6 commands, 0 differences; not compared: 2 unanswered after a capture gap' "$tmp/verify.out" ||
	{ cat "$tmp/verify.out"; fail "verify: the read after the gap is compared, or the TEST UNIT READY not"; }
python3 - "$tmp/gap.json" <<'PY' || fail "the scenario of the capture with a gap holds a command"
import json, sys
s = json.load(open(sys.argv[1]))
holds = [r for r in s["rules"] if "hold" in r["action"]]
assert not holds, holds
assert any("2 command(s) left unanswered after a gap" in l for l in s["emulates"]["references"])
PY
"$fl" import "$tmp/good.pcap" --verify-scenario "$tmp/none.json" >/dev/null 2>&1
[ $? = 2 ] || fail "verify against a missing scenario is not exit 2"
# Not a capture at all.
printf 'not a capture' >"$tmp/bad.pcap"
"$fl" import "$tmp/bad.pcap" -o "$tmp/x.json" 2>"$tmp/err"
[ $? = 2 ] || fail "a file that is no capture is not exit 2"
grep -q "not a capture" "$tmp/err" || fail "no clear message for a file that is no capture"
# Cut at every length around each record's boundaries (its 16-byte header,
# the link, IP and TCP headers, the BHS) and at every 7th byte elsewhere:
# about 400 runs, so a sanitizer build stays well inside the test's time.
size=$(wc -c <"$tmp/good.pcap")
cuts=$(python3 - "$tmp/good.pcap" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
cuts, off = set(range(24, len(data), 7)), 24
while off + 16 <= len(data):
    incl = struct.unpack_from("<I", data, off + 8)[0]
    cuts.update(range(off - 1, off + 17))
    for h in (14, 34, 54, 102):  # after the link, IP, TCP headers and the BHS
        cuts.update((off + 16 + h - 1, off + 16 + h, off + 16 + h + 1))
    off += 16 + incl
print(" ".join(str(n) for n in sorted(cuts) if 24 <= n < len(data)))
PY
)
[ -n "$cuts" ] || fail "no cut lengths"
for n in $cuts; do
	head -c "$n" "$tmp/good.pcap" >"$tmp/cut.pcap"
	"$fl" import -q "$tmp/cut.pcap" -o "$tmp/cut.json" 2>"$tmp/err"
	rc=$?
	[ $rc -le 2 ] || fail "cut at $n bytes: exit $rc"
done
head -c $((size - 10)) "$tmp/good.pcap" >"$tmp/cut.pcap"
"$fl" import "$tmp/cut.pcap" -o "$tmp/cut.json" 2>"$tmp/err"
grep -q "frame 14: " "$tmp/err" || { cat "$tmp/err"; fail "a file cut inside frame 14 (the last) does not name it"; }
# Bytes flipped (seeded), 150 variants (fuzz.import flips many more).
python3 - "$tmp/good.pcap" "$tmp" <<'PY'
import random, sys
data = open(sys.argv[1], "rb").read()
rnd = random.Random(28)
for i in range(150):
    b = bytearray(data)
    for _ in range(rnd.randint(1, 8)):
        p = rnd.randrange(24, len(b))
        b[p] = rnd.randrange(256)
    open("%s/flip%03d.pcap" % (sys.argv[2], i), "wb").write(b)
PY
for f in "$tmp"/flip*.pcap; do
	"$fl" import -q "$f" -o "$tmp/flip.json" 2>/dev/null
	rc=$?
	[ $rc -le 2 ] || fail "$(basename "$f"): exit $rc"
	# one in five replayed too: whatever the flipped bytes made of the
	# commands and answers (30 runs: the test's time stays bounded)
	case $f in *[05].pcap) ;; *) continue ;; esac
	"$fl" import -q "$f" --verify >/dev/null 2>&1
	rc=$?
	[ $rc -le 2 ] || fail "$(basename "$f") --verify: exit $rc"
done
echo "import: hand-made capture read and verified; cut and flipped captures handled"
