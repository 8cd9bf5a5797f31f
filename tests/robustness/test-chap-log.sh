#!/bin/sh
# SPDX-License-Identifier: MIT
# A wrong CHAP secret is refused (login status 02/01), the target's log says
# so, and neither secret appears anywhere in what the target prints.
#   test-chap-log.sh FAULTLUN
set -u
fl=$1
command -v iscsi-inq >/dev/null || { echo "SKIP: libiscsi-bin not installed"; exit 77; }
log=$(mktemp) || exit 2
trap 'rm -f "$log"' EXIT
good=flsecret-0123-good wrong=wrongsecret-9876
"$fl" serve --listen 127.0.0.1:0 --chap-user fluser --chap-secret "$good" --run "
	if iscsi-inq \"iscsi://fluser%$wrong@127.0.0.1:\$FAULTLUN_PORT/\$FAULTLUN_IQN/0\" >/dev/null 2>&1; then
		echo 'FAIL: a wrong secret logged in' >&2; exit 1
	fi
	iscsi-inq \"iscsi://fluser%$good@127.0.0.1:\$FAULTLUN_PORT/\$FAULTLUN_IQN/0\" >/dev/null
" >"$log" 2>&1
rc=$?
cat "$log"
[ $rc -eq 0 ] || { echo "FAIL: captive run exited $rc"; exit 1; }
grep -q "authentication failed for user 'fluser'" "$log" || { echo "FAIL: no log line for the refusal"; exit 1; }
if grep -q -e "$good" -e "$wrong" "$log"; then
	echo "FAIL: a secret appears in the target's output"; exit 1
fi
echo "ok: refused, logged, no secret printed"
