#!/bin/sh
# SPDX-License-Identifier: MIT
# test-send-login-ua.sh FAULTLUN SCENARIOS_DIR - the login sends nothing the
# user did not ask for (docs/send.md): the power-on unit attention (29/00)
# that the target holds for a new I_T nexus is the answer to the first item,
# a TEST UNIT READY; --clear-ua clears it before the items and says so on
# stderr. Scenario send-first-tur's rule fires on the first TEST UNIT READY
# after the unit attention: its 04/01 is the answer to the second item, not
# to a TEST UNIT READY of the login.
set -u
fl=$1 dir=$2
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir

"$fl" serve -q --listen 127.0.0.1:0 "$dir/demo.json" --run "
	\"$fl\" send \$FAULTLUN_URL tur tur > $tmp/ua 2>&1; echo \$? > $tmp/ua.rc
	\"$fl\" send -u \$FAULTLUN_URL tur > $tmp/clear 2>&1; echo \$? > $tmp/clear.rc" \
	> "$tmp/serve" 2>&1 || fail "serve: $(cat "$tmp/serve")"
cat "$tmp/ua" "$tmp/clear"
grep -q '^#1 tur: CHECK_CONDITION, sense UNIT_ATTENTION/POWER_ON_RESET_OR_BUS_DEVICE_RESET_OCCURRED (29/00)' "$tmp/ua" ||
	fail "the first TEST UNIT READY did not get the power-on unit attention"
grep -q '^#2 tur: GOOD' "$tmp/ua" || fail "the second TEST UNIT READY"
[ "$(cat "$tmp/ua.rc")" = 1 ] || fail "send exited $(cat "$tmp/ua.rc") after a CHECK CONDITION, not 1"
grep -q '^faultlun send: LUN 0: unit attention cleared: UNIT_ATTENTION/POWER_ON_RESET' "$tmp/clear" ||
	fail "--clear-ua did not report the unit attention it cleared"
grep -q '^#1 tur: GOOD' "$tmp/clear" || fail "--clear-ua: the first item still got a unit attention"
[ "$(cat "$tmp/clear.rc")" = 0 ] || fail "--clear-ua: send exited $(cat "$tmp/clear.rc")"
"$fl" serve -q --listen 127.0.0.1:0 "$(dirname "$0")/scenarios/send-first-tur.json" --run "
	\"$fl\" send \$FAULTLUN_URL tur tur tur > $tmp/rule 2>&1; :" > "$tmp/serve" 2>&1 ||
	fail "serve: $(cat "$tmp/serve")"
cat "$tmp/rule"
grep -q '^#1 tur: CHECK_CONDITION, sense UNIT_ATTENTION/POWER_ON_RESET' "$tmp/rule" || fail "rule: #1"
grep -q '^#2 tur: CHECK_CONDITION, sense NOT_READY/BECOMING_READY (04/01)' "$tmp/rule" ||
	fail "the rule on the first TEST UNIT READY did not answer the user's"
grep -q '^#3 tur: GOOD' "$tmp/rule" || fail "rule: #3"
echo ok
