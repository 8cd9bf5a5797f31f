#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-hold.sh FAULTLUN: a command the target never answered, with
# later commands of its kind answered before the connection ended
# (docs/import.md, "a command never answered"). tcpdump on lo captures
# `faultlun send` against `faultlun serve` whose third TEST UNIT READY is
# held for good: five TEST UNIT READYs (the first meets the new nexus's
# unit attention), the third sent without waiting, the fourth and fifth
# answered, then the session ends on send's timeout. The
# imported hold rule must meet the third TEST UNIT READY (`after` 2, as
# when it was sent, not counting the two answered later), and the capture
# verifies with 0 differences.
# Exit 77 when tcpdump is missing or capturing on lo is not permitted.
set -u
. "$(dirname "$0")/../lib/common.sh"
fl=$1
fl_capture_tmpdir
cat >"$tmp/held.json" <<'JSON'
{
  "faultlun": 1,
  "name": "third-tur-held",
  "frontends": ["iscsi"],
  "luns": [{"lun": 0, "size": "8MiB"}],
  "rules": [{"id": "held", "match": {"lun": 0, "opcode": "0x00", "nth": 3}, "action": {"hold": "forever"}}]
}
JSON
cat >"$tmp/run.sh" <<RUN
"$fl" send -i -t 3 "\$FAULTLUN_URL" tur tur tur:nowait tur tur
exit 0
RUN
fl_capture_serve "$fl" "$tmp/held.json"
grep -q '^#3 tur:nowait: no answer' "$tmp/orig.out" && grep -q '^#4 tur: GOOD' "$tmp/orig.out" &&
	grep -q '^#5 tur: GOOD' "$tmp/orig.out" ||
	{ cat "$tmp/orig.out"; fail "the target did not hold the third TEST UNIT READY alone"; }
python3 - "$tmp/imported.json" <<'PY' || { cat "$tmp/imported.json"; fail "the hold rule does not meet the third TEST UNIT READY"; }
import json, sys
s = json.load(open(sys.argv[1]))
holds = [r for r in s.get("rules", []) if r["action"].get("hold")]
assert len(holds) == 1, s.get("rules")
m = holds[0]["match"]
assert m["opcode"] == "0x00" and m.get("after") == 2 and m.get("times", 1) == 1, holds
PY
"$fl" import "$tmp/cap.pcap" --verify >"$tmp/verify.out" 2>&1 ||
	{ cat "$tmp/verify.out"; fail "verify found differences"; }
grep -q '^verify: [0-9]* commands, 0 differences' "$tmp/verify.out" ||
	{ cat "$tmp/verify.out"; fail "verify did not replay"; }
echo "import: the held TEST UNIT READY's rule counts the commands before it was sent; $(tail -1 "$tmp/verify.out")"
