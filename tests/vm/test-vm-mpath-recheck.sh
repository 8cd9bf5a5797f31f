#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-mpath-recheck.sh - path expectations on a recorded dm-multipath run
# (Linux 6.1, mpath-controller-failover), without booting: the scenario's own
# expectations pass, with the path observer's lines turned into the paths'
# states; a path entering a state more often than it did, or a port that has
# no path, fail with what was seen; without the multipath knob a path
# expectation is not applicable.
#   test-vm-mpath-recheck.sh FAULTLUN SCENARIO RECORDED_DIR OUTDIR
set -u
faultlun=$1 src=$2 rec=$3 out=$4
fail() {
	echo "FAIL: $*"
	exit 1
}
rm -rf "$out"
for d in good bad nomp; do
	mkdir -p "$out/$d"
	cp -r "$rec" "$out/$d/guest"
done

"$faultlun" vm "$src" --path iscsi --recheck "$out/good" >"$out/good.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$out/good.log"; fail "recorded run: exit $rc, expected 0"; }
grep -q "PASS  path B enters current at least 1 time" "$out/good.log" || fail "no path B verdict"
grep -q "PASS  path A enters ghost at least 1 time" "$out/good.log" || fail "no path A verdict"
grep -q "states: active ready 10 enabled -> active ready 50 enabled -> active ready 50 current" "$out/good/result.json" ||
	fail "path B's states are not shown"
grep -q '"kind": "path"' "$out/good/result.json" || fail "result.json has no path verdict"
grep -q '"paths"' "$out/good/obs.json" || fail "obs.json has no paths"

sed -e 's/{ "path": "B", "state": "current", "min": 1 }/{ "path": "B", "state": "current", "min": 2 }/' \
	-e 's/{ "path": "A", "state": "ghost", "min": 1 }/{ "path": "C", "state": "ghost", "min": 1 }/' \
	"$src" >"$out/wrong.json"
"$faultlun" vm "$out/wrong.json" --path iscsi --recheck "$out/bad" >"$out/bad.log" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$out/bad.log"; fail "contradicted path expectations: exit $rc, expected 1"; }
grep -q "FAIL  path B enters current at least 2 times" "$out/bad.log" || fail "no FAIL for path B"
grep -q "observed: entered 1 time" "$out/bad.log" || fail "no observed count"
grep -q "observed: no path of port C was seen" "$out/bad.log" || fail "no FAIL for port C"

sed -e 's/"multipath": true,/"multipath": false,/' "$src" >"$out/nomp.json"
"$faultlun" vm "$out/nomp.json" --path iscsi --recheck "$out/nomp" >"$out/nomp.log" 2>&1
grep -q "N/A   path B enters current" "$out/nomp.log" ||
	grep -q "N/A.*path B enters current" "$out/nomp.log" || { cat "$out/nomp.log"; fail "path expectation without the knob is not N/A"; }
grep -q "knob multipath not set" "$out/nomp.log" || fail "N/A without its reason"
echo "path expectations judged on the recorded run as they should be"
