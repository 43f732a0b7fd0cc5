#!/bin/bash
# `make bench` step (issue 14): the cost of PERF_SAMPLE_ITRACE, in one boot
# of the non-debug bench kernel (bench/samplecost.c, bench/guest-sample.sh).
#
#   BUILD=build tools/testing/itrace/bench/sample.sh      (or from bench.sh)
#
#   sample_itrace_vs_aux_group  time per page fault sampled with 4 KiB of
#                               trace by PERF_SAMPLE_ITRACE / by mainline's
#                               PERF_SAMPLE_AUX of an intel_pt group leader
#                               mapped read-only (same size, a sample at
#                               every fault); min / min over BENCH_SAMPLE_REPS
#   sample_itrace_overhead      workload time sampled at ~1 kHz (user-mode
#                               instructions, the emulated PMU) with 4 KiB
#                               of trace per sample / the same sampling
#                               without trace
#
# Knobs: BENCH_ROUNDS (default 40000), BENCH_SAMPLE_REPS (default 7),
# BENCH_FAULTS (default 4096), SAMPLE_KERNEL (bzImage, default the bench
# kernel of `make bench-kernel`).
set -euo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
t=$(cd "$here/.." && pwd)
rounds=${BENCH_ROUNDS:-40000} reps=${BENCH_SAMPLE_REPS:-7} nf=${BENCH_FAULTS:-4096}
kernel=${SAMPLE_KERNEL:-$BUILD/linux-obj-bench/arch/x86/boot/bzImage}
[ -f "$kernel" ] || { echo "sample: no kernel $kernel (make bench-kernel)" >&2; exit 1; }
b=$BUILD/bench/sample
mkdir -p "$b/vm/linux-obj/arch/x86/boot"
gcc -O1 -g -fno-inline -fno-optimize-sibling-calls -fno-ipa-cp \
	-fno-tree-vectorize -Wall -Wextra -o "$b/work" "$t/bench/work.c"
gcc -O2 -Wall -Wextra -static -isystem "$BUILD/linux-obj/usr/include" \
	-o "$b/samplecost" "$t/bench/samplecost.c"
printf 'ROUNDS=%s\nREPS=%s\nFAULTS=%s\n' "$rounds" "$reps" "$nf" > "$b/params"
cp "$kernel" "$b/vm/linux-obj/arch/x86/boot/bzImage"
ln -sfn "$BUILD/qemu-obj" "$b/vm/qemu-obj"
ln -sf "$BUILD/initramfs.cpio" "$b/vm/initramfs.cpio"

echo "  BENCH   sample_itrace: $reps x 3 fault runs, $reps x 2 sampled workload runs" >&2
res=$b/res
BUILD=$b/vm "$t/scripts/run-vm.sh" -t 1800 -o "$res" "$here/guest-sample.sh" \
	"$b/params" "$b/work" "$b/samplecost" > "$b/run-vm.log" 2>&1 || {
	echo "bench: guest run failed (sample):" >&2
	cat "$b/run-vm.log" "$res/cmd.log" >&2 2>/dev/null || true
	exit 1
}
f=$res/sample.txt
minf() { awk -v k="$1" '$1 == "faults" && $2 == k { sub(/ns=/, "", $3); v = $3 + 0; if (m == "" || v < m) m = v } END { print m }' "$f"; }
minr() { awk -v k="$1" '$1 == "run" && $2 == k && $3 > 0 { v = $3 + 0; if (m == "" || v < m) m = v } END { print m }' "$f"; }
fi_=$(minf itrace) fa=$(minf aux) fn=$(minf none) ri=$(minr itrace) rn=$(minr none)
[ -n "$fi_" ] && [ -n "$fa" ] && [ -n "$fn" ] && [ -n "$ri" ] && [ -n "$rn" ] ||
	{ echo "bench: no sample figures" >&2; cat "$res/cmd.log" >&2; exit 1; }
us() { awk -v a="$1" -v n="$nf" 'BEGIN { printf "%.1f", a / n / 1000 }'; }
ms() { awk -v a="$1" 'BEGIN { printf "%.0f", a / 1e6 }'; }
r() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
echo "# sample_itrace_vs_aux_group: per sampled page fault $(us "$fi_") us with PERF_SAMPLE_ITRACE / $(us "$fa") us with PERF_SAMPLE_AUX (group leader) ($(us "$fn") us sampled without trace), 4 KiB each, min of $reps, $nf faults a run; $(grep -m1 '^faults itrace' "$f")"
echo "bench sample_itrace_vs_aux_group = $(r "$fi_" "$fa") x (goal <= 1.1)"
echo "# sample_itrace_overhead: min $(ms "$ri") ms with 4 KiB of trace per sample / $(ms "$rn") ms without, sampled every $(sed -n 's/^period \([0-9]*\).*/\1/p' "$f") user-mode instructions (~1 kHz), min of $reps; $(grep -m1 '^run itrace' "$f")"
echo "bench sample_itrace_overhead = $(r "$ri" "$rn") x (goal none)"
