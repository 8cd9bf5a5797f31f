#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-report.sh - the VM lab's report on recorded real-kernel runs
# (tests/vm/recorded/, Linux 6.1), without booting: each run is checked
# again (--recheck) and rendered with `faultlun report --html`.
#   render: the page is self-contained (no script, style or image fetched),
#     trace.json beside it is Chrome trace-event JSON with the steps and the
#     error handler's rungs as slices, every N/A expectation says what it
#     expected, a failing expectation links to its step on the chart, and the
#     raw timeline hides boot / module-load noise behind a checkbox.
#   dom: headless Chromium loads each page; its DOM holds the ladder's
#     labelled spans (rung, outcome, the timer that ended it), the sequence
#     of one cycle paired with what the target received and decided, the
#     healthy LUN's stalls; PNG screenshots of the three CI scenarios' reports
#     are kept in OUTDIR. Exit 77 (skip) without Chromium.
#   test-vm-report.sh render|dom FAULTLUN TESTS_VM_DIR SOURCE_DIR OUTDIR
set -u
mode=$1 faultlun=$2 tdir=$3 src=$4 out=$5
fail() {
	echo "FAIL: $*"
	exit 1
}
chromium=""
for c in /usr/bin/chromium /usr/bin/chromium-browser; do
	[ -x "$c" ] && chromium=$c && break
done
if [ "$mode" = dom ] && [ -z "$chromium" ]; then
	echo "SKIP: chromium is not installed (scripts/deps.sh vm installs it)"
	exit 77
fi
rm -rf "$out"
mkdir -p "$out"

# run NAME SCENARIO PATH: recheck the recorded run, render its report.
run() {
	name=$1 sc=$2 path=$3
	mkdir -p "$out/$name"
	cp -r "$tdir/recorded/$name" "$out/$name/guest"
	"$faultlun" vm "$sc" --path "$path" --recheck "$out/$name" >"$out/$name.check" 2>&1 ||
		{ cat "$out/$name.check"; fail "$name: recheck exit $?"; }
	"$faultlun" report "$out/$name/result.json" --html "$out/$name/report.html" \
		>"$out/$name.report" 2>&1 || { cat "$out/$name.report"; fail "$name: report exit $?"; }
	[ -s "$out/$name/report.html" ] || fail "$name: no report.html"
	[ -s "$out/$name/trace.json" ] || fail "$name: no trace.json beside report.html"
}
run hung-lun-reset-iscsi "$tdir/hung-lun-reset.json" iscsi
run dropped-commands-iscsi "$src/scenarios/dropped-commands.json" iscsi
run busy-storm-iscsi "$src/scenarios/busy-storm.json" iscsi
run end-of-disk-tcmu "$tdir/end-of-disk.json" tcmu
run hung-read-tcmu-tcmu "$tdir/hung-read-tcmu.json" tcmu

if [ "$mode" = render ]; then
	for n in hung-lun-reset-iscsi dropped-commands-iscsi busy-storm-iscsi end-of-disk-tcmu \
		hung-read-tcmu-tcmu; do
		h=$out/$n/report.html
		# Self-contained: nothing to fetch (the SVG namespace is a name, not a fetch).
		grep -Eq '<(script|img|link|iframe)[^>]* (src|href)=|url\(http|@import' "$h" &&
			fail "$n: the page fetches something"
		grep -q 'id="ladder"' "$h" || fail "$n: no ladder"
		grep -q 'id="shownoise"' "$h" || fail "$n: no noise filter"
		grep -q '<tr class="noise">' "$h" || fail "$n: no row hidden as noise"
		grep '<tr class="noise">' "$h" | grep -q 'uevent.*SDEV_' && fail "$n: an SDEV uevent hidden"
		# Every N/A row says what it expected.
		grep -A1 '<td class="NA">' "$h" | grep -q '<td>(not recorded)</td>' &&
			fail "$n: an N/A expectation without what it expected"
		if command -v python3 >/dev/null; then
			python3 - "$out/$n/trace.json" <<'EOF' || fail "$n: trace.json"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = {e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
assert "workload steps" in names and "EH: LUN reset" in names, names
assert any(e["ph"] == "X" and e["tid"] == 1 for e in ev), "no step slice"
assert all(e.get("ts", 0) >= 0 for e in ev), "negative time"
EOF
		fi
	done
	grep -q 'class="NA">N/A</td><td>step 1 ends within 500 ms' "$out/dropped-commands-iscsi/report.html" ||
		fail "dropped-commands: the N/A row does not say what it expected"
	python3 -c "
import json,sys
ev=json.load(open('$out/hung-lun-reset-iscsi/trace.json'))['traceEvents']
assert sum(1 for e in ev if e['ph']=='X' and e['name'].startswith('LUN reset: timed out (lu_reset_tmo 2 s')) == 6
" 2>/dev/null || { command -v python3 >/dev/null && fail "hung-lun-reset: trace.json lacks the six LUN-reset slices"; }
	# A failing expectation links to its step on the chart.
	mkdir -p "$out/fail"
	cp -r "$tdir/recorded/end-of-disk-tcmu" "$out/fail/guest"
	sed -e '0,/"errno": "ENOSPC"/s//"errno": "EIO"/' "$tdir/end-of-disk.json" >"$out/fail.json"
	"$faultlun" vm "$out/fail.json" --path tcmu --recheck "$out/fail" >"$out/fail.check" 2>&1
	[ $? -eq 1 ] || fail "contradicted run: expected exit 1"
	"$faultlun" report "$out/fail/result.json" --html "$out/fail/report.html" >/dev/null 2>&1
	grep -q '<tr class="exp-FAIL"><td class="FAIL">FAIL</td><td>step 1 errno EIO.*<a href="#step-1">' \
		"$out/fail/report.html" || fail "the failing row does not link to its step"
	grep -q '<g id="step-1" class="step" data-errno="ENOSPC">' "$out/fail/report.html" ||
		fail "step 1 has no anchor on the chart"
	echo "render: 5 recorded runs, trace.json, links and filter checked"
	exit 0
fi

# dom: what a browser builds from each page.
dom() {
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d)" "$@" 2>>"$out/chromium.log"
}
for n in hung-lun-reset-iscsi dropped-commands-iscsi busy-storm-iscsi end-of-disk-tcmu \
	hung-read-tcmu-tcmu; do
	dom --dump-dom "file://$out/$n/report.html" >"$out/$n.dom" || fail "$n: chromium failed"
	grep -q '<svg id="ladder-chart"' "$out/$n.dom" || fail "$n: no ladder in the DOM"
