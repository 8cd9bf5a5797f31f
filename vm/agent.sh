#!/bin/sh
# SPDX-License-Identifier: MIT
# agent.sh - the VM lab's guest agent: PID 1 of the guest after the initramfs
# switched into the overlay root (the host's root, read-only, under tmpfs).
#
# Reads the job the host wrote into the results share (/fl-results/job.env),
# loads the kernel modules, builds one of the paths to the LUNs under test:
#   iscsi  `faultlun serve` on 127.0.0.1 + iscsid / iscsi_tcp logged in to it
#   tcmu   LIO target_core_user + tcmu-runner with handler_faultlun.so, one
#          user backstore per scenario LUN, exported through tcm_loop
#   lio    LIO's own ramdisk backstore behind tcm_loop (plumbing check only)
# sets the scenario's kernel knobs, starts the observers (/dev/kmsg, uevents,
# sysfs, healthy-LUN probe), runs the workload (fl-vm-agent) and powers off.
# Every phase is written to the kernel log as "faultlun-agent: ..." so that it
# lands on the timeline with the kernel's own clock. The file "done" in the
# results share, written last, tells the host the run finished.
# The agent's own helpers (mount, mkdir, grep, ...) and its modprobe of named
# modules run as applets of the static /bin/busybox (the initramfs has it):
# under TCG each start of a dynamically linked program costs 0.1-0.3 s and a
# kmod modprobe up to 0.9 s (docs/bench-vm-lab.md). The programs it starts
# (iscsid, iscsiadm, tcmu-runner, faultlun) and the kernel's own module
# requests keep the system's tools.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
R=/fl-results
exec >"$R/agent.log" 2>&1
BB=/bin/busybox

