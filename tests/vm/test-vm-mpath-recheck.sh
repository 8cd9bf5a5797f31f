#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-mpath-recheck.sh - path expectations on a recorded dm-multipath run
# (Linux 6.1, mpath-controller-failover), without booting: the scenario's own
# expectations pass, with the path observer's lines turned into the paths'
# states; a path entering a state more often than it did, or a port that has
# no path, fail with what was seen; without the multipath knob a path
# expectation is not applicable. dm-multipath's Failing path / Reinstating
# path lines count as the path's state once the agent's "pathdev" lines name
# the path's device number (a failure shorter than a sample), and not without;
# dh_state is judged only after the agent's "dh-observer on" mark.
#   test-vm-mpath-recheck.sh FAULTLUN SCENARIO RECORDED_DIR OUTDIR
set -u
faultlun=$1 src=$2 rec=$3 out=$4
. "$(dirname "$0")/../lib/common.sh"
rm -rf "$out"
fl_recheck_copies "$rec" "$out" good bad nomp dmline nodev

fl_recheck 0 "$src" iscsi "$out/good" "recorded run"
fl_expect "$out/good.log" <<'END'
PASS  path B enters current at least 1 time => no path B verdict
PASS  path A enters ghost at least 1 time => no path A verdict
END
fl_expect "$out/good/result.json" <<'END'
states: active ready 10 enabled -> active ready 50 enabled -> active ready 50 current => path B's states are not shown
"kind": "path" => result.json has no path verdict
END
grep -q '"paths"' "$out/good/obs.json" || fail "obs.json has no paths"

sed -e 's/{ "path": "B", "state": "current", "min": 1 }/{ "path": "B", "state": "current", "min": 2 }/' \
	-e 's/{ "path": "A", "state": "ghost", "min": 1,/{ "path": "C", "state": "ghost", "min": 1,/' \
	"$src" >"$out/wrong.json"
fl_recheck 1 "$out/wrong.json" iscsi "$out/bad" "contradicted path expectations"
fl_expect "$out/bad.log" <<'END'
FAIL  path B enters current at least 2 times => no FAIL for path B
observed: entered 1 time => no observed count
observed: no path of port C was seen => no FAIL for port C
END

sed -e 's/"multipath": true,/"multipath": false,/' "$src" >"$out/nomp.json"
"$faultlun" vm "$out/nomp.json" --path iscsi --recheck "$out/nomp" >"$out/nomp.log" 2>&1
grep -q "N/A   path B enters current" "$out/nomp.log" ||
	grep -q "N/A.*path B enters current" "$out/nomp.log" || { cat "$out/nomp.log"; fail "path expectation without the knob is not N/A"; }
grep -q "knob multipath not set" "$out/nomp.log" || fail "N/A without its reason"
# The recorded run's observer never sampled path A failed; dm-multipath failed
# it twice (Failing path 8:0), once before the observer's first line of A.
sed -e 's/{ "path": "A", "state": "ghost", "min": 1,/{ "path": "A", "state": "failed", "min": 1, "max": 1,/' \
	"$src" >"$out/failed.json"
sed -e '/faultlun-agent: workload start/a\
12,431,26868190,-;faultlun-agent: pathdev A sda 8:0\
12,431,26868191,-;faultlun-agent: pathdev B sdb 8:16\
12,431,26868192,-;faultlun-agent: dh-observer on\
12,431,26868193,-;faultlun-agent: dh sda alua standby max_sectors_kb 1280' "$rec/kmsg.txt" >"$out/dmline/guest/kmsg.txt"
grep -q "pathdev A sda 8:0" "$out/dmline/guest/kmsg.txt" || fail "pathdev lines not added"
fl_recheck 0 "$out/failed.json" iscsi "$out/dmline" "dm's Failing path line as path A's state"
# The device-handler observer's lines are judged once its "dh-observer on" mark
# is in the log, and not applicable on a run recorded without it.
fl_expect "$out/dmline.log" <<'END'
PASS  device handler alua in standby entered at least 1 time => dh_state not judged on the observer's lines
states: active ready 50 enabled -> failed ready 50 enabled -> active ready 50 enabled -> active ghost 1 enabled => path A's failure from dm's lines is not in its states
END
fl_expect "$out/good.log" <<'END'
N/A   device handler alua in standby => dh_state on a run without the observer's mark is not N/A
END
fl_recheck 1 "$out/failed.json" iscsi "$out/nodev" "without pathdev lines"
grep -q "FAIL  path A enters failed" "$out/nodev.log" || fail "no FAIL for path A without pathdev lines"
echo "path expectations judged on the recorded run as they should be"
