#!/bin/sh
# SPDX-License-Identifier: MIT
# test-deb.sh SOURCE_DIR - builds the Debian packages (debian/) from a copy
# of the tree with dpkg-buildpackage, unpacks them into a scratch root with
# dpkg -x, and runs the unpacked faultlun there: --version, lint of the
# shipped scenarios, the VM lab's pieces found under the root, the man pages
# (rendered without a warning), the handler's package relation to tcmu-runner
# and its architecture (the one its ABI is pinned to), the documentation
# under /usr/share/doc/faultlun (uncompressed Markdown whose links lead to
# packaged files, Debian's changelog.gz and copyright), lintian without an
# error or a warning, and `faultlun check` when the command has it. Exits 77
# when dpkg-buildpackage, debhelper or lintian is missing.
set -u
src=$1
for t in dpkg-buildpackage dh dpkg-deb lintian; do
	command -v $t >/dev/null 2>&1 ||
		{ echo "SKIP: $t missing (apt-get install dpkg-dev debhelper lintian)"; exit 77; }
done
dpkg-checkbuilddeps "$src/debian/control" 2>/dev/null ||
	{ echo "SKIP: build dependencies missing: $(dpkg-checkbuilddeps "$src/debian/control" 2>&1)"; exit 77; }
. "$(dirname "$0")/install-root.sh" # fail, doc_links

# faultlun-tcmu is built for what handlers/tcmu/tcmu_abi.h pins the
# tcmu-runner 1.5.4 structures to: x86-64, Debian's amd64, and nothing else;
# the command's package is built with the handler, so it can have no more.
grep -q '^#if defined(__x86_64__)$' "$src/handlers/tcmu/tcmu_abi.h" ||
	fail "tcmu_abi.h no longer pins x86-64: debian/control must say what it pins"
for pkg in faultlun-tcmu faultlun; do
	arch=$(awk -v p="$pkg" '/^Package:/ { on = ($2 == p) } on && /^Architecture:/ { print $2 }' \
		"$src/debian/control")
	[ "$arch" = amd64 ] || fail "debian/control: $pkg is Architecture: $arch; the handler ABI is amd64 only"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The tree without build directories or git metadata.
mkdir "$tmp/faultlun"
tar -C "$src" --exclude=./build --exclude=./.git -cf - . | tar -C "$tmp/faultlun" -xf -
# Warnings are errors in this build (the package's -O2 with _FORTIFY_SOURCE).
(cd "$tmp/faultlun" && FAULTLUN_WERROR=ON DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
	dpkg-buildpackage -b -us -uc >"$tmp/build.log" 2>&1) ||
	{ tail -40 "$tmp/build.log"; fail "dpkg-buildpackage failed"; }
ls "$tmp"/faultlun_*.deb "$tmp"/faultlun-tcmu_*.deb >/dev/null 2>&1 || fail "no .deb built"

root=$tmp/root
for deb in "$tmp"/*.deb; do
	echo "built $(basename "$deb")"
	dpkg -x "$deb" "$root" || fail "dpkg -x $deb"
done
fl=$root/usr/bin/faultlun
[ -x "$fl" ] || fail "no usr/bin/faultlun in the package"
"$fl" --version | grep -q '^faultlun [0-9]' || fail "faultlun --version: $("$fl" --version 2>&1)"
"$fl" lint --quiet "$root"/usr/share/faultlun/scenarios/*.json || fail "faultlun lint of the packaged scenarios"
"$fl" vm --where >"$tmp/where" || fail "faultlun vm --where"
grep -qx "scripts $root/usr/libexec/faultlun" "$tmp/where" || fail "vm scripts: $(cat "$tmp/where")"
for f in agent.sh mkguest.sh init fl-vm-agent fl-vm-mpwatch; do
	[ -x "$root/usr/libexec/faultlun/$f" ] || fail "no usr/libexec/faultlun/$f"
done
ls "$root"/usr/lib/*/tcmu-runner/handler_faultlun.so >/dev/null 2>&1 || fail "no handler in faultlun-tcmu"
grep -q "handler $root/usr/lib/.*/tcmu-runner" "$tmp/where" || fail "vm handler: $(cat "$tmp/where")"
dpkg-deb -f "$tmp"/faultlun-tcmu_*.deb Depends | grep -q 'tcmu-runner (>= 1.5.4), tcmu-runner (<< 1.5.5~)' ||
	fail "faultlun-tcmu Depends: $(dpkg-deb -f "$tmp"/faultlun-tcmu_*.deb Depends)"
[ "$(dpkg-deb -f "$tmp"/faultlun-tcmu_*.deb Architecture)" = amd64 ] ||
	fail "faultlun-tcmu is built for $(dpkg-deb -f "$tmp"/faultlun-tcmu_*.deb Architecture)"
[ -f "$root/usr/share/bash-completion/completions/faultlun" ] || fail "no bash completion"
# No path of the tree it was built in is compiled into the programs.
for f in "$fl" "$root"/usr/libexec/faultlun/fl-vm-*; do
	! grep -q -F "$tmp/faultlun" "$f" || fail "$f holds the build tree's path $tmp/faultlun"
done
# The documentation where Debian wants it: the tree's Markdown uncompressed
# (its links name .md files), Debian's changelog compressed, the copyright.
doc=/usr/share/doc/faultlun
for f in README.md CHANGELOG.md docs/scenario-format.md docs/faults/sense.md \
	docs/device-handlers/rdac.md changelog.gz copyright; do
	[ -f "$root$doc/$f" ] || fail "no $doc/$f in the package"
done
for f in changelog.gz copyright; do
	[ -f "$root/usr/share/doc/faultlun-tcmu/$f" ] || fail "no /usr/share/doc/faultlun-tcmu/$f"
done
zcat "$root$doc/changelog.gz" | head -1 | grep -q '^faultlun (' ||
	fail "$doc/changelog.gz is not debian/changelog: $(zcat "$root$doc/changelog.gz" | head -1)"
doc_links "$root" "$doc"
if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 man -l "$root/usr/share/man/man1/faultlun.1.gz" 2>/dev/null | grep -q "faultlun serve" ||
		fail "man -l faultlun.1.gz"
	for page in man1/faultlun.1.gz man5/faultlun-scenario.5.gz; do
		MANWIDTH=80 man --warnings -E UTF-8 -l "$root/usr/share/man/$page" 2>&1 >/dev/null |
			grep . && fail "man --warnings -l $page"
	done
fi
# lintian: no error and no warning; an override in debian/*.lintian-overrides
# says why where a tag is wrong.
lintian --fail-on error,warning "$tmp"/faultlun_*.changes >"$tmp/lintian.log" 2>&1
rc=$?
grep -E '^[EWIPO]: ' "$tmp/lintian.log"
[ $rc = 0 ] || { grep -v -E '^[EWIPON]: ' "$tmp/lintian.log"; fail "lintian exited $rc"; }
echo "lintian: no errors, no warnings"
if "$fl" help check >/dev/null 2>&1; then
	"$fl" check --quiet "$root/usr/share/faultlun/scenarios/medium-error-heal.json" >"$tmp/check.out" 2>&1
	rc=$?
	[ $rc = 0 ] || [ $rc = 77 ] || { cat "$tmp/check.out"; fail "faultlun check exited $rc"; }
	echo "faultlun check: exit $rc"
fi
echo "packages build, unpack and run"
