#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-scsi-debug.sh - `faultlun import --scsi-debug` against Linux's own
# scsi_debug, on a real kernel (docs/import.md, "From scsi_debug's rules"):
# RULES (a status rule of the debugfs error file: the next READ (10) fails
# MEDIUM ERROR 11/00, once; and opts=0x2 with a medium error range) is
# loaded into scsi_debug in one guest, and converted by `faultlun import
# --scsi-debug` into a scenario that faultlun serves in another guest (armed
# at the workload). The same five reads (tests/vm/scsi-debug-guest.sh) must
# end the same way on both disks, read by read (an error where scsi_debug
# gave one: LBA 0 the first time, LBAs 100 and 103, ENODATA as MEDIUM ERROR
# gives), and the kernel must log the same sense for them. KERNEL: the
# guests' kernel (the error file needs 6.7 or later).
#   test-vm-scsi-debug.sh FAULTLUN GUEST_SCRIPT RULES KERNEL OUTDIR
# Exit 77 (skip) without qemu or the guest kernel.
set -u
faultlun=$1 guest_script=$2 rules=$3 kernel=$4 out=$5
# shellcheck source=tests/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
# lab NAME PATH WHAT: the lab runs $out/NAME.json on PATH into $out/run-NAME (its
# log shown); skips when it does, fails unless it passed.
lab() {
	"$faultlun" vm "$out/$1.json" --path "$2" --kernel "$kernel" --quiet --out "$out/run-$1" \
		--timeout 360 >"$out/log-$1" 2>&1
	_rc=$?
	cat "$out/log-$1"
	[ $_rc = 77 ] && exit 77
	[ $_rc = 0 ] || fail "the $3 guest failed ($_rc)"
}
gs=$(abs "$guest_script")
rules=$(abs "$rules")

# 1. scsi_debug in the guest (the lab's lio path, its own LUN unused).
cat >"$out/sdebug.json" <<JSON
{
  "faultlun": 1,
  "name": "sdebug",
  "description": "Linux's scsi_debug with RULES, read in the guest.",
  "luns": [{"lun": 0, "size": "1MiB"}],
  "check": {
    "paths": ["lio"],
    "workload": [{"op": "shell", "timeout_s": 240, "command": "sh '$gs' sdebug '$rules'"}],
    "expect": [{"step": 0, "errno": "OK"}]
  }
}
JSON
lab sdebug lio scsi_debug
a=$out/run-sdebug/sdebug-lio/guest/sd-sdebug
cat "$a/setup.log" 2>/dev/null
echo "== scsi_debug's error file"
cat "$a/error-file.txt"

# 2. The converted scenario, served by faultlun in the guest.
"$faultlun" import --scsi-debug "$rules" --lun 0 -o "$out/converted.json" ||
	fail "import --scsi-debug failed"
python3 - "$out/converted.json" "$gs" <<'PY' || fail "cannot add the check section"
import json, sys
s = json.load(open(sys.argv[1]))
s["name"] = "converted"
s["check"] = {
    "paths": ["iscsi"],
    "arm": "workload",
    "workload": [{"op": "shell", "timeout_s": 240, "command": "sh '%s' faultlun" % sys.argv[2]}],
    "expect": [{"step": 0, "errno": "OK"}],
}
json.dump(s, open(sys.argv[1], "w"), indent=1)
PY
lab converted iscsi faultlun
b=$out/run-converted/converted-iscsi/guest/sd-faultlun

for f in reads.txt sense.txt; do
	echo "== $f: scsi_debug | faultlun"
	paste -d'|' "$a/$f" "$b/$f"
done
# the rules must have fired at all: the test means nothing otherwise
grep -q '^0 No data available' "$a/reads.txt" || fail "scsi_debug's status rule did not fail the first read"
grep -q '^100 No data available' "$a/reads.txt" || fail "scsi_debug's medium error range did not fail LBA 100"
grep -q '^200 ok' "$a/reads.txt" || fail "scsi_debug failed LBA 200"
cmp -s "$a/reads.txt" "$b/reads.txt" || fail "the reads did not end the same way"
grep -q 'Medium Error' "$a/sense.txt" || fail "the kernel logged no MEDIUM ERROR for scsi_debug"
cmp -s "$a/sense.txt" "$b/sense.txt" || fail "the kernel logged other sense for the two disks"
echo "scsi_debug and the converted scenario: the same $(wc -l <"$a/reads.txt") reads, the same sense"
