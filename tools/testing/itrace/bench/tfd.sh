#!/bin/bash
# `make bench` step (issue 4, "Benchmark"): sustained recording of one
# workload through the trace fd vs `perf record` through the classic AUX
# mapping, the same AUX buffer size, side by side in one boot.
#
#   BUILD=build tools/testing/itrace/bench/tfd.sh      (or from bench.sh)
#
# trace fd: `itrace record -m PAGES` (stop mode: a writable trace-fd
# mapping; a reader that poll()s the trace fd and the event fd, copies the
# trace to a file and enables the event again with PERF_EVENT_IOC_ENABLE
# after each stop).  AUX: Debian's `perf record -e intel_pt/.../u -m ,PAGES`,
# the packet configuration made equal to itrace's (pt, branch; no TSC, MTC,
# CYC; PSB every 2 KiB).  Both in the guest, on the workload
# tools/testing/itrace/bench/work.c, runs interleaved, the order
# alternating, plus one reference run of each with a buffer large enough
# to lose nothing (the bytes a loss-free recording writes).  Medians over
# the runs.  Prints "# " lines and "bench NAME = VALUE UNIT (goal OP VALUE)".
#
# Knobs: BENCH_TFD_ROUNDS (workload rounds, default 40000: about 45 MB of
# trace, 2-3 s per run with the bench kernel), BENCH_TFD_REPS (runs of each tool, default 9), BENCH_TFD_PAGES
# (AUX buffer pages for both, a power of two, default 16), BENCH_TFD_REF_PAGES
# (reference runs, default 16384), TFD_KERNEL (bzImage to boot, default the
# non-debug bench kernel of `make bench-kernel`).
#
# TFD_MODE=threads (issue 18, `make bench` line tfd_vs_perf_threads): the
# workload runs four threads (work ROUNDS -1 4) in a guest with two vCPUs
# (run-vm.sh -c 2), recorded by `itrace record` with its defaults (every
# thread: per-CPU events with inherit; TSC, MTC period 3, PSB every 2 KiB)
# and by `perf record -e intel_pt/.../u` with the same packets and the same
# buffer per CPU (-m ,PAGES); figures tfd_vs_perf_threads_bytes_per_s and
# tfd_vs_perf_threads_kept.  The default mode: one thread, one vCPU,
# `itrace record --no-timing` (no TSC/MTC), the figures tfd_vs_perf_*.
#
# 16 pages (64 KiB): with the non-debug kernel both readers keep up with
# 64 pages and neither loses anything (2026-11-30: 0 stops for itrace, 0-2
# for perf), which measures nothing about loss; with 16 both stop several
# times per run.  The noise between runs is large (one run's bytes/s
# ranges over 1.5x for the same tool), hence 9 runs of each, each long
# enough to average out short stalls of the host: with 10000 rounds five
# runs of this step on 2026-11-30 gave 0.93-1.41 (bytes/s trace fd / perf),
# with 40000 rounds 1.004 (median of pair ratios 1.043).
set -euo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
t=$(cd "$here/.." && pwd)
s=$t/scripts
rounds=${BENCH_TFD_ROUNDS:-40000} reps=${BENCH_TFD_REPS:-9}
pages=${BENCH_TFD_PAGES:-16} refpages=${BENCH_TFD_REF_PAGES:-16384}
kernel=${TFD_KERNEL:-$BUILD/linux-obj-bench/arch/x86/boot/bzImage}
[ -f "$kernel" ] || { echo "tfd: no kernel $kernel (make bench-kernel)" >&2; exit 1; }
b=$BUILD/bench/tfd
for v in "$rounds" "$reps" "$pages" "$refpages"; do
	case $v in ''|*[!0-9]*) echo "tfd: bad knob value '$v'" >&2; exit 2 ;; esac
done
if [ "$reps" -lt 1 ] || [ "$pages" -lt 1 ] || [ $((pages & (pages - 1))) -ne 0 ] ||
   [ "$refpages" -lt 1 ] || [ $((refpages & (refpages - 1))) -ne 0 ]; then
	echo "tfd: BENCH_TFD_REPS >= 1, BENCH_TFD_PAGES and BENCH_TFD_REF_PAGES powers of two" >&2
	exit 2
fi
mode=${TFD_MODE:-}
case $mode in
threads)
	# itrace's default config: pt, branch, tsc, mtc with mtc_period 3,
	# PSB every 2 KiB (tools/itrace/record.c); perf's default differs in
	# psb_period (3: 16 KiB), set to itrace's.
	ev="intel_pt/tsc=1,mtc=1,mtc_period=3,psb_period=0/u"
	itargs= wargs="-1 4" cpus=2 name=tfd_vs_perf_threads
	b=$b-threads
	what="4 threads in two vCPUs, both with TSC and MTC (period 3) packets" ;;