# mount(8), as a busybox applet.
mount() { "$BB" mount "$@"; }
# mkdir(1), as a busybox applet.
mkdir() { "$BB" mkdir "$@"; }
# grep(1), as a busybox applet.
grep() { "$BB" grep "$@"; }
# sleep(1), as a busybox applet (fractions of a second allowed).
sleep() { "$BB" sleep "$@"; }
# ln(1), as a busybox applet.
ln() { "$BB" ln "$@"; }
# cat(1), as a busybox applet.
cat() { "$BB" cat "$@"; }
# tr(1), as a busybox applet.
tr() { "$BB" tr "$@"; }
# awk(1), as a busybox applet.
awk() { "$BB" awk "$@"; }
# modprobe(8) of a named module, as a busybox applet (reads modules.dep); a
# module built into the kernel (modules.builtin, any kernel the lab boots) is there.
modprobe() {
	"$BB" modprobe "$@" 2>/dev/null && return 0
	_re="/$(echo "$1" | "$BB" sed 's/[-_]/[-_]/g')\.ko\$"
	"$BB" grep -q "$_re" "/lib/modules/$(uname -r)/modules.builtin" 2>/dev/null
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mkdir -p /var/run /var/lock /var/log /var/lib/iscsi /etc/target /etc/iscsi /run/lock/iscsi
mount -t tmpfs tmpfs /var/lib/iscsi
mount -t tmpfs tmpfs /var/log

. "$R/job.env"

# Writes a marker to the kernel log (and the agent log).
mark() {
	echo "faultlun-agent: $*" >/dev/kmsg
	read -r _up _ </proc/uptime
	echo "[$_up] $*"
}

# Ends the run: result marker, flush, power off at once.
finish() {
	mark "finish: $1"
	[ -n "${kmsg_pid:-}" ] && kill "$kmsg_pid" 2>/dev/null
	[ -n "${uevent_pid:-}" ] && kill "$uevent_pid" 2>/dev/null
	: >/tmp/mp-stop
	: >/tmp/dh-stop
	[ -n "${mpwatch_pid:-}" ] && kill "$mpwatch_pid" 2>/dev/null
	[ -f /etc/multipath.conf ] && cp /etc/multipath.conf "$R/multipath.conf"
	echo "$1" >"$R/done"
	sync
	echo o >/proc/sysrq-trigger
	sleep 30
}

# Stops with a setup failure, leaving what may explain it in diag.txt.
fail() {
	mark "setup failed: $*"
	{
		echo "== scsi devices"; ls -l /sys/class/scsi_device/ /sys/class/scsi_disk/ 2>&1
		echo "== iscsi sessions"; cat /sys/class/iscsi_session/*/state 2>&1
		echo "== processes"; ps -eo pid,stat,wchan:30,args 2>&1
		for p in /proc/[0-9]*; do
			grep -q D "$p/stat" 2>/dev/null || continue
			echo "== stack of $(cat "$p/comm")"; cat "$p/stack" 2>&1
		done
	} >"$R/diag.txt" 2>&1
	finish "setup-failed: $*"
}

# Writes a value to a file, logging failures (a knob the kernel refuses).
put() {
	if ! printf '%s' "$2" >"$1" 2>/dev/null; then
		mark "could not write '$2' to $1"
		return 1
	fi
}

"$BB" cat /dev/kmsg >"$R/kmsg.txt" &
kmsg_pid=$!
mark "agent up, path $FL_PATH"
mkdir -p /lib/modules
mount --bind "$FL_GUEST/lib/modules" /lib/modules || fail "cannot bind the module tree"
ip link set lo up || fail "cannot bring up lo"
echo "faultlun-vm" >/proc/sys/kernel/hostname

"$FL_UEVENT" >"$R/uevents.jsonl" 2>>"$R/agent.log" &
uevent_pid=$!

mark "loading modules"
# LIO (configfs, target_core_mod) only where a path uses it: not for iscsi.
mods="sd_mod sg"
[ "$FL_PATH" = iscsi ] || mods="$mods configfs target_core_mod"
for m in $mods; do
	modprobe "$m" || fail "modprobe $m"
done
if [ "$FL_PATH" != iscsi ]; then
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
fi
CFS=/sys/kernel/config/target
WWN_LOOP=naa.5001405f1a000001
WWN_INIT=naa.5001405f1a000002

# Exports backstore directories ($@) as LUNs 0.. of one tcm_loop SCSI host.
export_tcm_loop() {
	modprobe tcm_loop || fail "modprobe tcm_loop"
	tpg=$CFS/loopback/$WWN_LOOP/tpgt_1
	mkdir -p "$tpg" || fail "tcm_loop tpg"
	# The I_T nexus first: LUNs added before it are scanned and not found.
	put "$tpg/nexus" "$WWN_INIT" || fail "tcm_loop nexus"
	for pair in "$@"; do
		lun=${pair%%=*}
		mkdir -p "$tpg/lun/lun_$lun" || fail "tcm_loop lun $lun"
		ln -s "${pair#*=}" "$tpg/lun/lun_$lun/" || fail "tcm_loop link lun $lun"
	done
}

# Path "lio": LIO ramdisk backstores behind tcm_loop (no project code).
setup_lio() {
	modprobe target_core_mod
	pairs=""
	for l in $FL_LUNS; do
		lun=${l%%:*}
		size=${l#*:}
		bs=${size#*:}
		size=${size%%:*}
		bs=${bs%%:*}
		d=$CFS/core/rd_mcp_0/lun$lun
		mkdir -p "$d" || fail "rd_mcp backstore"
		put "$d/control" "rd_pages=$((size / 4096))" || fail "rd_mcp control"
		put "$d/attrib/block_size" "$bs"
		put "$d/enable" 1 || fail "rd_mcp enable"
		pairs="$pairs $lun=$d"
	done
	# shellcheck disable=SC2086
	export_tcm_loop $pairs
}

# Path "tcmu": tcmu-runner + handler_faultlun.so, one user backstore per LUN.
setup_tcmu() {
	# One tcmu-runner for the boot: a batch's later jobs reuse it (on 7.2 a
	# tcmu-runner started after an earlier one was stopped had the first
	# backstore's enable refused now and then). A job's log is what it added.
	tcmu_log_at=$("$BB" wc -c </var/log/tcmu-runner.log 2>/dev/null || echo 0)
	if [ -z "${tcmu_pid:-}" ]; then
		modprobe target_core_user || fail "modprobe target_core_user"
		mkdir -p /etc/tcmu
		printf 'log_level = 3\nlog_dir_path = "/var/log"\n' >/etc/tcmu/tcmu.conf
		tcmu-runner --handler-path "$FL_HANDLER_DIR" >"$R/tcmu-runner.out" 2>&1 &
		tcmu_pid=$!
		i=0
		while ! grep -q "Handler faultlun is registered" /var/log/tcmu-runner.log 2>/dev/null; do
			i=$((i + 1))
			[ $i -gt 100 ] && fail "tcmu-runner did not register handler faultlun"
			kill -0 "$tcmu_pid" 2>/dev/null || fail "tcmu-runner exited"
			sleep 0.1
		done
		tcmu_log_at=0
		mark "tcmu-runner ready (pid $tcmu_pid)"
	fi
	kill -0 "$tcmu_pid" 2>/dev/null || fail "tcmu-runner exited"
	pairs=""
	for l in $FL_LUNS; do
		lun=${l%%:*}
		size=${l#*:}
		size=${size%%:*}
		d=$CFS/core/user_0/fl$lun
		mkdir -p "$d" || fail "user backstore"
		cfg="faultlun/scenario=${FL_SERVE_SCENARIO:-$FL_SCENARIO};lun=$lun;trace=$R/trace-lun$lun.jsonl"
		cfg="$cfg;ctl=/run/faultlun-lun$lun.sock"
		put "$d/control" "dev_size=$size,dev_config=$cfg" || fail "user backstore control"
		[ -n "${FL_KNOB_cmd_time_out_s:-}" ] && put "$d/attrib/cmd_time_out" "$FL_KNOB_cmd_time_out_s"
		mark "engine start lun $lun"
		put "$d/enable" 1 || fail "user backstore enable (see tcmu-runner.log)"
		pairs="$pairs $lun=$d"
	done
	# shellcheck disable=SC2086
	export_tcm_loop $pairs
}

# The iSCSI knobs of the job as node defaults: /etc/iscsi/iscsid.conf as the
# boot found it, then one line per knob set (the last setting of a key wins),
# before the discovery that writes the node records from it. One file, where
# an `iscsiadm -o update` per knob cost 0.2-0.5 s each under TCG.
iscsi_conf() {
	[ -e /tmp/iscsid.conf.boot ] ||
		"$BB" cp /etc/iscsi/iscsid.conf /tmp/iscsid.conf.boot 2>/dev/null ||
		: >/tmp/iscsid.conf.boot
	"$BB" cp /tmp/iscsid.conf.boot /etc/iscsi/iscsid.conf || fail "cannot write iscsid.conf"
	{
		[ -n "${FL_KNOB_abort_tmo_s:-}" ] &&
			echo "node.session.err_timeo.abort_timeout = $FL_KNOB_abort_tmo_s"
		[ -n "${FL_KNOB_lu_reset_tmo_s:-}" ] &&
			echo "node.session.err_timeo.lu_reset_timeout = $FL_KNOB_lu_reset_tmo_s"
		[ -n "${FL_KNOB_tgt_reset_tmo_s:-}" ] &&
			echo "node.session.err_timeo.tgt_reset_timeout = $FL_KNOB_tgt_reset_tmo_s"
		[ -n "${FL_KNOB_recovery_tmo_s:-}" ] &&
			echo "node.session.timeo.replacement_timeout = $FL_KNOB_recovery_tmo_s"
		[ -n "${FL_KNOB_noop_interval_s:-}" ] &&
			echo "node.conn[0].timeo.noop_out_interval = $FL_KNOB_noop_interval_s"
		[ -n "${FL_KNOB_noop_timeout_s:-}" ] &&
			echo "node.conn[0].timeo.noop_out_timeout = $FL_KNOB_noop_timeout_s"
		:
	} >>/etc/iscsi/iscsid.conf
}

# Path "iscsi": faultlun serve in the guest, the kernel initiator logged in.
setup_iscsi() {
	modprobe iscsi_tcp || fail "modprobe iscsi_tcp"
	mark "engine start"
	"$FL_FAULTLUN" serve $FL_SERVE_ARGS >"$R/serve.out" 2>&1 &
	serve_pid=$!
	# serve's banner, printed once it listens on every port, ends with the
	# libiscsi URL line; it names each port as bound (a scenario's
	# "127.0.0.2:0" is the port the kernel chose: "port B: 127.0.0.2:36495,
	# ..."). Read with the shell's own read: no process per look.
	nports=0
	for p in $FL_PORTS; do
		nports=$((nports + 1))
	done
	i=0
	while :; do
		bound="" up=0
		while IFS= read -r l; do
			case $l in
			"faultlun serve:   port "*": "*)
				x=${l#"faultlun serve:   port "}
				a=${x#*: }
				bound="$bound${x%%: *}=${a%%,*} "
				;;
			"  libiscsi: iscsi://"*) up=1 ;;
			esac
		done <"$R/serve.out"
		[ "$up" = 1 ] && break
		i=$((i + 1))
		[ $i -gt 150 ] && fail "faultlun serve did not print its banner (see serve.out)"
		kill -0 "$serve_pid" 2>/dev/null || fail "faultlun serve exited (see serve.out)"
		sleep 0.1
	done
	mark "faultlun serve listening (pid $serve_pid)"
	if [ "$nports" -gt 1 ]; then
		FL_PORTS=$bound
		mark "ports $FL_PORTS"
	fi
	echo "InitiatorName=iqn.2026-12.org.faultlun:vm-initiator" >/etc/iscsi/initiatorname.iscsi
	# One iscsid for the boot (a batch's later jobs reuse it).
	if [ -z "${iscsid_up:-}" ]; then
		iscsid || fail "iscsid"
		iscsid_up=1
		sleep 0.3
	fi
	iscsi_conf
	iscsiadm -m discovery -t sendtargets -p 127.0.0.1:3260 >"$R/discovery.out" 2>&1 ||
		fail "iscsiadm discovery"
	iqn=$(awk '$1 ~ /,[0-9]+$/ {print $2; exit}' "$R/discovery.out")
	mark "discovered $iqn"
	# One portal, or with multipath every portal the target lists (one path each).
	portal="-p 127.0.0.1:3260"
	[ "$MP" = 1 ] && portal=""
	[ -n "${FL_KNOB_debug_libiscsi_eh:-}" ] && put /sys/module/libiscsi/parameters/debug_libiscsi_eh "$FL_KNOB_debug_libiscsi_eh"
	# shellcheck disable=SC2086
	iscsiadm -m node -T "$iqn" $portal --login >"$R/login.out" 2>&1 || fail "iscsiadm login"
	mark "logged in"
	# iscsid scans the new host itself; scan again in case it has not yet.
	iscsiadm -m session --rescan >>"$R/login.out" 2>&1
}


# Writes /etc/multipath.conf from the knobs (docs/vm-lab.md "dm-multipath").
mp_conf() {
	mkdir -p /etc/multipath
	cat >/etc/multipath.conf <<EOF
defaults {
	user_friendly_names yes
	retrigger_tries 0
	find_multipaths off
	polling_interval ${FL_KNOB_polling_interval_s:-5}
	max_polling_interval ${FL_KNOB_polling_interval_s:-5}
	path_checker ${FL_KNOB_path_checker:-tur}
	path_grouping_policy group_by_prio
	prio alua
	failback immediate
	no_path_retry ${FL_KNOB_no_path_retry:-fail}
	fast_io_fail_tmo ${FL_KNOB_recovery_tmo_s:-5}
}
EOF
}

# Loads device-mapper multipath and the device handlers (before the login, so
# that scsi_dh_alua, or the handler of an array scsi_dh.c names, attaches at
# scan), writes the configuration and starts
# udevd (multipathd finds its paths through udev's database).
mp_prepare() {
	mp_conf
	# Once per boot (a batch's later jobs find it done): the modules, and
	# udevd's rules reduced to device-mapper's own (its /dev/mapper nodes and
	# the cookie libdevmapper waits for): every other rule would run programs
	# for each disk, seconds under TCG; multipathd reads the WWID from sysfs.
	if [ ! -e /tmp/mp-prepared ]; then
		for m in dm_mod dm_multipath scsi_dh_alua scsi_dh_emc scsi_dh_rdac scsi_dh_hp_sw; do
			modprobe "$m" || fail "modprobe $m"
		done
		mkdir -p /etc/udev/rules.d
		for r in /lib/udev/rules.d/*.rules; do
			case "${r##*/}" in
			55-dm.rules | 95-dm-notify.rules) ;;
			*) "$BB" ln -sf /dev/null "/etc/udev/rules.d/${r##*/}" ;;
			esac
		done
		: >/tmp/mp-prepared
	fi
	/lib/systemd/systemd-udevd --daemon >"$R/udevd.out" 2>&1 || fail "systemd-udevd"
	mark "udevd started"
}

