#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-recheck.sh - the VM lab's checker on observations recorded from a
# real run (Linux 6.1, end-of-disk on the TCMU path), without booting: the
# scenario's own expectations pass; the same scenario expecting EIO where the
# kernel gave ENOSPC, and a kernel-log line that never appeared, fail with a
# diff; an entry whose first verdict fails fails the run though its last
# holds; a step entry with no errno/status/sense/within_ms gets its own
# verdict; an entry scoped to the libiscsi runner is N/A (no "ok" in
# result.json); a step the agent could not start fails; a scenario lint refuses is an error with its diagnostics; a
# result with no observations is an error.
#   test-vm-recheck.sh FAULTLUN SCENARIO RECORDED_DIR OUTDIR
set -u
faultlun=$1 src=$2 rec=$3 out=$4
. "$(dirname "$0")/../lib/common.sh"
rm -rf "$out"
mkdir -p "$out/empty"
fl_recheck_copies "$rec" "$out" good bad

fl_recheck 0 "$src" tcmu "$out/good" "recorded run"
fl_expect "$out/good.log" <<'END'
^verdict: PASS => no PASS verdict
PASS  step 1 errno ENOSPC => step 1 not checked
step 9 fsync .*EIO => step 9 missing
END
# The timeline merges the kernel log, the steps and the target trace in order.
awk '/workload step 1 write lun=0/{s=NR} /target   inject rule="pool-full".*122876/{t=NR}
     /workload step 1 write -> ENOSPC/{e=NR} END{exit !(s && t && e && s < t && t < e)}' \
	"$out/good.log" || fail "step 1, its trace event and its end are not in order"

sed -e '0,/"errno": "ENOSPC"/s//"errno": "EIO"/' \
	-e 's/"kernel_log": "Buffer I\/O error[^"]*"/"kernel_log": "no such line anywhere"/' \
	"$src" >"$out/wrong.json"
fl_recheck 1 "$out/wrong.json" tcmu "$out/bad" "contradicted expectations"
fl_expect "$out/bad.log" <<'END'
FAIL  step 1 errno EIO => no FAIL for step 1
observed: ENOSPC => no observed ENOSPC
FAIL  kernel log /no such line anywhere/ => no FAIL for kernel_log
^verdict: FAIL => no FAIL verdict
END

# An entry with several verdicts fails the run when its first fails and its
# last holds (errno wrong, within_ms right).
fl_recheck_copies "$rec" "$out" multi nokeys
sed -e '0,/"errno": "ENOSPC"/s//"errno": "EIO", "within_ms": 600000/' "$src" >"$out/multi.json"
fl_recheck 1 "$out/multi.json" tcmu "$out/multi" "failing first verdict"
fl_expect "$out/multi.log" <<'END'
FAIL  step 1 errno EIO => no FAIL for step 1 errno
PASS  step 1 ends within 600000 ms => no PASS for within_ms
^verdict: FAIL => multi: no FAIL verdict
END

# A step entry with no other key gets a verdict of its own: the step ran.
sed -e 's/"expect": \[/"expect": [ { "step": 0 }, { "step": 1, "min_ms": 600000 },/' \
	"$src" >"$out/nokeys.json"
fl_recheck 1 "$out/nokeys.json" tcmu "$out/nokeys" "step entry without keys"
fl_expect "$out/nokeys.log" <<'END'
PASS  step 0 ran => no verdict for step 0 without keys
FAIL  step 1 takes at least 600000 ms => no FAIL for min_ms
END

# An entry scoped to the libiscsi runner is not applicable in the VM lab:
# shown as N/A, not a failure, though the VM lab would fail it.
fl_recheck_copies "$rec" "$out" scoped
sed -e 's/"expect": \[/"expect": [ { "step": 1, "status": "BUSY", "runner": "libiscsi" },/' \
	"$src" >"$out/scoped.json"
fl_recheck 0 "$out/scoped.json" tcmu "$out/scoped" "libiscsi-scoped entry"
grep -q "N/A   step 1 status BUSY" "$out/scoped.log" || fail "scoped entry not shown N/A"
grep -q "observed: only the libiscsi runner checks it" "$out/scoped.log" ||
	fail "scoped entry does not say why it is not applicable"
grep -q "FAIL  step 1 status BUSY" "$out/scoped.log" && fail "scoped entry was checked"
# result.json: "verdict" on every entry, "ok" only on the applicable ones.
awk '/"verdict": "not_applicable"/{na=1} /"ok":/{if (na) bad=1} /^  }/{na=0}
     END{exit bad}' "$out/scoped/result.json" || fail "an N/A verdict has \"ok\""
grep -q '"verdict": "not_applicable"' "$out/scoped/result.json" || fail "no not_applicable verdict"
[ "$(grep -c '"verdict": "pass"' "$out/scoped/result.json")" -eq \
	"$(grep -c '"ok": true' "$out/scoped/result.json")" ] || fail "\"ok\" does not follow \"verdict\""

# A step the agent could not start (a ctl step without a control socket) did
# not run: its expectations fail, saying why.
fl_recheck_copies "$rec" "$out" notrun
sed -i -e '/"step":10,/s/"errno":"OK"/"errno":"NOT_RUN","not_run":"no control socket on this path"/' \
	"$out/notrun/guest/steps.jsonl"
fl_recheck 1 "$src" tcmu "$out/notrun" "step not run"
grep -q "FAIL  step 10 errno OK" "$out/notrun.log" || fail "no FAIL for the step not run"
grep -q "observed: step did not run: no control socket on this path" "$out/notrun.log" ||
	fail "the step not run does not say why"

# A scenario lint refuses (fsync is no key of a write step) is a setup error
# with its diagnostics, before anything is checked.
fl_recheck_copies "$rec" "$out" lint
sed -e '0,/"op": "write",/s//"op": "write", "fsync": true,/' "$src" >"$out/lint.json"
fl_recheck 2 "$out/lint.json" tcmu "$out/lint" "lint error"
grep -q "lint.json:[0-9]*:[0-9]*: .*fsync" "$out/lint.log" || { cat "$out/lint.log"; fail "no FILE:LINE:COL diagnostic"; }
[ -e "$out/lint/result.json" ] && fail "a refused scenario was checked"

"$faultlun" vm "$src" --path tcmu --recheck "$out/empty" >"$out/empty.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "no observations: exit $rc, expected 2"
echo "recorded run: PASS; contradicted: FAIL with diff; empty: error"
