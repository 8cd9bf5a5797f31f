#!/bin/sh
# SPDX-License-Identifier: MIT
# Deep fuzzing: builds the libFuzzer targets (ASan + UBSan, as the fuzz ctests
# do) in their own build directory, replays the saved regressions, then runs
# each fuzzer, one at a time, for a fixed number of executions from its corpus
# in tests/fuzz/corpus/<target>. Inputs that reach new coverage are merged back
# into that corpus with libFuzzer's -merge=1 (only what adds features, so it
# stays small). Prints executions, wall time, exec/s, coverage (cov/ft), corpus
# size before/after and any crash, leak or timeout (left in the build
# directory: fix it, then copy it to tests/fuzz/regressions/<target>/).
#   scripts/fuzz-deep.sh [EXECS [TARGET...]]   EXECS default 10000000, TARGET cdb iscsi scenario
#                                              decode client report import mpath scsidebug
# Environment:
#   FUZZ_DEEP_BUILD    build directory (default build/fuzz-deep)
#   FUZZ_DEEP_SECONDS  stop a fuzzer after this many seconds even short of EXECS (default: no cap)
#   FUZZ_DEEP_MERGE=0  do not merge new inputs into the tree
#   FUZZ_DEEP_JOBS     run each fuzzer as this many processes (libFuzzer's -fork; default 1):
#                      EXECS counts the executions of all of them
# Exit 0 when every fuzzer ran clean, 1 on a finding or a failed build, 77 when
# clang or libFuzzer is missing. Long: run it under nice.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
execs=${1:-10000000}
[ $# -gt 0 ] && shift
targets=${*:-cdb iscsi scenario decode client report import mpath scsidebug}
bld=${FUZZ_DEEP_BUILD:-$src/build/fuzz-deep}
maxtime=${FUZZ_DEEP_SECONDS:-0}
merge=${FUZZ_DEEP_MERGE:-1}
jobs=${FUZZ_DEEP_JOBS:-1}
here=$src/tests/fuzz
case $execs in '' | *[!0-9]*) echo "usage: $0 [EXECS [TARGET...]]" >&2; exit 2 ;; esac
case $jobs in '' | *[!0-9]* | 0) echo "$0: FUZZ_DEEP_JOBS: expected a number of processes, 1 or more" >&2; exit 2 ;; esac
fork=""
[ "$jobs" -gt 1 ] && fork="-fork=$jobs"

mkdir -p "$bld"
bld=$(cd "$bld" && pwd)
rc=0
# shellcheck disable=SC2086
exes=$(sh "$here/build-fuzz.sh" "$src" "$bld" $targets) || rc=$?
[ "$rc" = 0 ] || exit "$rc"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# corpus_size DIR: "FILES files, BYTES bytes"
corpus_size() {
	n=$(find "$1" -type f | wc -l)
	b=$(find "$1" -type f -exec cat {} + | wc -c)
	echo "$n files, $b bytes"
}

status=0
summary=""
for t in $targets; do
	exe=$(echo "$exes" | grep "/fuzz_$t\$")
	tree=$here/corpus/$t
	reg=$here/regressions/$t
	work=$bld/work-$t
	art=$bld/artifacts
	log=$bld/fuzz-$t.log
	maxlen=$(sh "$here/build-fuzz.sh" --max-len "$t")
	rm -rf "$work"
	mkdir -p "$work" "$art" "$tree"
	echo "== fuzz_$t: $execs executions${fork:+, $jobs processes}"

	if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
		echo "replaying $(find "$reg" -type f | wc -l) regression inputs"
		if ! "$exe" -error_exitcode=1 -timeout_exitcode=1 "$reg"/* >"$bld/replay-$t.log" 2>&1; then
			tail -40 "$bld/replay-$t.log"
			echo "fuzz_$t: a saved regression fails again"
			status=1
			continue
		fi
	fi

	before=$(corpus_size "$tree")
	dict=""
	[ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
	cap=""
	[ "$maxtime" -gt 0 ] && cap="-max_total_time=$maxtime"
	start=$(date +%s)
	frc=0
	# libFuzzer's own failure code is 77 (a skip to callers): findings exit 1.
	# shellcheck disable=SC2086
	"$exe" -runs="$execs" $fork $cap -timeout=10 -error_exitcode=1 -timeout_exitcode=1 \
		-rss_limit_mb=2048 -max_len=$maxlen -print_final_stats=1 -artifact_prefix="$art/$t-" \
		$dict "$work" "$tree" >"$log" 2>&1 || frc=$?
	secs=$(($(date +%s) - start))
	[ "$secs" -gt 0 ] || secs=1
	# One process: "#N DONE cov: ..."; -fork: "#N: cov: ..." for the jobs together.
	done_line=$(grep -E '^#[0-9]+(:|[[:space:]]+(DONE|INITED|pulse|NEW|REDUCE))' "$log" | tail -1)
	ran=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	[ -n "$ran" ] || ran=$(echo "$done_line" | sed 's/^#\([0-9]*\).*/\1/')
	cov=$(echo "$done_line" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$done_line" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
	finding=""
	if [ "$frc" != 0 ]; then
		status=1
		finding=$(grep -E 'Test unit written to' "$log" | sed 's/.*written to //' | tail -1)
		grep -E '^==[0-9]+==ERROR|^SUMMARY|runtime error|ALARM|out-of-memory' "$log" | head -5
		echo "fuzz_$t FAILED (exit $frc): input ${finding:-?}, log $log"
	fi

	merged=""
	if [ "$merge" = 1 ]; then
		# A control file left by an earlier merge would be taken as a resume.
		rm -f "$bld/merge-$t.ctl"
		if "$exe" -merge=1 -timeout=10 -rss_limit_mb=2048 -max_len="$maxlen" \
			-merge_control_file="$bld/merge-$t.ctl" "$tree" "$work" >"$bld/merge-$t.log" 2>&1; then
			merged=$(sed -n 's/.*MERGE-OUTER: \([0-9]*\) new files.*/\1/p' "$bld/merge-$t.log")
		else
			echo "fuzz_$t: merge failed, see $bld/merge-$t.log"
			status=1
		fi
	fi
	after=$(corpus_size "$tree")
	line="fuzz_$t: $ran execs in ${secs} s ($((ran / secs)) exec/s), cov $cov ft $ft, corpus $before -> $after (${merged:-0} merged)"
	[ -n "$finding" ] && line="$line, FINDING $finding"
	[ "$frc" != 0 ] && [ -z "$finding" ] && line="$line, FAILED (exit $frc)"
	echo "$line"
	summary="$summary$line
"
done
capnote=""
[ "$maxtime" -gt 0 ] && capnote=", time cap $maxtime s"
[ "$jobs" -gt 1 ] && capnote="$capnote, $jobs processes each"
echo "== summary (execs requested per fuzzer: $execs$capnote)"
printf '%s' "$summary"
exit "$status"
