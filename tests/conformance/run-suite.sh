#!/bin/sh
# SPDX-License-Identifier: MIT
# run-suite.sh FAULTLUN SUITE KNOWN-FAILURES [SERVE-ARG...]: runs one libiscsi
# iscsi-test-cu suite with --dataloss against `faultlun serve` on an
# ephemeral port (one 256 MiB LUN; the SERVE-ARGs, e.g. a scenario file for
# suites that need a removable or thin-provisioned disk, or --read-only for
# a write-protected one, are passed on to serve).
# Each test is classified from iscsi-test-cu's output as passed, skipped (a
# "[SKIPPED]" inside the test: not a pass, listed with its reason) or failed.
# Exit 0 when nothing failed except known failures listed (with a reason) in
# KNOWN-FAILURES; 1 on any other failure; 77 when iscsi-test-cu or python3 is
# missing or when every test of the suite was skipped.
set -u
fl=$1
suite=$2
known=$3
shift 3
command -v iscsi-test-cu >/dev/null 2>&1 || { echo "iscsi-test-cu not installed: skipped"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "python3 not installed: skipped"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

urls='"$FAULTLUN_URL"'
case $suite in
*MultipathIO*) urls='"$FAULTLUN_URL" "$FAULTLUN_URL"' ;; # two I_T nexuses to one LU
esac
"$fl" serve -q --listen 127.0.0.1:0 --size 256MiB "$@" \
	--run "iscsi-test-cu --dataloss -v -t $suite $urls" >"$out" 2>&1
rc=$?

python3 - "$out" "$suite" "$known" "$rc" <<'PY'
import re, sys
out, suite, known_path, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = open(out, errors="replace").read()
known = {}
for line in open(known_path):
    line = line.strip()
    if line and not line.startswith("#"):
        name, _, why = line.partition(" ")
        known[name] = why.strip()
family_suite = suite.split(".", 1)[1] if "." in suite else suite
sname = family_suite.split(".")[0]
res = {"passed": [], "skipped": [], "failed": []}
for m in re.finditer(r"Test: (\S+) \.\.\.(.*?)(?<!\[)(passed|FAILED)(?!\])", text, re.S):
    name, span, verdict = sname + "." + m.group(1), m.group(2), m.group(3)
    if verdict == "FAILED":
        res["failed"].append(name)
    elif "[SKIPPED]" in span:
        why = re.search(r"\[SKIPPED\]\s*([^\n]*)", span).group(1).strip()
        res["skipped"].append((name, why))
    else:
        res["passed"].append(name)
total = len(res["passed"]) + len(res["skipped"]) + len(res["failed"])
unexpected = [n for n in res["failed"] if n not in known]
for n in res["failed"]:
    if n in known:
        print("known failure: %s: %s" % (n, known[n]))
for n, why in res["skipped"]:
    print("skipped: %s: %s" % (n, why))
print("%s: %d passed, %d skipped, %d failed (%d known) of %d" % (
    suite, len(res["passed"]), len(res["skipped"]), len(res["failed"]),
    len(res["failed"]) - len(unexpected), total))
if total == 0:
    print(text)
    print("FAIL: %s: no test ran (iscsi-test-cu exit %d)" % (suite, rc))
    sys.exit(1)
if unexpected:
    print(text)
    print("FAIL: %s: %s" % (suite, " ".join(unexpected)))
    sys.exit(1)
if not res["failed"] and not res["passed"]:
    sys.exit(77)
sys.exit(0)
PY