'')
	# "pt" and "branch" only (itrace record --no-timing); perf's default
	# adds tsc, mtc (period 3) and psb_period=3, which are turned off.
	ev="intel_pt/tsc=0,mtc=0,mtc_period=0,psb_period=0/u"
	itargs=--no-timing wargs= cpus=1 name=tfd_vs_perf
	what="one thread, one vCPU, no TSC/MTC/CYC" ;;
*)
	echo "tfd: TFD_MODE is threads or empty" >&2
	exit 2 ;;
esac
[ -x /usr/bin/perf ] || { echo "tfd: needs Debian's perf (/usr/bin/perf, package linux-perf)" >&2; exit 1; }
mkdir -p "$b/vm/linux-obj/arch/x86/boot"

gcc -O1 -g -fno-inline -fno-optimize-sibling-calls -fno-ipa-cp \
	-fno-tree-vectorize -Wall -Wextra -o "$b/work" "$t/bench/work.c" -pthread
gcc -O1 -Wall -Wextra -o "$b/stopwatch" "$t/bench/stopwatch.c"
printf 'ROUNDS=%s\nREPS=%s\nPAGES=%s\nREF_PAGES=%s\nWORK=%s\nPERF_EVENT=%s\nITRACE_ARGS="%s"\nWORK_ARGS="%s"\n' \
	"$rounds" "$reps" "$pages" "$refpages" "$b/work" "$ev" "$itargs" "$wargs" > "$b/tparams"

# A boot of its own with Debian's perf in the initramfs (mkinitramfs.sh,
# ITRACE_GUEST_PERF): the default initramfs stays without it.
cp "$kernel" "$b/vm/linux-obj/arch/x86/boot/bzImage"
ln -sfn "$BUILD/qemu-obj" "$b/vm/qemu-obj"
BUILD=$BUILD ITRACE_GUEST_PERF=1 "$s/mkinitramfs.sh" "$b/vm/initramfs.cpio" >&2

echo "  BENCH   $name: $reps runs of each, $pages pages, $rounds rounds" >&2
res=$b/res
BUILD=$b/vm "$s/run-vm.sh" -t 1200 -c "$cpus" -o "$res" "$here/guest-tfd.sh" \
	"$b/tparams" "$b/work" "$b/stopwatch" > "$b/run-vm.log" 2>&1 || {
	echo "bench: guest run failed (tfd):" >&2
	cat "$b/run-vm.log" "$res/cmd.log" >&2 2>/dev/null || true
	exit 1
}
f=$res/tfd.txt
[ -s "$f" ] || { echo "bench: no tfd figures" >&2; cat "$res/cmd.log" >&2; exit 1; }

# field RUNFILTER TOOL KEY: the values of KEY on the lines of TOOL
field() {
	awk -v sel="$1" -v tool="$2" -v k="$3" '{
		delete v
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["tool"] != tool) next
		if ((sel == "ref") != (v["run"] == "ref")) next
		print v[k] }' "$f"
}
median() { sort -g | awk '{ r[NR] = $1 } END {
	if (!NR) { print ""; exit }
	print (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }'; }
# bytes per second of workload time, per run
bps() {
	awk -v sel=runs -v tool="$1" -v key="$2" '{
		delete v
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["tool"] != tool || v["run"] == "ref") next
		printf "%.0f\n", v["bytes"] * 1e9 / v[key] }' "$f"
}
list() { tr '\n' ' ' | sed 's/ $//'; }
for tool in itrace perf; do
	n=$(field runs $tool bytes | wc -l)
	[ "$n" -eq "$reps" ] || { echo "bench: $n $tool runs of $reps" >&2; cat "$res/cmd.log" >&2; exit 1; }
	eval "${tool}_ref=\$(field ref $tool bytes)"
	eval "${tool}_bytes=\$(field runs $tool bytes | median)"
	eval "${tool}_bps=\$(bps $tool work_ns | median)"
	eval "${tool}_wbps=\$(bps $tool wall_ns | median)"
	eval "${tool}_all=\"\$(bps $tool work_ns | list)\""
	eval "${tool}_wall=\"\$(bps $tool wall_ns | list)\""
done
it_losses=$(field runs itrace itrace_lost | median)
it_lb=$(field runs itrace lost_bytes | median)
it_tr=$(field runs itrace aux_truncated | median)
it_rs=$(field runs itrace restarts | median)
pf_losses=$(field runs perf aux_truncated_data | median)
pf_tr=$(field runs perf aux_truncated | median)
pf_aux=$(field runs perf aux | median)
it_losses_all=$(field runs itrace itrace_lost | list)
it_tr_all=$(field runs itrace aux_truncated | list)
pf_losses_all=$(field runs perf aux_truncated_data | list)
pf_tr_all=$(field runs perf aux_truncated | list)

n() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b ? a / b : 0 }'; }
mb() { awk -v a="$1" 'BEGIN { printf "%.2f", a / 1e6 }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
mbl() { awk '{ for (i = 1; i <= NF; i++) printf("%s%.2f", (i > 1) ? " " : "", $i / 1e6) }'; }
est() { awk -v r="$1" -v b="$2" 'BEGIN { printf("%.0f", (r > b) ? r - b : 0) }'; }
kept=$(awk -v a="$itrace_bytes" -v ra="$itrace_ref" -v b="$perf_bytes" -v rb="$perf_ref" \
	'BEGIN { printf "%.3f", (ra && b) ? (a / ra) / (b / rb) : 0 }')
vm_s=$(cat "$res/vm-seconds" 2>/dev/null || echo "?")
echo "# $name: $what"
echo "# $name: kernel $(grep -m1 -o 'Linux version [^ ]*' "$res/console.log" || echo ?) ($kernel)"
echo "# $name: sustained recording of tools/testing/itrace/bench/work.c ($rounds rounds) in the guest, AUX buffer $pages pages ($((pages * 4)) KiB) for both, $reps runs of each interleaved (order alternating), one boot ($vm_s s); medians of the runs"
echo "# $name: trace fd = itrace record -m $pages (stop mode: writable trace-fd mapping, poll() on trace fd and event fd, aux_watermark a quarter of the buffer, copy to a file in the guest's tmpfs moving data_tail every eighth of the buffer, PERF_EVENT_IOC_ENABLE after each stop); AUX = Debian perf $(/usr/bin/perf --version | awk '{ print $3 }') record -e $ev -m ,$pages (classic aux_offset mapping; perf sets the same watermark), same packets as itrace (config 0x2001: pt, branch; no TSC/MTC/CYC)"
echo "# $name: bytes/s = trace bytes in the output file / the workload's CLOCK_MONOTONIC loop time (reader and workload share the one CPU); MB/s per run: itrace $(echo "$itrace_all" | mbl), perf $(echo "$perf_all" | mbl)"
echo "# $name: by wall time of the whole record command (start-up, write-out, perf's build-id pass included): itrace $(echo "$itrace_wall" | mbl), perf $(echo "$perf_wall" | mbl) MB/s; ratio of medians $(n "$itrace_wbps" "$perf_wbps")"
# Run i of itrace and run i of perf ran back to back: their ratio is less
# exposed to the host's load drifting over the boot than the medians are.
paired=$(awk '{
	delete v
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	if (v["run"] == "ref") next
	r[v["run"], v["tool"]] = v["bytes"] / v["work_ns"]; runs[v["run"]] = 1 }
	END { for (k in runs) printf "%.3f\n", r[k, "itrace"] / r[k, "perf"] }' "$f" | median)
refw=$(awk '{
	delete v
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	if (v["run"] == "ref") r[v["tool"]] = v["bytes"] / v["work_ns"] }
	END { printf "%.3f", r["perf"] ? r["itrace"] / r["perf"] : 0 }' "$f")
echo "# $name: bytes/s, median of the per-pair ratios (run i of each, back to back): $paired"
echo "# $name: loss-free reference ($refpages pages, one run each): itrace $itrace_ref bytes, perf $perf_ref bytes; bytes/s itrace / perf $refw (the whole trace fits: perf reads it after the workload, itrace as its wake-ups come)"
echo "# $name: itrace: $(mb "$itrace_bytes") MB written ($(pct "$itrace_bytes" "$itrace_ref")% of its reference: about $(est "$itrace_ref" "$itrace_bytes") bytes lost); $it_losses stops = PERF_RECORD_ITRACE_LOST (runs: $it_losses_all; $it_lb bytes counted in them: intel_pt does not count what it drops), $it_tr PERF_RECORD_AUX truncated (runs: $it_tr_all), $it_rs restarts"
echo "# $name: perf: $(mb "$perf_bytes") MB written ($(pct "$perf_bytes" "$perf_ref")% of its reference: about $(est "$perf_ref" "$perf_bytes") bytes lost); $pf_losses stops = PERF_RECORD_AUX truncated with data (runs: $pf_losses_all), $pf_tr truncated in all = perf's 'AUX data lost N times' (runs: $pf_tr_all) of $pf_aux AUX records"
echo "bench ${name}_bytes_per_s = $(n "$itrace_bps" "$perf_bps") x (goal >= 1)"
echo "bench ${name}_kept = $kept x (goal >= 1)"
[ -n "$mode" ] ||
	echo "bench tfd_minus_perf_stops = $(awk -v a="$it_losses" -v b="$pf_losses" 'BEGIN { print a - b }') stops (goal <= 0)"
