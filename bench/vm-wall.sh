#!/bin/sh
# SPDX-License-Identifier: MIT
# vm-wall.sh - the VM lab's wall time from command to verdict, and where it goes.
# Runs `faultlun vm SCENARIO --path PATH` ROUNDS times for each scenario (one
# guest at a time), and splits each run's wall time into phases, from three
# clocks put side by side:
#   - the host: this script's own timestamps (command start and end), the birth
#     of RUN_DIR/qemu.log (written by faultlun right after it forks QEMU), every
#     line of the guest's serial console as it arrives (tail -F, stamped), and
#     the mtime of result.json; result.json's wall.guest_assembly_s and qemu_s;
#   - the guest's kernel clock: the records of RUN_DIR/guest/kmsg.txt (kernel
#     lines and the agent's "faultlun-agent: ..." markers);
#   - the link between the two: console lines that carry a kernel timestamp
#     ("[   32.035720] sysrq: Power Off"); host time minus kernel time, at its
#     smallest, is the host time of the guest's clock zero. The spread of that
#     difference over the run is printed (clock drift plus console latency).
# Phases, which add up to the wall time:
#   prep          command start -> QEMU forked (scenario load, vm/mkguest.sh
#                 with its cached guest = "mkguest", KVM/TCG choice, job files)
#   qemu+fw       QEMU forked -> the kernel's setup code prints "Probing EDD"
#                 (QEMU start, qboot firmware, kernel and initrd over fw_cfg)
#   decompress    "Probing EDD" -> kernel clock zero (xz decompression of the
#                 kernel, then its early init until its clock starts; a kernel
#                 booted without the setup code prints no "Probing EDD", and
#                 this phase then starts when QEMU does)
#   kernel boot   kernel clock zero -> "Run /init as init process"
#   initramfs     /init -> agent up (virtio + 9p + overlay modules, the 9p host
#                 root, switch_root, the agent's first mounts, job.env)
#   agent setup   agent up -> "loading modules" (module tree bind, lo, uevents)
#   target start  "loading modules" -> target ready (module loads included):
#                 iscsi "faultlun serve listening", tcmu / lio the tcm_loop
#                 SCSI host appearing
#   login/LUNs    target ready -> "disks:" (iscsi: discovery, login, scan;
#                 tcm_loop: LUN links and scan)
#   pre-workload  "disks:" -> "workload start" (knobs, guest.json)
#   steps         "workload start" -> "workload end" (the scenario's workload)
#   power-off     "workload end" -> QEMU exited (finish, sync, sysrq power-off)
#   check+report  QEMU exited -> command done (check, result.json, report.html)
# Prints the machine, one block per run, then a table per scenario: every run
# and the median of each phase. The machine may be shared: each run also says
# the load average at its start and for how much of it (sampled every second)
# another QEMU guest was running, competing for the same cores.
#   bench/vm-wall.sh [ROUNDS]                (default 3)
#   BUILD=DIR        build directory with cli/faultlun and vm/ (default build-benchvm)
#   VM_SCENARIOS="FILE:PATH ..."  default "tests/vm/plumbing-lio.json:lio
#                    tests/vm/end-of-disk.json:iscsi"
#   ACCEL=auto|kvm|tcg (default auto: what `faultlun vm` picks)
#   VM_ARGS="..."    more `faultlun vm` options (e.g. "--memory 512 --cache DIR")
#   KEEP=DIR         keep the run directories under DIR (default: removed)
# Exits 77 when qemu or the built faultlun (with the VM lab) is missing, 1 when
# a run does not reach a verdict (setup error, guest killed).
set -u
cd "$(dirname "$0")/.." || exit 1
rounds=${1:-3}
build=${BUILD:-build-benchvm}
fl=$build/cli/faultlun
scenarios=${VM_SCENARIOS:-tests/vm/plumbing-lio.json:lio tests/vm/end-of-disk.json:iscsi}
accel=${ACCEL:-auto}
vm_args=${VM_ARGS:-}

if [ ! -x "$fl" ] || [ ! -x "$build/vm/fl-vm-agent" ]; then
	echo "vm-wall: $fl or $build/vm/fl-vm-agent not built; build with" >&2
	echo "  cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build -j2" >&2
	exit 77
fi
if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	echo "vm-wall: qemu-system-x86_64 not found (scripts/deps.sh vm)" >&2
	exit 77
fi

if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP" || exit 1
	tmp=$(cd "$KEEP" && pwd)
else
	tmp=$(mktemp -d)
