#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-latency.sh FAULTLUN: a target's answer times, imported. tcpdump
# on lo captures `faultlun send` against `faultlun serve` whose reads are
# answered 20 ms late (a fixed delay rule) and whose writes are not; the
# imported scenario must delay reads by a median of 20-60 ms (rule
# latency-read) and give writes no rule (a median under 1 ms), say both in
# its references, lint clean, verify with 0 differences without waiting for
# the delays, and, served, delay each read by that much (the trace's
# delay_us of rule latency-read).
# Exit 77 when tcpdump is missing or capturing on lo is not permitted.
set -u
. "$(dirname "$0")/../lib/common.sh"
fl=$1
fl_capture_tmpdir

cat >"$tmp/slow.json" <<'JSON'
{
  "faultlun": 1,
  "name": "slow-reads",
  "luns": [{"lun": 0, "size": "8MiB"}],
  "rules": [{"id": "slow", "match": {"class": "read"}, "action": {"delay_ms": 20}}]
}
JSON
fl_capture "$port" "$tmp/cap.pcap"
items=""
for i in $(seq 0 14); do
	items="$items read:lba=$i write:lba=$((100 + i)),pattern=$i"
done
# shellcheck disable=SC2086
"$fl" serve -q --listen "127.0.0.1:$port" "$tmp/slow.json" \
	--run "\"$fl\" send -u \"\$FAULTLUN_URL\" $items" >"$tmp/orig.out" 2>&1 ||
	{ cat "$tmp/orig.out"; fail "serve or send failed"; }
[ "$(grep -c '^#[0-9]* read.*GOOD' "$tmp/orig.out")" = 15 ] || { cat "$tmp/orig.out"; fail "the 15 reads were not answered GOOD"; }
fl_capture_end

"$fl" import "$tmp/cap.pcap" -o "$tmp/imported.json" 2>"$tmp/import.err" || { cat "$tmp/import.err"; fail "import failed"; }
python3 - "$tmp/imported.json" <<'PY' || { cat "$tmp/imported.json"; fail "the imported latencies are not the target's"; }
import json, sys
s = json.load(open(sys.argv[1]))
rules = {r["id"]: r for r in s.get("rules", [])}
r = rules.get("latency-read")
assert r, "no latency-read rule"
assert r["match"] == {"class": "read"}, r
d = r["action"]["delay_ms"]
med = d["median"] if isinstance(d, dict) else d
assert 20 <= med <= 60, f"median {med} ms"
assert "latency-write" not in rules, "writes answered at once got a delay"
assert list(rules)[-1] == "latency-read", "the latency rule is not the last"
refs = s["emulates"]["references"]
assert any(l.startswith("latency-read: 15 read answer(s) timed") for l in refs), refs
assert any(l.startswith("latency-write: 15 write answer(s)") and l.endswith("no rule (a median under 1 ms)") for l in refs), refs
PY
"$fl" lint "$tmp/imported.json" >"$tmp/lint.out" 2>&1 || { cat "$tmp/lint.out"; fail "the imported scenario does not lint"; }
"$fl" import "$tmp/cap.pcap" --verify >"$tmp/verify.out" 2>&1 || { cat "$tmp/verify.out"; fail "verify found differences"; }
grep -q '^verify: [0-9]* commands, 0 differences' "$tmp/verify.out" || { cat "$tmp/verify.out"; fail "verify did not replay"; }

# Served, the imported scenario delays each read as the target did.
"$fl" serve -q --listen 127.0.0.1:0 --trace "$tmp/trace.jsonl" "$tmp/imported.json" \
	--run "\"$fl\" send -u \"\$FAULTLUN_URL\" read:lba=0 read:lba=1 read:lba=2" >"$tmp/replay.out" 2>&1 ||
	{ cat "$tmp/replay.out"; fail "serving the imported scenario failed"; }
python3 - "$tmp/trace.jsonl" <<'PY' || { cat "$tmp/trace.jsonl"; fail "the served scenario does not delay reads as imported"; }
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
d = [e["delay_us"] for e in ev if e.get("event") == "inject" and e.get("rule") == "latency-read"]
assert len(d) == 3, d
assert all(5000 <= x <= 2000000 for x in d), d
PY
echo "import: reads' latency imported ($(grep -o '"median": [0-9.]*' "$tmp/imported.json" | head -1)), writes' left alone; verify: $(cat "$tmp/verify.out")"
