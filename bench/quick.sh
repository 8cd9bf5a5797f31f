#!/bin/sh
# SPDX-License-Identifier: MIT
# The short version of the benchmarks for ctest (label bench): each script once,
# for a second or two per run. It records numbers only: it fails only when a tool
# fails (a server that does not start, a client that gets no result or an error),
# never on the numbers. A script whose prerequisites are missing is skipped;
# when all are, exit 77.
#   BUILD=DIR bench/quick.sh
set -u
cd "$(dirname "$0")/.." || exit 1
ran=0
failed=0
for s in "delay-accuracy.sh 1 1" "rule-overhead.sh 1 1" "scale.sh 1 80 10000" "vs-tgt.sh 1 2" \
	"ceiling.sh 1 2" "tcmu-overhead.sh 3 20000"; do
	echo "== bench/$s"
	# shellcheck disable=SC2086
	WORKLOADS="rr4k_qd32 rw4k_qd32" sh bench/$s
	rc=$?
	case $rc in
	0) ran=$((ran + 1)) ;;
	77) echo "(skipped: a prerequisite is missing)" ;;
	*) echo "bench/$s failed ($rc)"; failed=1 ;;
	esac
done
[ $failed = 0 ] || exit 1
[ $ran -gt 0 ] || exit 77
exit 0