done
has() { # has NAME TEXT WHAT
	grep -Fq -- "$2" "$out/$1.dom" || fail "$1: $3 (no '$2' in the DOM)"
}
d=hung-lun-reset-iscsi
has $d 'class="ladder" data-cycles="6"' "six error-handler cycles"
has $d 'data-level="LUN reset" data-outcome="timed out" data-cycle="1" data-len-s="2.0' "LUN reset timed out in cycle 1"
has $d 'data-ended-by="lu_reset_tmo 2 s, target: never answered"' "the LUN reset ended by lu_reset_tmo"
has $d '>2.0 s · lu_reset_tmo 2 s</text>' "the LUN reset's label"
has $d 'data-level="abort" data-outcome="failed" data-cycle="1"' "the abort failed"
has $d 'data-ended-by="target: rejected"' "the abort rejected by the target"
has $d 'data-level="target reset" data-outcome="failed"' "the target reset failed"
has $d 'data-ended-by="failed at once: never reached the target"' "the target reset never reached the target"
has $d 'data-level="session reset + relogin" data-outcome="completed"' "the relogin"
has $d 'data-level="command timeout" data-outcome="timed out" data-cycle="1"' "the command timeout"
has $d 'device timeout 3 s x3' "the device timer fired three times"
has $d 'class="seq-msg" data-sent="ABORT TASK (itt 0x13)" data-decision="rejected" data-arrived="yes"' "ABORT TASK paired by its tag"
has $d 'class="seq-msg" data-sent="LOGICAL UNIT RESET" data-decision="never answered" data-arrived="yes"' "LUN RESET never answered"
has $d 'class="seq-msg" data-sent="TARGET WARM RESET" data-decision="never arrived" data-arrived="no"' "TARGET WARM RESET never arrived"
has $d 'data-sent="login (relogin)" data-decision="logged in"' "the relogin in the sequence"
has $d 'class="stall" data-ms="5185"' "the longest stall of the healthy LUN"
has $d '<b>25.7 s</b> in all' "the healthy LUN's total stall"
has $d 'class="band" data-name="session1" data-state="FAILED"' "the session's failed band"
d=dropped-commands-iscsi
has $d 'data-level="LUN reset" data-outcome="completed"' "LUN resets completed"
has $d 'data-ended-by="target: completed, UA 29/00"' "the LUN reset completed with a UA"
has $d 'data-sent="ABORT TASK" data-decision="answered: task does not exist"' "the abort of a dropped command"
has $d 'class="ladder" data-cycles="4"' "four cycles (from the trace)"
has $d 'no healthy LUN in this scenario' "no healthy LUN said"
d=busy-storm-iscsi
has $d 'class="no-eh"' "no error-handler action said"
has $d 'class="fault" data-rule="busy" data-count="164"' "the BUSY storm on the chart"
has $d 'id="no-tmf"' "no task management said"
has end-of-disk-tcmu 'class="no-eh"' "end-of-disk: no error handling"
d=hung-read-tcmu-tcmu
has $d 'data-level="abort" data-outcome="completed" data-cycle="1"' "tcm_loop's abort completed"
has $d 'data-ended-by="cmd_time_out 8 s"' "LIO waited for the TCMU command timer"
has $d 'data-level="LUN reset" data-outcome="completed"' "tcm_loop's LUN reset completed"
has $d 'data-decision="LIO handles it: the TCMU handler sees no TMF"' "TMFs end in LIO on the TCMU path"
has $d 'disk offlined (medium access timeouts)' "the disk offlined"
for n in hung-lun-reset-iscsi dropped-commands-iscsi busy-storm-iscsi; do
	dom --hide-scrollbars --window-size=1400,2000 --screenshot="$out/$n.png" \
		"file://$out/$n/report.html" >/dev/null || fail "$n: no screenshot"
	[ "$(head -c 4 "$out/$n.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "$n: not a PNG"
done
echo "dom: ladder, sequence and stalls read back from Chromium; screenshots in $out/*.png"
