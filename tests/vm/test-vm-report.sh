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
#   both: dropped-commands recorded on 6.1 and on 6.12 make a kernel matrix
#     (`faultlun report --matrix`): every cell links to an existing report,
#     and each row's ladders stand one above the other on one time window,
#     headed by kernel, release, path and verdict (render reads the page,
#     dom Chromium's DOM). render also checks that `faultlun report RUN_DIR`
#     prints the page's summary header row for row.
#   both: mpath-controller-failover (dm-multipath, two iSCSI paths) has a
#     paths band with a band per path (A failed, then a ghost; B's group
#     current), dm's PATH_FAILED / PATH_REINSTATED uevents and Failing /
#     Reinstating path lines as marks, a track per path in trace.json, and
#     the failover and path-failure rows in the header and the text; the
#     runs without multipath have none of these.
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
# The lab's hung-lun-reset and hung-read-tcmu as they were when recorded
# (longer knobs than tests/vm/ has now): recorded/NAME.scenario.json.
run hung-lun-reset-iscsi "$tdir/recorded/hung-lun-reset-iscsi.scenario.json" iscsi
run dropped-commands-iscsi "$src/scenarios/dropped-commands.json" iscsi
run busy-storm-iscsi "$src/scenarios/busy-storm.json" iscsi
run end-of-disk-tcmu "$tdir/end-of-disk.json" tcmu
run hung-read-tcmu-tcmu "$tdir/recorded/hung-read-tcmu-tcmu.scenario.json" tcmu
# dropped-commands recorded on Debian 13's 6.12 as well: a matrix of two kernels.
run dropped-commands-iscsi-6.12 "$src/scenarios/dropped-commands.json" iscsi
# dm-multipath over two iSCSI paths (mpath-controller-failover, 6.1): the paths band.
run mpath-controller-failover-iscsi "$src/scenarios/mpath-controller-failover.json" iscsi
"$faultlun" report --matrix "$out/matrix" stock="$out/dropped-commands-iscsi" \
	debian:trixie="$out/dropped-commands-iscsi-6.12" >"$out/matrix.out" 2>&1 ||
	{ rc=$?; cat "$out/matrix.out"; fail "report --matrix exit $rc"; }
[ -s "$out/matrix/matrix.html" ] || fail "no matrix.html"
"$faultlun" report --matrix "$out/bad" "$out/dropped-commands-iscsi" >/dev/null 2>&1
[ $? -eq 2 ] || fail "report --matrix took a run without a label"

if [ "$mode" = render ]; then
	for n in hung-lun-reset-iscsi dropped-commands-iscsi busy-storm-iscsi end-of-disk-tcmu \
		hung-read-tcmu-tcmu mpath-controller-failover-iscsi; do
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
	grep -q 'class="NA">N/A</td><td>step 3 errno EIO' "$out/dropped-commands-iscsi/report.html" ||
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
	# The matrix: self-contained, each cell and each run's heading links to
	# an existing report, one figure per row with both kernels' ladders on
	# one time window.
	m=$out/matrix/matrix.html
	grep -Eq '<(script|img|link|iframe)[^>]* (src|href)=|url\(http|@import' "$m" &&
		fail "matrix.html fetches something"
	grep -q 'stock PASS  debian:trixie PASS' "$out/matrix.out" || fail "matrix text: $(cat "$out/matrix.out")"
	python3 - "$out/matrix" <<'PY' || fail "matrix.html"
import html, json, os, re, sys
d = sys.argv[1]
page = open(os.path.join(d, "matrix.html")).read()
doc = json.load(open(os.path.join(d, "matrix.json")))
cells = doc["rows"][0]["cells"]
assert [k["label"] for k in doc["kernels"]] == ["stock", "debian:trixie"], doc["kernels"]
assert [k["release"] for k in doc["kernels"]] == ["6.1.0-57-amd64", "6.12.117+deb13-amd64"]
for label, c in cells.items():
    assert not os.path.isabs(c["report"]), c
    assert os.path.isfile(os.path.join(d, c["report"])), (label, c["report"])
