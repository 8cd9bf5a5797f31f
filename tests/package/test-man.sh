#!/bin/sh
# SPDX-License-Identifier: MIT
# test-man.sh PAGE.N TEXT... - `man -l` renders the built page at 80
# columns without a warning, and the text holds each TEXT (spaces and line
# breaks aside: a long path may wrap); =TEXT: a line of the text is TEXT (a
# section heading); !TEXT: the text does not hold TEXT.
set -u
page=$1
shift
command -v man >/dev/null 2>&1 || { echo "SKIP: man (man-db) missing"; exit 77; }
[ -f "$page" ] || { echo "FAIL: $page not built"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out" "$out.err" "$out.flat"' EXIT
MANWIDTH=80 man --warnings -E UTF-8 -l "$page" >"$out" 2>"$out.err" || { cat "$out.err"; echo "FAIL: man -l $page"; exit 1; }
if [ -s "$out.err" ]; then
	cat "$out.err"
	echo "FAIL: groff warnings"
	exit 1
fi
tr -d ' \t\n' <"$out" >"$out.flat"
fails=0
for t in "$@"; do
	case $t in
	=*) grep -q -x -F -- "${t#=}" "$out" || { echo "FAIL: $page has no line '${t#=}'"; fails=1; } ;;
	!*) ! grep -n -F -- "${t#!}" "$out" || { echo "FAIL: $page holds '${t#!}'"; fails=1; } ;;
	*) grep -q -F -- "$(printf '%s' "$t" | tr -d ' \t')" "$out.flat" || { echo "FAIL: $page lacks '$t'"; fails=1; } ;;
	esac
done
[ "$fails" = 0 ] || exit 1
echo "man -l $(basename "$page"): ok"
