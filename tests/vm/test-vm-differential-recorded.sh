#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-differential-recorded.sh - vm.differential's comparison on a
# recorded real-kernel run (Linux 6.1, mpath-controller-failover), without
# booting: the run rechecked into a kernel-matrix folder and `faultlun check`
# of the same scenario (made by the comparison itself, none being kept) agree
# on every entry both judge; with one of check's verdicts turned over, the
# comparison fails and names the scenario, the kernel and the entry.
#   test-vm-differential-recorded.sh FAULTLUN SCENARIOS_DIR RECORDED_DIR OUTDIR
set -u
faultlun=$1 scenarios=$2 rec=$3 out=$4
. "$(dirname "$0")/../lib/common.sh"
diff_sh=$(dirname "$0")/test-vm-differential.sh
rm -rf "$out"
run=$out/tier/k6_1-mpath/stock/mpath-controller-failover-iscsi
fl_recheck_copies "$rec" "$out" tier/k6_1-mpath/stock/mpath-controller-failover-iscsi
fl_recheck 0 "$scenarios/mpath-controller-failover.json" iscsi "$run" "recorded run"

sh "$diff_sh" "$faultlun" "$scenarios" "$out/tier" "$out/checks" >"$out/agree.log" 2>&1 ||
	{ cat "$out/agree.log"; fail "the runners disagree on the recorded run"; }
cat "$out/agree.log"
grep -q '^1 VM runs, 1 shipped scenarios; [1-9][0-9]* entries judged by both runners, \([0-9]*\) agree$' \
	"$out/agree.log" || fail "no count of agreeing entries"
[ -s "$out/checks/mpath-controller-failover.json" ] || fail "check's verdicts were not made"

mkdir -p "$out/flipped"
python3 - "$out/checks/mpath-controller-failover.json" "$out/flipped/mpath-controller-failover.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
v = [e for e in doc["results"][0]["verdicts"] if e["what"] == "step 0 errno OK"][0]
v["verdict"], v["observed"] = "fail", "turned over by the test"
json.dump(doc, open(sys.argv[2], "w"))
PY
sh "$diff_sh" "$faultlun" "$scenarios" "$out/tier" "$out/flipped" >"$out/disagree.log" 2>&1
rc=$?
cat "$out/disagree.log"
[ "$rc" -eq 1 ] || fail "a disagreement exits $rc, expected 1"
grep -q "^DISAGREE mpath-controller-failover on k6_1-mpath/stock: expect 0 'step 0 errno OK': VM lab pass (.*), faultlun check fail (turned over by the test)$" \
	"$out/disagree.log" || fail "the disagreement is not named"
echo "the runners agree on the recorded run, and a turned-over verdict is named"