links = re.findall(r'<a class="run" href="([^"]*)">', page)
assert len(links) == 2, links
heads = re.findall(r'<g class="side-run"[^>]*><a href="([^"]*)">', page)
assert len(heads) == 2, heads
for l in links + heads:
    assert os.path.isfile(os.path.join(d, html.unescape(l))), l
runs = re.findall(r'<g class="side-run" data-kernel="([^"]*)"', page)
assert runs == ["stock", "debian:trixie"], runs
svg = re.search(r'<svg class="side-by-side"[^>]* data-tmin="([^"]*)" data-tmax="([^"]*)"', page)
wins = re.findall(r'class="ladder" data-cycles="4" data-tmin="([^"]*)" data-tmax="([^"]*)"', page)
assert len(wins) == 2 and wins[0] == wins[1] == svg.groups(), (wins, svg.groups())
PY
	# Without multipath: no paths band, no multipath rows in the header.
	for n in hung-lun-reset-iscsi dropped-commands-iscsi busy-storm-iscsi end-of-disk-tcmu \
		hung-read-tcmu-tcmu; do
		grep -Eq 'id="paths"|class="path-|id="sum-failover"|id="sum-paths"' "$out/$n/report.html" &&
			fail "$n: a paths band or multipath row without multipath"
		python3 -c "
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
assert not any(e.get('tid', 0) >= 80 for e in ev), 'a path track'
" "$out/$n/trace.json" || fail "$n: trace.json has a path track without multipath"
	done
	# With it: a track per path in trace.json, A's failed span and dm's events on A's.
	python3 - "$out/mpath-controller-failover-iscsi/trace.json" <<'PY' || fail "mpath: trace.json's path tracks"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
