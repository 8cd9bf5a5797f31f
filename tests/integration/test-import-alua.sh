#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-alua.sh FAULTLUN: a LUN's ALUA identity, imported. tcpdump on
# lo captures `faultlun send` against `faultlun serve` of a LUN in target port
# group 3, active/non-optimized, explicit and implicit ALUA, whose third TEST
# UNIT READY moves the group to standby: INQUIRY, VPD 0x83, REPORT TARGET PORT
# GROUPS, then the TURs and a second REPORT TARGET PORT GROUPS. The imported
# LUN must have group 3, state active_non_optimized, implicit and explicit;
# the change to standby is reproduced by the rule of the UNIT ATTENTION
# 2A/06 that announced it (the third TEST UNIT READY: action alua, group 3
# standby), not noted, and the NOT READY 04/0B answers after it get no rule
# of their own (standby answers them); the scenario lints, verifies with 0
# differences, and served answers REPORT TARGET PORT GROUPS with group 3
# active/non-optimized, then, after three TEST UNIT READYs, standby.
# Exit 77 when tcpdump is missing or capturing on lo is not permitted.
set -u
. "$(dirname "$0")/../lib/common.sh"
fl=$1
fl_capture_tmpdir

cat >"$tmp/alua.json" <<'JSON'
{
  "faultlun": 1,
  "name": "alua-group-3",
  "frontends": ["iscsi"],
  "luns": [{"lun": 0, "size": "8MiB",
            "alua": {"group": 3, "state": "active_non_optimized", "implicit": true, "explicit": true}}],
  "rules": [{"id": "to-standby", "match": {"class": "tur", "nth": 3}, "action": {"alua": "standby"}}]
}
JSON
rtpg="raw:'a3 0a 00 00 00 00 00 00 04 00 00 00',in=1024"
cat >"$tmp/run.sh" <<RUN
"$fl" send -i -u "\$FAULTLUN_URL" inquiry inquiry:vpd=0x83 $rtpg tur tur tur $rtpg
exit 0
RUN
fl_capture_serve "$fl" "$tmp/alua.json"
grep -q "standby" "$tmp/orig.out" || { cat "$tmp/orig.out"; fail "the original target did not report standby"; }

python3 - "$tmp/imported.json" <<'PY' || { cat "$tmp/imported.json"; fail "the imported ALUA identity is not the target's"; }
import json, sys
s = json.load(open(sys.argv[1]))
lun = s["luns"][0]
assert lun["alua"] == {"group": 3, "state": "active_non_optimized", "implicit": True,
                       "explicit": True}, lun.get("alua")
refs = s["emulates"]["references"]
assert not any("REPORT TARGET PORT GROUPS answered standby" in l for l in refs), refs
rules = s.get("rules", [])
alua = [r for r in rules if "alua" in r["action"]]
assert len(alua) == 1 and len(rules) == 1, rules
assert alua[0]["action"]["alua"] == {"group": 3, "state": "standby"}, alua
assert alua[0]["match"]["opcode"] == "0x00" and alua[0]["match"].get("after") == 2 and \
    alua[0]["match"].get("times") == 1, alua
assert any("announced the change of the ALUA state to standby" in l for l in refs), refs
assert any(l.startswith("no rule: NOT READY/04/0B to TEST UNIT READY") for l in refs), refs
assert not any("not imported yet" in l for l in refs), refs
PY
"$fl" lint "$tmp/imported.json" >"$tmp/lint.out" 2>&1 || { cat "$tmp/lint.out"; fail "the imported scenario does not lint"; }
"$fl" import "$tmp/cap.pcap" --verify >"$tmp/verify.out" 2>&1 || { cat "$tmp/verify.out"; python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1])).get(\"rules\")))" "$tmp/imported.json"; fail "verify found differences"; }
grep -q '^verify: [0-9]* commands, 0 differences' "$tmp/verify.out" || { cat "$tmp/verify.out"; fail "verify did not replay"; }

# Served, the imported LUN reports the same group and state, then the change.
"$fl" serve -q --listen 127.0.0.1:0 "$tmp/imported.json" \
	--run "\"$fl\" send -i -u \"\$FAULTLUN_URL\" $rtpg tur tur tur $rtpg" >"$tmp/replay.out" 2>&1 ||
	{ cat "$tmp/replay.out"; fail "serving the imported scenario failed"; }
grep -q "group: 3$" "$tmp/replay.out" && grep -q "state: active_non_optimized$" "$tmp/replay.out" ||
	{ cat "$tmp/replay.out"; fail "the served scenario does not report group 3 active/non-optimized"; }
grep -q "state: standby$" "$tmp/replay.out" ||
	{ cat "$tmp/replay.out"; fail "the served scenario does not move group 3 to standby"; }
[ "$(grep -c "state: active_non_optimized$" "$tmp/replay.out")" = 1 ] ||
	{ cat "$tmp/replay.out"; fail "the served scenario reports active/non-optimized after the change"; }
echo "import: LUN 0 in group 3, active/non-optimized, implicit and explicit; the change to standby reproduced; verified; served alike"
