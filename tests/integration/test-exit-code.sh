#!/bin/sh
# SPDX-License-Identifier: MIT
# test-exit-code.sh WANT CMD ARGS... - passes when CMD exits with WANT.
want=$1
shift
"$@"
rc=$?
[ "$rc" = "$want" ] && exit 0
echo "FAIL: exit $rc, want $want"
exit 1
