#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`'s decode figures, host only (no guest): itrace decode against
# a bare libipt pt_insn loop with an image section cache (ptloop, built
# from tools/itrace/tests/ptloop.c), the same recording, runs interleaved,
# min / min, output to /dev/null:
#
#   decode_vs_libipt_insn        ptloop / itrace decode --stats (goal >= 0.9)
#   decode_flow_vs_libipt_insn   ptloop / itrace decode (the function-level
#                                flow, on the block decoder) (goal >= 2.0)
#   decode_summary_vs_libipt_insn  ptloop / itrace decode --summary (also on
#                                the block decoder) (goal >= 2.0)
#                                (these three with --jobs 1: one thread)
#   decode_flow_jobs_vs_1        itrace decode --jobs 1 / --jobs NPROC (the
#   decode_stats_jobs_vs_1       flow, --stats): the threaded decode (pdec.c)
#   decode_vs_perf_script        perf script --itrace=i0ns -F ip,sym /
#                                itrace decode --insn on the same perf.data
#                                (every instruction with its symbol; goal
#                                >= 5); only with PERF.DATA or ptsim, runs
#                                interleaved, min / min
#
# usage: decode.sh RECORDING [PERF.DATA | ptsim]   (BENCH_DECODE_REPS, default 3)
# bench.sh runs it on the workload recorded by its first step, with
# "ptsim": that recording (hundreds of millions of instructions) is too
# large for perf script, which prints about 2.5 million lines a second.
# ptsim stands for it: tools/itrace/tests/ptsim single-steps the test
# program spin for BENCH_SPIN_ROUNDS rounds (default 200000: 4.3 million
# instructions, 150 KB of trace, about 3 minutes of ptrace on the host;
# kept in BUILD/bench-decode and made again only when spin or ptsim.c
# changes), and `itrace convert` writes it as perf.data.
set -euo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
rec=$1 pdata=${2:-}
reps=${BENCH_DECODE_REPS:-3}
jobs=$(nproc)
rounds=${BENCH_SPIN_ROUNDS:-200000}
it=$BUILD/tools/itrace/itrace
loop=$BUILD/itrace-test/ptloop
sim=$BUILD/itrace-test/ptsim spin=$BUILD/itrace-test/progs/spin
make -s -C "$top/tools/itrace" O="$BUILD/tools/itrace" TEST_O="$BUILD/itrace-test" \
	"$loop" "$it" $([ "$pdata" = ptsim ] && echo "$sim" progs) >&2

if [ "$pdata" = ptsim ]; then
	if ! command -v perf > /dev/null; then
		pdata=
	else
		pd=$BUILD/bench-decode
		mkdir -p "$pd"
		pdata=$pd/spin-$rounds.data
		src=$top/tools/itrace/tests/ptsim.c
		if [ ! -s "$pdata" ] || [ "$spin" -nt "$pdata" ] || [ "$src" -nt "$pdata" ]; then
			echo "  PTSIM   spin $rounds -> $pdata (single-stepped: minutes)" >&2
			rm -f "$pdata"
			"$sim" -o "$pd/spin.itrace" -- "$spin" "$rounds" \
				> /dev/null 2> "$pd/ptsim.log" || {
				echo "bench: ptsim failed:" >&2
				cat "$pd/ptsim.log" >&2
				exit 1
			}
			"$it" convert -o "$pdata.tmp" "$pd/spin.itrace" >&2
			mv "$pdata.tmp" "$pdata"
		fi
	fi
fi

t() {	# t CMD...: wall seconds of one run, output to /dev/null
	local s e
	s=$(date +%s.%N)
	"$@" > /dev/null 2>&1 || [ $? = 3 ]
	e=$(date +%s.%N)
	awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f\n", e - s }'
}
min() { sort -g | head -1; }

