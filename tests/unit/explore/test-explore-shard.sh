#!/bin/sh
# SPDX-License-Identifier: MIT
# test-explore-shard.sh FAULTLUN BASE - `faultlun explore --shard I/N` and
# `faultlun explore merge` without a guest (docs/explore.md, "Shards and
# merge"): the shards of a seed draw exactly the trials and schedules of the
# whole run (`--list`), and merge joins results files of one exploration,
# names what is missing, and refuses (exit 2, naming why) a shard twice, a
# trial twice or out of its shard, files of another exploration, files that
# are not results or too large.
set -u
fl=$1 base=$2
. "$(dirname "$0")/../../lib/common.sh"
command -v python3 > /dev/null || { echo "SKIP: python3 not installed"; exit 77; }
fl_tmpdir
cd "$tmp" || exit 1

"$fl" explore "$base" --budget 7 --seed 3 --list --out all > all.txt || fail "--list: exit $?"
[ "$(wc -l < all.txt)" = 7 ] || fail "--list --budget 7 printed $(wc -l < all.txt) trials"
# It runs nothing and leaves nothing: no --out folder, no results folder.
! [ -e all ] || fail "--list made its --out folder"
! [ -e faultlun-explore ] || fail "--list made ./faultlun-explore"
for i in 1 2 3; do
	"$fl" explore "$base" --budget 7 --seed 3 --list --shard $i/3 --out l$i > s$i.txt ||
		fail "--list --shard $i/3: exit $?"
done
python3 - <<'END' || fail "the shards do not draw the whole run's trials"
import json
whole = [json.loads(l) for l in open("all.txt")]
assert [t["trial"] for t in whole] == list(range(1, 8)), whole
for i in (1, 2, 3):
    part = [json.loads(l) for l in open(f"s{i}.txt")]
    assert [t["trial"] for t in part] == list(range(i, 8, 3)), (i, part)
    assert all(t == whole[t["trial"] - 1] for t in part), i
END
"$fl" explore "$base" --budget 7 --list --shard 4/3 --out x 2> err && fail "--shard 4/3 accepted"
grep -q "shard's I: '4' is out of range (1..3)" err || fail "--shard 4/3: $(cat err)"

# Results files as three shards' runs write them (trial 5 a finding), one folder each.
python3 - <<'END'
import json, os
for i in (1, 2, 3):
    trials = []
    for l in open(f"s{i}.txt"):
        t = json.loads(l)
        n = t["trial"]
        o = {"trial": n, "file": "trials/t%04d.json" % n, "schedule": t["schedule"], "status": 0,
             "verdict": "pass"}
        if n == 5:
            o.update(status=1, verdict="finding", oracle="kernel",
                     evidence="WARNING: CPU: 0 PID: 93 at drivers/scsi/scsi_error.c:1",
                     finding="findings/f1.json", minimised=t["schedule"][:1])
        trials.append(o)
    os.makedirs(f"shard-{i}", exist_ok=True)
    json.dump({"explore": 1, "base": "iscsi-single.json", "seed": 3, "kernel": "stock",
               "path": "iscsi", "per_boot": 8, "max_faults": 3,
               "shard": {"index": i, "count": 3}, "trials": trials,
               "summary": {"trials": len(trials), "skipped": 0, "findings": int(i == 2),
                           "seconds": 10.0 * i, "trials_per_hour": 1.0, "boots": 1}},
              open(f"shard-{i}/explore.json", "w"))
END

# As docs/explore.md's CI examples run it.
"$fl" explore merge -o merged.json shard-*/ > out 2>&1
rc=$?
cat out
[ $rc = 1 ] || fail "merge with a finding: exit $rc, not 1"
grep -qx 'merged 3 of 3 shards: 7 trials, 1 findings, 60 seconds of trials, 3 boots' out ||
	fail "merge: no summary line"
grep -qx 't0005: finding (kernel): WARNING: CPU: 0 PID: 93 at drivers/scsi/scsi_error.c:1: shard-2/findings/f1.json' out ||
	fail "merge: the finding is not listed with its file"
python3 - <<'END' || fail "merged.json"
import json
m = json.load(open("merged.json"))
assert [t["trial"] for t in m["trials"]] == list(range(1, 8)), m["trials"]
assert m["shards"] == {"count": 3, "merged": [1, 2, 3], "missing": []}, m["shards"]
s = m["summary"]
assert (s["trials"], s["findings"], s["seconds"], s["boots"]) == (7, 1, 60.0, 3.0), s
assert m["trials"][4]["from"] == "shard-2" and m["seed"] == 3, m["trials"][4]
END

"$fl" explore merge -o part.json shard-1 shard-3/explore.json > out 2>&1
rc=$?
[ $rc = 0 ] || fail "merge of shards 1 and 3: exit $rc, not 0: $(cat out)"
grep -qx 'merged 2 of 3 shards (missing: 2): 5 trials, 0 findings, 40 seconds of trials, 2 boots' out ||
	fail "merge of shards 1 and 3: $(cat out)"

# refuse FILES... WHY: merge exits 2 and names why
refuse() {
	_why=$1
	shift
	"$fl" explore merge -o bad.json "$@" > out 2>&1
	_rc=$?
	[ $_rc = 2 ] || fail "merge $*: exit $_rc, not 2: $(cat out)"
	grep -qF "$_why" out || fail "merge $*: not \"$_why\": $(cat out)"
	[ ! -e bad.json ] || fail "merge $*: wrote a result"
}
refuse "shard-1/explore.json and shard-1/explore.json are both shard 1 of 3" shard-1 shard-1
mkdir -p seed4 bad big notjson
sed 's/"seed": 3/"seed": 4/' shard-2/explore.json > seed4/explore.json
refuse "are not of one exploration: their seed differs" shard-1 seed4
sed 's/"index": 3/"index": 1/' shard-3/explore.json > bad/explore.json
refuse "bad/explore.json: a trial that is not of the file's shard" bad
sed 's/"trial": 2,/"trial": 1,/' shard-2/explore.json > bad/explore.json
refuse "bad/explore.json: a trial that is not of the file's shard" bad
echo '{"explore": 1' > notjson/explore.json
refuse "notjson/explore.json:2: '}' expected" notjson
echo '{"explore": 2}' > notjson/explore.json
refuse 'not a `faultlun explore` results file' notjson
truncate -s 65M big/explore.json
refuse "big/explore.json: 68157440 bytes, more than 67108864" big
refuse "nowhere: not a results file" nowhere
refuse "give 1 to 1024 results"
echo ok