fi
mkdir -p "$tmp/ph"
flpid=""
tailpid=""
stamppid=""
samppid=""
# Ends what this script started (by pid) and removes the scratch directory.
# shellcheck disable=SC2317
cleanup() {
	for p in $flpid $tailpid $stamppid $samppid; do
		kill "$p" 2>/dev/null
	done
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
# shellcheck disable=SC2154
trap 'rc=$?; cleanup; exit $rc' EXIT
trap 'exit 1' INT TERM

# Host clock, seconds since the epoch with nanoseconds.
now() { date +%s.%N; }

# Birth time of file $1 (falls back to mtime where the filesystem has none).
birth() {
	_b=$(stat -c %.9W "$1" 2>/dev/null)
	case $_b in "" | 0 | 0.000000000 | -*) _b=$(stat -c %.9Y "$1" 2>/dev/null) ;; esac
	echo "${_b:-0}"
}

# Number of QEMU guests running on the machine (ours included while one runs).
guests() { ps -eo comm= | grep -c '^qemu-system'; }

# Every second until killed: 1 when a QEMU guest not started by pid $1 runs, else 0.
contention() {
	while :; do
		ps -eo ppid=,comm= | awk -v p="$1" '$2 ~ /^qemu-system/ && $1 != p { n++ }
			END { print (n > 0) }'
		sleep 1
	done
}

# Median of the numbers on stdin.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Value of key $1 ("a.b.c") in result.json $2, as a number (empty when absent).
jnum() {
	python3 -c 'import json, sys
v = json.load(open(sys.argv[2]))
for k in sys.argv[1].split("."):
	v = v.get(k) if isinstance(v, dict) else None
print("" if v is None else v)' "$1" "$2" 2>/dev/null
}

echo "== machine"
echo "cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
echo "cores: $(nproc) online; kernel: $(uname -r); memory: $(awk '/^MemTotal/ { printf "%.0f MiB", $2 / 1024; exit }' /proc/meminfo)"
echo "qemu: $(qemu-system-x86_64 --version | head -n1)"
cache=${FAULTLUN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/faultlun}
kvm="no /dev/kvm"
if [ -e /dev/kvm ]; then
	kvm="/dev/kvm present"
	[ -f "$cache/kvm-broken" ] && kvm="$kvm, lab's probe cached: does not boot a guest (TCG)"
	[ -f "$cache/kvm-ok" ] && kvm="$kvm, lab's probe cached: works (KVM)"
fi
echo "kvm: $kvm; --accel $accel"
echo "guest cache: $(ls -d "$cache"/guest-* 2>/dev/null | tr '\n' ' ')"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); QEMU guests running: $(guests)"
echo "build: $build; rounds: $rounds; scenarios: $scenarios; faultlun vm options: ${vm_args:-none}"

# Stamps each line of stdin with the host clock.
stamp() {
	while IFS= read -r _l; do
		printf '%s %s\n' "$(now)" "$_l"
	done
}

