#!/bin/sh
# SPDX-License-Identifier: MIT
# test-check-commit.sh FAULTLUN SOURCE_DIR - the "commit" that `faultlun
# check --json` writes is the git commit the command was built from (`git
# rev-parse --short HEAD`, with "-dirty" when tracked files differed from
# it at build time), and the version line names the same commit. Skipped
# when the source is not a git checkout (a tarball's build writes its
# version there instead), and when commits were made after the build (the
# binary is older than HEAD's commit and was built from one of its
# ancestors): a visible SKIP until the next build.
set -u
fl=$1 src=$2
. "$(dirname "$0")/../lib/common.sh"
command -v git >/dev/null 2>&1 || { echo "SKIP: git not found"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
[ -e "$src/.git" ] || { echo "SKIP: $src is not a git checkout"; exit 77; }
head=$(git -C "$src" --no-optional-locks rev-parse --short HEAD) || fail "git rev-parse"
fl_tmpdir
"$fl" check -q --json "$tmp/r.json" "$src/scenarios/demo.json" > "$tmp/out" 2>&1 ||
	{ cat "$tmp/out"; fail "check of demo.json: exit $?"; }
commit=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["faultlun"]["commit"])' \
	"$tmp/r.json") || fail "no faultlun.commit in the JSON"
echo "commit: $commit, HEAD: $head"
if [ "${commit%-dirty}" != "$head" ]; then
	built=$(stat -c %Y "$fl") headtime=$(git -C "$src" log -1 --format=%ct HEAD)
	if git -C "$src" merge-base --is-ancestor "${commit%-dirty}" HEAD 2>/dev/null &&
		[ "$built" -lt "$headtime" ]; then
		echo "SKIP: built from $commit, HEAD ($head) was committed after the build: rebuild"
		exit 77
	fi
	fail "the JSON's commit is '$commit', the checkout's HEAD $head"
fi
"$fl" --version | grep -qF "(git $commit)" || fail "the version line does not name $commit: $("$fl" --version)"
echo ok
