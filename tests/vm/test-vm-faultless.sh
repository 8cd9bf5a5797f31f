#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-faultless.sh - the dm-multipath and device-handler library
# scenarios with their fault, or their personality, taken out must fail in
# the VM lab: their expectations are about what the fault or the handler
# does, not about a healthy map. The six variants run in one boot (one
# `faultlun vm` batch); each must fail on its own expectation:
#   failover           mpath-controller-failover: the control steps leave both
#                      port groups as they were: path B never current
#   path-loss          mpath-path-loss: the marker write no longer starts the cut
#                      of port A: path A never failed
#   rdac-no-personality dh-rdac-failover as a plain LUN: no rdac handler, no
#                      "rdac: LUN 0 (RDAC) (owned)" line
#   rdac-no-move       dh-rdac-not-owned without the array's own transfer: no
#                      94/01, no failover, no I/O through port B
#   emc-no-cut         dh-emc-sp-failure whose marker write no longer starts the
#                      cut: no trespass
#   emc-no-personality dh-emc-sp-failure keeping DGC / VRAID without the emc
#                      personality (no VPD C0h, no trespass page): scsi_dh_emc
#                      does not attach ("emc: Attach failed"), so dm-multipath
#                      cannot load the map multipath-tools' entry (hardware_handler
#                      1 emc) asks for: a setup error. Last in the batch, as a
#                      setup error ends the boot.
#   test-vm-faultless.sh FAULTLUN SCENARIOS_DIR OUTDIR
set -u
faultlun=$1 dir=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
python3 - "$dir" "$out" <<'PY' || { echo "could not take the faults out"; exit 1; }
import json, sys
src, out = sys.argv[1], sys.argv[2]

def load(name):
    return json.load(open(f"{src}/{name}.json"))

def rule(s, rid):
    return [r for r in s["rules"] if r["id"] == rid][0]

def save(case, s):
    s["name"] = case
    json.dump(s, open(f"{out}/{case}.json", "w"), indent=2)

s = load("mpath-controller-failover")
swap = {("alua", "1", "standby"): ["alua", "1", "active_optimized"],
        ("alua", "2", "active_optimized"): ["alua", "2", "active_non_optimized"]}
n = 0
for st in s["check"]["workload"]:
    new = swap.get(tuple(st.get("args", [])))
    if st.get("op") == "ctl" and new:
        st["args"] = new
        n += 1
assert n == 2, "mpath-controller-failover: the two alua steps"
save("failover", s)

s = load("mpath-path-loss")
rule(s, "start-cut")["match"]["lba"]["first"] = 100000
save("path-loss", s)

s = load("dh-rdac-failover")
del s["luns"][0]["personality"]
s["luns"][0]["vendor"] = "FAULTLUN"
save("rdac-no-personality", s)

s = load("dh-rdac-not-owned")
moves = [r for r in s["rules"] if r["action"].get("owner") == 2]
assert len(moves) == 1, "dh-rdac-not-owned: one rule moving the LUN to controller 2"
moves[0]["action"]["owner"] = 1
save("rdac-no-move", s)

s = load("dh-emc-sp-failure")
rule(s, "start-cut")["match"]["lba"]["first"] = 100000
save("emc-no-cut", s)

s = load("dh-emc-sp-failure")
lun = s["luns"][0]
del lun["personality"]
lun.update(vendor="DGC", product="VRAID", revision="0533")
save("emc-no-personality", s)
PY
cases="failover path-loss rdac-no-personality rdac-no-move emc-no-cut emc-no-personality"
files=""
for c in $cases; do
	files="$files $out/$c.json"
done
# shellcheck disable=SC2086
"$faultlun" vm $files --path iscsi --quiet --out "$out/run" --timeout 300 >"$out/log" 2>&1
rc=$?
cat "$out/log"
[ "$rc" -eq 77 ] && exit 77
# The tier's guests run on single-threaded TCG (FAULTLUN_TCG_THREAD=single in
# the test's environment): the boot line says so.
if [ "${FAULTLUN_TCG_THREAD:-}" = single ] && grep -q 'booting .* (tcg' "$out/log"; then
	grep -q 'booting .* (tcg single-threaded, 2 vCPU, ' "$out/log" ||
		{ echo "FAULTLUN_TCG_THREAD=single did not reach the boot"; exit 1; }
fi
# The worst verdict of the batch: the setup error of emc-no-personality.
[ "$rc" -eq 2 ] || { echo "expected exit status 2 (one setup error), got $rc"; exit 1; }
python3 - "$out/run" <<'PY'
import glob, json, sys
run = sys.argv[1]
must_fail = {
    "failover": "path B enters current",
    "path-loss": "path A enters failed",
    "rdac-no-personality": "kernel log /rdac: LUN 0 \\(RDAC\\) \\(owned\\)/",
    "rdac-no-move": 'trace {"event": "inject", "rule": "io-through-b"}',
    "emc-no-cut": "kernel log /emc: long trespass command sent/",
}
bad = 0
for case, what in must_fail.items():
    r = json.load(open(f"{run}/{case}-iscsi/result.json"))
    hit = [e for e in r["expectations"] if e["what"].startswith(what + " ")]
    ok = r["verdict"] == "FAIL" and hit and hit[0]["verdict"] == "fail"
    print(f"{case}: verdict {r['verdict']}, '{what}' "
          f"{hit[0]['verdict'] if hit else 'missing'}: {'as it should' if ok else 'WRONG'}")
    bad += not ok
r = json.load(open(f"{run}/emc-no-personality-iscsi/result.json"))
err = r.get("error", "")
attach = any("emc: Attach failed" in open(k, errors="replace").read()
             for k in glob.glob(f"{run}/emc-no-personality-iscsi/guest/kmsg.txt"))
ok = r["verdict"] == "ERROR" and "no multipath map" in err and attach
print(f"emc-no-personality: verdict {r['verdict']}, error '{err}', "
      f"'emc: Attach failed' {'seen' if attach else 'not seen'}: "
      f"{'as it should' if ok else 'WRONG'}")
bad += not ok
sys.exit(1 if bad else 0)
PY
