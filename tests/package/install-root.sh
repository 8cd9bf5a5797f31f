# SPDX-License-Identifier: MIT
# install-root.sh - sourced by the package tests: fl_install_root BUILD_DIR
# runs `cmake --install` of the build into a scratch root (DESTDIR) under the
# build's own prefix, so that the paths the man pages name (they are written
# for that prefix) are those of the root: $root$prefix/... Sets tmp (removed
# on exit), root, prefix and mandir, and puts the installed bin first in PATH.
# fl_install_faultlun1 BUILD_DIR: fl_install_root (SKIP without man) and $page, the
# installed faultlun(1).
# doc_links ROOT DOCDIR: every relative link of the Markdown files under
# ROOT/DOCDIR leads to a file under ROOT.

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

# fl_install_faultlun1 BUILD_DIR: SKIP (exit 77) without man; otherwise fl_install_root
# and $page, the installed faultlun(1), which must be there.
fl_install_faultlun1() {
	command -v man >/dev/null 2>&1 || { echo "SKIP: man (man-db) missing"; exit 77; }
	fl_install_root "$1"
	page=$root$mandir/man1/faultlun.1
	[ -f "$page" ] || fail "no $mandir/man1/faultlun.1 installed"
}

# doc_links ROOT DOCDIR: fails naming the first link that leads nowhere.
doc_links() {
	find "$1$2" -name '*.md' | while read -r f; do
		grep -o '](\([^)]*\))' "$f" | sed 's/^](//; s/)$//; s/#.*//' | while read -r t; do
			case $t in
			"" | *://* | mailto:*) continue ;;
			/*) [ -e "$1$t" ] || { echo "FAIL: ${f#"$1"}: link $t: no such installed file"; exit 1; } ;;
			*) [ -e "$(dirname "$f")/$t" ] ||
				{ echo "FAIL: ${f#"$1"}: link $t: no such installed file"; exit 1; } ;;
			esac
		done || exit 1
	done || fail "links in the installed documentation"
	[ "$(find "$1$2" -name '*.md' | wc -l)" -gt 20 ] ||
		fail "only $(find "$1$2" -name '*.md' | wc -l) documents in $2"
}
