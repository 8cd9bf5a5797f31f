#!/bin/sh
# SPDX-License-Identifier: MIT
# run-suite.sh FAULTLUN SUITE KNOWN-FAILURES: runs one libiscsi iscsi-test-cu
# suite with --dataloss against `faultlun serve` on an ephemeral port.
# Passes when every test of the suite passes or is a known failure listed
# (with its reason) in KNOWN-FAILURES; fails on any other failure; exits 77
# when iscsi-test-cu is missing or every test of the suite was skipped.
# Skipped tests are listed, never counted as passes.
set -u
fl=$1
suite=$2
known=$3
command -v iscsi-test-cu >/dev/null 2>&1 || { echo "iscsi-test-cu not installed: skipped"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

urls='"$FAULTLUN_URL"'
case $suite in
*MultipathIO*) urls='"$FAULTLUN_URL" "$FAULTLUN_URL"' ;; # two I_T nexuses to one LU
esac
"$fl" serve -q --listen 127.0.0.1:0 --size 256MiB \
	--run "iscsi-test-cu --dataloss -n -t $suite $urls" >"$out" 2>&1
rc=$?

summary=$(grep -E '^ +tests +[0-9]' "$out" | tail -1)
if [ -z "$summary" ]; then
	cat "$out"
	echo "FAIL: $suite: no CUnit summary (exit $rc)"
	exit 1
fi
# "tests  Total Ran Passed Failed Inactive"
set -- $summary
total=$2
ran=$3
failed=$5

# Failing tests by name: "  Test: NAME ...FAILED".
failing=$(grep -E 'Test: .*FAILED' "$out" | sed -E 's/.*Test: ([^ ]+) .*/\1/' | sort -u)
skipped=$(grep -c '\[SKIPPED\]' "$out")
unexpected=""
for t in $failing; do
	name="${suite#*.}.$t"
	case $suite in *.*.*) name="${suite#*.}" ;; esac
	if grep -q "^$name " "$known" 2>/dev/null || grep -q "^${name%%.*}\.$t " "$known" 2>/dev/null; then
		echo "known failure: $name: $(grep -E "^(${name}|${name%%.*}\.$t) " "$known" | head -1 | cut -d' ' -f2-)"
	else
		unexpected="$unexpected $t"
	fi
done
if [ "$skipped" -gt 0 ]; then
	echo "skipped ($skipped):"
	grep '\[SKIPPED\]' "$out" | sort | uniq -c
fi
echo "$suite: $ran of $total run, $failed failed"
if [ -n "$unexpected" ]; then
	cat "$out"
	echo "FAIL: $suite:$unexpected"
	exit 1
fi
if [ "$rc" -ne 0 ] && [ -z "$failing" ]; then
	cat "$out"
	echo "FAIL: $suite: iscsi-test-cu exited $rc"
	exit 1
fi
if [ "$ran" -gt 0 ] && [ "$skipped" -ge "$ran" ] && [ -z "$failing" ]; then
	echo "$suite: every test skipped"
	exit 77
fi
exit 0