# Device-handler observer: for each disk with a device handler attached, the
# handler and what it says of the path, on the timeline: "dh sdX HANDLER
# ACCESS_STATE max_sectors_kb N" at each change (docs/device-handlers/), every
# 0.5 s until /tmp/dh-stop exists, and once more then (at most 10 minutes). A disk whose handler
# is "detached" is not logged, so a job without device handlers has no such
# line. It first logs "dh-observer on": a run without that mark was made
# before the observer existed, and the checker judges dh_state N/A there.
# The loop runs in busybox's shell, whose read waits with a timeout: no
# process per sample (a fork and exec costs tens of milliseconds of emulated
# CPU), and dh_wake ends the wait at once.
dh_watch() {
	mark "dh-observer on"
	[ -p /tmp/dh-wake ] || "$BB" mkfifo /tmp/dh-wake
	# shellcheck disable=SC2016
	"$BB" sh -c '
	exec 3<>/tmp/dh-wake
	i=0
	while [ $i -lt 1200 ]; do
		for q in /sys/block/sd*/device/dh_state; do
			[ -e "$q" ] || continue
			read -r h <"$q" || continue
			[ "$h" = detached ] && continue
			d=${q#/sys/block/}
			d=${d%%/*}
			a=-
			[ -e "/sys/block/$d/device/access_state" ] &&
				{ read -r a <"/sys/block/$d/device/access_state" || a=-; }
			m=""
			read -r m <"/sys/block/$d/queue/max_sectors_kb"
			v="$h $a max_sectors_kb $m"
			was=""
			[ -e "/tmp/dh-$d" ] && read -r was <"/tmp/dh-$d"
			[ "$was" = "$v" ] && continue
			echo "$v" >"/tmp/dh-$d"
			echo "faultlun-agent: dh $d $v" >/dev/kmsg
			read -r up _ </proc/uptime
			echo "[$up] dh $d $v"
		done
		[ -e /tmp/dh-stop ] && break
		i=$((i + 1))
		read -r -t 0.5 -u 3 _
	done'
}

# Ends dh_watch's wait (the FIFO opened for reading and writing: no wait for
# a reader that has gone).
dh_wake() {
	[ -p /tmp/dh-wake ] || return 0
	exec 4<>/tmp/dh-wake
	echo >&4
	exec 4>&-
}

# The LUN number of multipath map $1 (a /sys/block/dm-N folder): that of its
# paths' SCSI devices (H:C:T:L), or nothing while it has none.
mp_map_lun() {
	for x in "$1"/slaves/*; do
		[ -e "$x/device" ] || continue
		a=$(readlink -f "$x/device")
		echo "${a##*:}"
		return
	done
}

# Starts multipathd once every path has its disk; waits for the map of each
# scenario LUN with all its paths; writes LUN=/dev/mapper/MAP lines to
# /tmp/disks and sets map (map_dm) to the name (folder) of the LUN under
# test's.
mp_start() {
	udevadm settle -t 30 || mark "udevadm settle timed out"
	multipathd -d -s -v2 >"$R/multipathd.log" 2>&1 &
	mpd_pid=$!
	mark "multipathd started (pid $mpd_pid)"
	want=$(grep -c . "$R/discovery.out")
	# The map from sysfs (a dm device whose uuid is multipathd's, with every
	# path under it), not from multipathd's client, which waits while
	# multipathd checks its new paths (seconds under TCG).
	i=0
	while :; do
		: >/tmp/disks.mp
		map=""
		for d in /sys/block/dm-*; do
			[ -e "$d/dm/uuid" ] || continue
			case "$(cat "$d/dm/uuid")" in mpath-*) ;; *) continue ;; esac
			n=0
			for x in "$d"/slaves/*; do
				[ -e "$x" ] && n=$((n + 1))
			done
			[ "$n" -ge "$want" ] || continue
			name=$(cat "$d/dm/name")
			[ -e "/dev/mapper/$name" ] || continue
			lun=$(mp_map_lun "$d")
			[ -n "$lun" ] || continue
			echo "$lun=/dev/mapper/$name" >>/tmp/disks.mp
			[ "$lun" = "$FL_TEST_LUN" ] && { map=$name map_dm=$d; }
		done
		n=0
		for l in $FL_LUNS; do
			grep -q "^${l%%:*}=" /tmp/disks.mp && n=$((n + 1))
		done
		[ -n "$map" ] && [ "$n" = "$(echo $FL_LUNS | wc -w)" ] && break
		i=$((i + 1))
		[ $i -gt 80 ] && fail "no multipath map with $want paths for every LUN (see multipathd.log)"
		kill -0 "$mpd_pid" 2>/dev/null || fail "multipathd exited (see multipathd.log)"
		sleep 0.1
	done
	sort -n /tmp/disks.mp >/tmp/disks
}

# The hung-task detector (knob hung_task_timeout_s): a task in D state for
# longer is reported ("INFO: task NAME:PID blocked for more than N seconds"),
# as often as the kernel checks (every N seconds by default), every time (not
# only the first ten); the kernel's values are put back after the job.
HT=/proc/sys/kernel
hung_task_set() {
	ht_saved=
	[ -n "${FL_KNOB_hung_task_timeout_s:-}" ] || return 0
	if [ ! -w "$HT/hung_task_timeout_secs" ]; then
		mark "no hung-task detector in this kernel: knob hung_task_timeout_s ignored"
		return 0
	fi
	ht_saved="$("$BB" cat "$HT/hung_task_timeout_secs") $("$BB" cat "$HT/hung_task_warnings")"
	put "$HT/hung_task_warnings" -1
	put "$HT/hung_task_timeout_secs" "$FL_KNOB_hung_task_timeout_s" &&
		mark "hung_task_timeout_secs $FL_KNOB_hung_task_timeout_s"
}
hung_task_restore() {
	[ -n "${ht_saved:-}" ] || return 0
	# shellcheck disable=SC2086
	set -- $ht_saved
	put "$HT/hung_task_timeout_secs" "$1"
	put "$HT/hung_task_warnings" "$2"
	ht_saved=
}

# "arm": "workload": the target has served the scenario without its faults
# through the login, the scan and the knobs; now every engine (one socket for
# iSCSI, one per LUN for TCMU) loads it whole, and its clock starts.
arm_scenario() {
	armed=0
	for sock in /run/faultlun.sock /run/faultlun-lun*.sock; do
		[ -S "$sock" ] || continue
		"$FL_FAULTLUN" ctl "$sock" load "$FL_SCENARIO" >>"$R/arm.out" 2>&1 ||
			fail "arm: faultlun ctl $sock load (see arm.out)"
		armed=$((armed + 1))
	done
	[ "$armed" -gt 0 ] || fail "arm: no control socket to load the scenario through"
	mark "armed ($armed engines)"
}

# Path observer: fl-vm-mpwatch (vm/agent/mpwatch.c) marks "path PORT DEV
# DM_STATE CHECKER_STATE PRIO GROUP" at each change of a path, "pathdev PORT
# DEV MAJ:MIN" at a path's first sight and "dm MAP STATUS" at each change of
# the map's status, from the map's status every 0.1 s and multipathd's view
# every 0.2 s, until /tmp/mp-stop exists; then /tmp/mp-watch-done. A program,
# not a shell loop: dmsetup and the multipathd client, started ten times a
# second under TCG, kept more than a core busy.
# One job: builds the path to the scenario's LUNs, finds their disks, sets the
# knobs, starts the observers and runs the workload; job_rc gets fl-vm-agent's
# status. Outputs go to $R (the job's folder of the results share).
run_job() {
	# With the multipath knob (iSCSI only): dm-multipath over one path per portal.
	MP=0
	[ "$FL_PATH" = iscsi ] && [ "${FL_KNOB_multipath:-0}" = 1 ] && MP=1
	[ -n "${FL_KNOB_scsi_logging_level:-}" ] &&
		put /proc/sys/dev/scsi/logging_level "$FL_KNOB_scsi_logging_level"
	hung_task_set
	[ "$MP" = 1 ] && mp_prepare
	# Before the login, so that a handler attached at scan is seen.
	dh_watch &
	dhwatch_pid=$!
	case "$FL_PATH" in
	lio) setup_lio ;;
	tcmu)
		setup_tcmu
		FL_CTL=/run/faultlun-lun$FL_TEST_LUN.sock
		;;
	iscsi) setup_iscsi ;;
	*) fail "unknown path $FL_PATH" ;;
	esac

	# Waits for the disk of each scenario LUN; prints LUN=/dev/sdX lines.
	find_disks() {
		for l in $FL_LUNS; do
			lun=${l%%:*}
			i=0
			dev=""
			while [ -z "$dev" ]; do
				for b in /sys/class/scsi_disk/*:*:*:"$lun"/device/block/*; do
					[ -e "$b" ] && dev=${b##*/}
				done
				[ -n "$dev" ] && break
				i=$((i + 1))
				[ $i -gt 150 ] && fail "no disk for LUN $lun"
				sleep 0.1
			done
			echo "$lun=/dev/$dev"
		done
	}
	find_disks >/tmp/disks || exit 1
	grep -q . /tmp/disks || fail "no disks"
	if [ "$MP" = 1 ]; then
		# Every path's disk of the LUNs: each LUN's map stands for it.
		want=$(grep -c . "$R/discovery.out")
		for l in $FL_LUNS; do
			lun=${l%%:*}
			i=0
			while :; do
				n=0
				for d in /sys/class/scsi_disk/*:*:*:"$lun"; do
					[ -e "$d" ] && n=$((n + 1))
				done
				[ "$n" -ge "$want" ] && break
				i=$((i + 1))
				[ $i -gt 150 ] && fail "LUN $lun has not $want paths"
				sleep 0.1
			done
		done
		mp_start
		multipathd show topology >"$R/multipath-topology.txt" 2>&1
		mark "multipath map $map: $(ls "$map_dm/slaves" | tr '\n' ' ')"
		for b in /sys/class/scsi_disk/*:*:*:*/device/block/*; do
			echo "${b##*/}"
		done >/tmp/mp-paths
		"${FL_AGENT%/*}/fl-vm-mpwatch" --ports "$FL_PORTS" &
		mpwatch_pid=$!
	fi
	cat /tmp/disks >"$R/disks.txt"
	mark "disks: $(tr '\n' ' ' </tmp/disks)"

	devargs=""
	watch=""
	test_dev=""
	healthy_dev=""
	while IFS== read -r lun dev; do
		name=${dev#/dev/}
		sd=/sys/block/$name/device
		devargs="$devargs --dev $lun=$dev"
		if [ "$MP" = 0 ]; then
			[ -n "${FL_KNOB_timeout_s:-}" ] && put "$sd/timeout" "$FL_KNOB_timeout_s"
			[ -n "${FL_KNOB_eh_timeout_s:-}" ] && put "$sd/eh_timeout" "$FL_KNOB_eh_timeout_s"
			[ -n "${FL_KNOB_queue_depth:-}" ] && put "$sd/queue_depth" "$FL_KNOB_queue_depth"
			for f in state iorequest_cnt iodone_cnt ioerr_cnt iotmo_cnt; do
				watch="$watch --watch lun$lun.$f=$sd/$f"
			done
		fi
		[ "$lun" = "$FL_TEST_LUN" ] && test_dev=$dev
		[ "$lun" = "${FL_HEALTHY_LUN:-none}" ] && healthy_dev=$dev
	done </tmp/disks
	# The paths under a multipath map: the knobs on each, their states watched.
	[ "$MP" = 1 ] && while read -r name; do
		sd=/sys/block/$name/device
		[ -n "${FL_KNOB_timeout_s:-}" ] && put "$sd/timeout" "$FL_KNOB_timeout_s"
		[ -n "${FL_KNOB_eh_timeout_s:-}" ] && put "$sd/eh_timeout" "$FL_KNOB_eh_timeout_s"
		[ -n "${FL_KNOB_queue_depth:-}" ] && put "$sd/queue_depth" "$FL_KNOB_queue_depth"
		for f in state iorequest_cnt iodone_cnt ioerr_cnt iotmo_cnt; do
			watch="$watch --watch $name.$f=$sd/$f"
		done
	done </tmp/mp-paths
	for s in /sys/class/iscsi_session/session*; do
		[ -e "$s/state" ] && watch="$watch --watch ${s##*/}.state=$s/state"
	done
	for c in /sys/class/iscsi_connection/connection*; do
		[ -e "$c/state" ] && watch="$watch --watch ${c##*/}.state=$c/state"
	done
	[ -n "$test_dev" ] || fail "no disk for the LUN under test ($FL_TEST_LUN)"
	# The LUN under test comes first: steps without "lun" (or naming a LUN without
	# a disk) use it.
	devargs="--dev $FL_TEST_LUN=$test_dev $devargs"
	{
		echo "{"
		echo "\"test_dev\": \"$test_dev\", \"healthy_dev\": \"$healthy_dev\","
		printf '"knobs": {'
		sep=""
		knob_dev=${test_dev#/dev/}
		[ "$MP" = 1 ] && read -r knob_dev </tmp/mp-paths
		# The shell's read, not $(cat): no process per value.
		for f in timeout eh_timeout queue_depth; do
			v=""
			read -r v <"/sys/block/$knob_dev/device/$f" 2>/dev/null
			printf '%s"%s": "%s"' "$sep" "$f" "$v"
			sep=", "
		done
		for s in /sys/class/iscsi_session/session*; do
			for f in recovery_tmo abort_tmo lu_reset_tmo tgt_reset_tmo; do
				[ -e "$s/$f" ] && read -r v <"$s/$f" && printf '%s"%s": "%s"' "$sep" "$f" "$v"
			done
		done
		v=""
		read -r v </proc/sys/dev/scsi/logging_level
		printf '%s"scsi_logging_level": "%s"' "$sep" "$v"
		read -r v </proc/sys/kernel/osrelease
		echo "}, \"kernel\": \"$v\"}"
	} >"$R/guest.json"

	[ "${FL_ARM:-}" = 1 ] && arm_scenario
	mark "workload start"
	# shellcheck disable=SC2086
	"$FL_AGENT" --scenario "$FL_SCENARIO" --path "$FL_PATH" --out "$R" $devargs \
		${healthy_dev:+--healthy "$healthy_dev"} $watch ${FL_CTL:+--ctl "$FL_CTL"} \
		--faultlun "$FL_FAULTLUN" 2>>"$R/agent.log"
	rc=$?
	mark "workload end (rc $rc)"
	if [ -n "${mpwatch_pid:-}" ]; then
		# The path observer's last sample, then the map's final topology.
		: >/tmp/mp-stop
		i=0
		while [ ! -e /tmp/mp-watch-done ] && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		mpwatch_pid=""
		multipathd show topology >"$R/multipath-topology-end.txt" 2>&1
	fi
	# The observer has sampled during fl-vm-agent's last second: stopped now,
	# not at the end of its half-second wait.
	: >/tmp/dh-stop
	dh_wake
	wait "$dhwatch_pid"
	dhwatch_pid=""
	[ -f /var/log/tcmu-runner.log ] &&
		"$BB" tail -c +$((${tcmu_log_at:-0} + 1)) /var/log/tcmu-runner.log >"$R/tcmu-runner.log"
	job_rc=$rc
}

# Stops a process the agent started: TERM, then KILL after 5 s.
stop_pid() {
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null || return 0
	_i=0
	while kill -0 "$1" 2>/dev/null && [ $_i -lt 50 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# Undoes a job's path so that the next job of a batch starts from a kernel
# without its devices: the multipath maps and multipathd; the iSCSI sessions,
# node records and faultlun serve; the tcm_loop host and the LIO backstores
# (tcmu-runner, like iscsid, stays for the boot); the kernel-wide knobs put
# back.
teardown_job() {
	if [ "$MP" = 1 ]; then
		stop_pid "${mpd_pid:-}"
		for m in $(dmsetup ls --target multipath 2>/dev/null | awk '{print $1}'); do
			dmsetup message "$m" 0 fail_if_no_path >/dev/null 2>&1
			"$BB" timeout 20 dmsetup remove "$m" >/dev/null 2>&1 || mark "could not remove map $m"
		done
		udevadm control --exit >/dev/null 2>&1
		"$BB" rm -f /tmp/mp-stop /tmp/mp-watch-done /tmp/mp-paths /tmp/mp-dev-*
	fi
	"$BB" rm -f /tmp/dh-*
	case "$FL_PATH" in
	iscsi)
		"$BB" timeout 30 iscsiadm -m node -u >/dev/null 2>&1 || mark "iscsiadm logout failed"
		# The node and discovery records: files of the agent's own tmpfs
		# (/var/lib/iscsi), no daemon holds them once the sessions are gone.
		"$BB" rm -rf /var/lib/iscsi/nodes /var/lib/iscsi/send_targets
		stop_pid "${serve_pid:-}"
		serve_pid=""
		;;
	tcmu | lio)
		tpg=$CFS/loopback/$WWN_LOOP/tpgt_1
		for l in "$tpg"/lun/lun_*; do
			[ -d "$l" ] || continue
			for x in "$l"/*; do
				[ -L "$x" ] && "$BB" rm -f "$x"
			done
			"$BB" rmdir "$l" || mark "could not remove $l"
		done
		if [ -d "$tpg" ]; then
			put "$tpg/nexus" NULL
			"$BB" rmdir "$tpg" || mark "could not remove $tpg"
		fi
		[ -d "$CFS/loopback/$WWN_LOOP" ] && "$BB" rmdir "$CFS/loopback/$WWN_LOOP"
		for d in "$CFS"/core/user_0/fl* "$CFS"/core/rd_mcp_0/lun*; do
			[ -d "$d" ] && { "$BB" rmdir "$d" || mark "could not remove $d"; }
		done
		for h in "$CFS"/core/user_0 "$CFS"/core/rd_mcp_0; do
			[ -d "$h" ] && "$BB" rmdir "$h"
		done
		;;
	esac
	"$BB" rm -f /run/faultlun*.sock
	[ -n "${FL_KNOB_scsi_logging_level:-}" ] && put /proc/sys/dev/scsi/logging_level 0
	hung_task_restore
	[ -n "${FL_KNOB_debug_libiscsi_eh:-}" ] &&
		put /sys/module/libiscsi/parameters/debug_libiscsi_eh 0
	return 0
}

# Is the kernel back to no SCSI disk, iSCSI session, dm device or LIO object
# of a job? Waits up to 15 s for devices still being removed; names what is
# left otherwise.
clean_state() {
	_i=0
	while :; do
		left=""
		for x in /sys/class/scsi_disk/* /sys/class/iscsi_session/* /sys/block/dm-* \
			"$CFS"/loopback/naa.* "$CFS"/core/user_* "$CFS"/core/rd_mcp_*; do
			[ -e "$x" ] && left="$left $x"
		done
		[ -z "$left" ] && return 0
		_i=$((_i + 1))
		if [ $_i -gt 150 ]; then
			mark "the job left:$left"
			return 1
		fi
		sleep 0.1
	done
}

if [ -z "${FL_BATCH:-}" ]; then
	run_job
	finish "ok $job_rc"
fi

# A batch: jobs 0 to FL_BATCH-1 in one boot, each from its own folder of the
# results share (job.env, scenario.json; its outputs beside them), each on a
# fresh path (a new target, new sessions or a new tcm_loop host) torn down
# after it; its kernel log is the boot's followed by its own lines only. A job
# whose teardown leaves devices behind ends the batch: the host boots again for
# the jobs left.
stop_pid "$uevent_pid"
uevent_pid=""
k=0
while [ "$k" -lt "$FL_BATCH" ]; do
	R=/fl-results/job$k
	for v in $(set | "$BB" sed -n 's/^\(FL_KNOB_[A-Za-z0-9_]*\)=.*/\1/p'); do
		unset "$v"
	done
	unset FL_CTL FL_HEALTHY_LUN FL_PORTS FL_ARM FL_SERVE_SCENARIO
	. "$R/job.env"
	exec >>"$R/agent.log" 2>&1
	"$BB" cat /dev/kmsg | awk -v b="faultlun-agent: job $k begin" -v e="faultlun-agent: job $k over" '
		/faultlun-agent: job [0-9]+ begin/ { seen = 1; on = index($0, b) > 0 }
		!seen || on { print; fflush() }
		on && index($0, e) { on = 0 }' >"$R/kmsg.txt" &
	jk_pid=$!
	"$FL_UEVENT" >"$R/uevents.jsonl" 2>>"$R/agent.log" &
	ju_pid=$!
	mark "job $k begin: $FL_SCENARIO"
	run_job
	mark "job $k over (rc $job_rc)"
	_i=0
	while ! grep -q "faultlun-agent: job $k over" "$R/kmsg.txt" && [ $_i -lt 50 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	# Not waited for: the shell's wait would wait for the whole pipeline, and
	# its cat ends only at the next kernel record (SIGPIPE).
	kill "$jk_pid" 2>/dev/null
	stop_pid "$ju_pid"
	[ -f /etc/multipath.conf ] && cp /etc/multipath.conf "$R/multipath.conf"
	echo "ok $job_rc" >"$R/done"
	sync
	teardown_job
	clean_state || break
	k=$((k + 1))
done
R=/fl-results
finish "batch: $k of $FL_BATCH jobs"
