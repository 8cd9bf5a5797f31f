#!/bin/sh
# SPDX-License-Identifier: MIT
# test-runner-faultless.sh - a shipped scenario's check must notice its own
# faults: the scenario with every rule's fault taken out (a rule that also
# moves the state keeps only its "set_state", so the states stay reachable;
# transport rules are dropped) is run by `faultlun check`, and the check
# must fail (exit 1). Exit 77 (skip) without python3 or when the check skips
# the original.
#   test-runner-faultless.sh FAULTLUN SCENARIO OUTDIR
set -u
faultlun=$1 src=$2 out=$3
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
mkdir -p "$out"
case $faultlun in /*) ;; *) faultlun=$(pwd)/$faultlun ;; esac
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
name=$(basename "$src" .json)
copy="$out/$name.faultless.json"
python3 - "$src" "$copy" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
keep = []
for r in d.get("rules", []):
    a = r.get("action", {})
    if "set_state" in a:
        r["action"] = {"set_state": a["set_state"]}
        keep.append(r)
if keep:
    d["rules"] = keep
else:
    d.pop("rules", None)
if isinstance(d.get("transport"), dict):
    d["transport"].pop("rules", None)
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
"$faultlun" lint -q "$copy" || { echo "FAIL: the scenario without its faults does not lint"; exit 1; }
cd "$out" || exit 1
"$faultlun" check "$copy" >"$name.log" 2>&1
rc=$?
cat "$name.log"
case $rc in
1) echo "$name without its faults: the check fails, as it must" ;;
77) exit 77 ;;
0)
	echo "FAIL: $name: the check holds without the scenario's faults"
	exit 1
	;;
*)
	echo "FAIL: $name without its faults: exit $rc, expected 1"
	exit 1
	;;
esac
