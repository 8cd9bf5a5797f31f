#!/bin/sh
# SPDX-License-Identifier: MIT
# Sets everything up (Debian packages as root) and runs the test suite:
# the Sanitize (ASan + UBSan) build, then a Debug build with every tier.
# Warnings are errors in both (FAULTLUN_WERROR=ON), and in the Debian
# package's build that the package tier makes.
#   scripts/test.sh            all tiers
#   FAULTLUN_NO_VM=1 scripts/test.sh   everything but the VM-lab tier
set -eu
cd "$(dirname "$0")/.."
tier=vm
[ "${FAULTLUN_NO_VM:-0}" = 1 ] && tier=test
scripts/deps.sh "$tier"
jobs=$(nproc)

echo "== Sanitize build (ASan + UBSan): unit, integration, conformance, tcmu, fuzz (the Debian packages are built once, below)"
cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=Sanitize -DFAULTLUN_WERROR=ON >/dev/null
cmake --build build/sanitize -j "$jobs"
(cd build/sanitize && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$jobs" -LE 'vm|slow|package')

echo "== Debug build: every tier (fuzzing ran above, once)"
cmake -S . -B build/debug -DCMAKE_BUILD_TYPE=Debug -DFAULTLUN_WERROR=ON >/dev/null
cmake --build build/debug -j "$jobs"
cd build/debug
ctest --output-on-failure -j "$jobs" -LE 'vm|fuzz'
[ "$tier" = test ] && exit 0
# The VM-lab tier: real kernels under software emulation, each test run once
# (a test that fails is a failure; docs/vm-lab.md "Kernel matrix in CI").
ctest --output-on-failure -j 3 -L vm
