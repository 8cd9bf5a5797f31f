#!/bin/sh
# SPDX-License-Identifier: MIT
# test-check-ktap.sh FAULTLUN SCENARIOS_DIR TESTS_VM_DIR - `faultlun check
# --ktap FILE` and `faultlun vm --ktap FILE` write KTAP version 1 that
# ktap-check.py accepts (version line, plan equal to the results, numbering
# 1..N in order, subtest blocks indented two spaces, the SKIP directive's
# form): a scenario per test with its expectations as subtests, a
# not-applicable expectation and a file that is no scenario are SKIPs, a
# failing expectation makes both its subtest and its scenario "not ok", a
# file the loader refuses is "not ok" with its messages as diagnostics. The
# VM lab's KTAP comes from a recorded run (tests/vm/recorded/end-of-disk-tcmu,
# checked again with --recheck; no guest boots), and `faultlun report
# --ktap` writes the same from its result.json. The checker itself refuses
# broken documents.
set -u
fl=$1 dir=$2 vmdir=$3
here=$(dirname "$0")
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
fl_tmpdir
chk() { python3 "$here/ktap-check.py" "$@"; }

# The checker refuses what breaks the format's rules.
bad() {
	printf "$2" > "$tmp/bad.tap"
	chk "$tmp/bad.tap" > "$tmp/bad.out" && fail "the checker took $1"
}
bad "no version line" '1..1\nok 1 a\n'
bad "a plan of 2 with 1 result" 'KTAP version 1\n1..2\nok 1 a\n'
bad "numbers out of order" 'KTAP version 1\n1..2\nok 2 a\nok 1 b\n'
bad "a subtest indented 4" 'KTAP version 1\n1..1\n    KTAP version 1\n    1..1\n    ok 1 x\nok 1 a\n'
bad "a lower-case skip" 'KTAP version 1\n1..1\nok 1 a # skip why\n'
bad "a SKIP that is not ok" 'KTAP version 1\n1..1\nnot ok 1 a # SKIP why\n'
bad "an ok parent of a failed subtest" \
	'KTAP version 1\n1..1\n  KTAP version 1\n  1..1\n  not ok 1 x\nok 1 a\n'
printf 'KTAP version 1\n1..1\n  KTAP version 1\n  1..2\n  # why\n  not ok 1 x\n  ok 2 y # SKIP n/a\nnot ok 1 a\n' > "$tmp/good.tap"
chk "$tmp/good.tap" > /dev/null || fail "the checker refused a good document"

# check: a passing scenario, one with not-applicable expectations, one with a
# failing expectation, one the loader refuses, the scenario schema.
fl_check_five ktap "$tmp/c.tap"
[ -s "$tmp/c.tap" ] || fail "no KTAP written"
cat "$tmp/c.tap"
chk "$tmp/c.tap" > "$tmp/c.res" || { cat "$tmp/c.res"; fail "check's KTAP breaks the format"; }
[ "$(grep -c '^0 ' "$tmp/c.res")" = 5 ] || fail "not 5 scenario results"
# each scenario's result, in order
grep '^0 ' "$tmp/c.res" | awk '{print $2}' | tr '\n' ' ' > "$tmp/top"
[ "$(cat "$tmp/top")" = "ok ok not_ok not_ok skip " ] || fail "scenario results: $(cat "$tmp/top")"
# demo's five expectations hold
awk '/^  KTAP/{b++} b==1' "$tmp/c.tap" | grep -c '^  ok [0-9]* expect' | grep -qx 5 ||
	fail "demo's subtests are not its five held expectations"
# medium-error-heal's not-applicable ones are SKIPs with their reason
awk '/^  KTAP/{b++} b==2' "$tmp/c.tap" | grep -q '^  ok [0-9]* expect .* # SKIP the libiscsi runner sees no' ||
	fail "no SKIP subtest with its reason"
# the failing expectation: its subtest and its scenario are "not ok", its diagnostics before it
grep -q '^  not ok 2 expect 1: step 0 errno EIO$' "$tmp/c.tap" || fail "no failing subtest"
grep -B2 '^  not ok 2 expect 1' "$tmp/c.tap" | grep -q '^  # observed: ENODATA' ||
	fail "the failing subtest has no observed diagnostic"
grep -q '^not ok 3 demo$' "$tmp/c.tap" || fail "the failing scenario is not 'not ok'"
# the refused file carries the loader's FILE:LINE:COL messages
grep -B3 '^not ok 4 ' "$tmp/c.tap" | grep -q "^# .*lint.json:1:[0-9]*: " ||
	fail "the refused scenario has no lint diagnostics"
grep -q '^ok 5 .* # SKIP a JSON Schema, not a scenario$' "$tmp/c.tap" || fail "the schema is no SKIP"

# vm: the recorded run checked again, as it is and with an expectation it contradicts.
mkdir -p "$tmp/good" "$tmp/bad"
cp -r "$vmdir/recorded/end-of-disk-tcmu" "$tmp/good/guest"
cp -r "$vmdir/recorded/end-of-disk-tcmu" "$tmp/bad/guest"
"$fl" vm "$vmdir/end-of-disk.json" --path tcmu --recheck "$tmp/good" --quiet \
	--ktap "$tmp/good.tap" > "$tmp/v.out" 2>&1 || { cat "$tmp/v.out"; fail "vm recheck: exit $?"; }
chk "$tmp/good.tap" > "$tmp/good.res" || { cat "$tmp/good.res"; fail "vm's KTAP breaks the format"; }
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["expectations"]))' \
	"$tmp/good/result.json")
[ "$(grep -c '^1 ok ' "$tmp/good.res")" = "$n" ] || fail "vm: not $n held subtests"
grep -qx '0 ok end-of-disk (tcmu)' "$tmp/good.res" || fail "vm: the run is not ok"
sed -e '0,/"errno": "ENOSPC"/s//"errno": "EIO"/' "$vmdir/end-of-disk.json" > "$tmp/wrong.json"
"$fl" vm "$tmp/wrong.json" --path tcmu --recheck "$tmp/bad" --quiet --ktap "$tmp/bad.tap" \
	> "$tmp/v2.out" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$tmp/v2.out"; fail "vm recheck of a contradicted run: exit $rc, want 1"; }
chk "$tmp/bad.tap" > "$tmp/bad.res" || { cat "$tmp/bad.res"; fail "vm's KTAP breaks the format"; }
grep -qx '1 not_ok expect 1: step 1 errno EIO' "$tmp/bad.res" || fail "vm: no failing subtest"
grep -qx '0 not_ok wrong (tcmu)' "$tmp/bad.res" || fail "vm: the failing run is not 'not ok'"
# report: the same from a result.json, named after its scenario and path.
"$fl" report "$tmp/good" --no-timeline --ktap "$tmp/rgood.tap" > "$tmp/r.out" 2>&1 ||
	{ cat "$tmp/r.out"; fail "report of the recorded run: exit $?"; }
chk "$tmp/rgood.tap" > "$tmp/rgood.res" || { cat "$tmp/rgood.res"; fail "report's KTAP breaks the format"; }
cmp -s "$tmp/rgood.res" "$tmp/good.res" || fail "report's KTAP differs from vm's: $(cat "$tmp/rgood.res")"
"$fl" report "$tmp/bad/result.json" --no-timeline --ktap "$tmp/rbad.tap" > "$tmp/r2.out" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$tmp/r2.out"; fail "report of a failing result: exit $rc, want 1"; }
chk "$tmp/rbad.tap" | grep -qx '0 not_ok end-of-disk (tcmu)' || fail "report: the failing run is not 'not ok'"
echo ok
