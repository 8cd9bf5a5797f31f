#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-cut.sh FAULTLUN: a connection the target cut, imported. tcpdump
# on lo captures two `faultlun send` sessions against `faultlun serve`: one
# that logs out (an orderly close: no cut), one whose third READ(16) makes the
# target close the connection (a transport rule). The imported scenario must
# hold one transport rule, closing on READ(16) number 3, with its reference
# line, no hold for the cut command, lint clean, verify with 0 differences
# and, served, cut the same send sequence at the same command.
# Exit 77 when tcpdump is missing or capturing on lo is not permitted.
set -u
. "$(dirname "$0")/../lib/common.sh"
fl=$1
fl_capture_tmpdir

cat >"$tmp/cut.json" <<'JSON'
{
  "faultlun": 1,
  "name": "cut-third-read",
  "frontends": ["iscsi"],
  "luns": [{"lun": 0, "size": "8MiB"}],
  "transport": {"rules": [{"id": "cut", "match": {"pdu": "scsi_command", "opcode": "0x88", "nth": 3},
                           "action": "close"}]}
}
JSON
items="read:lba=0 read:lba=8 tur read:lba=16 read:lba=24"
cat >"$tmp/run.sh" <<RUN
"$fl" send -u "\$FAULTLUN_URL" tur
"$fl" send -i -u "\$FAULTLUN_URL" $items
exit 0
RUN
fl_capture_serve "$fl" "$tmp/cut.json"
grep -q "^#4 read:lba=16: no answer" "$tmp/orig.out" || { cat "$tmp/orig.out"; fail "the original target did not cut at the third read"; }

python3 - "$tmp/imported.json" <<'PY' || { cat "$tmp/imported.json"; fail "the imported cut is not the target's"; }
import json, sys
s = json.load(open(sys.argv[1]))
rules = s["transport"]["rules"]
assert rules == [{"id": "cut-1", "match": {"pdu": "scsi_command", "opcode": "0x88", "nth": 3},
                  "action": "close"}], rules
assert not [r for r in s.get("rules", []) if "hold" in r["action"]], s.get("rules")
refs = s["emulates"]["references"]
assert any(l.startswith("cut-1: frame ") and "closed the connection on the command of frame" in l
           and "READ(16) number 3" in l for l in refs), refs
assert "1 connection cut(s)" in s["description"], s["description"]
PY
"$fl" lint "$tmp/imported.json" >"$tmp/lint.out" 2>&1 || { cat "$tmp/lint.out"; fail "the imported scenario does not lint"; }
"$fl" import "$tmp/cap.pcap" --verify >"$tmp/verify.out" 2>&1 || { cat "$tmp/verify.out"; fail "verify found differences"; }
grep -q '^verify: [0-9]* commands, 0 differences' "$tmp/verify.out" || { cat "$tmp/verify.out"; fail "verify did not replay"; }
# Without the cut rule the replay answers the cut command: verify must see it.
python3 - "$tmp/imported.json" "$tmp/nocut.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
del s["transport"]
json.dump(s, open(sys.argv[2], "w"))
PY
"$fl" import "$tmp/cap.pcap" --verify-scenario "$tmp/nocut.json" >"$tmp/verify2.out" 2>&1 &&
	{ cat "$tmp/verify2.out"; fail "verify found no difference without the cut rule"; }
grep -q '^verify: [0-9]* commands, [1-9][0-9]* difference' "$tmp/verify2.out" || { cat "$tmp/verify2.out"; fail "verify without the cut: no count of differences"; }

# Served, the imported scenario cuts the same sequence at the same command.
"$fl" serve -q --listen 127.0.0.1:0 "$tmp/imported.json" --run "sh $tmp/run.sh" >"$tmp/replay.out" 2>&1 ||
	{ cat "$tmp/replay.out"; fail "serving the imported scenario failed"; }
grep -q "^#3 tur: GOOD" "$tmp/replay.out" && grep -q "^#4 read:lba=16: no answer" "$tmp/replay.out" ||
	{ cat "$tmp/replay.out"; fail "the served scenario does not cut at the third read"; }
echo "import: the target's cut imported as a close on READ(16) number 3; verified; served alike"