# Runs scenario $1 on path $2, round $3; writes the phases to $tmp/NAME-PATH.$3.
run_one() {
	_sc=$1
	_path=$2
	_n=$3
	_stem=$(basename "$_sc" .json)
	_out=$tmp/$_stem-$_path.r$_n
	_rd=$_out/$_stem-$_path
	mkdir -p "$_rd"
	mkfifo "$_out/console.fifo"
	stamp <"$_out/console.fifo" >"$_out/console.ts" &
	stamppid=$!
	tail -n +1 -s 0.05 -F "$_rd/console.log" >"$_out/console.fifo" 2>/dev/null &
	tailpid=$!
	_load=$(cut -d' ' -f1 /proc/loadavg)
	_others=$(guests)
	_t0=$(now)
	# shellcheck disable=SC2086
	"$fl" vm "$_sc" --path "$_path" --accel "$accel" --quiet --out "$_out" $vm_args \
		>"$_out/vm.out" 2>&1 &
	flpid=$!
	contention "$flpid" >"$_out/contention" &
	samppid=$!
	wait "$flpid"
	_rc=$?
	_t9=$(now)
	flpid=""
	kill "$samppid" 2>/dev/null
	wait "$samppid" 2>/dev/null
	samppid=""
	_cont=$(awk '{ n++; s += $1 } END { printf "%.0f", n ? 100 * s / n : 0 }' "$_out/contention")
	sleep 0.2
	kill "$tailpid" 2>/dev/null
	wait "$tailpid" 2>/dev/null
	wait "$stamppid" 2>/dev/null
	tailpid=""
	stamppid=""
	if [ "$_rc" = 77 ]; then
		echo "vm-wall: faultlun vm skipped (no qemu or no kernel package):" >&2
		cat "$_out/vm.out" >&2
		exit 77
	fi
	_res=$_rd/result.json
	if [ ! -f "$_res" ] || [ ! -f "$_rd/guest/kmsg.txt" ]; then
		echo "vm-wall: $_stem on $_path round $_n: no result (exit $_rc):" >&2
		tail -n 20 "$_out/vm.out" >&2
		exit 1
	fi
	_verdict=$(jnum verdict "$_res")
	_acc=$(jnum accel "$_res")
	_asm=$(jnum wall.guest_assembly_s "$_res")
	_qemu=$(jnum wall.qemu_s "$_res")
	_total=$(jnum wall.total_s "$_res")
	_tq=$(birth "$_rd/qemu.log")
	_tc=$(birth "$_rd/console.log")
	_tr=$(stat -c %.9Y "$_res")
	# kmsg.txt records are "prio,seq,usec,flags;text"; the console lines are
	# "HOSTTIME text" with "[ guest ]" kernel timestamps on some of them.
	awk -v t0="$_t0" -v t9="$_t9" -v tq="$_tq" -v tc="$_tc" -v tr="$_tr" \
	    -v asm="$_asm" -v qemu="$_qemu" -v total="$_total" -v path="$_path" \
	    -v load="$_load" -v others="$_others" -v verdict="$_verdict" -v acc="$_acc" \
	    -v rc="$_rc" -v cont="$_cont" '
	function first(key, pat) { if (!(key in g) && $0 ~ pat) g[key] = t }
	FNR == 1 { file++ }
	file == 1 {
		split($0, h, ";"); split(h[1], f, ","); t = f[3] / 1e6
		first("init", "Run /init as init process")
		first("agent", "faultlun-agent: agent up")
		first("modules", "faultlun-agent: loading modules")
		first("engine", "faultlun-agent: engine start")
		first("listening", "faultlun-agent: faultlun serve listening")
		first("tcmu_ready", "faultlun-agent: tcmu-runner ready")
		first("loop_host", "scsi host[0-9]+: TCM_Loopback")
		first("discovered", "faultlun-agent: discovered")
		first("logged_in", "faultlun-agent: logged in")
		first("disks", "faultlun-agent: disks:")
		first("wl_start", "faultlun-agent: workload start")
		first("wl_end", "faultlun-agent: workload end")
		first("finish", "faultlun-agent: finish")
		next
	}
	{
		host = $1
		if (!edd && $0 ~ /Probing EDD/) edd = host
		if (match($0, /\[ *[0-9]+\.[0-9]+\]/)) {
			gt = substr($0, RSTART + 1, RLENGTH - 2) + 0
			d = host - gt
			if (nsync == 0 || d < dmin) dmin = d
			if (nsync == 0 || d > dmax) dmax = d
			nsync++
		}
	}
	END {
		ready = path == "iscsi" ? g["listening"] : g["loop_host"]
		tqe = tq + qemu
		if (!nsync) { print "error no console sync"; exit }
		# A kernel booted without the real-mode setup code (PVH) prints no
		# "Probing EDD": QEMU start to clock zero is then one phase.
		if (!edd) { edd = tq; ph["no_setup_line"] = 1 }
		ph["prep"] = tq - t0
		ph["qemu_fw"] = edd - tq
		ph["decompress"] = dmin - edd
		ph["kernel_boot"] = g["init"]
		ph["initramfs"] = g["agent"] - g["init"]
		ph["agent_setup"] = g["modules"] - g["agent"]
		ph["target_start"] = ready - g["modules"]
		ph["login_luns"] = g["disks"] - ready
		ph["pre_workload"] = g["wl_start"] - g["disks"]
		ph["steps"] = g["wl_end"] - g["wl_start"]
		ph["power_off"] = tqe - (dmin + g["wl_end"])
		ph["check_report"] = t9 - tqe
		ph["wall"] = t9 - t0
		ph["mkguest"] = asm
		ph["qemu_init"] = tc - tq
		ph["result_json"] = tr - tqe
		ph["sync_spread"] = dmax - dmin
		ph["fl_total"] = total
		ph["guests"] = others
		ph["contended_pct"] = cont
		if (path == "iscsi") {
			ph["modules_iscsi"] = g["engine"] - g["modules"]
			ph["serve_start"] = g["listening"] - g["engine"]
			ph["discovery"] = g["discovered"] - g["listening"]
			ph["login"] = g["logged_in"] - g["discovered"]
			ph["scan"] = g["disks"] - g["logged_in"]
		}
		if (path == "tcmu") {
			ph["modules_runner"] = g["tcmu_ready"] - g["modules"]
		}
		for (k in ph) printf "%s %.3f\n", k, ph[k]
		printf "result %s\naccel %s\nrc %s\nload %s\n", verdict, acc, rc, load
	}' "$_rd/guest/kmsg.txt" "$_out/console.ts" >"$tmp/ph/$_stem-$_path.$_n"
	if grep -q '^error' "$tmp/ph/$_stem-$_path.$_n"; then
		echo "vm-wall: $_stem on $_path round $_n: the console has no timestamps to line up" >&2
		exit 1
	fi
	# One block per run.
	awk -v name="$_stem/$_path" -v n="$_n" '{ v[$1] = $2 } END {
		printf "%s round %d: %s (%s), wall %.1f s (faultlun total_s %.1f); load %s; another QEMU guest ran %d%% of the time\n",
		    name, n, v["result"], v["accel"], v["wall"], v["fl_total"], v["load"], v["contended_pct"]
		printf "  prep %.1f (mkguest %.1f) | qemu+fw %.1f (qemu init %.2f) | decompress+early %.1f | kernel boot %.1f | initramfs %.1f\n",
		    v["prep"], v["mkguest"], v["qemu_fw"], v["qemu_init"], v["decompress"], v["kernel_boot"], v["initramfs"]
		printf "  agent setup %.1f | target start %.1f | login/LUNs %.1f | pre-workload %.1f | steps %.1f | power-off %.1f | check+report %.2f\n",
		    v["agent_setup"], v["target_start"], v["login_luns"], v["pre_workload"], v["steps"], v["power_off"], v["check_report"]
		if ("login" in v)
			printf "  iscsi: modules (sd_mod sg configfs target_core_mod iscsi_tcp) %.1f, serve start %.1f, discovery %.1f, login %.1f, scan %.1f\n",
			    v["modules_iscsi"], v["serve_start"], v["discovery"], v["login"], v["scan"]
		if ("no_setup_line" in v)
			printf "  (no \"Probing EDD\" on the console: qemu+fw is counted in decompress+early)\n"
		printf "  console/kernel clock spread %.3f s\n", v["sync_spread"]
	}' "$tmp/ph/$_stem-$_path.$_n"
	case $_verdict in
	PASS | FAIL) ;;
	*) echo "vm-wall: $_stem on $_path round $_n: verdict $_verdict (see $_out/vm.out)" >&2; exit 1 ;;
	esac
}

