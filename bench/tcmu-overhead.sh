#!/bin/sh
# SPDX-License-Identifier: MIT
# The tcmu handler's per-command overhead over the core alone: 4 KiB READ(16),
# 4 KiB WRITE(16) and TEST UNIT READY on a memory LUN, through the core
# (fl_lun_submit), the fault engine with no rules, and handler_faultlun.so loaded
# with dlopen and driven as tcmu-runner 1.5.4 drives it (bench/tcmu/bench_tcmu.c).
# Rounds alternate the paths; prints the machine, every round, the medians and
# the handler's added ns per command. Fails only when a command fails.
#   bench/tcmu-overhead.sh [ROUNDS [COMMANDS]]     (defaults 9 and 100000)
set -eu
cd "$(dirname "$0")/.."
build=${BUILD:-build-bench}
exe=$build/bench/tcmu/bench_tcmu
so=$build/handlers/tcmu/handler_faultlun.so
for t in "$exe" "$so"; do
	[ -f "$t" ] || { echo "bench: $t not built" >&2; exit 77; }
done
exec "$exe" "$so" "${1:-9}" "${2:-100000}"
