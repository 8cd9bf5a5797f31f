#!/bin/sh
# SPDX-License-Identifier: MIT
# test-check-hostile.sh FAULTLUN - `faultlun check --url` against a hostile
# target (hostile-target.py, one misbehaviour per run; docs/robustness.md,
# second round): a block size of 1 GiB or 0xfffffe00 is not taken (the reads
# still go out, in 512-byte blocks), a target that never answers the logout
# does not hold check, a session that fails ends its steps with an error
# (its recovery's refused logins said in one line),
# and a target whose MaxRecvDataSegmentLength=0 keeps libiscsi in a loop
# that never returns: check's watchdog ends it after 30 s without progress
# (exit 2, the reason on stderr), with bounded memory.
set -u
fl=$1
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir python3

# scenario FILE STEP...: a check of LUN 0 (64 MiB) whose steps (JSON objects) must each end OK.
scenario() {
	_f=$1
	shift
	_steps= _expect= _i=0
	for _s in "$@"; do
		_steps="$_steps${_steps:+, }$_s"
		_expect="$_expect${_expect:+, }{\"step\": $_i, \"errno\": \"OK\"}"
		_i=$((_i + 1))
	done
	cat > "$_f" <<END
{ "faultlun": 1, "name": "hostile-$(basename "$_f" .json)",
  "luns": [ { "lun": 0, "size": "64MiB" } ],
  "check": { "knobs": { "timeout_s": 2, "eh_timeout_s": 2, "reset_wait_ms": 500 },
             "workload": [ $_steps ], "expect": [ $_expect ] } }
END
	"$fl" lint --quiet "$_f" 2>/dev/null || fail "$_f does not lint"
}
read0='{"op": "read", "lba": 0, "blocks": 8, "timeout_s": 20}'
write0='{"op": "write", "lba": 0, "blocks": 8, "timeout_s": 20}'
scenario "$tmp/read.json" "$read0" "$read0"
scenario "$tmp/write.json" "$read0" "$write0"

# Runs check -v on scenario $1, stopped after 120 s; $rc its exit status, $secs the seconds
# it took, $hwm its peak resident set in KiB (VmHWM, read every 0.1 s).
run() {
	t0=$(date +%s)
	"$fl" check -v --url "$url" "$1" > "$tmp/out" 2>&1 &
	cpid=$!
	hwm=0 _n=0
	while kill -0 "$cpid" 2>/dev/null && [ $_n -lt 1200 ]; do
		_h=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$cpid/status" 2>/dev/null)
		[ -n "$_h" ] && hwm=$_h
		sleep 0.1
		_n=$((_n + 1))
	done
	kill "$cpid" 2>/dev/null
	wait "$cpid"
	rc=$?
	secs=$(($(date +%s) - t0))
	cat "$tmp/out"
}

for mode in bs-1g bs-odd; do
	fl_hostile_target "$mode"
	run "$tmp/read.json"
	[ $rc = 0 ] || fail "$mode: exit $rc, not 0"
	[ "$(grep -c '^step [01] (read): OK, status GOOD' "$tmp/out")" = 2 ] || fail "$mode: reads"
done

fl_hostile_target no-logout
run "$tmp/read.json"
[ $rc = 0 ] || fail "no-logout: exit $rc"
[ "$secs" -le 10 ] || fail "no-logout: check took $secs s"

fl_hostile_target vanish
scenario "$tmp/vanish.json" "$read0" '{"op": "inquiry", "timeout_s": 5}' "$read0"
run "$tmp/vanish.json"
[ $rc = 1 ] || fail "vanish: exit $rc, not 1"
grep -q '^PASS .*expect 0:' "$tmp/out" || fail "vanish: step 0"
grep -q '^FAIL .*expect 1:' "$tmp/out" || fail "vanish: step 1 did not fail"
[ "$secs" -le 30 ] || fail "vanish: check took $secs s"
# the refused logins of a session recovery are one line, not one a try
grep -q '^session recovery: no login in [0-9]* tries (the last: connection refused: 127.0.0.1:' \
	"$tmp/out" || fail "vanish: no line for the session recovery"
! grep -q '^connection refused' "$tmp/out" || fail "vanish: a line for each refused login"

fl_hostile_target mrdsl0
run "$tmp/write.json"
[ $rc = 2 ] || fail "mrdsl0: exit $rc, not 2"
grep -q '^step 0 (read): OK' "$tmp/out" || fail "mrdsl0: step 0"
grep -q "^faultlun check: no progress for 30 s: libiscsi does not return to the runner, the session is stuck (e.g. a target's MaxRecvDataSegmentLength=0)\$" \
	"$tmp/out" || fail "mrdsl0: no message"
[ "$secs" -ge 29 ] && [ "$secs" -le 45 ] || fail "mrdsl0: check took $secs s, not 30 to 45"
[ "$hwm" -gt 0 ] && [ "$hwm" -le 524288 ] || fail "mrdsl0: peak $hwm KiB resident"
echo "ok (mrdsl0: ended after $secs s, peak $hwm KiB resident)"
