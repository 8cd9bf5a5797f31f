#!/bin/sh
# SPDX-License-Identifier: MIT
# test-arm.sh FAULTLUN DIR OUT - a check's "arm": "workload" and the transport
# rules of the login phase (docs/scenario-format.md "check", "transport").
fl=$1 dir=$2 out=$3
armed=$dir/scenarios/check-arm-workload.json
mkdir -p "$out" || exit 1
fail() {
	echo "FAIL: $*"
	exit 1
}

# A rule on login_response acts on a normal session's Login Responses.
"$fl" check "$dir/login-response-close.json" 2>"$out/login.err"
rc=$?
[ $rc = 2 ] || fail "login_response close: check exit $rc, want 2"
grep -q 'closing connection: fault: connection closed by the scenario' "$out/login.err" ||
	fail "login_response close: no closing line in $out/login.err"

# Armed at the workload the check passes (runner.check-arm-workload); armed
# when served, the same scenario refuses the runner's login.
sed 's/"arm": "workload",//' "$armed" >"$out/serve-armed.json" || exit 1
grep -q '"arm"' "$out/serve-armed.json" && fail "sed left the arm key"
"$fl" check "$out/serve-armed.json" >"$out/serve-armed.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "armed when served: check exit $rc, want 2 (see $out/serve-armed.out)"

# With --url, without a control socket the runner cannot arm (2); with
# --ctl it arms through it (the target then refuses later logins).
sock=$out/arm.sock
rm -f "$sock"
"$fl" serve -q --listen 127.0.0.1:0 --ctl "$sock" "$dir/arm-unarmed.json" --run \
	"'$fl' check --url \$FAULTLUN_URL '$armed' >'$out/url.out' 2>&1; echo \$? >'$out/url.rc'; '$fl' check --url \$FAULTLUN_URL --ctl '$sock' '$armed' >'$out/url-ctl.out' 2>&1; echo \$? >'$out/url-ctl.rc'"
[ "$(cat "$out/url-ctl.rc")" = 0 ] || fail "--url --ctl: check exit $(cat "$out/url-ctl.rc"), want 0 (see $out/url-ctl.out)"
[ "$(cat "$out/url.rc")" = 2 ] || fail "--url without --ctl: exit $(cat "$out/url.rc"), want 2"
grep -q 'cannot arm the scenario' "$out/url.out" || fail "--url without --ctl: no 'cannot arm' in $out/url.out"
echo "ok: arm"
