#!/bin/sh
# SPDX-License-Identifier: MIT
# test-vm-getting-started.sh - docs/getting-started-host.md runs as written:
# the shell block between its getting-started:begin / :end markers is run,
# verbatim, in a VM-lab guest (Debian's kernel, the host's iscsiadm, udev and
# fio, the built faultlun) by tests/vm/getting-started-guest.sh from a `shell`
# workload step on the lab's lio path. Asserts that the block exited 0; that
# while fio ran one iSCSI session was logged in with one disk and
# /dev/disk/by-id/wwn-0xNAA, NAA from serve's banner, pointed at that disk; that
# fio.json shows reads and writes done, no error, nonzero bandwidth, on that
# disk; and that after the block no session, disk, node record or link of
# the LUN was left.
#   test-vm-getting-started.sh FAULTLUN PAGE.md GUEST_SCRIPT OUTDIR
# Exit 77 (skip) without qemu, the guest kernel, fio, iscsiadm, udev or python3.
set -u
faultlun=$1 page=$2 guest_script=$3 out=$4
# shellcheck source=tests/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
for need in fio iscsiadm iscsid python3; do
	command -v "$need" >/dev/null 2>&1 || { echo "SKIP: $need not installed"; exit 77; }
done
[ -x /lib/systemd/systemd-udevd ] || { echo "SKIP: systemd-udevd not installed"; exit 77; }
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The page's block: the ```sh fence between the markers, as it is.
fl_page_block "$page" getting-started 'faultlun serve'
fl_page_lab getting-started 200 \
	"sh '$(cd "$(dirname "$guest_script")" && pwd)/$(basename "$guest_script")' '$out/page.sh' '$(cd "$(dirname "$faultlun")" && pwd)'" \
	"Runs the shell block of docs/getting-started-host.md in the guest."
fl_page_run getting-started 300 gs state-fio.txt links-fio.txt state-after.txt page.time
gs=$g

# While fio ran: one session with one disk, and the banner's wwn name linked to it.
naa=$(sed -n 's/.*LUN 0: .*NAA 0x\([0-9a-f]*\) (wwn-0x\1)$/\1/p' "$gs/serve.log")
[ -n "$naa" ] || fail "serve.log has no LUN 0 line with its NAA and wwn name"
grep -qx "sessions 1" "$gs/state-fio.txt" || fail "not exactly one iSCSI session while fio ran"
[ "$(grep -c '^iscsi_disk ' "$gs/state-fio.txt")" = 1 ] || fail "not exactly one iSCSI disk"
disk=$(awk '$1 == "iscsi_disk" { print $2 }' "$gs/state-fio.txt")
grep -qx "wwn_link wwn-0x$naa /dev/$disk" "$gs/state-fio.txt" ||
	fail "/dev/disk/by-id/wwn-0x$naa did not point at /dev/$disk"

# fio's JSON: no error, reads and writes done, nonzero bandwidth, on that disk.
python3 - "$gs/fio.json" "$disk" <<'PY' || fail "fio.json does not show clean I/O on /dev/$disk"
import json, sys
with open(sys.argv[1]) as f:
    j = json.load(f)
job = j["jobs"][0]
ok = True
def check(cond, what):
    global ok
    print(("ok:   " if cond else "FAIL: ") + what)
    ok = ok and cond
check(job["error"] == 0, "jobs[0].error %d" % job["error"])
for d in ("read", "write"):
    r = job[d]
    check(r["total_ios"] > 0 and r["io_bytes"] > 0,
          "%s: %d I/Os, %d bytes" % (d, r["total_ios"], r["io_bytes"]))
    check(r["bw"] > 0, "%s bandwidth %d KiB/s" % (d, r["bw"]))
    check(r["short_ios"] == 0 and r["drop_ios"] == 0,
          "%s: %d short, %d dropped" % (d, r["short_ios"], r["drop_ios"]))
names = [u["name"] for u in j.get("disk_util", [])]
check(names == [sys.argv[2]], "disk_util %s" % names)
sys.exit(0 if ok else 1)
PY

# After the block: nothing of the session left.
grep -qx "sessions 0" "$gs/state-after.txt" || fail "an iSCSI session remains after the cleanup"
grep -q '^iscsi_disk ' "$gs/state-after.txt" && fail "an iSCSI disk remains after the cleanup"
grep -qx "nodes 0" "$gs/state-after.txt" || fail "a node record remains after the cleanup"
grep -q "^wwn_link wwn-0x$naa " "$gs/state-after.txt" && fail "wwn-0x$naa remains after the cleanup"
read -r t0 t1 <"$gs/page.time"
echo "the page's commands ran in the guest in $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s; all assertions held"
