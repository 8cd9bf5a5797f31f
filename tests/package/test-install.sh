#!/bin/sh
# SPDX-License-Identifier: MIT
# test-install.sh BUILD_DIR - `cmake --install` of the build into a scratch
# root (DESTDIR, prefix /usr) gives a working tool: faultlun runs from there,
# lints the installed scenarios (the JSON Schema among them is skipped), finds
# the VM lab's pieces under the root and not in the build tree, and the man
# pages, bash completion, documentation and handler are where they belong.
# The documentation keeps the tree's layout under share/doc/faultlun, and
# every relative link in it leads to an installed file.
set -u
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/install-root.sh" # fail, doc_links
root=$tmp/root
DESTDIR=$root cmake --install "$build" --prefix /usr >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; fail "cmake --install"; }
fl=$root/usr/bin/faultlun
[ -x "$fl" ] || fail "no usr/bin/faultlun"
"$fl" --version | grep -q '^faultlun [0-9]' || fail "--version"
"$fl" lint "$root"/usr/share/faultlun/scenarios/*.json 2>"$tmp/lint.err" ||
	{ cat "$tmp/lint.err"; fail "lint of the installed scenarios"; }
grep -q "faultlun-scenario.schema.json: a JSON Schema, not a scenario: skipped" "$tmp/lint.err" ||
	fail "the schema was not recognised: $(cat "$tmp/lint.err")"
"$fl" vm --where >"$tmp/where.all" || fail "vm --where"
grep -v "^cache " "$tmp/where.all" >"$tmp/where"
grep -q "^cache /" "$tmp/where.all" || fail "vm --where: no cache line"
cat >"$tmp/want" <<EOT
scripts $root/usr/libexec/faultlun
programs $root/usr/libexec/faultlun
handler $root/usr/$(sed -n 's/^FAULTLUN_TCMU_HANDLER_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
EOT
cmp -s "$tmp/want" "$tmp/where" || fail "vm --where: $(cat "$tmp/where"), want $(cat "$tmp/want")"
for f in agent.sh mkguest.sh init fl-vm-agent fl-vm-mpwatch; do
	[ -x "$root/usr/libexec/faultlun/$f" ] || fail "no usr/libexec/faultlun/$f"
done
for f in share/man/man1/faultlun.1 share/man/man5/faultlun-scenario.5 \
	share/bash-completion/completions/faultlun share/doc/faultlun/LICENSE \
	share/doc/faultlun/README.md share/doc/faultlun/CHANGELOG.md \
	share/doc/faultlun/docs/scenario-format.md share/doc/faultlun/docs/faults/sense.md \
	share/doc/faultlun/docs/device-handlers/rdac.md \
	share/faultlun/scenarios/faultlun-scenario.schema.json; do
	[ -f "$root/usr/$f" ] || fail "no usr/$f"
done
# Every Markdown file of docs/ is installed.
(cd "$(dirname "$0")/../../docs" && find . -name '*.md' ! -path './man/*') | while read -r f; do
	[ -f "$root/usr/share/doc/faultlun/docs/$f" ] || { echo "FAIL: docs/$f is not installed"; exit 1; }
done || exit 1
# Every relative link of the installed documentation leads to an installed file.
doc_links "$root" /usr/share/doc/faultlun
ls "$root"/usr/lib*/tcmu-runner/handler_faultlun.so "$root"/usr/lib/*/tcmu-runner/handler_faultlun.so \
	2>/dev/null | grep -q . || fail "no handler_faultlun.so under usr/lib"
# Nothing outside the root: the handler used to go to /usr/lib/<triplet>.
grep -v "$root" "$tmp/install.log" | grep -E "^-- (Installing|Up-to-date): " && fail "installed outside DESTDIR"
echo "install: ok"
