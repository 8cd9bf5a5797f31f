#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-scsi-debug.sh FAULTLUN IMPORT_MD: `faultlun import --scsi-debug`, one case
# per row of docs/import.md's table: each rule is converted, the scenario
# lints, `faultlun serve` serves it and the real libiscsi client (`faultlun
# send`) gets the answer scsi_debug would have given (a command never
# answered, BUSY, CHECK CONDITION with the line's sense and count, a status,
# a rejected abort and LUN reset, medium errors with INFORMATION from the
# module options); then the lines it must refuse, with the line named; and
# docs/import.md's example, as written.
set -u
fl=$1 doc=$2
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir

# conv RULES...: converts the lines given (one argument a line) into $tmp/s.json.
conv() {
	printf '%s\n' "$@" >"$tmp/rules"
	"$fl" import -q --scsi-debug "$tmp/rules" -o "$tmp/s.json" ||
		fail "import --scsi-debug of: $*"
	"$fl" lint "$tmp/s.json" >/dev/null || fail "the converted scenario does not lint: $*"
}
# run ITEMS...: serves $tmp/s.json and sends the items (3 s per answer); output in $tmp/out.
run() {
	timeout 60 "$fl" serve -q --listen 127.0.0.1:0 "$tmp/s.json" \
		--run "\"$fl\" send -t 3 \"\$FAULTLUN_URL\" $*" >"$tmp/out" 2>&1
}
# want ITEM TEXT: item #ITEM of the last run's output says TEXT.
want() {
	grep -q "^#$1 .*$2" "$tmp/out" || { cat "$tmp/out"; fail "item $1: want '$2'"; }
}

# Type 0, timeout: the first INQUIRY is never answered, the second is.
conv "0 -1 0x12"
run inquiry inquiry
want 1 "no answer"
want 2 "GOOD"
# Type 1, queuecommand returns SCSI_MLQUEUE_HOST_BUSY: BUSY, every time.
conv "1 1 0x00 0x1055"
run tur tur tur
want 2 "BUSY"
want 3 "BUSY"
# Type 2, CHECK CONDITION: MEDIUM ERROR 11/00 on READ(16), twice only (count -2).
conv "2 -2 0x88 0 0 0x2 0x3 0x11 0x0"
run read read read
want 1 "MEDIUM_ERROR/UNRECOVERED_READ_ERROR (11/00)"
want 2 "MEDIUM_ERROR/UNRECOVERED_READ_ERROR (11/00)"
want 3 "GOOD"
# Type 2, a status: RESERVATION CONFLICT on WRITE(10) only.
conv "2 1 0x2a 0 0 0x18 0 0 0"
run write "raw:'2a 00 00 00 00 00 00 00 01 00',out=512"
want 1 "GOOD"
want 2 "RESERVATION_CONFLICT"
# Type 3, the abort fails (with a timeout to abort): ABORT TASK is rejected.
conv "0 1 0x12" "3 1 0xff"
run inquiry:nowait abort-task:last
want 2 "FUNCTION REJECTED"
# Type 4, the LUN reset fails: LUN RESET is rejected.
conv "4 -1 0x00"
run lun-reset
want 1 "FUNCTION REJECTED"
# Module options: opts=2 with medium_error_start/count, as modprobe.d spells them.
conv "options scsi_debug opts=0x2 medium_error_start=100 medium_error_count=4 dev_size_mb=16"
run read:lba=101 read:lba=96,blocks=4 read:lba=98,blocks=4 readcap
want 1 "MEDIUM_ERROR.*INFORMATION 101"
want 2 "GOOD"
want 3 "MEDIUM_ERROR.*INFORMATION 100"
grep -q "blocks: 32768" "$tmp/out" || { cat "$tmp/out"; fail "dev_size_mb=16: not 32768 blocks"; }
# What has no meaning over a fabric is said, not converted.
conv "2 1 0x28 0x7 0 0 0 0 0" "2 0 0x28 0 0 2 3 11 0" "dix=1"
python3 - "$tmp/s.json" <<'PY' || fail "notes"
import json, sys
s = json.load(open(sys.argv[1]))
refs = s["emulates"]["references"]
assert "rules" not in s, s.get("rules")
for want in ("host byte 0x07", "count 0 never injects", "module option dix=1"):
    assert any(want in r and r.startswith("not reproduced") for r in refs), (want, refs)
PY

# A later line of the same type and opcode replaces the earlier one, as in scsi_debug.
conv "0 -3 0x12" "0 1 0x12" "2 1 0x28 0 0 2 3 11 0" "2 0 0x28 0 0 2 3 11 0"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rules"]; assert [x["id"] for x in r]==["sd-line-2"] and "times" not in r[0]["match"], r' "$tmp/s.json" ||
	fail "a later line did not replace the earlier one"

# Refused, with the line: an unknown type, a missing field, a bad opcode, an option out of range,
# a sector size scsi_debug refuses (not a power of two).
i=0
for bad in "7 1 0x12" "2 1 0x88 0 0 2" "0 1 0x123" "every_nth=x" "0 1" "sector_size=4092"; do
	i=$((i + 1))
	printf '# rules\n%s\n' "$bad" >"$tmp/bad"
	"$fl" import --scsi-debug "$tmp/bad" -o "$tmp/b.json" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "'$bad': exit $rc, want 2"
	grep -q "line 2:" "$tmp/err" || fail "'$bad': the message does not name line 2: $(cat "$tmp/err")"
	[ ! -e "$tmp/b.json" ] || fail "'$bad': a scenario was written"