: > "$BUILD/bench-decode.txt"
for _ in $(seq "$reps"); do
	echo "base $(t "$loop" "$rec")" >> "$BUILD/bench-decode.txt"
	echo "stats $(t "$it" decode --no-progress --jobs 1 --stats "$rec")" >> "$BUILD/bench-decode.txt"
	echo "flow $(t "$it" decode --no-progress --jobs 1 "$rec")" >> "$BUILD/bench-decode.txt"
	echo "summary $(t "$it" decode --no-progress --jobs 1 --summary "$rec")" >> "$BUILD/bench-decode.txt"
	echo "flowj $(t "$it" decode --no-progress --jobs "$jobs" "$rec")" >> "$BUILD/bench-decode.txt"
	echo "statsj $(t "$it" decode --no-progress --jobs "$jobs" --stats "$rec")" >> "$BUILD/bench-decode.txt"
done
base=$(awk '$1 == "base" { print $2 }' "$BUILD/bench-decode.txt" | min)
stats=$(awk '$1 == "stats" { print $2 }' "$BUILD/bench-decode.txt" | min)
flow=$(awk '$1 == "flow" { print $2 }' "$BUILD/bench-decode.txt" | min)
summary=$(awk '$1 == "summary" { print $2 }' "$BUILD/bench-decode.txt" | min)
flowj=$(awk '$1 == "flowj" { print $2 }' "$BUILD/bench-decode.txt" | min)
statsj=$(awk '$1 == "statsj" { print $2 }' "$BUILD/bench-decode.txt" | min)
insns=$("$loop" "$rec" | awk '{ print $2 }')
size=$(stat -c %s "$rec")
r() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "# decode: $rec, $size bytes, $insns instructions; $reps runs each, interleaved, min: ptloop ${base} s, --stats ${stats} s, flow ${flow} s, --summary ${summary} s ($(awk -v s="$size" -v t="$stats" 'BEGIN { printf "%.1f", s / t / 1048576 }') MiB/s of file with --stats)"
echo "bench decode_vs_libipt_insn = $(r "$base" "$stats") x (goal >= 0.9)"
echo "bench decode_flow_vs_libipt_insn = $(r "$base" "$flow") x (goal >= 2.0)"
echo "bench decode_summary_vs_libipt_insn = $(r "$base" "$summary") x (goal >= 2.0)"
echo "# decode --jobs $jobs (the host's CPUs): flow ${flowj} s, --stats ${statsj} s"
echo "bench decode_flow_jobs_vs_1 = $(r "$flow" "$flowj") x ($jobs threads; linear: $jobs)"
echo "bench decode_stats_jobs_vs_1 = $(r "$stats" "$statsj") x ($jobs threads; linear: $jobs)"
if [ -n "$pdata" ] && command -v perf > /dev/null; then
	for _ in $(seq "$reps"); do
		echo "perf $(t perf script -i "$pdata" --itrace=i0ns -F ip,sym)"
		echo "insn $(t "$it" decode --no-progress --insn "$pdata")"
	done > "$BUILD/bench-perf-script.txt"
	p=$(awk '$1 == "perf" { print $2 }' "$BUILD/bench-perf-script.txt" | min)
	i=$(awk '$1 == "insn" { print $2 }' "$BUILD/bench-perf-script.txt" | min)
	pins=$("$it" decode --summary "$pdata" 2> /dev/null |
		sed -n 's/^ *instructions: *\([0-9]*\).*/\1/p')
	cs="with capstone's disassembly"
	{ ldconfig -p || /sbin/ldconfig -p; } 2> /dev/null | grep -q 'libcapstone\.so' ||
		cs="without disassembly: no libcapstone"
	echo "# decode_vs_perf_script: $pdata, $(stat -c %s "$pdata") bytes," \
		"$pins instructions; $reps runs each, interleaved, min: perf script" \
		"--itrace=i0ns -F ip,sym $p s / itrace decode --insn $i s ($cs)"
	echo "bench decode_vs_perf_script = $(r "$p" "$i") x (goal >= 5)"
fi
