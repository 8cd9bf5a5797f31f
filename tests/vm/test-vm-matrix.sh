#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-matrix.sh - `faultlun vm SCENARIO --path iscsi --kernels
# stock,debian:trixie,debian:sid` runs the scenario on Debian 12's 6.1, 6.12
# and 7.2 and writes the matrix report. Asserts: exit 0; matrix.json
# ("faultlun_vm_matrix": 1) lists the three kernels in order with releases
# 6.1.*, 6.12.*, 7.2.*, one row (the scenario on iscsi) whose three cells
# PASS, each linking its run's report; matrix.html has the table with each
# kernel, cell links that resolve, and the three runs' ladders side by side
# on one time window. A kernel whose package cannot be had makes the test a SKIP (77),
# never a pass.
#   test-vm-matrix.sh FAULTLUN SCENARIO WORKDIR
set -u
fl=$1
scenario=$2
work=$3
rm -rf "$work"
"$fl" vm "$scenario" --path iscsi --quiet --timeout 420 --kernels stock,debian:trixie,debian:sid \
	--out "$work" >"$work.log" 2>&1
rc=$?
cat "$work.log"
[ "$rc" = 77 ] && { echo "SKIP: no qemu or no kernel package"; exit 77; }
m=$work/matrix.json
[ -f "$m" ] || { echo "FAIL: no $m (exit $rc)"; exit 1; }
grep -q '"SKIP"' "$m" && { echo "SKIP: a kernel package cannot be had"; exit 77; }
[ "$rc" = 0 ] || { echo "FAIL: exit $rc"; exit 1; }
python3 - "$m" "$work/matrix.html" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
html = open(sys.argv[2]).read()
def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)
if d.get("faultlun_vm_matrix") != 1:
    fail("not a matrix document")
labels = [k["label"] for k in d["kernels"]]
if labels != ["stock", "debian:trixie", "debian:sid"]:
    fail("kernels %s" % labels)
for k, pre in zip(d["kernels"], ("6.1.", "6.12.", "7.2.")):
    if not k.get("release", "").startswith(pre):
        fail("%s runs %s, expected %s*" % (k["label"], k.get("release"), pre))
if len(d["rows"]) != 1 or d["rows"][0]["path"] != "iscsi":
    fail("rows %s" % [(r["scenario"], r["path"]) for r in d["rows"]])
for l in labels:
    c = d["rows"][0]["cells"].get(l, {})
    if c.get("verdict") != "PASS" or not c.get("report"):
        fail("cell %s: %s" % (l, c))
    if l not in html:
        fail("matrix.html does not show %s" % l)
if "<table>" not in html or "class=\"PASS\"" not in html:
    fail("matrix.html has no verdict table")
import os, re
base = os.path.dirname(sys.argv[1])
for l in re.findall(r'<a class="run" href="([^"]*)"', html):
    if not os.path.isfile(os.path.join(base, l)):
        fail("a cell links to %s, which does not exist" % l)
runs = re.findall(r'<g class="side-run" data-kernel="([^"]*)"', html)
if runs != labels:
    fail("side-by-side ladders of %s" % runs)
wins = set(re.findall(r'class="ladder" data-cycles="\d+" data-tmin="([^"]*)" data-tmax="([^"]*)"', html))
if len(wins) != 1:
    fail("the ladders are not on one time window: %s" % wins)
print("PASS: matrix of %s" % ", ".join(k["release"] for k in d["kernels"]))
PY
