#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-verdict-fails.sh - the VM lab must fail a scenario whose expectation
# contradicts the real kernel: end-of-disk with step 1 expecting EIO where the
# kernel gives ENOSPC must exit 1 and show the expected / observed diff.
#   test-vm-verdict-fails.sh FAULTLUN SCENARIO OUTDIR
set -u
faultlun=$1 src=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
sed '0,/"errno": "ENOSPC"/s//"errno": "EIO"/' "$src" >"$out/wrong.json"
grep -q '"errno": "EIO"' "$out/wrong.json" || { echo "could not alter $src"; exit 1; }
"$faultlun" vm "$out/wrong.json" --path tcmu --quiet --out "$out/run" >"$out/log" 2>&1
rc=$?
cat "$out/log"
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 1 ] || { echo "expected exit status 1 (an expectation failed), got $rc"; exit 1; }
grep -q "FAIL  step 1 errno EIO" "$out/log" || { echo "no FAIL line for step 1"; exit 1; }
grep -q "observed: ENOSPC" "$out/log" || { echo "no observed ENOSPC in the diff"; exit 1; }
echo "the contradicted expectation failed as it should"
