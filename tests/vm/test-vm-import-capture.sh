#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-import-capture.sh - `faultlun import` on a capture of a target no
# one here wrote, made in the VM lab (docs/import.md): in a guest (the lio
# path, a `shell` step running tests/vm/import-capture-guest.sh) the
# kernel's own iSCSI target (lio) or tgtd (tgt) serves a LUN on the guest's
# loopback; the kernel's initiator logs in (scsi_dh_alua loaded) and reads,
# then iscsi-test-cu runs two initiators' reservations (a conflict, a LUN
# RESET), a read past the end, INQUIRY's pages and READ CAPACITY, all
# captured by tcpdump. On the host the capture must import and verify with
# 0 differences over at least 500 commands, the target's identity must be in
# the scenario with no rule for the read past the end or the conflicts, and
# a second guest running the imported scenario (path iscsi, the multipath
# knob so that the device handlers are loaded before the scan, as on a
# multipath host) must show the kernel the same disk: the LUN's sysfs
# vendor, model, rev, wwid (its name for the disk), dh_state and access_state equal to what the kernel
# saw of the target.
# lio2: LIO through two portals, the second's ALUA group standby: the
# scenario must have a port per portal, the groups' states, and the kernel
# must see the imported scenario's two paths as it saw LIO's (one
# active/optimized, one standby).
#   test-vm-import-capture.sh lio|lio2|tgt FAULTLUN GUEST_SCRIPT OUTDIR
# Exit 77 (skip) without qemu or the guest kernel, tcpdump, iscsi-test-cu,
# iscsiadm or iscsid (and tgtd for tgt).
set -u
kind=$1 faultlun=$2 guest_script=$3 out=$4
# shellcheck source=tests/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
PATH=$PATH:/usr/sbin:/sbin
needs="tcpdump iscsi-test-cu iscsiadm iscsid"
[ "$kind" = tgt ] && needs="$needs tgtd tgtadm"
for need in $needs; do
	command -v "$need" >/dev/null 2>&1 || { echo "SKIP: $need not installed"; exit 77; }
done
lun=0
[ "$kind" = tgt ] && lun=1
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
gs="$(cd "$(dirname "$guest_script")" && pwd)/$(basename "$guest_script")"
tests=ALL.Reserve6.Simple,ALL.Reserve6.LUNReset,ALL.Read10.BeyondEol,ALL.Inquiry,ALL.ReadCapacity10

# 1. The target captured in the guest.
fl_page_lab cap 300 "sh '$gs' $kind '$tests'" "$kind's iSCSI target captured in the guest."
fl_page_run cap 420 cap kernel-view.txt setup.log tcpdump.err
grep -q "Suite: Reserve6" "$g/testcu.out" || fail "iscsi-test-cu did not run (see $g/testcu.out)"
grep -q "^0 packets dropped by kernel" "$g/tcpdump.err" || fail "tcpdump dropped packets"

# 2. Imported and verified.
"$faultlun" import "$g/target.pcap" --verify -o "$out/$kind.json" >"$out/verify.out" 2>"$out/verify.err"
rc=$?
cat "$out/verify.out"
[ $rc = 0 ] || { cat "$out/verify.err"; fail "verify exits $rc, not 0 (no differences)"; }
grep -Eq '^verify: ([5-9][0-9]{2}|[1-9][0-9]{3,}) commands, 0 differences' "$out/verify.out" ||
	fail "verify did not replay the run's commands"
"$faultlun" lint "$out/$kind.json" >"$out/lint.out" 2>&1 || { cat "$out/lint.out"; fail "the scenario does not lint"; }
python3 - "$out/$kind.json" "$kind" "$lun" <<'PY' || fail "$kind's identity is not in the scenario"
import json, sys
s = json.load(open(sys.argv[1]))
kind, lun = sys.argv[2], int(sys.argv[3])
l = [x for x in s["luns"] if x["lun"] == lun][0]
if kind == "lio2":
    # group 0 (LIO's default) renumbered: the lowest number not used, 1
    # the ports in the order the kernel first used the portals; each the
    # relative port and group LIO gave the portal it stands for
    refs = s["emulates"]["references"]
    states = {g["id"]: g["state"] for g in s["port_groups"]}
    seen = {}
    for p in s["ports"]:
        ref = [r for r in refs if r.startswith("port %s: target portal group " % p["id"])]
        assert len(ref) == 1, refs
        seen[ref[0].split()[8]] = (p["relative_port"], p["group"], states[p["group"]])
    assert seen == {"127.0.0.1:3261": (1, 1, "active_optimized"),
                    "127.0.0.2:3261": (2, 2, "standby")}, (seen, s["ports"], s["port_groups"])
    assert "state" not in l["alua"], l
if kind.startswith("lio"):
    assert (l["vendor"], l["product"]) == ("LIO-ORG", "RAMDISK-MCP"), l
    assert l["serial"] == "a5e1f0c2-77d4-4b1e-9c3a-faultlun0001", l
    # LIO's 16-byte NAA 6 designator (its OUI 001405), the kernel's wwid
    assert len(l["naa"]) == 34 and l["naa"].startswith("0x6001405"), l
    assert l["alua"]["implicit"] and l["alua"]["explicit"], l
    assert l["vpd"]["0x86"].split()[1] == "07", l  # HEADSUP ORDSUP SIMPSUP
else:
    assert (l["vendor"], l["product"]) == ("IET", "VIRTUAL-DISK"), l
    assert l["size"] == "65536blocks", l
# the read past the end and the conflicts are the LUN's own: no rule
for r in s.get("rules", []):
    assert r["match"].get("opcode") not in ("0x28", "0x00", "0x12"), r
PY

# 3. The imported scenario in the lab: the kernel must see the same disk.
python3 - "$out/$kind.json" "$out/ident.json" <<'PY' || fail "cannot write the identity scenario"
import json, sys
s = json.load(open(sys.argv[1]))
s["name"] = "ident"
s["check"] = {
    "paths": ["iscsi"],
    "knobs": {"multipath": True},
    "workload": [{"op": "shell", "timeout_s": 60, "command":
        "mkdir -p /fl-results/ident && for d in /sys/class/scsi_device/*/device; do "
        "[ -e $d/block ] || continue; n=$(basename $(readlink -f $d)); printf '%s' ${n##*:}; "
        "for f in vendor model rev wwid dh_state access_state; do v=$(cat $d/$f 2>/dev/null) || v=-; "
        "printf ' %s=%s' $f \"$(echo \"$v\" | sed 's/ *$//')\"; done; echo; "
        "done >/fl-results/ident/kernel-view.txt"}],
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
echo "== the kernel's view of $kind's disks"
cat "$g/kernel-view.txt"
echo "== the kernel's view of the imported scenario's"
cat "$seen"
# every disk (path) of the LUN, as many and each the same
grep "^$lun " "$g/kernel-view.txt" | sort >"$out/want.txt"
grep "^$lun " "$seen" | sort >"$out/seen.txt"
[ -s "$out/want.txt" ] || fail "the kernel saw no disk of LUN $lun"
cmp -s "$out/want.txt" "$out/seen.txt" || fail "the kernel sees LUN $lun of the imported scenario otherwise than $kind's"
echo "import ($kind in the lab): $(tail -1 "$out/verify.out"); the kernel sees LUN $lun as it saw $kind's ($(wc -l <"$out/want.txt") path(s))"
