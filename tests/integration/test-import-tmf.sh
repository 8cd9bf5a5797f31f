#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-tmf.sh FAULTLUN: how a target answered task management,
# imported. tcpdump on lo captures `faultlun send` against `faultlun serve`
# whose LUN RESETs are answered 300 ms late and whose ABORT TASK SETs are
# rejected; the imported scenario's "tmf" must answer lun_reset complete after
# 250-1000 ms and abort_task_set rejected, leave the TURs' functions alone,
# say each function in its references, lint clean, verify with 0 differences,
# and, served, answer the same TMFs the same way (send's own timing).
# Exit 77 when tcpdump is missing or capturing on lo is not permitted.
set -u
. "$(dirname "$0")/../lib/common.sh"
fl=$1
fl_capture_tmpdir

cat >"$tmp/tmf.json" <<'JSON'
{
  "faultlun": 1,
  "name": "slow-resets",
  "luns": [{"lun": 0, "size": "8MiB"}],
  "tmf": {"lun_reset": {"delay_ms": 300}, "abort_task_set": {"respond": "rejected"}}
}
JSON
fl_capture "$port" "$tmp/cap.pcap"
items="tur lun-reset tur abort-task-set tur lun-reset read:lba=0"
# shellcheck disable=SC2086
"$fl" serve -q --listen "127.0.0.1:$port" "$tmp/tmf.json" \
	--run "\"$fl\" send -i -u \"\$FAULTLUN_URL\" $items" >"$tmp/orig.out" 2>&1 ||
	{ cat "$tmp/orig.out"; fail "serve or send failed"; }
[ "$(grep -c "^#[0-9]" "$tmp/orig.out")" = 7 ] || { cat "$tmp/orig.out"; fail "send did not answer its 7 items"; }
fl_capture_end

"$fl" import "$tmp/cap.pcap" -o "$tmp/imported.json" 2>"$tmp/import.err" || { cat "$tmp/import.err"; fail "import failed"; }
python3 - "$tmp/imported.json" <<'PY' || { cat "$tmp/imported.json"; fail "the imported TMF answers are not the target's"; }
import json, sys
s = json.load(open(sys.argv[1]))
t = s.get("tmf")
assert t and set(t) == {"lun_reset", "abort_task_set"}, t
assert t["abort_task_set"] == {"respond": "rejected"}, t
assert t["lun_reset"]["respond"] == "complete" and 250 <= t["lun_reset"]["delay_ms"] <= 1000, t
refs = s["emulates"]["references"]
assert any(l.startswith("tmf lun_reset: 2 request(s) from frame") and "2 answered" in l for l in refs), refs
assert any(l.startswith("tmf abort_task_set: 1 request(s)") and l.endswith(": rejected") for l in refs), refs
PY
"$fl" lint "$tmp/imported.json" >"$tmp/lint.out" 2>&1 || { cat "$tmp/lint.out"; fail "the imported scenario does not lint"; }
"$fl" import "$tmp/cap.pcap" --verify >"$tmp/verify.out" 2>&1 || { cat "$tmp/verify.out"; fail "verify found differences"; }
grep -q '^verify: [0-9]* commands, 0 differences' "$tmp/verify.out" || { cat "$tmp/verify.out"; fail "verify did not replay"; }

# Served, the imported scenario answers the TMFs as the target did.
"$fl" serve -q --listen 127.0.0.1:0 "$tmp/imported.json" \
	--run "\"$fl\" send -u \"\$FAULTLUN_URL\" lun-reset abort-task-set lun-reset" >"$tmp/replay.out" 2>&1 ||
	{ cat "$tmp/replay.out"; fail "serving the imported scenario failed"; }
python3 - "$tmp/replay.out" <<'PY' || { cat "$tmp/replay.out"; fail "the served scenario does not answer TMFs as imported"; }
import re, sys
lines = [l for l in open(sys.argv[1]) if re.match(r"^#\d+ ", l)]
assert len(lines) == 3, lines
for l in (lines[0], lines[2]):
    m = re.match(r"^#\d+ lun-reset: FUNCTION COMPLETE \(0\), ([0-9.]+) ms", l)
    assert m and float(m.group(1)) >= 250, l
assert re.match(r"^#2 abort-task-set: FUNCTION REJECTED \(255\)", lines[1]), lines[1]
PY
echo "import: TMF answers imported ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tmf"])' "$tmp/imported.json")); served alike"
