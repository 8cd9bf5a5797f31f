#!/bin/sh
# SPDX-License-Identifier: MIT
# test-send-decode.sh FAULTLUN SCENARIOS_DIR - `faultlun send` decodes
# data-in (docs/send.md, "Data-in, decoded"): READ CAPACITY(16) and (10),
# REPORT LUNS, standard INQUIRY, VPD pages 00h, 80h, 83h, B0h, B1h, B2h and a
# vendor page (RDAC C4h), REPORT TARGET PORT GROUPS, MODE SENSE(6) and (10),
# REQUEST SENSE; in text and as "decoded" in --json; -x still dumps the bytes.
set -u
fl=$1 dir=$2
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir

items="readcap 'raw:25 00 00 00 00 00 00 00 00 00,in=8' report-luns inquiry inquiry:vpd=0 \
inquiry:vpd=0x80 inquiry:vpd=0x83 inquiry:vpd=0xb0 inquiry:vpd=0xb1 inquiry:vpd=0xb2 \
inquiry:vpd=0xc4 'raw:a3 0a 00 00 00 00 00 00 01 00 00 00,in=256' \
'raw:1a 00 3f 00 ff 00,in=255' 'raw:5a 00 08 00 00 00 00 00 ff 00,in=255' request-sense"
"$fl" serve -q --listen 127.0.0.1:0 "$dir/dh-rdac-failover.json" --run "
	\"$fl\" send -u \$FAULTLUN_URL $items > $tmp/text 2>&1
	\"$fl\" send -u --json \$FAULTLUN_URL $items > $tmp/json 2>&1
	\"$fl\" send -u -x \$FAULTLUN_URL readcap > $tmp/hex 2>&1
	\"$fl\" send -u --json \$FAULTLUN_URL readcap \
		report-luns inquiry inquiry:vpd=0x83 'raw:a3 0a 00 00 00 00 00 00 01 00 00 00,in=256' \
		'raw:1a 00 3f 00 ff 00,in=255' request-sense > $tmp/doc 2> /dev/null; :" > "$tmp/serve" 2>&1 ||
	fail "serve: $(cat "$tmp/serve")"
cat "$tmp/text"
grep -A2 '^#1 readcap: GOOD, 32 bytes in' "$tmp/text" | grep -q '^  block_size: 512$' ||
	fail "READ CAPACITY(16) in text"
grep -q '^  vendor: NETAPP$' "$tmp/text" || fail "INQUIRY vendor in text"
grep -q '^  signature: subs$' "$tmp/text" || fail "VPD C4h in text"
grep -q '^    0000  00 00 00 00 00 01 ff ff 00 00 02 00' "$tmp/hex" || fail "-x: no hexdump: $(cat "$tmp/hex")"
python3 - "$tmp/json" <<'PY' || fail "JSON"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(r) == 15, len(r)
d = [x.get("decoded") for x in r]
assert all(x["status_name"] == "GOOD" for x in r), [x["status_name"] for x in r]
assert d[0]["block_size"] == 512 and d[0]["last_lba"] == 131071 and d[0]["blocks"] == 131072, d[0]
assert d[1]["block_size"] == 512 and d[1]["bytes"] == 64 << 20, d[1]
assert d[2]["luns"] == [0], d[2]
assert d[3]["vendor"] == "NETAPP" and d[3]["peripheral_device_type"] == 0, d[3]
assert 0x83 in d[4]["pages"] and 0xc4 in d[4]["pages"], d[4]
assert d[5]["serial_number"], d[5]
kinds = {x["type"] for x in d[6]["designators"]}
assert {"naa", "relative_target_port", "target_port_group"} <= kinds, d[6]
rel = [x["relative_port"] for x in d[6]["designators"] if x["type"] == "relative_target_port"]
assert rel == [1], rel
assert d[7]["maximum_transfer_length"] > 0, d[7]
assert d[8]["medium_rotation_rate"] == 1, d[8]
assert "provisioning_type" in d[9], d[9]
assert d[10]["page"] == 0xc4 and d[10]["signature"] == "subs", d[10]
g = {x["group"]: x for x in d[11]["groups"]}
assert g[1]["relative_ports"] == [1] and g[2]["relative_ports"] == [2], g
assert g[1]["state"] == "active_optimized", g
pages = {p["page"]: p for p in d[12]["pages"]}
assert 0x08 in pages and pages[0x08]["wce"] is True and 0x2c in pages, pages.keys()
assert d[12]["block_descriptors"][0]["block_length"] == 512, d[12]
assert [p["page"] for p in d[13]["pages"]] == [8], d[13]
assert d[14]["format"] == "fixed" and d[14]["key"] == 0, d[14]
print("decoded: ok")
PY
python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert len(r) == 7 and all("decoded" in x for x in r), r
' "$tmp/doc" || fail "the docs/send.md JSON example"

# docs/send.md's multipath example: port B (standby) through $FAULTLUN_URLS.
"$fl" serve -q "$(dirname "$0")/scenarios/multipath-two-ports.json" --run "
	set -- \$FAULTLUN_URLS
	\"$fl\" send -u \$2 tur inquiry:vpd=0x83 > $tmp/b 2>&1; :" > "$tmp/serve" 2>&1 ||
	fail "serve: $(cat "$tmp/serve")"
cat "$tmp/b"
grep -q '^#1 tur: CHECK_CONDITION, sense NOT_READY/TARGET_PORT_IN_STANDBY_STATE (04/0B)' "$tmp/b" ||
	fail "port B: tur"
grep -q '^      relative_port: 2$' "$tmp/b" || fail "port B: VPD 83h does not name relative port 2"
echo ok
