#!/bin/sh
# SPDX-License-Identifier: MIT
# test-report-hostile.sh - `faultlun report` (text and --html) on hostile
# result files: the guest writes part of result.json and its kernel is the
# one under test. Each file is derived from a real recorded result
# (results/base.json) with one field made hostile: times of 1e308, negative
# or huge values, numbers as strings, a timeline entry without "src", missing
# keys, wrong types, a 100 MB string, deep nesting. Each run must end within
# 10 s, write less than 1 MB, not crash (exit 0, 1 or 2, no sanitizer
# report), and either refuse the file with a message naming it or print a
# report. The base itself must still give its PASS verdict.
#   test-report-hostile.sh FAULTLUN BASE.json OUTDIR
set -u
faultlun=$1 base=$2 out=$3
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
command -v timeout >/dev/null || { echo "SKIP: timeout missing"; exit 77; }
rm -rf "$out"
mkdir -p "$out" "$out/html"
fail() {
	echo "FAIL: $*"
	exit 1
}

# One hostile file per case, from the base (python3: a JSON edit per case).
python3 - "$base" "$out" <<'EOF' || fail "cannot make the fixtures"
import json, sys, copy
base = json.load(open(sys.argv[1]))
out = sys.argv[2]
def case(name, edit):
    d = copy.deepcopy(base)
    edit(d)
    with open(f"{out}/{name}.json", "w") as f:
        json.dump(d, f)
def raw(name, text):
    with open(f"{out}/{name}.json", "w") as f:
        f.write(text)
def tl_set(key, v, i=-1):
    def e(d): d["timeline"][i][key] = v
    return e
def step_set(key, v):
    def e(d): d["steps"][0][key] = v
    return e
# the 138-byte file of the report: times of 1e308 (a loop that never ends)
raw("tiny-1e308", '{"faultlun_vm_result":1,"verdict":"PASS","steps":[{"t0":0,"t1":1e308}],'
    '"timeline":[{"t":0,"src":"agent","text":"a"},{"t":1e308,"src":"agent","text":"b"}]}')
case("timeline-1e308", tl_set("t", 1e308))
case("step-t1-1e308", step_set("t1", 1e308))
case("step-t1-1e300", step_set("t1", 1e300))
case("step-t1-2e6", step_set("t1", 2e6))
case("workload-end-1e308",
     lambda d: d["wall"]["guest_phases"].__setitem__("workload_end", 1e308))
case("timeline-negative", tl_set("t", -1e12))
case("step-negative", step_set("t0", -5))
case("elapsed-huge", step_set("elapsed_ms", 1e300))
case("trace-ms-huge", lambda d: d["trace_events"][0].__setitem__("ms", 1e300))
case("int-huge", step_set("step", 2**63 - 1))
case("knob-string-inf", lambda d: d.__setitem__("knobs", {"timeout_s": "1e999",
                                                          "abort_tmo_s": "nan"}))
case("time-as-string", tl_set("t", "1e308"))
raw("nan", json.dumps(base).replace('"t1": ' + json.dumps(base["steps"][0]["t1"]),
                                    '"t1": NaN', 1))
case("timeline-no-src", lambda d: d["timeline"][3].pop("src"))
case("timeline-no-text", lambda d: d["timeline"][3].pop("text"))
case("timeline-no-t", lambda d: d["timeline"][3].pop("t"))
case("timeline-src-number", tl_set("src", 5, 3))
case("timeline-entry-string", lambda d: d["timeline"].__setitem__(2, "x"))
case("timeline-object", lambda d: d.__setitem__("timeline", {"a": 1}))
case("steps-string", lambda d: d.__setitem__("steps", "x"))
case("step-entries-wrong", lambda d: d.__setitem__("steps", [1, "x", None, [], {}]))
case("expectations-wrong", lambda d: d.__setitem__("expectations",
                                                   [{"verdict": 5}, {}, 3, {"ok": "yes"}]))
