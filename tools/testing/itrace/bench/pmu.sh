#!/bin/bash
# `make bench` step (issue 13): the workload with the emulated CPU's
# performance counters counting (instructions, branches, cycles and
# ref-cycles, user and kernel mode, through the upstream PMU driver) vs
# without, side by side in one boot of the non-debug bench kernel.
#
#   BUILD=build tools/testing/itrace/bench/pmu.sh      (or from bench.sh)
#
# Counting: bench/pmucount.c opens the four events for the workload
# (enable_on_exec, inherited) as `perf stat` does, without perf's start-up.
# The time is the workload's own (CLOCK_MONOTONIC around its loop,
# bench/work.c).  min(on) / min(off) over BENCH_PMU_REPS interleaved pairs
# (default 15).  Prints "# " lines and "bench pmu_count_on_vs_off = ...".
#
# Knobs: BENCH_ROUNDS (workload rounds, default 40000), BENCH_PMU_REPS,
# PMU_KERNEL (bzImage, default the non-debug bench kernel of `make
# bench-kernel`).
set -euo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
t=$(cd "$here/.." && pwd)
rounds=${BENCH_ROUNDS:-40000} reps=${BENCH_PMU_REPS:-15}
kernel=${PMU_KERNEL:-$BUILD/linux-obj-bench/arch/x86/boot/bzImage}
[ -f "$kernel" ] || { echo "pmu: no kernel $kernel (make bench-kernel)" >&2; exit 1; }
b=$BUILD/bench/pmu
mkdir -p "$b/vm/linux-obj/arch/x86/boot"
gcc -O1 -g -fno-inline -fno-optimize-sibling-calls -fno-ipa-cp \
	-fno-tree-vectorize -Wall -Wextra -o "$b/work" "$t/bench/work.c"
gcc -O2 -Wall -Wextra -static -o "$b/pmucount" "$t/bench/pmucount.c"
printf 'ROUNDS=%s\nREPS=%s\n' "$rounds" "$reps" > "$b/params"
cp "$kernel" "$b/vm/linux-obj/arch/x86/boot/bzImage"
ln -sfn "$BUILD/qemu-obj" "$b/vm/qemu-obj"
ln -sf "$BUILD/initramfs.cpio" "$b/vm/initramfs.cpio"

echo "  BENCH   pmu_count_on_vs_off: $reps counted and $reps uncounted runs" >&2
res=$b/res
BUILD=$b/vm "$t/scripts/run-vm.sh" -t 1200 -o "$res" "$here/guest-pmu.sh" \
	"$b/params" "$b/work" "$b/pmucount" > "$b/run-vm.log" 2>&1 || {
	echo "bench: guest run failed (pmu):" >&2
	cat "$b/run-vm.log" "$res/cmd.log" >&2 2>/dev/null || true
	exit 1
}
f=$res/pmu.txt
minof() { awk -v k="$1" '$1 == k && $2 > 0 { if (m == "" || $2 < m) m = $2 } END { print m }' "$f"; }
on=$(minof on) off=$(minof off)
[ -n "$on" ] && [ -n "$off" ] || { echo "bench: no pmu figures" >&2; cat "$res/cmd.log" >&2; exit 1; }
med=$(awk '{ v[$1, ++n[$1]] = $2 } END {
	for (i = 1; i <= n["on"] && i <= n["off"]; i++) print v["on", i] / v["off", i] }' "$f" |
	sort -g | awk '{ r[NR] = $1 } END { print (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }')
counts=$(tail -n1 "$res/pmucount.txt")
ms() { awk -v a="$1" 'BEGIN { printf "%.0f", a / 1e6 }'; }
echo "# pmu_count_on_vs_off: min(on) $(ms "$on") ms / min(off) $(ms "$off") ms over $reps interleaved pairs, one boot, bench kernel; counting instructions, branches, cycles, ref-cycles in user and kernel mode (bench/pmucount.c); median of pair ratios $(printf %.3f "$med"); last run: ${counts#pmucount }"
echo "bench pmu_count_on_vs_off = $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f", a / b }') x (goal <= 1.3)"
