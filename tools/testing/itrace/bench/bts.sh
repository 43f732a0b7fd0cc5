#!/bin/bash
# `make bench` step (issue 15): the workload with the emulated Branch
# Trace Store recording its user-mode branches (Linux's intel_bts driver,
# Debian's perf: `perf record -S -e intel_bts//u --per-thread`, snapshot
# mode, so the 24-byte records go round a 4 MiB buffer with no PMI and
# no reader copying them out) vs without, side by side in one boot of the
# non-debug bench kernel with "+ds" on the CPU model.
#
#   BUILD=build tools/testing/itrace/bench/bts.sh      (or from bench.sh)
#
# The time is the workload's own (CLOCK_MONOTONIC around its loop,
# bench/work.c): perf's start-up and its write-out at the end are outside
# it.  min(on) / min(off) over BENCH_BTS_REPS interleaved pairs (default
# 9).  Prints "# " lines and "bench bts_on_vs_off = ...".
#
# Knobs: BENCH_ROUNDS (workload rounds, default 40000), BENCH_BTS_REPS,
# BENCH_BTS_PAGES (AUX pages, perf -m ,N; default perf's, 4 MiB as root),
# BTS_KERNEL (bzImage, default the non-debug bench kernel of `make
# bench-kernel`).
#
# Measured 2026-12-01, run alone, host load average 4-5 on 2 cores:
# 1.683x (5 pairs, median of pair ratios 1.669) with perf's 4 MiB buffer,
# 1.577x (5 pairs, median 1.577) with 16 pages; before the TBs stored
# records themselves (a helper call per branch) 16.6x.  2026-12-02, quiet
# host (load average 0.8): 1.662x (7 pairs, 979 / 589 ms, median of pair
# ratios 1.662).  That is about 2.8 ns per record for some 140 M records
# (3.4 GB written) per run: the TB's own stores, no helper in the common
# case (a helper per 4 KiB page of records, where the fast run ended).
# 2026-12-03, the fast run over all the host-contiguous pages of the
# buffer (one helper per lap of the 4 MiB buffer instead of one per
# page), BTS_KERNEL = the test kernel, BENCH_BTS_REPS=5, each QEMU in its
# own boot, one after the other: before 1.721x (983 / 571 ms, median of
# pair ratios 1.639), after 1.424x (817 / 574 ms, median 1.412).
set -euo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
t=$(cd "$here/.." && pwd)
rounds=${BENCH_ROUNDS:-40000} reps=${BENCH_BTS_REPS:-9}
kernel=${BTS_KERNEL:-$BUILD/linux-obj-bench/arch/x86/boot/bzImage}
[ -f "$kernel" ] || { echo "bts: no kernel $kernel (make bench-kernel)" >&2; exit 1; }
b=$BUILD/bench/bts
mkdir -p "$b/vm/linux-obj/arch/x86/boot"
gcc -O1 -g -fno-inline -fno-optimize-sibling-calls -fno-ipa-cp \
	-fno-tree-vectorize -Wall -Wextra -o "$b/work" "$t/bench/work.c"
printf 'ROUNDS=%s\nREPS=%s\nPAGES=%s\n' "$rounds" "$reps" "${BENCH_BTS_PAGES:-}" > "$b/params"
perf=/usr/bin/perf
libs=$(ldd $perf | awk '/=> \// { print $3 } /^\t\// { print $1 }' | sed 's,^/lib,/usr/lib,')
tar -chf "$b/perf.tar" -C / ${perf#/} $(for l in $libs; do echo "${l#/}"; done)
cp "$kernel" "$b/vm/linux-obj/arch/x86/boot/bzImage"
ln -sfn "$BUILD/qemu-obj" "$b/vm/qemu-obj"
ln -sf "$BUILD/initramfs.cpio" "$b/vm/initramfs.cpio"

echo "  BENCH   bts_on_vs_off: $reps recorded and $reps unrecorded runs" >&2
res=$b/res
ITRACE_CPU_OPTS=+ds BUILD=$b/vm "$t/scripts/run-vm.sh" -t 1800 -o "$res" \
	"$here/guest-bts.sh" "$b/params" "$b/work" "$b/perf.tar" > "$b/run-vm.log" 2>&1 || {
	echo "bench: guest run failed (bts):" >&2
	cat "$b/run-vm.log" "$res/cmd.log" >&2 2>/dev/null || true
	exit 1
}
f=$res/bts.txt
minof() { awk -v k="$1" '$1 == k && $2 > 0 { if (m == "" || $2 < m) m = $2 } END { print m }' "$f"; }
on=$(minof on) off=$(minof off)
[ -n "$on" ] && [ -n "$off" ] || { echo "bench: no bts figures" >&2; cat "$res/cmd.log" >&2; exit 1; }
med=$(awk '{ v[$1, ++n[$1]] = $2 } END {
	for (i = 1; i <= n["on"] && i <= n["off"]; i++) print v["on", i] / v["off", i] }' "$f" |
	sort -g | awk '{ r[NR] = $1 } END { print (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }')
ms() { awk -v a="$1" 'BEGIN { printf "%.0f", a / 1e6 }'; }
echo "# bts_on_vs_off: min(on) $(ms "$on") ms / min(off) $(ms "$off") ms over $reps interleaved pairs, one boot, bench kernel; perf record -S -e intel_bts//u --per-thread (snapshot: no PMI, no reader); median of pair ratios $(printf %.3f "$med"); last snapshot: $(tail -n1 "$res/snap.txt" 2>/dev/null)"
echo "bench bts_on_vs_off = $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f", a / b }') x (goal <= 1.5)"
