#!/bin/sh
# SPDX-License-Identifier: MIT
# explore-rate.sh - trials per hour of `faultlun explore` on each shipped base
# (docs/explore.md "Throughput"): runs `faultlun explore BASE --budget N --seed
# S --no-minimise` for scenarios/explore/iscsi-single.json, mpath.json (path
# iscsi) and tcmu.json (path tcmu), one after the other, and prints a table of
# trials, boots, seconds and trials per hour as explore itself measured them
# (the summary line), with how many trials injected a fault (the trace of each
# run has an "inject", "xport" or "tmf" event of a drawn rule).
#   bench/explore-rate.sh [TRIALS [SEED]]      (defaults: 8 trials, seed 2)
# FAULTLUN (the binary, default build/release/cli/faultlun, else faultlun on
# PATH), OUT (default /tmp/faultlun-explore-rate), BASES (a subset, by file
# name without .json), EXTRA (more explore options, e.g. "--kernel
# debian:trixie" or "--tcg-thread single"). Exit 77 without qemu or a guest
# kernel (explore's own 77).
set -u
trials=${1:-8}
seed=${2:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
fl=${FAULTLUN:-$here/build/release/cli/faultlun}
[ -x "$fl" ] || fl=$(command -v faultlun) || { echo "no faultlun binary (FAULTLUN=...)"; exit 2; }
out=${OUT:-/tmp/faultlun-explore-rate}
bases=${BASES:-"iscsi-single mpath tcmu"}
rm -rf "$out"
mkdir -p "$out" || exit 2
echo "machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "faultlun: $("$fl" --version | head -1); $trials trials a base, seed $seed, --no-minimise ${EXTRA:-}"
rows=""
for b in $bases; do
	path=iscsi
	[ "$b" = tcmu ] && path=tcmu
	# shellcheck disable=SC2086
	"$fl" explore "$here/scenarios/explore/$b.json" --path $path --budget "$trials" \
		--seed "$seed" --no-minimise --out "$out/$b" ${EXTRA:-} >"$out/$b.log" 2>&1
	rc=$?
	[ $rc = 77 ] && { echo "SKIP: explore exited 77 (no qemu or guest kernel)"; exit 77; }
	line=$(grep -E '^[0-9]+ trials, [0-9]+ findings, ' "$out/$b.log" | tail -1)
	[ -n "$line" ] || { echo "$b: no summary (exit $rc, see $out/$b.log)"; exit 1; }
	injected=0
	for t in "$out/$b"/runs/t*; do
		[ -d "$t" ] || continue
		if cat "$t"/guest/trace*.jsonl 2>/dev/null | grep -q '"rule":"x[0-9]*"'; then
			injected=$((injected + 1))
		fi
	done
	rows="$rows$b|$path|$line|$injected
"
done
echo
echo "| base | path | trials | findings | seconds | trials/hour | boots | trials with a fault injected |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s' "$rows" | while IFS='|' read -r b path line injected; do
	echo "$line" | sed -n "s#^\([0-9]*\) trials, \([0-9]*\) findings, \([0-9]*\) seconds, \([0-9.]*\) trials/hour (\([0-9]*\) boots.*#| $b | $path | \1 | \2 | \3 | \4 | \5 | $injected |#p"
done
