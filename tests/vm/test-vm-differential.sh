#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-differential.sh - one verdict per expectation: every shipped
# scenario the kernel matrix ran (TIER_DIR/k*-PATH/KERNEL/NAME-PATH/result.json)
# against the libiscsi runner's verdicts on the same scenario file
# (CHECK_DIR/NAME.json, written by integration.shipped.NAME with `faultlun
# check --json`; a missing one is made here). Every expectation entry both
# runners judge (pass or fail in both; N/A in either is not compared) must
# have the same verdict in both; a disagreement fails the test, naming the
# scenario, the kernel, the entry and what each runner observed.
# It also counts the shipped scenarios' entries scoped to one runner and
# fails when they pass the caps of tests/unit/scenario/test_scopes.c. Scenarios
# of the lab's own (tests/vm/) are not shipped and not compared.
#   test-vm-differential.sh FAULTLUN SCENARIOS_DIR TIER_DIR CHECK_DIR
set -u
faultlun=$1 scenarios=$2 tier=$3 checks=$4
mkdir -p "$checks"
python3 - "$faultlun" "$scenarios" "$tier" "$checks" <<'PY'
import glob, json, os, re, subprocess, sys

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

# The scoped entries of the shipped scenarios: no more than the caps of
# tests/unit/scenario/test_scopes.c (MAX_SCOPED, MAX_ERRNO_SCOPED).
caps = {}
try:
    src = open(os.path.join(scenarios, "..", "tests", "unit", "scenario", "test_scopes.c")).read()
    for key in ("MAX_SCOPED", "MAX_ERRNO_SCOPED"):
        m = re.search(r"#define " + key + r" (\d+)", src)
        caps[key] = int(m.group(1)) if m else None
except OSError:
    bad.append("tests/unit/scenario/test_scopes.c: not readable (the caps of scoped entries)")
scoped = errno_scoped = 0
for path in sorted(glob.glob(f"{scenarios}/*.json")):
    if "schema" in os.path.basename(path):
        continue
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        bad.append(f"{path}: not readable")
        continue
    for e in doc.get("check", {}).get("expect", []):
        if isinstance(e, dict) and "runner" in e:
            scoped += 1
            errno_scoped += "errno" in e
print(f"shipped scenarios: {scoped} entries scoped to one runner, {errno_scoped} of them errno "
      f"entries (at most {caps.get('MAX_SCOPED')} and {caps.get('MAX_ERRNO_SCOPED')})")
if caps.get("MAX_SCOPED") is None or scoped > caps["MAX_SCOPED"]:
    bad.append(f"{scoped} entries scoped to one runner: more than MAX_SCOPED")
if caps.get("MAX_ERRNO_SCOPED") is None or errno_scoped > caps["MAX_ERRNO_SCOPED"]:
    bad.append(f"{errno_scoped} errno entries scoped to one runner: more than MAX_ERRNO_SCOPED")

print(f"{len(runs)} VM runs, {len(seen)} shipped scenarios; {compared} entries judged "
      f"by both runners, {agreed} agree")
for b in bad:
    print("DISAGREE " + b if " on " in b else "ERROR " + b)
if not runs:
    print(f"no VM runs under {tier}: the kernel matrix did not run")
    sys.exit(1 if any("scoped to one runner" in b for b in bad) else 77)
sys.exit(1 if bad or not compared else 0)
PY
