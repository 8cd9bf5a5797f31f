#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-import-lio.sh - `faultlun import` on a capture of the kernel's own
# iSCSI target (docs/import.md): in a VM-lab guest (the lio path, a `shell`
# step running tests/vm/import-lio-guest.sh) LIO serves a ramdisk LUN on the
# guest's loopback; the kernel's initiator logs in (scsi_dh_alua loaded) and
# reads, then iscsi-test-cu runs two initiators' reservations (a conflict, a
# LUN RESET), a read past the end, INQUIRY's pages and READ CAPACITY, all
# captured by tcpdump. On the host the capture must import and verify with 0
# differences over at least 500 commands; LIO's identity must be in the
# scenario (vendor LIO-ORG, its serial, ALUA, its Extended INQUIRY page 86h as
# captured) with no rule for the read past the end or the conflicts; and a
# second guest running the imported scenario (path iscsi, multipath knob so
# the device handlers are loaded before the scan, as on a multipath host)
# must show the kernel the same disk: sysfs vendor, model, rev, dh_state and
# access_state equal to what the kernel saw of LIO.
#   test-vm-import-lio.sh FAULTLUN GUEST_SCRIPT OUTDIR
# Exit 77 (skip) without qemu or the guest kernel, tcpdump, iscsi-test-cu,
# iscsiadm or iscsid.
set -u
faultlun=$1 guest_script=$2 out=$3
# shellcheck source=tests/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
PATH=$PATH:/usr/sbin:/sbin
for need in tcpdump iscsi-test-cu iscsiadm iscsid; do
	command -v "$need" >/dev/null 2>&1 || { echo "SKIP: $need not installed"; exit 77; }
done
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
gs="$(cd "$(dirname "$guest_script")" && pwd)/$(basename "$guest_script")"
tests=ALL.Reserve6.Simple,ALL.Reserve6.LUNReset,ALL.Read10.BeyondEol,ALL.Inquiry,ALL.ReadCapacity10

# 1. LIO captured in the guest.
fl_page_lab liocap 300 "sh '$gs' '$tests'" "LIO's iSCSI target captured in the guest."
fl_page_run liocap 420 liocap kernel-view.txt setup.log tcpdump.err
cap=$g/lio.pcap
grep -q "Suite: Reserve6" "$g/testcu.out" || fail "iscsi-test-cu did not run (see $g/testcu.out)"
grep -q "^dh_state=alua" "$g/kernel-view.txt" || fail "the kernel did not attach scsi_dh_alua to LIO's disk"
grep -q "^0 packets dropped by kernel" "$g/tcpdump.err" || fail "tcpdump dropped packets"

# 2. Imported and verified.
"$faultlun" import "$cap" --verify -o "$out/lio.json" >"$out/verify.out" 2>"$out/verify.err"
rc=$?
cat "$out/verify.out"
[ $rc = 0 ] || { cat "$out/verify.err"; fail "verify exits $rc, not 0 (no differences)"; }
grep -Eq '^verify: ([5-9][0-9]{2}|[1-9][0-9]{3,}) commands, 0 differences' "$out/verify.out" ||
	fail "verify did not replay the run's commands"
"$faultlun" lint "$out/lio.json" >"$out/lint.out" 2>&1 || { cat "$out/lint.out"; fail "the scenario does not lint"; }
python3 - "$out/lio.json" <<'PY' || fail "LIO's identity is not in the scenario"
import json, sys
s = json.load(open(sys.argv[1]))
l = s["luns"][0]
assert (l["vendor"], l["product"]) == ("LIO-ORG", "RAMDISK-MCP"), l
assert l["serial"] == "a5e1f0c2-77d4-4b1e-9c3a-faultlun0001", l
assert l["alua"]["implicit"] and l["alua"]["explicit"], l
assert l["vpd"]["0x86"].split()[1] == "07", l  # HEADSUP ORDSUP SIMPSUP
# the read past the end and the conflicts are the LUN's own: no rule
for r in s.get("rules", []):
    assert r["match"].get("opcode") not in ("0x28", "0x00", "0x12"), r
PY

# 3. The imported scenario in the lab: the kernel must see the same disk.
python3 - "$out/lio.json" "$out/ident.json" <<'PY' || fail "cannot write the identity scenario"
import json, sys
s = json.load(open(sys.argv[1]))
s["name"] = "ident"
s["check"] = {
    "paths": ["iscsi"],
    "knobs": {"multipath": True},
    "workload": [{"op": "shell", "lun": 0, "timeout_s": 60, "command":
        "mkdir -p /fl-results/ident && for d in /sys/class/scsi_disk/*/device; do "
        "for f in vendor model rev dh_state access_state; do printf '%s=' $f; cat $d/$f; "
        "done; done >/fl-results/ident/kernel-view.txt 2>&1"}],
    "expect": [{"step": 0, "errno": "OK"}],
}
json.dump(s, open(sys.argv[2], "w"), indent=1)
PY
"$faultlun" vm "$out/ident.json" --path iscsi --quiet --out "$out/run2" --timeout 300 >"$out/log2" 2>&1
rc=$?
cat "$out/log2"
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || fail "faultlun vm on the imported scenario exited $rc"
seen=$out/run2/ident-iscsi/guest/ident/kernel-view.txt
echo "== the kernel's view of LIO"
cat "$g/kernel-view.txt"
echo "== the kernel's view of the imported scenario"
cat "$seen"
cmp -s "$g/kernel-view.txt" "$seen" || fail "the kernel sees the imported LUN otherwise than LIO's"
echo "import (LIO in the lab): $(tail -1 "$out/verify.out"); the kernel sees the same disk"