tracks = {e["args"]["name"]: e["tid"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
a, b = tracks["path A (sda)"], tracks["path B (sdb)"]
on_a = [e for e in ev if e.get("tid") == a and e["ph"] in "Xi"]
assert any(e["ph"] == "X" and e["args"]["dm"] == "failed" for e in on_a), on_a
names = [e["name"] for e in on_a if e["ph"] == "i"]
assert names.count("PATH_FAILED") == 2 and names.count("PATH_REINSTATED") == 1, names
assert names.count("Failing path") == 2 and names.count("Reinstating path") == 1, names
assert any(e.get("tid") == b and e["ph"] == "X" and e["args"]["group"] == "current" for e in ev)
PY
	# The text summary is the page's header: the same rows from the same model.
	for n in hung-lun-reset-iscsi dropped-commands-iscsi busy-storm-iscsi end-of-disk-tcmu \
		hung-read-tcmu-tcmu dropped-commands-iscsi-6.12 mpath-controller-failover-iscsi; do
		"$faultlun" report "$out/$n" --no-timeline >"$out/$n.summary" 2>&1 ||
			fail "$n: report RUN_DIR exit $?"
		nrows=7
		[ "$n" = mpath-controller-failover-iscsi ] && nrows=9
		python3 - "$out/$n.summary" "$out/$n/report.html" $nrows <<'PY' || fail "$n: the text summary is not the page's"
import html, re, sys
text = open(sys.argv[1]).read()
page = open(sys.argv[2]).read()
assert "summary:\n" in text, "no summary in the text"
block = text.split("summary:\n", 1)[1]
top, last = {}, None
for l in block.splitlines():
    if l.startswith("    ") and last:
        top[last].append(l[4:])
    elif l.startswith("  ") and ": " in l and not l.startswith("  step ") \
            and not l.startswith("  error handler:") and last != "rules fired (trace)":
        k, v = l[2:].split(": ", 1)
        top[k] = [v]
        last = k
    else:
        break
def plain(s):
    return html.unescape(re.sub(r"<[^>]*>", "", s))
rows = re.findall(r'<tr><th>([^<]*)</th><td id="sum-[a-z-]*">(.*?)</td></tr>', page)
assert len(rows) == int(sys.argv[3]), rows
badge = re.search(r'id="verdict">([^<]*)<', page).group(1)
assert top.pop("verdict") == [badge], badge
for label, cell in rows:
    label = html.unescape(label)
    want = [plain(p) for p in cell.split("<br>")]
    assert top.get(label) == want, (label, top.get(label), want)
    top.pop(label)
assert not top, top
PY
	done
	s=$out/hung-lun-reset-iscsi.summary
	grep -qx '  error-handler cycles: 6' "$s" || fail "hung-lun-reset: six cycles in the text"
	grep -qx '    LUN reset: 6 timed out (lu_reset_tmo 2 s, target: never answered)' "$s" ||
		fail "hung-lun-reset: the LUN resets in the text"
	grep -q '^  healthy LUN stalled: 25.7 s in all: ' "$s" || fail "hung-lun-reset: the stall in the text"
	grep -qx '  verdict: PASS' "$s" || fail "hung-lun-reset: the verdict in the text"
	grep -q '^  first error-handler action: 4.1 s after the workload started' \
		"$out/dropped-commands-iscsi-6.12.summary" || fail "6.12: the first EH action in the text"
	s=$out/mpath-controller-failover-iscsi.summary
	grep -qx '  failover: 49 ms: path A failed at +0.727 s, step 3 read completed at +0.777 s (from the first path failure dm reported to the end of the step it met; the step took 86 ms in all)' "$s" ||
		fail "mpath: the failover row in the text"
	grep -q "^  the application's result: step 3 read: OK after 0.1 s" "$s" ||
		fail "mpath: the application's result is not the step that met the path failure"
	grep -qx '    A: sda (8:0): 2 failed, 1 reinstated (uevents 2 / 1)' "$s" || fail "mpath: path A's events in the text"
	grep -qx '    B: sdb (8:16): 0 failed, 0 reinstated (uevents 0 / 0)' "$s" || fail "mpath: path B's events in the text"
	grep -Eq '^  (failover|path failures):' "$out/hung-lun-reset-iscsi.summary" &&
		fail "hung-lun-reset: multipath rows without multipath"
	# Without dm's kernel lines (a quieter console log), the uevents say when
	# a path failed and came back.
	mkdir -p "$out/mp-uev"
	cp -r "$tdir/recorded/mpath-controller-failover-iscsi" "$out/mp-uev/guest"
	sed -i '/device-mapper: multipath: .*\(Failing\|Reinstating\) path/d' "$out/mp-uev/guest/kmsg.txt"
	"$faultlun" vm "$src/scenarios/mpath-controller-failover.json" --path iscsi \
		--recheck "$out/mp-uev" >"$out/mp-uev.check" 2>&1
	"$faultlun" report "$out/mp-uev" --no-timeline --html "$out/mp-uev/report.html" \
		>"$out/mp-uev.summary" 2>&1
	# (its verdict fails: the scenario expects dm's line in the kernel log)
	[ $? -le 1 ] || fail "mpath without dm lines: report failed"
	grep -qx '    A: sda (8:0): 2 failed, 1 reinstated (uevents 2 / 1)' "$out/mp-uev.summary" ||
		fail "mpath without dm lines: path A's events from the uevents"
	grep -q '^  failover: 49 ms: path A failed at +0.727 s' "$out/mp-uev.summary" ||
		fail "mpath without dm lines: the failover from the uevent"
	grep -q 'class="path-state" data-path="A" data-dm="failed"' "$out/mp-uev/report.html" ||
		fail "mpath without dm lines: no failed span for A"
	grep -q 'data-kind="Failing path"' "$out/mp-uev/report.html" &&
		fail "mpath without dm lines: a kernel-line mark"
	echo "render: 7 recorded runs, trace.json, links and filter, the matrix, the text summary, the paths checked"
	exit 0
fi

# dom: what a browser builds from each page.
dom() {
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d)" "$@" 2>>"$out/chromium.log"
}
for n in hung-lun-reset-iscsi dropped-commands-iscsi busy-storm-iscsi end-of-disk-tcmu \
	hung-read-tcmu-tcmu mpath-controller-failover-iscsi; do
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
# dm-multipath: a band per path, A failed (twice by dm's word) then a ghost
# (standby port), B's group current at the end; dm's events as marks on A.
python3 - "$out/mpath-controller-failover-iscsi.dom" <<'PY' || fail "mpath: the paths band in the DOM"
import re, sys
dom = open(sys.argv[1]).read()
bands = re.findall(r'<g class="path-band" data-path="([A-Z])" data-dev="(sd[a-z]+)"', dom)
assert bands == [("A", "sda"), ("B", "sdb")], bands
spans = re.findall(r'<g class="path-state( current)?" data-path="([AB])" data-dm="([a-z]*)" '
                   r'data-checker="([a-z/_]*)" data-group="([a-z]*)"', dom)
a = [s for s in spans if s[1] == "A"]
assert any(s[2] == "failed" for s in a), a
assert any(s[3] == "ghost" for s in a), a
assert [s for s in spans if s[1] == "B" and s[0] and s[4] == "current"], spans
labels = re.findall(r'<g class="path-state[^"]*" data-path="A"[^>]*>.*?<text[^>]*>([^<]*)</text>', dom)
assert "failed" in labels, labels
marks = re.findall(r'<g class="path-mark" data-path="([AB])" data-kind="([A-Za-z_ ]*)"', dom)
assert marks.count(("A", "PATH_FAILED")) == 2 and marks.count(("A", "PATH_REINSTATED")) == 1, marks
assert marks.count(("A", "Failing path")) == 2 and marks.count(("A", "Reinstating path")) == 1, marks
assert not [m for m in marks if m[0] == "B"], marks
assert re.search(r'<td id="sum-failover"><b class="PASS">49 ms</b>: path A failed at \+0\.727 s', dom)
assert re.search(r'<b>A</b>: sda \(8:0\): 2 failed, 1 reinstated', dom)
PY
for n in hung-lun-reset-iscsi busy-storm-iscsi; do
	grep -Eq 'class="path-band"|id="sum-failover"' "$out/$n.dom" && fail "$n: a paths band without multipath"
done
# The matrix of dropped-commands on 6.1 and 6.12: both runs' ladders, each
# headed by its kernel, on one time axis; the cells link to the reports.
dom --dump-dom "file://$out/matrix/matrix.html" >"$out/matrix.dom" || fail "matrix: chromium failed"
python3 - "$out/matrix.dom" "$out/matrix" <<'PY' || fail "matrix: the side-by-side ladders"
import html, os, re, sys
dom, d = open(sys.argv[1]).read(), sys.argv[2]
heads = re.findall(r'<g class="side-run" data-kernel="([^"]*)" data-release="([^"]*)" '
                   r'data-path="iscsi" data-verdict="PASS">', dom)
assert heads == [("stock", "6.1.0-57-amd64"), ("debian:trixie", "6.12.117+deb13-amd64")], heads
bodies = dom.split('<g class="side-run" ')[1:]
windows = set()
for (k, r), body in zip(heads, bodies):
    label = re.search(r'class="side-label"[^>]*>([^<]*)<', body).group(1)
    assert html.unescape(label) == "%s \u00b7 %s \u00b7 iscsi \u00b7 PASS" % (k, r), label
    spans = re.findall(r'data-level="LUN reset" data-outcome="completed" data-cycle="(\d)"', body)
    assert spans == ["1", "2", "3", "4"], (k, spans)
    assert 'data-ended-by="target: completed, UA 29/00"' in body, k
    assert re.search(r'class="side-step" data-step="\d+" data-errno="OK"', body), k
    windows.add(re.search(r'class="ladder" data-cycles="4" data-tmin="([^"]*)" '
                          r'data-tmax="([^"]*)"', body).groups())
assert len(windows) == 1, windows
hrefs = re.findall(r'<a class="run" href="([^"]*)"', dom)
assert len(hrefs) == 2, hrefs
assert all(os.path.isfile(os.path.join(d, html.unescape(h))) for h in hrefs), hrefs
PY
dom --hide-scrollbars --window-size=1400,1500 --screenshot="$out/matrix.png" \
	"file://$out/matrix/matrix.html" >/dev/null || fail "matrix: no screenshot"
for n in hung-lun-reset-iscsi dropped-commands-iscsi busy-storm-iscsi mpath-controller-failover-iscsi; do
	dom --hide-scrollbars --window-size=1400,2000 --screenshot="$out/$n.png" \
		"file://$out/$n/report.html" >/dev/null || fail "$n: no screenshot"
	[ "$(head -c 4 "$out/$n.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "$n: not a PNG"
done
echo "dom: ladder, sequence, stalls, the paths band and the matrix's side-by-side ladders read back from Chromium; screenshots in $out/*.png"