echo
echo "== runs (one guest at a time)"
r=1
while [ "$r" -le "$rounds" ]; do
	for s in $scenarios; do
		run_one "${s%%:*}" "${s##*:}" "$r"
	done
	r=$((r + 1))
done

echo
echo "== medians (seconds; phases add up to wall)"
for s in $scenarios; do
	stem=$(basename "${s%%:*}" .json)
	p=${s##*:}
	echo
	echo "$stem on path $p:"
	printf '| phase |'
	r=1
	while [ "$r" -le "$rounds" ]; do printf ' run %d |' "$r"; r=$((r + 1)); done
	printf ' median | share |\n|---|'
	r=1
	while [ "$r" -le "$rounds" ]; do printf -- '---|'; r=$((r + 1)); done
	printf -- '---|---|\n'
	wall=$(cat "$tmp/ph/$stem-$p".* | awk '$1 == "wall" { print $2 }' | median)
	keys="prep mkguest qemu_fw decompress kernel_boot initramfs agent_setup target_start"
	keys="$keys login_luns pre_workload steps power_off check_report wall"
	[ "$p" = iscsi ] && keys="$keys modules_iscsi serve_start discovery login scan"
	keys="$keys sync_spread load contended_pct"
	for k in $keys; do
		fmt=%.1f
		case $k in check_report | sync_spread) fmt=%.2f ;; contended_pct) fmt=%.0f ;; esac
		printf '| %s |' "$k"
		r=1
		while [ "$r" -le "$rounds" ]; do
			printf ' %s |' "$(awk -v k="$k" -v f="$fmt" '$1 == k { printf f, $2 }' "$tmp/ph/$stem-$p.$r")"
			r=$((r + 1))
		done
		m=$(cat "$tmp/ph/$stem-$p".* | awk -v k="$k" '$1 == k { print $2 }' | median)
		case $k in
		mkguest | modules_iscsi | serve_start | discovery | login | scan | sync_spread | load | contended_pct)
			share="" ;;
		*) share=$(awk -v m="$m" -v w="$wall" 'BEGIN { printf "%.0f%%", 100 * m / w }') ;;
		esac
		# shellcheck disable=SC2059
		printf " $fmt | %s |\n" "$m" "$share"
	done
done
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "${KEEP:-}" ] && echo "run directories kept in $tmp"
exit 0
