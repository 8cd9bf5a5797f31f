#!/bin/sh
# SPDX-License-Identifier: MIT
# check-style.sh SRC_DIR - every C file of the product (the folders below, not
# tests/) is in .clang-format's shape: clang-format changes nothing in it.
# The shape is clang-format 14's (Debian 12's package); another major version
# formats some constructs differently, so it is a visible skip, as is a
# missing clang-format. Prints each file out of shape with clang-format's
# first complaints; exit 1 when there is one.
set -u
src=$1
command -v clang-format >/dev/null 2>&1 || { echo "SKIP: clang-format missing (Debian package clang-format)"; exit 77; }
major=$(clang-format --version | sed -n 's/.*version \([0-9][0-9]*\)\..*/\1/p')
[ "$major" = 14 ] || { echo "SKIP: clang-format $major: the tree's shape is clang-format 14's (Debian 12)"; exit 77; }
cd "$src" || exit 1
dirs="bench cli common explore faults handlers report scenario target vm"
# shellcheck disable=SC2086
files=$(find $dirs -name '*.[ch]' -type f | sort)
[ -n "$files" ] || { echo "no C files under $src"; exit 1; }
bad=0 n=0
for f in $files; do
	n=$((n + 1))
	out=$(clang-format --dry-run "$f" 2>&1)
	[ -z "$out" ] && continue
	bad=$((bad + 1))
	echo "FAIL: $f is not in .clang-format's shape (clang-format -i $f):"
	echo "$out" | head -6 | sed 's/^/  /'
done
echo "$n files, $bad out of shape"
[ "$bad" = 0 ]
