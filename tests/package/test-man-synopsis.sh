#!/bin/sh
# SPDX-License-Identifier: MIT
# test-man-synopsis.sh BUILD_DIR - the SYNOPSIS of the installed faultlun(1)
# agrees with the installed program: every command `faultlun --help` lists
# has a synopsis line; each line's command, typed as an installed user types
# it (the root's bin first in PATH), takes --help and exits 0; every option
# the line names is in that --help text.
set -u
. "$(dirname "$0")/install-root.sh"
fl_install_faultlun1 "$1"
[ "$(command -v faultlun)" = "$root$prefix/bin/faultlun" ] || fail "faultlun is $(command -v faultlun)"

# The SYNOPSIS, one entry a line (a continuation is indented deeper).
MANWIDTH=200 man -l "$page" 2>/dev/null | awk '
	/^SYNOPSIS/ { on = 1; next }
	on && /^[^ ]/ { exit }
	on && /^       faultlun/ { if (e != "") print e; sub(/^ +/, ""); e = $0; next }
	on && /^        +[^ ]/ { sub(/^ +/, " "); e = e $0 }
	END { if (e != "") print e }' | tr -s ' ' >"$tmp/synopsis"
[ -s "$tmp/synopsis" ] || fail "no SYNOPSIS entries in $page"
sed 's/^/  /' "$tmp/synopsis"

fails=0
for cmd in $(faultlun --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
	grep -q "^faultlun $cmd\( \|$\)" "$tmp/synopsis" || {
		echo "FAIL: no SYNOPSIS line for faultlun $cmd"
		fails=$((fails + 1))
	}
done
n=0
set -f # [--opt] in a line is not a pattern
while IFS= read -r line; do
	n=$((n + 1))
	set -- $line
	cmd=faultlun
	case ${2:-} in
	[a-z]*) cmd="faultlun $2" ;;
	esac
	# shellcheck disable=SC2086 # the command is two words
	$cmd --help >"$tmp/help.$n" 2>&1
	rc=$?
	if [ $rc != 0 ]; then
		echo "FAIL: '$cmd --help' exits $rc (synopsis: $line): $(head -3 "$tmp/help.$n")"
		fails=$((fails + 1))
		continue
	fi
	for opt in $(printf '%s\n' "$line" | grep -oE -- '(^|[][ |])--?[A-Za-z][A-Za-z0-9-]*' |
		sed 's/^[][ |]//' | sort -u); do
		grep -qE -- "(^|[^A-Za-z0-9-])$opt([^A-Za-z0-9-]|\$)" "$tmp/help.$n" || {
			echo "FAIL: '$cmd --help' does not name $opt (synopsis: $line)"
			fails=$((fails + 1))
		}
	done
done <"$tmp/synopsis"
[ "$fails" = 0 ] || exit 1
echo "man synopsis: $n lines agree with the installed faultlun"
