#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-keep-data.sh FAULTLUN: `faultlun import --keep-data`
# (docs/import.md). tgtd serves a 32 MiB LUN whose first MiB is random; the
# capture (tcpdump on lo) holds `faultlun send` reading LBAs 0-63 and
# 100-107, writing 200-207 and reading them back, and reading 0-63 again,
# then 100-107 through a second portal (127.0.0.2). Imported with
# --keep-data --verify: 0 differences, the data of the four reads of
# unwritten blocks compared (not the read after the write), the two portals
# of tgtd's one target portal group one port, noted; the image next to the scenario holds tgtd's bytes at
# those blocks and zeros at the written ones; the scenario names it as LUN
# 1's file store and lints; served, it answers a read of LBAs 0-63 with
# tgtd's bytes. --keep-data without -o FILE is a usage error. Exit 77
# without tcpdump or tgtd.
set -u
. "$(dirname "$0")/../lib/common.sh"
fl=$1
PATH=$PATH:/usr/sbin
fl_tmpdir tcpdump
tdpid=""
tgtpid=""
ctl=""
trap '[ -n "$tdpid" ] && kill "$tdpid" 2>/dev/null; [ -n "${spid:-}" ] && kill "$spid" 2>/dev/null; fl_tgtd_stop; rm -rf "$tmp"' EXIT
port=$(fl_freeport) || fail "no free port"
iqn=iqn.2026-12.org.faultlun:import-keep-data
truncate -s 32M "$tmp/lun1.img"
dd if=/dev/urandom of="$tmp/lun1.img" bs=64k count=16 conv=notrunc 2>/dev/null
fl_tgtd "$port" "$iqn" "$tmp/lun1.img"
# a second portal: the capture reaches the target through both
tgtadm -C "$ctl" --lld iscsi --op new --mode portal --param "portal=127.0.0.2:$port" ||
	fail "tgtadm: no second portal"
fl_capture "$port" "$tmp/cap.pcap"
"$fl" send -u "iscsi://127.0.0.1:$port/$iqn/1" readcap read:lba=0,blocks=64 \
	read:lba=100,blocks=8 write:lba=200,blocks=8,pattern=0x5a read:lba=200,blocks=8 \
	read:lba=0,blocks=64 >"$tmp/send.out" 2>&1 || { cat "$tmp/send.out"; fail "send failed"; }
"$fl" send -u "iscsi://127.0.0.2:$port/$iqn/1" read:lba=100,blocks=8 >>"$tmp/send.out" 2>&1 ||
	{ cat "$tmp/send.out"; fail "send through the second portal failed"; }
fl_capture_end
fl_tgtd_stop

mkdir "$tmp/out"
"$fl" import "$tmp/cap.pcap" --keep-data --verify -o "$tmp/out/tgt.json" >"$tmp/verify.out" 2>&1
rc=$?
cat "$tmp/verify.out"
[ $rc = 0 ] || fail "import --keep-data --verify exits $rc"
grep -q '^verify: [0-9]* commands, 0 differences (the data of 4 reads compared)' "$tmp/verify.out" ||
	fail "not the four reads of unwritten blocks compared"
img=$tmp/out/tgt.lun1.img
[ -f "$img" ] || fail "no image next to the scenario"
[ "$(stat -c %s "$img")" = 33554432 ] || fail "the image is not the LUN's 32 MiB"
cmp -s -n 32768 "$img" "$tmp/lun1.img" || fail "LBAs 0-63 of the image are not tgtd's"
cmp -s -i 51200 -n 4096 "$img" "$tmp/lun1.img" || fail "LBAs 100-107 of the image are not tgtd's"
head -c 4096 /dev/zero >"$tmp/zeros"
cmp -s -i 102400:0 -n 4096 "$img" "$tmp/zeros" || fail "LBAs 200-207 (written first) are not zeros"
python3 - "$tmp/out/tgt.json" <<'PY' || fail "the scenario does not name the image"
import json, sys
s = json.load(open(sys.argv[1]))
l = [x for x in s["luns"] if x["lun"] == 1][0]
assert l["store"] == {"kind": "file", "path": "tgt.lun1.img"}, l
refs = s["emulates"]["references"]
assert any("data kept: 72 block(s)" in r for r in refs), refs
# tgtd's two portals are one target portal group: one SCSI target port
assert "ports" not in s, s["ports"]
assert any("2 portals of one target portal group" in r and "127.0.0.1:" in r and
           "127.0.0.2:" in r for r in refs), refs
PY
"$fl" lint "$tmp/out/tgt.json" >"$tmp/lint.out" 2>&1 || { cat "$tmp/lint.out"; fail "lint"; }

# Served, the imported LUN answers with tgtd's data.
sport=$(fl_freeport) || fail "no free port"
fl_serve_bg "$fl" "$tmp/out/tgt.json" "$sport" "$tmp/serve.err"
"$fl" send -u -x "iscsi://127.0.0.1:$sport/$iqn/1" read:lba=0,blocks=1 >"$tmp/read.out" 2>&1 ||
	{ cat "$tmp/read.out"; fail "send to the imported scenario failed"; }
first=$(od -An -tx1 -N 16 "$tmp/lun1.img" | tr -s ' ' | sed 's/^ //')
grep -q "$first" "$tmp/read.out" || { cat "$tmp/read.out"; fail "the served LBA 0 is not tgtd's ($first)"; }
kill "$spid"
wait "$spid" 2>/dev/null
spid=""

"$fl" import "$tmp/cap.pcap" --keep-data -o - >/dev/null 2>"$tmp/usage.err"
[ $? = 2 ] || fail "--keep-data with -o - is not a usage error"
grep -q "needs -o FILE" "$tmp/usage.err" || { cat "$tmp/usage.err"; fail "no reason given"; }
echo "import --keep-data: $(grep '^verify' "$tmp/verify.out")"
