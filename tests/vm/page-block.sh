# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# page-block.sh - sourced inside a VM-lab guest by the scripts that run a doc
# page's shell block there (getting-started-guest.sh, targetcli-guest.sh).
#   page_block_run PAGE_BLOCK
# runs the block as a person pasting it would, with `set -e`, each command
# traced with the guest's uptime, into $W/page.out; writes its exit status to
# $W/page.rc and the uptime before and after it to $W/page.time; sets rc to
# that status. POSIX sh.

page_block_run() {
	read -r _t0 _ </proc/uptime
	# shellcheck disable=SC2154
	PS4='+ [$(read -r u _ </proc/uptime; echo "$u")] '
	(
		set -ex
		# shellcheck source=/dev/null
		. "$1"
	) >"$W/page.out" 2>&1
	rc=$?
	read -r _t1 _ </proc/uptime
	echo "$rc" >"$W/page.rc"
	echo "$_t0 $_t1" >"$W/page.time"
}
