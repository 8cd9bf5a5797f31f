#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-explore-planted.sh - the kernel oracle end to end, and minimisation
# on the kernel: a base whose workload writes a WARNING-shaped line to
# /dev/kmsg makes every trial a kernel finding; explore must exit 1, name the
# kernel oracle with that line, and minimise the first finding's schedule
# (up to 4 rules) to one rule in findings/f1.json, a scenario that lints and
# that `faultlun vm` then fails on its kernel_log expectation.
#   test-vm-explore-planted.sh FAULTLUN BASE OUTDIR
set -u
faultlun=$1 base=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
"$faultlun" explore "$base" --budget 1 --seed 1632 --max-faults 4 --out "$out/run" >"$out/log" 2>&1
rc=$?
cat "$out/log"
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 1 ] || { echo "expected exit status 1 (findings), got $rc"; exit 1; }
grep -q '^t0001: finding (kernel): WARNING: CPU: 0 PID: 1 at explore-planted' "$out/log" ||
	{ echo "the kernel oracle did not name the planted line"; exit 1; }
grep -q '^t0001: 1 of [0-9]* rules left' "$out/log" || { echo "not minimised to one rule"; exit 1; }
"$faultlun" lint "$out/run/findings/f1.json" || { echo "findings/f1.json does not lint"; exit 1; }
"$faultlun" vm "$out/run/findings/f1.json" --path iscsi --quiet --out "$out/repro" >"$out/repro.log" 2>&1
rc=$?
cat "$out/repro.log"
[ "$rc" -eq 1 ] || { echo "the minimised finding did not reproduce (exit $rc)"; exit 1; }
echo "planted splat found, minimised to one rule, reproduced"