done
grep -q "sector_size: '4092' is not a power of two" "$tmp/err" || fail "sector_size=4092: $(cat "$tmp/err")"
# Sense keys past 9 (MISCOMPARE 0xe) load; a "key" past 0xf is not reproduced.
printf '2 -1 0x2f 0 0 0x2 0xe 0x1d 0x0\n2 -1 0x28 0 0 0x2 0x1e 0x0 0x0\n' >"$tmp/ok"
"$fl" import --scsi-debug "$tmp/ok" -o "$tmp/b.json" 2>"$tmp/err" || fail "sense key 0xe: $(cat "$tmp/err")"
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert [r["action"] for r in s["rules"]] == [{"sense": "0e/1d/00"}], s["rules"]
assert any(r.startswith("not reproduced: line 2") and "sense key 0x1e" in r
           for r in s["emulates"]["references"]), s["emulates"]["references"]
' "$tmp/b.json" || fail "sense keys 0xe and 0x1e"
# Medium errors past the LUN's end (4 KiB sectors, 8 MiB: 2048 blocks) never match; across it, cut.
printf 'opts=2 sector_size=4096\n' >"$tmp/ok"
"$fl" import --scsi-debug "$tmp/ok" -o "$tmp/b.json" 2>"$tmp/err" || fail "medium errors past the end: $(cat "$tmp/err")"
grep -q "not reproduced: opts 0x2 (medium error), LBAs 4660..4669: past the LUN's last LBA 2047" "$tmp/b.json" ||
	fail "medium errors past the end: not said"
printf 'opts=2 sector_size=4096 medium_error_start=2040 medium_error_count=20\n' >"$tmp/ok"
"$fl" import --scsi-debug "$tmp/ok" -o "$tmp/b.json" 2>"$tmp/err" || fail "medium errors across the end: $(cat "$tmp/err")"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rules"][0]["match"]["lba"]; assert r=={"first":2040,"last":2047}, r' "$tmp/b.json" ||
	fail "medium errors across the end: not cut at the last LBA"
printf 'sector_size=8192\n' >"$tmp/ok"
"$fl" import --scsi-debug "$tmp/ok" -o "$tmp/b.json" 2>"$tmp/err" || fail "sector_size=8192: $(cat "$tmp/err")"
python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["luns"][0]; assert l["block_size"]==8192, l' "$tmp/b.json" ||
	fail "sector_size=8192: the LUN's block size"
# Bounded: a line past 512 bytes, a file past 1 MiB.
head -c 600 /dev/zero | tr '\0' 'x' >"$tmp/long"
"$fl" import --scsi-debug "$tmp/long" -o "$tmp/b.json" 2>"$tmp/err" && fail "a 600-byte line read"
grep -q "longer than 512" "$tmp/err" || fail "long line: $(cat "$tmp/err")"
yes "# comment line of scsi_debug rules" | head -c 1100000 >"$tmp/big"
"$fl" import --scsi-debug "$tmp/big" -o "$tmp/b.json" 2>"$tmp/err" && fail "a 1.1 MB file read"
grep -q "larger than" "$tmp/err" || fail "big file: $(cat "$tmp/err")"
# --lun places the rules; without --scsi-debug it is refused.
printf '0 1 0x12\n' >"$tmp/r1"
"$fl" import -q --scsi-debug "$tmp/r1" --lun 3 -o "$tmp/l.json" || fail "--lun 3"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["luns"][0]["lun"]==3 and s["rules"][0]["match"]["lun"]==3, s' "$tmp/l.json" || fail "--lun 3 not applied"
"$fl" import --lun 3 "$tmp/r1" -o "$tmp/l2.json" 2>/dev/null && fail "--lun without --scsi-debug accepted"
# docs/import.md's example: its shell block between "cat > rules.txt" and the
# serve line, run as written (faultlun on PATH) in a scratch folder.
mkdir "$tmp/doc"
sed -n '/^cat > rules.txt/,/^faultlun import --scsi-debug/p' "$doc" >"$tmp/doc/example.sh"
grep -q "^faultlun import --scsi-debug rules.txt -o from-scsi-debug.json" "$tmp/doc/example.sh" ||
	fail "no example in $doc"
(cd "$tmp/doc" && PATH=$(dirname "$fl"):$PATH sh ./example.sh) || fail "the docs' example failed"
"$fl" lint "$tmp/doc/from-scsi-debug.json" >/dev/null || fail "the docs' example does not lint"
python3 - "$tmp/doc/from-scsi-debug.json" <<'PY' || fail "the docs' example: wrong scenario"
import json, sys
s = json.load(open(sys.argv[1]))
acts = [r["action"] for r in s["rules"]]
assert {"sense": "3/11/00"} in acts and {"sense": "3/11/00", "info": "lba"} in acts, acts
assert s["tmf"] == {"lun_reset": {"respond": "rejected"}}, s["tmf"]
PY
echo "import --scsi-debug: ok"
