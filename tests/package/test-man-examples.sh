#!/bin/sh
# SPDX-License-Identifier: MIT
# test-man-examples.sh BUILD_DIR PAGE... - runs the EXAMPLES of each
# installed man page (PAGE: man1/faultlun.1, ...) as written: each code block
# one `sh -e` script, in a scratch directory, with the installed bin first in
# PATH and the installed paths the page names ($prefix/...) taken under the
# scratch root of the install. Each must exit 0 within 120 s.
set -u
. "$(dirname "$0")/install-root.sh"
build=$1
shift
fl_install_root "$build"
mkdir "$tmp/work"
fails=0 blocks=0
for p in "$@"; do
	page=$root$mandir/$p
	[ -f "$page" ] || fail "no $mandir/$p installed"
	# Code blocks (.nf ... .fi) of the EXAMPLES section, unescaped, one file each.
	rm -f "$tmp"/ex.*
	awk -v out="$tmp/ex" '
		/^\.SH / { on = ($0 ~ /^\.SH "?EXAMPLES"?$/); next }
		on && /^\.nf$/ { n++; f = out "." n; printf "" >f; code = 1; next }
		on && /^\.fi$/ { code = 0; close(f); next }
		on && code { print >f }' "$page"
	ls "$tmp"/ex.* >/dev/null 2>&1 || { echo "FAIL: $p has no examples"; fails=$((fails + 1)); continue; }
	for ex in "$tmp"/ex.*; do
		blocks=$((blocks + 1))
		sed -e 's/^\\&//' -e 's/\\-/-/g' -e 's/\\e/\\/g' -e "s|$prefix/|$root$prefix/|g" "$ex" >"$ex.sh"
		echo "== $p example ${ex##*.}:"
		sed 's/^/  /' "$ex.sh"
		if ! (cd "$tmp/work" && timeout 120 sh -e "$ex.sh") >"$ex.out" 2>&1; then
			tail -20 "$ex.out"
			echo "FAIL: $p example ${ex##*.} did not exit 0"
			fails=$((fails + 1))
		fi
	done
done
[ "$fails" = 0 ] || exit 1
echo "man examples: $blocks blocks run, all exit 0"
