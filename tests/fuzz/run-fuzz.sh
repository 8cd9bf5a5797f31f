#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds (once, shared by the fuzz ctests under a lock) a clang build of the
# project with libFuzzer + ASan + UBSan instrumentation, replays every saved
# regression input of one target, then fuzzes it for a fixed time from its
# seed corpus. Exit 77 (skip) when clang or its libFuzzer runtime is missing.
#   run-fuzz.sh SRCDIR BUILDDIR TARGET SECONDS
set -eu
src=$1
bld=$2
t=$3
secs=$4
here=$src/tests/fuzz

# Exit 77 (skip) passes through; any other failure is a failed test.
rc=0
exe=$(sh "$here/build-fuzz.sh" "$src" "$bld" "$t") || rc=$?
[ "$rc" = 0 ] || exit "$rc"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# libFuzzer's own failure code is 77, ctest's skip: failures exit 1 instead.
# Every crash ever found: each file runs once and must pass.
reg=$here/regressions/$t
if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
	echo "replaying $(ls "$reg" | wc -l) regression inputs"
	"$exe" -error_exitcode=1 -timeout_exitcode=1 "$reg"/*
fi

# Fuzz from a scratch copy of the seeds; crashes land in $bld/crash-$t-*.
work=$bld/corpus-$t
mkdir -p "$work"
dict=""
[ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
# shellcheck disable=SC2086
"$exe" -max_total_time="$secs" -timeout=10 -error_exitcode=1 -timeout_exitcode=1 -rss_limit_mb=2048 -max_len="$(sh "$here/build-fuzz.sh" --max-len "$t")" \
	-artifact_prefix="$bld/crash-$t-" -print_final_stats=1 $dict "$work" "$here/corpus/$t"
