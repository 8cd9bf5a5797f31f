#!/bin/sh
# SPDX-License-Identifier: MIT
# test-check-junit.sh FAULTLUN SCENARIOS_DIR XSD - `faultlun check --junit
# FILE` on a passing scenario, one with not-applicable expectations, one with
# a failing expectation, one the loader refuses and the scenario schema:
# the report validates against junit-10.xsd (the element and attribute set
# Jenkins validates) with xmllint; every testcase has a time; the failure has
# a type and says what was expected and observed; the refused file is an
# <error> holding the loader's FILE:LINE:COL messages; not-applicable is
# <skipped>; the tests / failures / errors / skipped totals of each
# testsuite and of testsuites equal the elements written. docs/send.md's
# command line with --junit, --ktap and --json runs as written.
set -u
fl=$1 dir=$2 xsd=$3
case $fl in /*) ;; *) fl=$PWD/$fl ;; esac
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
. "$(dirname "$0")/../lib/common.sh"
command -v xmllint >/dev/null 2>&1 ||
	{ echo "SKIP: xmllint not found (libxml2-utils, scripts/deps.sh test)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
fl_tmpdir

# The schema itself refuses what Jenkins' would (a skipped count on testsuites).
printf '<testsuites skipped="1"><testsuite name="a" tests="0"/></testsuites>\n' > "$tmp/x.xml"
xmllint --noout --schema "$xsd" "$tmp/x.xml" 2>/dev/null && fail "the schema took testsuites/@skipped"
printf '<testsuites tests="1"><testsuite name="a" tests="1"><testcase name="t" time="0.1"><failure message="m" type="x">text</failure></testcase></testsuite></testsuites>\n' > "$tmp/y.xml"
xmllint --noout --schema "$xsd" "$tmp/y.xml" 2>/dev/null || fail "the schema refused a plain report"

fl_check_five junit "$tmp/j.xml"
xmllint --noout --schema "$xsd" "$tmp/j.xml" || { cat "$tmp/j.xml"; fail "the report is not valid junit-10"; }
python3 - "$tmp/j.xml" <<'PY' || exit 1
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
assert len(suites) == 5, len(suites)
tot = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
for s in suites:
    cases = s.findall("testcase")
    n = {"tests": len(cases),
         "failures": sum(len(c.findall("failure")) for c in cases),
         "errors": sum(len(c.findall("error")) for c in cases),
         "skipped": sum(len(c.findall("skipped")) for c in cases)}
    for k, v in n.items():
        assert int(s.get(k)) == v, (s.get("name"), k, s.get(k), v)
        tot[k] += v
    for c in cases:
        t = c.get("time")
        assert t is not None and float(t) >= 0, (c.get("name"), t)
for k in ("tests", "failures", "errors"):
    assert int(root.get(k)) == tot[k], (k, root.get(k), tot[k])
demo, meh, broken, lint, schema = suites
assert int(demo.get("tests")) == 5 and int(demo.get("failures")) == 0
assert int(meh.get("skipped")) > 0, "medium-error-heal: no skipped"
for c in meh.findall("testcase"):
    sk = c.find("skipped")
    assert sk is None or sk.get("message"), "a skipped without its reason"
fails = broken.findall("testcase/failure")
assert len(fails) == 1, len(fails)
f = fails[0]
assert f.get("type") == "errno", f.get("type")
assert "expected: step 0 errno EIO" in f.text and "observed: ENODATA" in f.text, f.text
errs = lint.findall("testcase/error")
assert len(errs) == 1 and int(lint.get("errors")) == 1
assert errs[0].get("type") == "lint"
assert "lint.json:1:" in (errs[0].text or ""), errs[0].text
assert len(schema.findall("testcase/skipped")) == 1
print("junit ok: %d testcases, %d failures, %d errors, %d skipped" %
      (tot["tests"], tot["failures"], tot["errors"], tot["skipped"]))
PY

# docs/send.md, as written (from a directory with the shipped scenarios).
mkdir "$tmp/doc" && ln -s "$dir" "$tmp/doc/scenarios" || exit 1
(cd "$tmp/doc" && "$fl" check --junit report.xml --ktap report.tap --json result.json scenarios/busy-storm.json) \
	> "$tmp/doc.out" 2>&1
rc=$?
[ "$rc" = 0 ] || { cat "$tmp/doc.out"; fail "docs/send.md's check line: exit $rc"; }
xmllint --noout --schema "$xsd" "$tmp/doc/report.xml" || fail "docs/send.md's report.xml is not valid junit-10"
python3 "$(dirname "$0")/ktap-check.py" "$tmp/doc/report.tap" | grep -qx '0 ok busy-storm' ||
	fail "docs/send.md's report.tap: $(cat "$tmp/doc/report.tap")"
[ -s "$tmp/doc/result.json" ] || fail "docs/send.md's result.json is missing"
echo ok
