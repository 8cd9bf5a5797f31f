#!/bin/sh
# SPDX-License-Identifier: MIT
# test-man.sh PAGE.N TEXT... - `man -l` renders the built page without
# warnings (beyond a word too long for a table cell) and the text holds
# each TEXT.
set -u
page=$1
shift
command -v man >/dev/null 2>&1 || { echo "SKIP: man (man-db) missing"; exit 77; }
[ -f "$page" ] || { echo "FAIL: $page not built"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out" "$out.err"' EXIT
MANWIDTH=80 man --warnings -E UTF-8 -l "$page" >"$out" 2>"$out.err" || { cat "$out.err"; echo "FAIL: man -l $page"; exit 1; }
if grep -v "can't break line" "$out.err" | grep -q .; then
	cat "$out.err"
	echo "FAIL: groff warnings"
	exit 1
fi
for t in "$@"; do
	grep -q -F -- "$t" "$out" || { echo "FAIL: $page lacks '$t'"; exit 1; }
done
echo "man -l $(basename "$page"): ok"
