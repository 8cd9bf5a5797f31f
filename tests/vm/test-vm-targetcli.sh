#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-targetcli.sh - docs/tcmu.md "With targetcli" runs as written: the
# shell block between its targetcli:begin / :end markers runs, verbatim, in a
# VM-lab guest (Debian's kernel; the host's dbus-daemon, tcmu-runner and
# targetcli-fb; the built handler_faultlun.so in tcmu-runner's default handler
# directory and the shipped scenarios where the package puts them, both in
# the guest's writable layer) by tests/vm/targetcli-guest.sh from a `shell`
# workload step on the lab's lio path (whose own LIO ramdisk LUN is not used).
# Asserts that the block exited 0 (it reads the bad range and must see the
# read fail, rewrite it and read it back); that the read failed with ENODATA
# ("No data available"), as MEDIUM ERROR 11/00 does; that the handler's trace
# shows the scenario's rule bad-range injecting MEDIUM ERROR 3/11/00 at LBA
# 8192; that tcmu-runner offered handler faultlun on the system bus; that
# targetcli refused a cfgstring naming no scenario with the handler's
# check_config reason ("cfgstring invalid: ...", the path in it); that
# after the block no user backstore, tcm_loop target or disk of the LUN is
# left; and that the host's /etc/target and ~/.targetcli did not change (the
# guest's are in its own writable layer).
#   test-vm-targetcli.sh FAULTLUN PAGE.md GUEST_SCRIPT HANDLER_SO SCENARIOS_DIR OUTDIR
# Exit 77 (skip) without qemu or the guest kernel, targetcli, dbus-daemon,
# dbus-send or tcmu-runner, or with a handler built with sanitizers (the
# stock tcmu-runner cannot load it).
set -u
faultlun=$1 page=$2 guest_script=$3 handler=$4 scenarios=$5 out=$6
# shellcheck source=tests/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
for need in targetcli dbus-daemon dbus-send tcmu-runner; do
	command -v "$need" >/dev/null 2>&1 || { echo "SKIP: $need not installed"; exit 77; }
done
[ -f /usr/share/dbus-1/system.conf ] || { echo "SKIP: no system bus configuration"; exit 77; }
if nm -D "$handler" 2>/dev/null | grep -q '__asan_\|__ubsan_'; then
	echo "SKIP: $handler is built with sanitizers"
	exit 77
fi
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }

# The host's targetcli state, to compare after the run.
host_state() {
	ls -laR --time-style=+%s.%N /etc/target "$HOME/.targetcli" 2>&1
	[ -f /etc/target/saveconfig.json ] && cksum /etc/target/saveconfig.json
}
host_state >"$out/host-before.txt"

# The page's block: the ```sh fence between the markers, as it is.
fl_page_block "$page" targetcli 'targetcli /backstores/user:faultlun create'
fl_page_lab targetcli 240 \
	"sh '$(abs "$guest_script")' '$out/page.sh' '$(abs "$handler")' '$(cd "$scenarios" && pwd)'" \
	"Runs the shell block of docs/tcmu.md 'With targetcli' in the guest."
fl_page_run targetcli 360 tcli trace.jsonl refused.out state-after.txt page.time

host_state >"$out/host-after.txt"
cmp -s "$out/host-before.txt" "$out/host-after.txt" ||
	fail "the host's /etc/target or ~/.targetcli changed (see $out/host-*.txt)"

grep -q 'object path "/org/kernel/TCMUService1/faultlun"' "$g/bus.txt" ||
	fail "tcmu-runner did not offer handler faultlun on the system bus"
disk=$(sed -n 's|^LUN 0 of naa.5001405000000001 is /dev/\(sd[a-z]*\)$|\1|p' "$g/page.out")
[ -n "$disk" ] || fail "no disk for the LUN"
grep -q "^dd: error reading '/dev/sd[a-z]*': No data available$" "$g/page.out" ||
	fail "the read of the bad range did not fail with ENODATA"
grep '"event":"inject"' "$g/trace.jsonl" 2>/dev/null | grep '"rule":"bad-range"' |
	grep '"sense":"3/11/00"' | grep -q '"lba":8192' ||
	fail "the handler's trace has no MEDIUM ERROR from rule bad-range at LBA 8192"

grep -q 'cfgstring invalid: .*/nonexistent/none\.json' "$g/refused.out" 2>/dev/null ||
	fail "targetcli did not refuse a cfgstring naming no scenario with the handler's reason"
grep -q '^user_backstore ' "$g/state-after.txt" && fail "a user backstore remains after the teardown"
grep -qx 'loopback naa.5001405000000001' "$g/state-after.txt" && fail "the tcm_loop target remains after the teardown"
grep -qx "disk $disk" "$g/state-after.txt" && fail "the LUN's disk $disk remains after the teardown"
read -r t0 t1 <"$g/page.time"
echo "the page's commands ran in the guest in $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s; all assertions held"
