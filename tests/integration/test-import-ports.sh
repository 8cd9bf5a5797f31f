#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-ports.sh FAULTLUN: a target reached through two portals gets a
# port per portal (docs/import.md, "Ports"). tcpdump on lo captures
# `faultlun send` through both portals of `faultlun serve` of a target with
# two ports: A (relative port 1, group 1, active/optimized) and B (relative
# port 2, group 3, standby), LUN 0 with a medium error at LBA 100. Through
# A: INQUIRY, VPD 0x83, REPORT TARGET PORT GROUPS, reads (one failing);
# through B the same and a TEST UNIT READY, NOT READY 04/0B (standby). The
# imported scenario must have two ports with those relative ports and
# groups, the groups' states in port_groups, no state in the LUN's alua, the
# medium error's rule and no rule for the standby answers (the port's group
# gives them); it lints and verifies with 0 differences (each connection
# replayed through its port), and served answers NOT READY 04/0B through
# its second port only.
# Exit 77 when tcpdump is missing or capturing on lo is not permitted.
set -u
. "$(dirname "$0")/../lib/common.sh"
fl=$1
fl_capture_tmpdir
iqn=iqn.2026-12.org.faultlun:two-portals

cat >"$tmp/two.json" <<JSON
{
  "faultlun": 1,
  "name": "two-portals",
  "frontends": ["iscsi"],
  "target": {"iqn": "$iqn"},
  "ports": [
    {"id": "A", "listen": "127.0.0.1:3260", "relative_port": 1, "group": 1},
    {"id": "B", "listen": "127.0.0.2:3260", "relative_port": 2, "group": 3}
  ],
  "port_groups": [{"id": 1, "state": "active_optimized"}, {"id": 3, "state": "standby"}],
  "luns": [{"lun": 0, "size": "8MiB", "alua": {"implicit": true, "explicit": true}}],
  "rules": [{"id": "bad", "match": {"lun": 0, "opcode": "0x88", "lba": {"first": 100, "last": 100}},
             "action": {"sense": "MEDIUM_ERROR/11/00"}}]
}
JSON
rtpg="raw:'a3 0a 00 00 00 00 00 00 04 00 00 00',in=1024"
cat >"$tmp/run.sh" <<RUN
"$fl" send -i -u "iscsi://127.0.0.1:$port/$iqn/0" inquiry inquiry:vpd=0x83 $rtpg read:lba=0 read:lba=100 tur
"$fl" send -i -u "iscsi://127.0.0.2:$port/$iqn/0" inquiry inquiry:vpd=0x83 $rtpg tur read:lba=8
exit 0
RUN
fl_capture "$port" "$tmp/cap.pcap"
"$fl" serve -q --listen "127.0.0.1:$port" --listen "127.0.0.2:$port" "$tmp/two.json" \
	--run "sh $tmp/run.sh" >"$tmp/orig.out" 2>&1 || { cat "$tmp/orig.out"; fail "serve failed"; }
fl_capture_end
[ "$(grep -c "TARGET_PORT_IN_STANDBY_STATE (04/0B), fixed" "$tmp/orig.out")" = 2 ] ||
	{ cat "$tmp/orig.out"; fail "port B did not answer standby twice"; }
"$fl" import "$tmp/cap.pcap" -o "$tmp/imported.json" 2>"$tmp/import.err" ||
	{ cat "$tmp/import.err"; fail "import failed"; }

python3 - "$tmp/imported.json" "$port" <<'PY' || { cat "$tmp/imported.json"; fail "the imported ports are not the target's"; }
import json, sys
s = json.load(open(sys.argv[1]))
port = sys.argv[2]
ports = s["ports"]
assert [(p["relative_port"], p["group"]) for p in ports] == [(1, 1), (2, 3)], ports
assert len({p["listen"] for p in ports}) == 2, ports
assert s["port_groups"] == [{"id": 1, "state": "active_optimized"},
                            {"id": 3, "state": "standby"}], s["port_groups"]
lun = s["luns"][0]
assert "state" not in lun["alua"] and lun["alua"]["group"] == 1, lun["alua"]
rules = s.get("rules", [])
assert len(rules) == 1 and rules[0]["action"]["sense"] == "MEDIUM_ERROR/11/00", rules
refs = s["emulates"]["references"]
for i, want in ((1, "127.0.0.1"), (2, "127.0.0.2")):
    assert any(l.startswith("port p%d: target portal group %d: the portal(s) %s:%s " % (i, i, want, port))
               for l in refs), refs
assert any(l.startswith("no rule: NOT READY/04/0B to TEST UNIT READY") for l in refs), refs
assert any(l.startswith("no rule: NOT READY/04/0B to READ(16)") for l in refs), refs
assert not any("portals" in l for l in refs if l.startswith("not reproduced")), refs
PY
"$fl" lint "$tmp/imported.json" >"$tmp/lint.out" 2>&1 || { cat "$tmp/lint.out"; fail "the imported scenario does not lint"; }
"$fl" import "$tmp/cap.pcap" --verify >"$tmp/verify.out" 2>&1 ||
	{ cat "$tmp/verify.out"; fail "verify found differences"; }
grep -q '^verify: 1[0-9] commands, 0 differences' "$tmp/verify.out" ||
	{ cat "$tmp/verify.out"; fail "verify did not replay the commands"; }

# Served: through the second port standby, through the first the medium error.
p2=$(fl_freeport) || fail "no free port"
"$fl" serve -q --listen "127.0.0.1:$p2" --listen "127.0.0.2:$p2" "$tmp/imported.json" \
	--run "\"$fl\" send -i -u iscsi://127.0.0.1:$p2/$iqn/0 read:lba=0 read:lba=100; \"$fl\" send -i -u iscsi://127.0.0.2:$p2/$iqn/0 tur" \
	>"$tmp/replay.out" 2>&1 || { cat "$tmp/replay.out"; fail "serving the imported scenario failed"; }
grep -q "^#1 read:lba=0: GOOD" "$tmp/replay.out" && grep -q "^#2 read:lba=100: CHECK_CONDITION, sense MEDIUM_ERROR" "$tmp/replay.out" &&
	grep -q "^#1 tur: CHECK_CONDITION, sense NOT_READY/TARGET_PORT_IN_STANDBY_STATE (04/0B)" "$tmp/replay.out" ||
	{ cat "$tmp/replay.out"; fail "the served scenario does not answer per port as the target did"; }
echo "import: two portals, two ports (relative 1 and 2, groups 1 active/optimized and 3 standby); $(tail -1 "$tmp/verify.out"); served alike"
