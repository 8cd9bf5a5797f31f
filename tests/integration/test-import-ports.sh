#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-ports.sh FAULTLUN [port-rule]: a target reached through two
# portals gets a port per portal (docs/import.md, "Ports"). tcpdump on lo
# captures `faultlun send` through both portals of `faultlun serve` of a
# target with two ports: A (relative port 1, group 1, active/optimized) and
# B (relative port 2, group 3, standby), LUN 0 with a medium error at LBA
# 100. Through A: INQUIRY, VPD 0x83, REPORT TARGET PORT GROUPS, reads (one
# failing); through B the same and a TEST UNIT READY, NOT READY 04/0B
# (standby). The imported scenario must have two ports with those relative
# ports and groups, the groups' states in port_groups, no state in the LUN's
# alua, the medium error's rule and no rule for the standby answers (the
# port's group gives them); it lints and verifies with 0 differences (each
# connection replayed through its port), and served answers NOT READY 04/0B
# through its second port only.
# With port-rule: B is group 2, active/non-optimized, the medium error is
# port A's only and LBA 100 is read through both ports: an answer seen
# through one port only becomes a rule of that port (`port` p1); it verifies
# with 0 differences (B's read replayed GOOD) and, served, fails the read
# through its first port only.
# Exit 77 when tcpdump is missing or capturing on lo is not permitted.
set -u
. "$(dirname "$0")/../lib/common.sh"
fl=$1
case=${2:-standby}
fl_capture_tmpdir
iqn=iqn.2026-12.org.faultlun:two-portals
if [ "$case" = port-rule ]; then
	g2=2 s2=active_non_optimized only='"port": "A", '
else
	g2=3 s2=standby only=
fi

cat >"$tmp/two.json" <<JSON
{
  "faultlun": 1,
  "name": "two-portals",
  "frontends": ["iscsi"],
  "target": {"iqn": "$iqn"},
  "ports": [
    {"id": "A", "listen": "127.0.0.1:3260", "relative_port": 1, "group": 1},
    {"id": "B", "listen": "127.0.0.2:3260", "relative_port": 2, "group": $g2}
  ],
  "port_groups": [{"id": 1, "state": "active_optimized"}, {"id": $g2, "state": "$s2"}],
  "luns": [{"lun": 0, "size": "8MiB", "alua": {"implicit": true, "explicit": true}}],
  "rules": [{"id": "bad", "match": {${only}"lun": 0, "opcode": "0x88", "lba": {"first": 100, "last": 100}},
             "action": {"sense": "MEDIUM_ERROR/11/00"}}]
}
JSON

# Captures run.sh against two.json served through both portals, and imports it.
capture_import() {
	fl_capture "$port" "$tmp/cap.pcap"
	"$fl" serve -q --listen "127.0.0.1:$port" --listen "127.0.0.2:$port" "$tmp/two.json" \
		--run "sh $tmp/run.sh" >"$tmp/orig.out" 2>&1 || { cat "$tmp/orig.out"; fail "serve failed"; }
	fl_capture_end
	"$fl" import "$tmp/cap.pcap" -o "$tmp/imported.json" 2>"$tmp/import.err" ||
		{ cat "$tmp/import.err"; fail "import failed"; }
}

# Verifies the capture with 0 differences and lints the imported scenario.
verify_lint() {
	"$fl" lint "$tmp/imported.json" >"$tmp/lint.out" 2>&1 || { cat "$tmp/lint.out"; fail "the imported scenario does not lint"; }
	"$fl" import "$tmp/cap.pcap" --verify >"$tmp/verify.out" 2>&1 ||
		{ cat "$tmp/verify.out"; fail "verify found differences"; }
	grep -q '^verify: [0-9]* commands, 0 differences' "$tmp/verify.out" ||
		{ cat "$tmp/verify.out"; fail "verify did not replay the commands"; }
}

if [ "$case" = port-rule ]; then
	cat >"$tmp/run.sh" <<RUN
"$fl" send -i -u "iscsi://127.0.0.1:$port/$iqn/0" inquiry:vpd=0x83 read:lba=0 read:lba=100
"$fl" send -i -u "iscsi://127.0.0.2:$port/$iqn/0" inquiry:vpd=0x83 read:lba=100 read:lba=0
exit 0
RUN
	capture_import
	[ "$(grep -c "UNRECOVERED_READ_ERROR (11/00)" "$tmp/orig.out")" = 1 ] ||
		{ cat "$tmp/orig.out"; fail "the read of LBA 100 did not fail through A only"; }
	python3 - "$tmp/imported.json" <<'PY' || { cat "$tmp/imported.json"; fail "the rule is not port p1's"; }
import json, sys
s = json.load(open(sys.argv[1]))
assert [p["id"] for p in s["ports"]] == ["p1", "p2"], s["ports"]
rules = s.get("rules", [])
assert len(rules) == 1, rules
m = rules[0]["match"]
assert m.get("port") == "p1" and m["lba"] == {"first": 100, "last": 100}, m
assert rules[0]["action"]["sense"] == "MEDIUM_ERROR/11/00", rules
PY
	verify_lint
	# Served: the first port answers the read MEDIUM ERROR, the second GOOD.
	p2=$(fl_freeport) || fail "no free port"
	"$fl" serve -q --listen "127.0.0.1:$p2" --listen "127.0.0.2:$p2" "$tmp/imported.json" \
		--run "\"$fl\" send -u iscsi://127.0.0.1:$p2/$iqn/0 read:lba=100; \"$fl\" send -u iscsi://127.0.0.2:$p2/$iqn/0 read:lba=100" \
		>"$tmp/served.out" 2>&1
	[ "$(grep -c "UNRECOVERED_READ_ERROR (11/00)" "$tmp/served.out")" = 1 ] ||
		{ cat "$tmp/served.out"; fail "served, the imported scenario does not fail the read through its first port only"; }
	echo "import: the rule of port p1; $(tail -1 "$tmp/verify.out"); served, p1 fails the read, p2 serves it"
	exit 0
fi
rtpg="raw:'a3 0a 00 00 00 00 00 00 04 00 00 00',in=1024"
cat >"$tmp/run.sh" <<RUN
"$fl" send -i -u "iscsi://127.0.0.1:$port/$iqn/0" inquiry inquiry:vpd=0x83 $rtpg read:lba=0 read:lba=100 tur
"$fl" send -i -u "iscsi://127.0.0.2:$port/$iqn/0" inquiry inquiry:vpd=0x83 $rtpg tur read:lba=8
exit 0
RUN
capture_import
[ "$(grep -c "TARGET_PORT_IN_STANDBY_STATE (04/0B), fixed" "$tmp/orig.out")" = 2 ] ||
	{ cat "$tmp/orig.out"; fail "port B did not answer standby twice"; }

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
verify_lint
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
