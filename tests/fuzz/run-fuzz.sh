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

command -v clang >/dev/null 2>&1 || { echo "skip: clang not installed (scripts/deps.sh fuzz)"; exit 77; }
mkdir -p "$bld"
probe=$bld/probe.c
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$probe"
if ! clang -fsanitize=fuzzer,address,undefined "$probe" -o "$bld/probe" >/dev/null 2>&1; then
	echo "skip: clang cannot link -fsanitize=fuzzer (libclang-rt-14-dev missing?)"
	exit 77
fi

# One configure + build at a time; later tests find it up to date.
flags="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -Wno-unknown-warning-option"
(
	flock 9
	cmake -S "$src" -B "$bld" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
		-DCMAKE_C_FLAGS="$flags" -DFL_FUZZ=ON >"$bld/configure.log" 2>&1 ||
		{ cat "$bld/configure.log"; exit 1; }
	cmake --build "$bld" --target "fuzz_$t" -j2 >"$bld/build-$t.log" 2>&1 ||
		{ tail -50 "$bld/build-$t.log"; exit 1; }
) 9>"$bld/.lock"

exe=$(find "$bld" -name "fuzz_$t" -type f -perm -u+x | head -1)
[ -n "$exe" ] || { echo "fuzz_$t was not built"; exit 1; }
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
"$exe" -max_total_time="$secs" -timeout=10 -error_exitcode=1 -timeout_exitcode=1 -rss_limit_mb=2048 -max_len=8192 \
	-artifact_prefix="$bld/crash-$t-" -print_final_stats=1 $dict "$work" "$here/corpus/$t"
