#!/bin/sh
# SPDX-License-Identifier: MIT
# test-check-quiet.sh FAULTLUN SCENARIOS_DIR - a passing `faultlun check`
# prints its verdicts and nothing that reads like an error: what the target,
# the runner and libiscsi write to stderr while a scenario runs (the logins
# mpath-all-paths-down refuses on purpose, the LUN ownership moves of
# dh-hpsw-ping-pong) is kept aside, in the JUnit report's system-err; with
# -q a passing run prints the summary line only; with -v that output comes
# as it is written; after a failure it is shown.
set -u
fl=$1 dir=$2
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
fl_tmpdir
errors='error|fail|cannot|refused'

# A passing run: no error-like line on stderr, none on stdout but verdicts
# and the summary's "0 failed".
"$fl" check --junit "$tmp/j.xml" "$dir/demo.json" "$dir/dh-hpsw-ping-pong.json" \
	"$dir/mpath-all-paths-down.json" > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" = 0 ] || { cat "$tmp/out" "$tmp/err"; fail "check of three shipped scenarios: exit $rc"; }
if grep -Ei "$errors" "$tmp/err"; then
	fail "a passing run wrote the error-like lines above to stderr"
fi
if grep -Ev '^(PASS|N/A ) ' "$tmp/out" | grep -Ev '^faultlun check: .*, 0 failed, ' | grep -Ei "$errors"; then
	fail "a passing run printed the error-like lines above"
fi
grep -q '^faultlun check: 3 scenarios, .*, 0 failed, ' "$tmp/out" || fail "no summary: $(cat "$tmp/out")"
# What was kept aside is in the report: the refused logins, the ownership moves.
python3 - "$tmp/j.xml" <<'PY' || exit 1
import sys
import xml.etree.ElementTree as ET
suites = {s.get("name"): s for s in ET.parse(sys.argv[1]).getroot().findall("testsuite")}
def err(name):
    e = suites[name].find("system-err")
    return e.text if e is not None and e.text else ""
assert "login refused" in err("mpath-all-paths-down"), err("mpath-all-paths-down")
assert "ownership moved" in err("dh-hpsw-ping-pong"), err("dh-hpsw-ping-pong")
assert not err("demo"), err("demo")
PY

# -q: a passing run prints the summary line and nothing else.
"$fl" check -q "$dir/demo.json" "$dir/dh-hpsw-ping-pong.json" > "$tmp/q" 2>&1 ||
	{ cat "$tmp/q"; fail "check -q: exit $?"; }
[ "$(wc -l < "$tmp/q")" = 1 ] || { cat "$tmp/q"; fail "check -q printed more than the summary"; }
grep -q '^faultlun check: 2 scenarios, .*, 0 failed, ' "$tmp/q" || fail "check -q: no summary: $(cat "$tmp/q")"

# -v: the target's log comes as it is written.
"$fl" check -v "$dir/dh-hpsw-ping-pong.json" > "$tmp/v" 2> "$tmp/verr" ||
	{ cat "$tmp/v" "$tmp/verr"; fail "check -v: exit $?"; }
grep -q 'ownership moved' "$tmp/verr" || fail "check -v: the target's log is not on stderr"

# A failing run shows what the run wrote.
sed '0,/"errno": "OK"/s//"errno": "EIO"/' "$dir/dh-hpsw-ping-pong.json" > "$tmp/wrong.json"
"$fl" check -q "$tmp/wrong.json" > "$tmp/f" 2> "$tmp/ferr"
rc=$?
[ "$rc" = 1 ] || { cat "$tmp/f" "$tmp/ferr"; fail "a failing run: exit $rc, want 1"; }
grep -q 'what the run wrote to stderr' "$tmp/ferr" && grep -q 'ownership moved' "$tmp/ferr" ||
	{ cat "$tmp/ferr"; fail "a failing run hides what it wrote to stderr"; }
echo ok
