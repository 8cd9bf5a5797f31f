#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-differential.sh - one verdict per expectation: every shipped
# scenario the kernel matrix ran (TIER_DIR/k*-PATH/KERNEL/NAME-PATH/result.json)
# against the libiscsi runner's verdicts on the same scenario file
# (CHECK_DIR/NAME.json, written by integration.shipped.NAME with `faultlun
# check --json`; a missing one is made here). Every expectation entry both
# runners judge (pass or fail in both; N/A in either is not compared) must
# have the same verdict in both; a disagreement fails the test, naming the
# scenario, the kernel, the entry and what each runner observed. Scenarios
# of the lab's own (tests/vm/) are not shipped and not compared.
#   test-vm-differential.sh FAULTLUN SCENARIOS_DIR TIER_DIR CHECK_DIR
set -u
faultlun=$1 scenarios=$2 tier=$3 checks=$4
mkdir -p "$checks"
python3 - "$faultlun" "$scenarios" "$tier" "$checks" <<'PY'
import glob, json, os, subprocess, sys

faultlun, scenarios, tier, checks = sys.argv[1:5]
scenarios = os.path.realpath(scenarios)
runs = sorted(glob.glob(f"{tier}/k*-*/*/*/result.json"))
compared = agreed = 0
bad = []
seen = set()
check_cache = {}


def check_verdicts(path, name):
    """The libiscsi runner's verdicts on a scenario file, by (expect, what)."""
    if name in check_cache:
        return check_cache[name]
    out = f"{checks}/{name}.json"
    if not os.path.exists(out):
        subprocess.run([faultlun, "check", "-q", "--json", out, path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    v = None
    try:
        doc = json.load(open(out))
        res = [r for r in doc["results"] if os.path.basename(r["path"]) == f"{name}.json"]
        if res:
            v = {(e["expect"], e["what"]): e for e in res[0]["verdicts"]}
    except (OSError, ValueError, KeyError):
        v = None
    check_cache[name] = v
    return v


for rj in runs:
    try:
        r = json.load(open(rj))
    except (OSError, ValueError):
        bad.append(f"{rj}: not readable")
        continue
    src = os.path.realpath(r.get("scenario", ""))
    if os.path.dirname(src) != scenarios:
        continue
    name = os.path.basename(src)[:-len(".json")]
    kernel = rj.split("/")[-4] + "/" + rj.split("/")[-3]
    cv = check_verdicts(src, name)
    if cv is None:
        bad.append(f"{name}: no verdicts from faultlun check ({checks}/{name}.json)")
        continue
    seen.add(name)
    for e in r.get("expectations", []):
        c = cv.get((e.get("expect"), e.get("what")))
        if not c or e.get("verdict") not in ("pass", "fail") or \
                c.get("verdict") not in ("pass", "fail"):
            continue
        compared += 1
        if e["verdict"] == c["verdict"]:
            agreed += 1
            continue
        bad.append(f"{name} on {kernel}: expect {e['expect']} '{e['what']}': "
                   f"VM lab {e['verdict']} ({e.get('observed', '')}), "
                   f"faultlun check {c['verdict']} ({c.get('observed', '')})")

print(f"{len(runs)} VM runs, {len(seen)} shipped scenarios; {compared} entries judged "
      f"by both runners, {agreed} agree")
for b in bad:
    print("DISAGREE " + b if " on " in b else "ERROR " + b)
if not runs:
    print(f"no VM runs under {tier}: the kernel matrix did not run")
    sys.exit(77)
sys.exit(1 if bad or not compared else 0)
PY
