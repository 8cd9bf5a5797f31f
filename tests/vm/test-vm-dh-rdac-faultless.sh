#!/bin/sh
# SPDX-License-Identifier: MIT
# A dh-rdac scenario with its cause taken out must fail in the VM lab:
#   no-personality  dh-rdac-failover as a plain LUN (no "personality"): no
#                   rdac handler attaches, the "rdac: LUN 0" lines are missing
#   no-move         dh-rdac-not-owned without the array's own transfer: no
#                   94/01, no failover, path A never ghost
# Usage: test-vm-dh-rdac-faultless.sh FAULTLUN SCENARIOS_DIR OUT CASE
set -u
faultlun=$1 dir=$2 out=$3 case=$4
rm -rf "$out"
mkdir -p "$out"
case $case in
no-personality)
	sed -e 's/"personality": { "name": "rdac", "owner": 1, "preferred": 1 }/"vendor": "FAULTLUN"/' \
		"$dir/dh-rdac-failover.json" >"$out/faultless.json"
	changed='"vendor": "FAULTLUN"'
	must_fail='FAIL  kernel log /rdac: LUN 0 \(RDAC\) \(owned\)/'
	;;
no-move)
	sed -e 's/"owner": 2,/"owner": 1,/' "$dir/dh-rdac-not-owned.json" >"$out/faultless.json"
	changed='"owner": 1,'
	must_fail='FAIL  path A enters ghost'
	;;
*)
	echo "unknown case $case"
	exit 2
	;;
esac
grep -q "$changed" "$out/faultless.json" || { echo "could not take the cause out"; exit 1; }
"$faultlun" vm "$out/faultless.json" --path iscsi --quiet --out "$out/run" --timeout 300 >"$out/log" 2>&1
rc=$?
cat "$out/log"
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 1 ] || { echo "expected exit status 1 (an expectation failed), got $rc"; exit 1; }
grep -qF "$must_fail" "$out/log" || { echo "no line '$must_fail'"; exit 1; }
echo "without its cause the scenario fails, as it should"
