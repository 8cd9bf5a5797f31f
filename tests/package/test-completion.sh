#!/bin/bash
# SPDX-License-Identifier: MIT
# test-completion.sh FAULTLUN COMPLETION - sources the bash completion in bash
# and checks what it offers for a few command lines: commands (each once),
# `help` and the commands after it, a command's options, an option's values,
# sense names after `ctl SOCKET act LUN`.
set -u
fl=$1
comp=$2
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
ln -s "$(cd "$(dirname "$fl")" && pwd)/$(basename "$fl")" "$bindir/faultlun"
PATH=$bindir:$PATH
# shellcheck source=/dev/null
. "$comp" || { echo "FAIL: cannot source $comp"; exit 1; }
complete -p faultlun | grep -q -- '-F _faultlun' || { echo "FAIL: no completion for faultlun"; exit 1; }
fails=0

# offers 'LINE' WORD...: completing LINE (the cursor at its end) offers every WORD.
offers() {
	local line=$1 w
	shift
	read -r -a COMP_WORDS <<<"$line"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMPREPLY=()
	_faultlun faultlun "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	for w in "$@"; do
		if ! printf '%s\n' "${COMPREPLY[@]}" | grep -qx -- "$w"; then
			echo "FAIL: '$line<TAB>' does not offer $w (offers: ${COMPREPLY[*]:0:12})"
			fails=$((fails + 1))
		fi
	done
}

# once 'LINE': completing LINE offered no word twice (run after offers).
once() {
	local dup
	dup=$(printf '%s\n' "${COMPREPLY[@]}" | sort | uniq -d | tr '\n' ' ')
	[ -z "$dup" ] || { echo "FAIL: '$1<TAB>' offers more than once: $dup"; fails=$((fails + 1)); }
}

# Every command `faultlun --help` lists, help among them, once; after help, the commands.
mapfile -t cmds < <(faultlun --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p')
[ "${#cmds[@]}" -ge 8 ] || { echo "FAIL: faultlun --help lists ${cmds[*]}"; fails=$((fails + 1)); }
offers "faultlun " serve check send lint ctl vm report help "${cmds[@]}"
once "faultlun "
[ "${#COMPREPLY[@]}" = "${#cmds[@]}" ] ||
	{ echo "FAIL: 'faultlun <TAB>' offers ${COMPREPLY[*]}, want ${cmds[*]}"; fails=$((fails + 1)); }
offers "faultlun h" help
once "faultlun h"
offers "faultlun help " serve check send lint ctl vm report
once "faultlun help "
offers "faultlun se" serve
offers "faultlun --v" --version
offers "faultlun help l" lint
offers "faultlun serve --bl" --block-size
offers "faultlun serve --" --listen --iqn --seed --run --verbose --version
offers "faultlun lint --fr" --frontend
offers "faultlun lint --sen" --sense-names
offers "faultlun lint --frontend t" tcmu
offers "faultlun vm --path " iscsi tcmu both lio
offers "faultlun vm --accel k" kvm
offers "faultlun ctl /tmp/fl.sock ar" arm
offers "faultlun ctl /tmp/fl.sock act 0 MEDIUM_E" MEDIUM_ERROR
offers "faultlun ctl /tmp/fl.sock act 0 UNRECOVERED_R" UNRECOVERED_READ_ERROR
offers "faultlun send iscsi://127.0.0.1/iqn.x/0 " read write tur inquiry readcap report-luns lun-reset sleep
offers "faultlun send -t 5 iscsi://127.0.0.1/iqn.x/0 tur re" read readcap report-luns request-sense
offers "faultlun send --" --json --hex --timeout --ignore-status --clear-ua
offers "faultlun send iscsi://127.0.0.1/iqn.x/0"
[ ${#COMPREPLY[@]} = 0 ] || { echo "FAIL: the URL of send offers ${COMPREPLY[*]}"; fails=$((fails + 1)); }
# Report files complete as file names (check's and vm's --ktap too).
offers "faultlun check --kt" --ktap
ktmp=$(mktemp -d)
: >"$ktmp/verdicts.tap"
(cd "$ktmp" && offers "faultlun check --ktap verd" verdicts.tap && offers "faultlun vm --ktap verd" verdicts.tap &&
	[ "$fails" = 0 ]) || fails=$((fails + 1))
rm -rf "$ktmp"
# Nothing for a word that no command starts with.
offers "faultlun zz"
[ ${#COMPREPLY[@]} = 0 ] || { echo "FAIL: 'faultlun zz' offers ${COMPREPLY[*]}"; fails=$((fails + 1)); }
[ "$fails" = 0 ] && echo "completion: all cases pass"
[ "$fails" = 0 ]
