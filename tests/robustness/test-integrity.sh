#!/bin/sh
# SPDX-License-Identifier: MIT
# Data integrity across a restart: writes through libiscsi under the faults of
# integrity.json with a file store, then a fresh `faultlun serve` on the same
# file verifies that every write acknowledged with GOOD reads back exactly.
#   test-integrity.sh FAULTLUN INTEGRITY SCENARIO WORKDIR [COUNT]
set -u
fl=$1
prog=$2
scen=$3
work=$4
count=${5:-400}
mkdir -p "$work"
img=$work/integrity.img
journal=$work/integrity.journal
rm -f "$img" "$journal"
"$fl" serve -q --listen 127.0.0.1:0 "$scen" --store "file:$img" \
	--run "$prog write '$journal' \"\$FAULTLUN_URL\" $count 1" || { echo "FAIL: write phase"; exit 1; }
[ -s "$journal" ] || { echo "FAIL: empty journal"; exit 1; }
# A new target process on the same file, no faults.
"$fl" serve -q --listen 127.0.0.1:0 --size 16MiB --store "file:$img" \
	--run "$prog verify '$journal' \"\$FAULTLUN_URL\"" || { echo "FAIL: verify phase"; exit 1; }
echo "PASS"
