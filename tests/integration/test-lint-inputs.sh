#!/bin/sh
# SPDX-License-Identifier: MIT
# test-lint-inputs.sh - a scenario is read to its end from wherever it comes:
# standard input ("-"), a pipe (`lint <(...)`), /dev/stdin; a FIFO without a
# writer and a device are refused at once instead of hanging or reading
# garbage; an unreadable file exits 2, a file with problems 1.
#   test-lint-inputs.sh FAULTLUN SCENARIO
set -u
fl=$1 scen=$2
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir

"$fl" lint -q - < "$scen" || fail "lint - < FILE"
cat "$scen" | "$fl" lint -q /dev/stdin || fail "cat FILE | lint /dev/stdin"
cat "$scen" | "$fl" lint -q - || fail "cat FILE | lint -"
# a pipe from another process, as a shell's <(...) gives it
mkfifo "$tmp/pipe"
cat "$scen" > "$tmp/pipe" &
"$fl" lint -q "$tmp/pipe" || fail "lint of a FIFO with a writer"
wait
# a FIFO nobody writes: answered at once, not a hang
mkfifo "$tmp/silent"
start=$(date +%s)
timeout 30 "$fl" lint -q "$tmp/silent" > "$tmp/out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "lint of a FIFO without a writer: exit $rc, want 1"
[ $(( $(date +%s) - start )) -lt 15 ] || fail "lint of a FIFO without a writer took too long"
"$fl" lint -q /dev/null > "$tmp/out" 2>&1
[ $? = 1 ] || fail "lint /dev/null must be refused with exit 1"
grep -q "not a regular file" "$tmp/out" || fail "no clear message for a device: $(cat "$tmp/out")"
"$fl" lint -q "$tmp/no-such-file.json" > /dev/null 2>&1
[ $? = 2 ] || fail "lint of a missing file must exit 2"
# serve reads a pipe too
cat "$scen" | "$fl" serve -q --listen 127.0.0.1:0 - --run true || fail "serve - from a pipe"
echo "ok"
