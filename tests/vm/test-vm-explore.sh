#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-explore.sh - `faultlun explore` end to end on the stock kernel
# (docs/explore.md): the shipped single-path base explored for two trials
# with seed 1 must print a summary of 2 trials and write explore.json with
# two judged trials, each trial file a scenario that lints, which `explore
# merge` reads back with the same verdict. Findings are
# allowed (exit 1): the test is of the search, not of the kernel.
#   test-vm-explore.sh FAULTLUN BASE OUTDIR
set -u
faultlun=$1 base=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
"$faultlun" explore "$base" --budget 2 --seed 1 --out "$out/run" >"$out/log" 2>&1
rc=$?
cat "$out/log"
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || { echo "expected exit status 0 or 1, got $rc"; exit 1; }
grep -q '^2 trials, [0-9]* findings, [0-9]* seconds, [0-9.]* trials/hour' "$out/log" ||
	{ echo "no summary of 2 trials"; exit 1; }
[ "$(grep -c '"verdict": "\(pass\|finding\)"' "$out/run/explore.json")" -eq 2 ] ||
	{ echo "explore.json does not judge 2 trials"; exit 1; }
"$faultlun" lint "$out/run/trials/t0001.json" "$out/run/trials/t0002.json" ||
	{ echo "a trial file does not lint"; exit 1; }
# the real run's results through `explore merge` (one shard of one): the same verdict
"$faultlun" explore merge -o "$out/merged.json" "$out/run" >"$out/merge.log" 2>&1
mrc=$?
cat "$out/merge.log"
[ "$mrc" -eq "$rc" ] || { echo "explore merge: exit $mrc, explore exited $rc"; exit 1; }
grep -q '^merged 1 of 1 shards: 2 trials, [0-9]* findings' "$out/merge.log" ||
	{ echo "explore merge: no summary of 2 trials"; exit 1; }
echo "2 trials explored and judged"
