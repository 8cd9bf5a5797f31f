#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs (as root) or lists (otherwise) the Debian 12 packages faultlun needs.
#   scripts/deps.sh [build|test|vm|bench|fuzz|package|all]   (default: test)
# build: compiler, libraries, python3 (scripts/md2man.py writes the man pages);
# package: what dpkg-buildpackage needs for debian/ (also in test: the
# package.deb test builds the packages in about a minute; test adds lintian,
# which it runs on them).
set -eu
want=${1:-test}
build="build-essential cmake pkg-config python3 libjansson-dev libcunit1-dev libiscsi-dev libnl-3-dev libnl-genl-3-dev libpcap0.8-dev"
package="$build dpkg-dev debhelper man-db"
test="$package lintian libiscsi-bin tcpdump tgt tcmu-runner valgrind python3-jsonschema libxml2-utils clang clang-format libclang-rt-14-dev"
vm="$test qemu-system-x86 busybox-static cpio kmod open-iscsi sg3-utils e2fsprogs util-linux fio multipath-tools udev chromium xz-utils zstd binutils debian-archive-keyring targetcli-fb dbus-daemon dbus-bin dbus-system-bus-common"
bench="$test linux-perf valgrind"
fuzz="$build clang libclang-rt-14-dev"
case "$want" in
build) pkgs=$build ;;
test) pkgs=$test ;;
vm) pkgs=$vm ;;
bench) pkgs=$bench ;;
fuzz) pkgs=$fuzz ;;
package) pkgs=$package ;;
all) pkgs="$vm linux-perf valgrind clang libclang-rt-14-dev" ;;
*) echo "usage: $0 [build|test|vm|bench|fuzz|package|all]" >&2; exit 2 ;;
esac
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "faultlun: missing Debian packages:$missing" >&2
	echo "faultlun: as root run: apt-get install -y$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
