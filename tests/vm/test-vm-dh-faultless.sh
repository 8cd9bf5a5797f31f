#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-dh-faultless.sh - a device-handler library scenario with its fault,
# or its personality, taken out must fail in the VM lab: its expectations are
# about what the handler does, not about a healthy map.
#   test-vm-dh-faultless.sh FAULTLUN SCENARIO OUTDIR CASE
# CASE says what is taken out and which expectation must then fail:
#   no-cut         the marker write no longer starts the cut of port A: no
#                  trespass (dh-emc-sp-failure)
#   no-personality the LUN keeps DGC / VRAID but loses the emc personality
#                  (no VPD C0h, no trespass page): scsi_dh_emc does not attach
#                  ("emc: Attach failed"), so dm-multipath cannot load the map
#                  multipath-tools' entry (hardware_handler 1 emc) asks for: the
#                  run ends in a setup error (exit status 2)
set -u
faultlun=$1 src=$2 out=$3 case=$4
want_rc=1
rm -rf "$out"
mkdir -p "$out"
case $case in
no-cut)
	must_fail='FAIL  kernel log /emc: long trespass command sent/'
	;;
no-personality)
	must_fail='setup-failed: no multipath map'
	want_rc=2
	;;
*)
	echo "unknown case $case"
	exit 2
	;;
esac
python3 - "$src" "$out/faultless.json" "$case" <<'PY' || { echo "could not take it out of $src"; exit 1; }
import json, sys
s = json.load(open(sys.argv[1]))
lun = s["luns"][0]
if sys.argv[3] == "no-cut":
    rule = [r for r in s["rules"] if r["id"] == "start-cut"][0]
    rule["match"]["lba"]["first"] = 100000
else:
    del lun["personality"]
    lun.update(vendor="DGC", product="VRAID", revision="0533")
json.dump(s, open(sys.argv[2], "w"), indent=2)
PY
"$faultlun" vm "$out/faultless.json" --path iscsi --quiet --out "$out/run" --timeout 300 >"$out/log" 2>&1
rc=$?
cat "$out/log"
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq "$want_rc" ] || { echo "expected exit status $want_rc, got $rc"; exit 1; }
grep -q "$must_fail" "$out/log" || { echo "no line '$must_fail'"; exit 1; }
if [ "$case" = no-personality ]; then
	grep -q 'emc: Attach failed' "$out"/run/*/guest/kmsg.txt ||
		{ echo "no 'emc: Attach failed' in the kernel log"; exit 1; }
fi
echo "without it the scenario fails, as it should"
