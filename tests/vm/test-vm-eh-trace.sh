#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-eh-trace.sh - the VM lab's error-handler steps come from the
# target's trace as well as the kernel log, without booting: a recorded real
# run (Linux 6.1, dropped-commands on the iSCSI path, no error-handler
# logging, so the kernel printed no step) judged with an "eh" expectation of
# an abort then a LUN reset passes, its result.json holds one step per TMF
# the trace shows (none counted twice) and an expectation of a target reset
# (which never came) fails.
#   test-vm-eh-trace.sh FAULTLUN SCENARIO RECORDED_DIR OUTDIR
set -u
faultlun=$1 src=$2 rec=$3 out=$4
. "$(dirname "$0")/../lib/common.sh"
rm -rf "$out"
fl_recheck_copies "$rec" "$out" good bad
# The scenario with one more expectation, first in its list.
sed 's/^    "expect": \[$/    "expect": [ { "eh": ["abort", "lun_reset"], "vm_path": "iscsi" },/' \
	"$src" >"$out/good.json"
grep -q '"eh": \["abort", "lun_reset"\]' "$out/good.json" || fail "could not add the eh expectation"
sed 's/^    "expect": \[$/    "expect": [ { "eh": ["abort", "target_reset"], "vm_path": "iscsi" },/' \
	"$src" >"$out/bad.json"

fl_recheck 0 "$out/good.json" iscsi "$out/good" "recorded run"
grep -q "PASS  error-handler steps in order: abort lun_reset" "$out/good.log" ||
	fail "the abort and LUN reset of the trace are not error-handler steps"
# One error-handler step per TMF of the trace during the workload.
tmfs=$(grep -c '"event":"tmf",' "$rec/trace.jsonl")
steps=$(grep -o '"source": *"trace"' "$out/good/result.json" | wc -l)
[ "$tmfs" -gt 0 ] || fail "the recorded trace has no TMF"
[ "$steps" -eq "$tmfs" ] || fail "$tmfs TMFs in the trace, $steps error-handler steps from it"

fl_recheck 1 "$out/bad.json" iscsi "$out/bad" "a target reset that never came"
grep -q "FAIL  error-handler steps in order: abort target_reset" "$out/bad.log" ||
	fail "no FAIL for the target reset"
echo "PASS: $tmfs TMFs of the trace are error-handler steps"
