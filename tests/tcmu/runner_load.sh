#!/bin/sh
# SPDX-License-Identifier: MIT
# runner_load.sh - the real tcmu-runner loads handler_faultlun.so and registers it.
#
# Usage: runner_load.sh HANDLER.so KMOD_SHIM.so
#
# Runs /usr/bin/tcmu-runner --handler-path DIR -l LOGDIR for a few seconds in a
# private mount namespace (its own /run for the lock file; when the kernel has
# no target_core_user, a stand-in /sys/module entry plus an LD_PRELOAD shim of
# the libkmod lookup so that the runner gets as far as loading handlers). Passes
# when the runner's log says "Handler faultlun is registered"; fails when the
# runner reached the handlers but could not load ours; exits 77 (skip) when the
# runner, unshare or mount namespaces are unavailable, or when the handler was
# built with sanitizers (it then needs the ASan runtime the runner lacks).
set -u
so=$1
shim=$2

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

runner=$(command -v tcmu-runner || true)
[ -n "$runner" ] || skip "tcmu-runner is not installed (apt-get install tcmu-runner)"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
[ -f "$so" ] || fail "$so does not exist"
if objdump -p "$so" 2>/dev/null | grep -q 'NEEDED.*lib[a-z]*san'; then
	skip "handler built with sanitizers; the stock tcmu-runner cannot load it"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fl-runner-XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/handlers" "$tmp/log" "$tmp/mod/target_core_user/parameters"
ln -s "$(readlink -f "$so")" "$tmp/handlers/handler_faultlun.so"

if [ "$(id -u)" = 0 ]; then ns="unshare -m"; else ns="unshare -rm"; fi
$ns true 2>/dev/null || skip "cannot create a mount namespace here ($ns)"

preload=""
fake_mod=""
if [ ! -d /sys/module/target_core_user ]; then
	preload="$shim"
	fake_mod="$tmp/mod"
fi

# The runner exits once it finds no kernel netlink family, or is stopped by timeout.
timeout -s TERM 8 $ns sh -c '
	mount -t tmpfs none /run || exit 90
	if [ -n "$2" ]; then mount --bind "$2" /sys/module || exit 91; fi
	LD_PRELOAD="$1" exec "$3" --handler-path "$4/handlers" -l "$4/log" -d
' sh "$preload" "$fake_mod" "$runner" "$tmp" >"$tmp/stdout" 2>&1
rc=$?
log="$tmp/log/tcmu-runner.log"
[ "$rc" = 90 ] || [ "$rc" = 91 ] && skip "mounts inside the namespace were refused (rc $rc)"
[ -f "$log" ] || skip "tcmu-runner wrote no log (rc $rc): $(head -c 400 "$tmp/stdout")"

if grep -q "Handler faultlun is registered" "$log"; then
	echo "PASS: tcmu-runner $($runner -V 2>&1 | head -1) registered handler faultlun (rc $rc)"
	grep -E "faultlun|handler" "$log" | head -5
	exit 0
fi
if grep -qE "Could not open handler|dlsym failure|handler init failed" "$log"; then
	grep -E "handler" "$log" | head -5
	fail "tcmu-runner could not load $so"
fi
tail -5 "$log"
skip "tcmu-runner stopped before loading handlers (rc $rc); see its log above"
