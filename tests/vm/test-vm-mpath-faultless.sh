#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-mpath-faultless.sh - a dm-multipath library scenario with its fault
# taken out must fail in the VM lab: its expectations are about what the
# fault does to the paths, not about a healthy map.
#   test-vm-mpath-faultless.sh FAULTLUN SCENARIO OUTDIR CASE
# CASE says what is taken out and which expectation must then fail:
#   failover   the control steps leave both port groups as they were
#   path-loss  the marker write no longer starts the cut of port A
set -u
faultlun=$1 src=$2 out=$3 case=$4
rm -rf "$out"
mkdir -p "$out"
case $case in
failover)
	sed -e 's/"args": \[ "alua", "1", "standby" \]/"args": [ "alua", "1", "active_optimized" ]/' \
		-e 's/"args": \[ "alua", "2", "active_optimized" \]/"args": [ "alua", "2", "active_non_optimized" ]/' \
		"$src" >"$out/faultless.json"
	changed='"alua", "2", "active_non_optimized"'
	must_fail='FAIL  path B enters current'
	;;
path-loss)
	sed -e 's/"lba": { "first": 8192 }/"lba": { "first": 100000 }/' "$src" >"$out/faultless.json"
	changed='"first": 100000'
	must_fail='FAIL  path A enters failed'
	;;
*)
	echo "unknown case $case"
	exit 2
	;;
esac
grep -q "$changed" "$out/faultless.json" || { echo "could not take the fault out of $src"; exit 1; }
"$faultlun" vm "$out/faultless.json" --path iscsi --quiet --out "$out/run" --timeout 300 >"$out/log" 2>&1
rc=$?
cat "$out/log"
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 1 ] || { echo "expected exit status 1 (an expectation failed), got $rc"; exit 1; }
grep -q "$must_fail" "$out/log" || { echo "no line '$must_fail'"; exit 1; }
echo "without its fault the scenario fails, as it should"
