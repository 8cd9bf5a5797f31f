#!/bin/sh
# SPDX-License-Identifier: MIT
# Configures (once) and builds a clang build of the project with libFuzzer +
# ASan + UBSan instrumentation, under a lock so parallel callers share it, then
# prints the path of each fuzzer asked for, one a line. Used by run-fuzz.sh
# (the ctests) and scripts/fuzz-deep.sh. Exit 77 when clang or its libFuzzer
# runtime is missing, 1 when the build fails.
#   build-fuzz.sh SRCDIR BUILDDIR TARGET...
#   build-fuzz.sh --max-len TARGET   prints the target's input size bound
#   (libFuzzer's -max_len: 32 KiB for the result files report reads, which
#   are larger than PDUs, CDBs and scenarios; 8 KiB for the rest)
set -eu
if [ "$1" = --max-len ]; then
	case $2 in report) echo 32768 ;; *) echo 8192 ;; esac
	exit 0
fi
src=$1
bld=$2
shift 2

command -v clang >/dev/null 2>&1 || { echo "skip: clang not installed (scripts/deps.sh fuzz)" >&2; exit 77; }
mkdir -p "$bld"
probe=$bld/probe.c
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$probe"
if ! clang -fsanitize=fuzzer,address,undefined "$probe" -o "$bld/probe" >/dev/null 2>&1; then
	echo "skip: clang cannot link -fsanitize=fuzzer (libclang-rt-14-dev missing?)" >&2
	exit 77
fi

# Every finding is fatal: no sanitizer recovers.
flags="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -Wno-unknown-warning-option"
targets=""
for t in "$@"; do targets="$targets fuzz_$t"; done
(
	flock 9
	cmake -S "$src" -B "$bld" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
		-DCMAKE_C_FLAGS="$flags" -DFL_FUZZ=ON >"$bld/configure.log" 2>&1 ||
		{ cat "$bld/configure.log" >&2; exit 1; }
	# shellcheck disable=SC2086
	cmake --build "$bld" --target $targets -j2 >"$bld/build.log" 2>&1 ||
		{ tail -50 "$bld/build.log" >&2; exit 1; }
) 9>"$bld/.lock"

for t in "$@"; do
	exe=$(find "$bld" -name "fuzz_$t" -type f -perm -u+x | head -1)
	[ -n "$exe" ] || { echo "fuzz_$t was not built" >&2; exit 1; }
	echo "$exe"
done
