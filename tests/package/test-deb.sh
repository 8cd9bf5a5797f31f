#!/bin/sh
# SPDX-License-Identifier: MIT
# test-deb.sh SOURCE_DIR - builds the Debian packages (debian/) from a copy
# of the tree with dpkg-buildpackage, unpacks them into a scratch root with
# dpkg -x, and runs the unpacked faultlun there: --version, lint of the
# shipped scenarios, the VM lab's pieces found under the root, the man page,
# the handler's package relation to tcmu-runner, and `faultlun check` when the
# command has it. Exits 77 when dpkg-buildpackage or debhelper is missing.
set -u
src=$1
for t in dpkg-buildpackage dh dpkg-deb; do
	command -v $t >/dev/null 2>&1 || { echo "SKIP: $t missing (apt-get install dpkg-dev debhelper)"; exit 77; }
done
dpkg-checkbuilddeps "$src/debian/control" 2>/dev/null ||
	{ echo "SKIP: build dependencies missing: $(dpkg-checkbuilddeps "$src/debian/control" 2>&1)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

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
for f in agent.sh mkguest.sh init fl-vm-agent; do
	[ -x "$root/usr/libexec/faultlun/$f" ] || fail "no usr/libexec/faultlun/$f"
done
ls "$root"/usr/lib/*/tcmu-runner/handler_faultlun.so >/dev/null 2>&1 || fail "no handler in faultlun-tcmu"
grep -q "handler $root/usr/lib/.*/tcmu-runner" "$tmp/where" || fail "vm handler: $(cat "$tmp/where")"
dpkg-deb -f "$tmp"/faultlun-tcmu_*.deb Depends | grep -q 'tcmu-runner (>= 1.5.4), tcmu-runner (<< 1.5.5~)' ||
	fail "faultlun-tcmu Depends: $(dpkg-deb -f "$tmp"/faultlun-tcmu_*.deb Depends)"
[ -f "$root/usr/share/bash-completion/completions/faultlun" ] || fail "no bash completion"
# No path of the tree it was built in is compiled into the programs.
for f in "$fl" "$root"/usr/libexec/faultlun/fl-vm-*; do
	! grep -q -F "$tmp/faultlun" "$f" || fail "$f holds the build tree's path $tmp/faultlun"
done
if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 man -l "$root/usr/share/man/man1/faultlun.1.gz" 2>/dev/null | grep -q "faultlun serve" ||
		fail "man -l faultlun.1.gz"
fi
if "$fl" help check >/dev/null 2>&1; then
	"$fl" check --quiet "$root/usr/share/faultlun/scenarios/medium-error-heal.json" >"$tmp/check.out" 2>&1
	rc=$?
	[ $rc = 0 ] || [ $rc = 77 ] || { cat "$tmp/check.out"; fail "faultlun check exited $rc"; }
	echo "faultlun check: exit $rc"
fi
echo "packages build, unpack and run"
