#!/bin/sh
# SPDX-License-Identifier: MIT
# test-log-escape.sh - scenario strings with newlines and escape sequences
# (a target port id, a rule id) never start a line of their own in what
# `faultlun serve -v` prints: the banner's port and rule lines, the engine's
# log line of the rule's failed resize (fl_log) and the trace line quote them
# with \xNN escapes.
#   test-log-escape.sh FAULTLUN SCENARIO OUTDIR
set -u
fl=$1 sc=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
"$fl" serve -v "$sc" --run "\"$fl\" send iscsi://127.0.0.1:\$FAULTLUN_PORT/\$FAULTLUN_IQN/0 read" \
	>"$out/log" 2>&1
rc=$?
fail() {
	cat "$out/log"
	echo "FAIL: $*"
	exit 1
}
[ $rc -eq 0 ] || fail "serve --run exited $rc"
! grep -q "^faultlun serve: FORGED\|^FORGED" "$out/log" || fail "a scenario string forged a log line"
! grep -q "$(printf '\033')" "$out/log" || fail "an escape sequence reached the log raw"
grep -q 'port A\\x0afaultlun serve: FORGED port: 127.0.0.1' "$out/log" || fail "the port line is not escaped"
grep -q 'serve:   r\\x0aFORGED rule: resize$' "$out/log" || fail "the rule line is not escaped"
grep -q 'error: r\\x0aFORGED rule: resize to 72057594037927936 bytes' "$out/log" ||
	fail "the engine's log line of the rule is not escaped"
grep -q 'rule=r\\x0aFORGED rule action=resize' "$out/log" || fail "the trace line is not escaped"
echo "ok: no forged line"
