#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-agent-background.sh - the VM lab's guest agent, run on the host
# (shell and sleep steps need no disk): a background step is collected after
# the foreground steps, past its own deadline, and is judged by its own end:
# one that ended within its deadline is OK with its own time, one still
# running at its deadline is TIMEOUT with the deadline as its time.
#   test-vm-agent-background.sh AGENT
set -u
agent=$1
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir
cat > "$tmp/s.json" <<'END'
{ "faultlun": 1, "name": "agent-background", "luns": [ { "lun": 0, "size": "1MiB" } ],
  "check": { "workload": [
    { "op": "shell", "command": "sleep 1", "background": true, "timeout_s": 3 },
    { "op": "shell", "command": "sleep 6", "background": true, "timeout_s": 3 },
    { "op": "sleep", "ms": 4500 }
  ], "expect": [ { "step": 0, "errno": "OK" } ] } }
END
: > "$tmp/disk"
timeout 60 "$agent" --scenario "$tmp/s.json" --out "$tmp" --dev "0=$tmp/disk" \
	> "$tmp/agent.log" 2>&1 || { cat "$tmp/agent.log"; fail "the agent exited non-zero"; }
python3 - "$tmp/steps.jsonl" <<'END' || fail "background steps judged wrongly: $(cat "$tmp/steps.jsonl")"
import json, sys
steps = {r["step"]: r for r in map(json.loads, open(sys.argv[1]))}
assert steps[2]["errno"] == "OK", steps[2]
# ended after 1 s, collected after 4.5 s: its own end counts
assert steps[0]["errno"] == "OK", steps[0]
assert 900 <= steps[0]["elapsed_ms"] < 2500, steps[0]
# still running at its 3 s deadline
assert steps[1]["errno"] == "TIMEOUT", steps[1]
assert 2900 <= steps[1]["elapsed_ms"] <= 3100, steps[1]
END
echo "PASS: a background step collected late is judged by its own end"
