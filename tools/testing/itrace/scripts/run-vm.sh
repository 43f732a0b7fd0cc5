#!/bin/bash
# Boot the test kernel in QEMU with emulated Intel PT and run one script in
# the guest.  Files the script leaves in $OUT come back to the host.
#
# usage: [ITRACE_CPU_OPTS=PROP=VAL,...] run-vm.sh [-t SECONDS] [-o RESULTDIR]
#        [-m MEM] [-c CPUS] SCRIPT [FILE...]
#   CPUS    vCPUs, 1 to 4 (default 1; the guest kernel has NR_CPUS=4),
#           each its own socket: SeaBIOS's MP table lists only the first
#           logical CPU of a package and the guest kernel has no ACPI, so
#           "-smp 2" with two cores would boot one CPU.  TCG runs them
#           multi-threaded (MTTCG, QEMU's default for x86_64).
#   SCRIPT  a busybox-sh script run in the guest as /in/cmd.sh;
#   FILE    extra files handed in as /in/<basename>.
# RESULTDIR receives cmd.log, cmd.rc, dmesg.txt, console.log and the
# script's own output files.  Exit status: the script's, or 124 on timeout,
# or 125 when the guest log shows a kernel WARN/BUG/KASAN/lockdep report.
set -euo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
t=$(cd "$here/.." && pwd)
timeout=600 res=$BUILD/vm/last mem=2G cpus=1
while getopts "t:o:m:c:" o; do
	case $o in
	t) timeout=$OPTARG ;;
	o) res=$OPTARG ;;
	m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $cpus in
[1-4]) ;;
*) echo "run-vm: -c wants 1 to 4 CPUs, not '$cpus'" >&2; exit 2 ;;
esac
if [ $# -lt 1 ]; then
	echo "usage: run-vm.sh [-t SECONDS] [-o RESULTDIR] [-m MEM] [-c CPUS] SCRIPT [FILE...]" >&2
	exit 2
fi
script=$1
shift
for f in "$script" "$@"; do
	[ -e "$f" ] || { echo "run-vm: no such file: $f" >&2; exit 2; }
done
qemu=$BUILD/qemu-obj/qemu-system-x86_64
# ITRACE_KERNEL: another bzImage (series-check --boot: a step's kernel)
kernel=${ITRACE_KERNEL:-$BUILD/linux-obj/arch/x86/boot/bzImage}
initrd=$BUILD/initramfs.cpio
cpu=$(cat "$t/qemu-cpu.txt") || { echo "run-vm: no $t/qemu-cpu.txt" >&2; exit 1; }
# ITRACE_CPU_OPTS: more -cpu properties, e.g. intel-pt-topa-multi=off
cpu=$cpu${ITRACE_CPU_OPTS:+,$ITRACE_CPU_OPTS}
for f in "$qemu" "$kernel" "$initrd"; do
	[ -f "$f" ] || { echo "run-vm: missing $f (run make)" >&2; exit 2; }
done

rm -rf "$res"
mkdir -p "$res"
work=$(mktemp -d "$BUILD/vm-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/in"
cp "$script" "$work/in/cmd.sh"
for f in "$@"; do cp -a "$f" "$work/in/"; done
# /dev/vda: the input tar, exactly; /dev/vdb: room for the results tar.
tar -cf "$work/in.tar" -C "$work/in" .
out=$work/out.img
truncate -s 256M "$out"

start=$(date +%s.%N)
rc=0
timeout --foreground -k 5 "$timeout" "$qemu" \
	-L /usr/share/qemu -L /usr/share/seabios \
	-machine pc -cpu "$cpu" -m "$mem" -smp "$cpus,sockets=$cpus" \
	-nographic -no-reboot -monitor none -serial stdio -nic none \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic nmi_watchdog=0 tsc=reliable kmemleak=on printk.time=1 ${ITRACE_CMDLINE:-}" \
	-drive file="$work/in.tar",format=raw,if=virtio,readonly=on \
	-drive file="$out",format=raw,if=virtio,cache=unsafe \
	> "$res/console.log" 2>&1 < /dev/null || rc=$?
end=$(date +%s.%N)
echo "$start $end" | awk '{ printf "%.1f\n", $2 - $1 }' > "$res/vm-seconds"

if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	echo "run-vm: guest timed out after $timeout s (log: $res/console.log)" >&2
	exit 124
fi
# An image the guest never wrote is all zeros, which tar reads as an empty
# archive: no cmd.rc means no results, whatever tar says (QEMU may not even
# have started: a bad -cpu property, memory size, ...).
tar -xf "$out" -C "$res" 2>/dev/null || true
if "$here/kernel-health.sh" "$res/console.log"; then :; else
	exit 125
fi
if [ ! -f "$res/cmd.rc" ]; then
	echo "run-vm: guest returned no results (QEMU exit status $rc; log: $res/console.log)" >&2
	tail -20 "$res/console.log" >&2
	exit 1
fi
exit "$(cat "$res/cmd.rc")"