case("no-keys", lambda d: [d.pop(k) for k in list(d) if k != "faultlun_vm_result"])
case("verdict-number", lambda d: d.__setitem__("verdict", 7))
case("wall-wrong", lambda d: d.__setitem__("wall", {"guest_phases": [1, 2], "qemu_s": "x"}))
case("eh-sequence-wrong", lambda d: d.__setitem__("eh_sequence", [1, None, {"a": 1}]))
case("trace-wrong", lambda d: d.__setitem__("trace_events", [None, 1, {"event": 5, "t": "x"},
                                                             {"event": "inject"}]))
case("guest-info-wrong", lambda d: d.__setitem__("guest_info", {"kernel": 5, "knobs": 3}))
case("long-string", tl_set("text", "x" * (2 << 20)))
case("deep", lambda d: d.__setitem__("x", json.loads("[" * 100 + "]" * 100)))
raw("deep-2000", '{"faultlun_vm_result":1,"x":' + "[" * 2000 + "]" * 2000 + "}")
raw("not-object", "[1, 2, 3]")
raw("truncated", json.dumps(base)[:5000])
# 100 MB of string, cheap to write
with open(f"{out}/string-100mb.json", "w") as f:
    f.write('{"faultlun_vm_result":1,"name":"')
    chunk = "y" * (1 << 20)
    for _ in range(100):
        f.write(chunk)
    f.write('"}')
EOF

# One run of report with a time and output-size limit: exit code in $rc.
run() {
	name=$1
	shift
	rm -f "$out/html/$name.html"
	timeout 10 "$faultlun" report "$@" >"$out/$name.stdout" 2>"$out/$name.stderr"
	rc=$?
	[ "$rc" -ne 124 ] || fail "$name: report $*: still running after 10 s"
	[ "$rc" -le 2 ] || { cat "$out/$name.stderr"; fail "$name: report $*: exit $rc (a crash)"; }
	! grep -q "Sanitizer\|runtime error" "$out/$name.stderr" ||
		{ cat "$out/$name.stderr"; fail "$name: a sanitizer report"; }
	for o in "$out/$name.stdout" "$out/$name.stderr" "$out/html/$name.html" "$out/html/trace.json"; do
		[ -f "$o" ] || continue
		size=$(wc -c <"$o")
		[ "$size" -lt 1048576 ] || fail "$name: report $*: $o is $size bytes (bound 1 MB)"
	done
	# refused: a message naming the file; printed: a verdict line
	if [ "$rc" -eq 2 ] && ! grep -q "^verdict:" "$out/$name.stdout"; then
		grep -q "$name.json" "$out/$name.stderr" ||
			{ cat "$out/$name.stderr"; fail "$name: refused without naming the file"; }
	else
		grep -q "^verdict:" "$out/$name.stdout" || fail "$name: neither refused nor a report"
	fi
}

refused=0 n=0
for case in "$out"/*.json; do
	name=$(basename "$case" .json)
	run "$name" "$case"
	run "$name" "$case" --html "$out/html/$name.html"
	n=$((n + 1))
	[ "$rc" -ne 2 ] || refused=$((refused + 1))
done
# the cases that must be refused by a bound (not merely survived)
for name in tiny-1e308 timeline-1e308 step-t1-1e308 timeline-negative timeline-no-src \
	long-string deep string-100mb nan; do
	timeout 10 "$faultlun" report "$out/$name.json" >/dev/null 2>"$out/$name.why"
	[ $? -eq 2 ] || fail "$name: not refused"
	grep -q "$name.json" "$out/$name.why" || fail "$name: the refusal does not name the file"
done
grep -q "time 1e+308 s outside" "$out/tiny-1e308.why" || fail "1e308: the bound is not named"
grep -q 'timeline\[3\]' "$out/timeline-no-src.why" || fail "no src: the entry is not named"

# The real result still reads, with its verdict.
"$faultlun" report "$base" --html "$out/html/base.html" >"$out/base.out" 2>&1 ||
	{ cat "$out/base.out"; fail "the recorded result: not a PASS"; }
grep -q "^verdict: PASS" "$out/base.out" || fail "the recorded result: no PASS verdict"
grep -q "<svg" "$out/html/base.html" || fail "the recorded result: no chart in the page"
echo "ok: $n hostile results, $refused refused, each within 10 s and 1 MB"
