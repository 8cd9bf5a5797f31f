#!/bin/sh
# SPDX-License-Identifier: MIT
# test-check-reports.sh FAULTLUN SCENARIOS_DIR - `faultlun check --junit
# --json`: the JUnit XML parses and counts what the verdict lines say, the
# JSON carries version, sha256 of the file, seed and counters; a scenario
# with a failing expectation makes the run exit 1 and appears as a <failure>;
# a file with errors exits 2; two scenarios with error handling in one run
# and the schema file among the scenarios work.
set -u
fl=$1 dir=$2
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
fl_tmpdir

"$fl" check --seed 7 --junit "$tmp/j.xml" --json "$tmp/r.json" "$dir/demo.json" \
	"$dir/medium-error-heal.json" > "$tmp/out" || fail "check of two shipped scenarios: $(cat "$tmp/out")"
cat "$tmp/out"
python3 - "$tmp/j.xml" "$tmp/r.json" "$dir/demo.json" "$tmp/out" <<'PY' || exit 1
import hashlib, json, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
lines = [l for l in open(sys.argv[4]) if l.split(" ")[0] in ("PASS", "FAIL", "N/A")]
assert len(cases) == len(lines), (len(cases), len(lines))
assert int(root.get("failures")) == 0
assert len(root.findall(".//skipped")) == sum(l.startswith("N/A") for l in lines)
r = json.load(open(sys.argv[2]))
assert r["faultlun"]["version"]
res = r["results"][0]
assert res["sha256"] == hashlib.sha256(open(sys.argv[3], "rb").read()).hexdigest()
assert res["seed"] == "7", res["seed"]
assert res["counters"]["commands"] > 0 and res["counters"]["injected"] >= 1
assert res["verdict"] == "pass"
for v in res["verdicts"]:
    assert v["verdict"] in ("pass", "fail", "not_applicable")
    assert ("ok" in v) == (v["verdict"] != "not_applicable")
    assert v["what"]
print("reports ok")
PY
# A failing expectation: exit 1, and a <failure> in the XML.
sed 's/"errno": "ENODATA"/"errno": "EIO"/' "$dir/demo.json" > "$tmp/broken.json"
"$fl" check --junit "$tmp/b.xml" "$tmp/broken.json" > "$tmp/out2"
rc=$?
[ "$rc" = 1 ] || fail "a failing expectation: exit $rc, want 1"
grep -q '<failure' "$tmp/b.xml" || fail "no <failure> in the JUnit report"
grep -q '^FAIL' "$tmp/out2" || fail "no FAIL line"
# Several scenarios whose commands go through the runner's error handling,
# in one run: nothing of one run's abandoned tasks outlives it.
"$fl" check -q "$dir/lost-write-ack.json" "$dir/lun-reset-never-completes.json" > "$tmp/out3" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "two error-handling scenarios in one check: exit $rc: $(cat "$tmp/out3")"
# The scenario schema beside the scenarios is skipped, as by lint.
"$fl" check -q "$dir/demo.json" "$dir/faultlun-scenario.schema.json" > "$tmp/out4" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "check of a scenario and the schema: exit $rc: $(cat "$tmp/out4")"
# A file with errors: exit 2.
echo '{"faultlun": 1, "rules": [{"id": 3}]}' > "$tmp/bad.json"
"$fl" check "$tmp/bad.json" > /dev/null 2>&1
rc=$?
[ "$rc" = 2 ] || fail "a scenario with errors: exit $rc, want 2"
echo ok
