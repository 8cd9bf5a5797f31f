# SPDX-License-Identifier: MIT
# install-root.sh - sourced by the package tests: fl_install_root BUILD_DIR
# runs `cmake --install` of the build into a scratch root (DESTDIR) under the
# build's own prefix, so that the paths the man pages name (they are written
# for that prefix) are those of the root: $root$prefix/... Sets tmp (removed
# on exit), root, prefix and mandir, and puts the installed bin first in PATH.
# fail MESSAGE: the test fails.

# fail MESSAGE: prints FAIL: MESSAGE and exits 1.
fail() {
	echo "FAIL: $*"
	exit 1
}

# cache_value BUILD_DIR NAME: the build's CMakeCache.txt value of NAME.
cache_value() {
	sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt"
}

# fl_install_root BUILD_DIR: installs the build into $tmp/root.
fl_install_root() {
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	root=$tmp/root
	prefix=$(cache_value "$1" CMAKE_INSTALL_PREFIX)
	[ -n "$prefix" ] || fail "no CMAKE_INSTALL_PREFIX in $1/CMakeCache.txt"
	mandir=$(cache_value "$1" CMAKE_INSTALL_MANDIR)
	case $mandir in
	/*) ;;
	*) mandir=$prefix/${mandir:-share/man} ;;
	esac
	DESTDIR=$root cmake --install "$1" >"$tmp/install.log" 2>&1 ||
		{ cat "$tmp/install.log"; fail "cmake --install $1"; }
	[ -x "$root$prefix/bin/faultlun" ] || fail "no $prefix/bin/faultlun under $root"
	PATH=$root$prefix/bin:$PATH
	export PATH
}
