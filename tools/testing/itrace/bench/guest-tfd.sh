#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the guest (busybox sh), for `make bench`: sustained recording of the
# workload through the trace fd (`itrace record`, stop mode) and through
# the classic AUX area (Debian's `perf record`), the same AUX buffer size,
# REPS runs of each interleaved, the order alternating; first one
# loss-free reference run of each with REF_PAGES.  One line per run into
# $OUT/tfd.txt:
#   run=N tool=itrace|perf pages=P work_ns=T wall_ns=W bytes=B \
#     itrace_lost=L lost_bytes=LB aux=A aux_truncated=X \
#     aux_truncated_data=XD restarts=R
# work_ns: the workload's own CLOCK_MONOTONIC around its loop; wall_ns:
# the whole record command (stopwatch); bytes: trace bytes written to the
# output file; itrace_lost / lost_bytes / restarts: `itrace record`'s loss
# report (PERF_RECORD_ITRACE_LOST records, the bytes they count, re-enables);
# aux / aux_truncated / aux_truncated_data: PERF_RECORD_AUX records,
# those with PERF_AUX_FLAG_TRUNCATED, and those of them with a non-zero
# size (a stop; the driver also writes size-0 truncated records when a
# restart finds too little room) (perf: from `perf report -D`; itrace:
# truncated only, from its report).  The last trace-fd recording of the
# small buffer is kept as $OUT/last.itrace.
# /in/tparams: ROUNDS, REPS, PAGES, REF_PAGES, WORK, PERF_EVENT, and
# ITRACE_ARGS (more options of itrace record), WORK_ARGS (of the workload
# after ROUNDS: "-1 4" for four threads).
. /in/tparams
mkdir -p "$(dirname "$WORK")" && cp /in/work "$WORK" || exit 1
it=$ITRACE_BUILD/tools/itrace/itrace
sw=/in/stopwatch
perf=/usr/bin/perf
[ -x "$perf" ] || { echo "guest-tfd: no $perf in this initramfs"; exit 1; }
ns() { sed -n 's/.* ns=\([0-9]*\).*/\1/p' "$1"; }
wall() { sed -n 's/^wall_ns=\([0-9]*\).*/\1/p' /tmp/sw.txt; }

itrace_run() {	# itrace_run RUN PAGES
	rm -f /tmp/t.itrace
	# shellcheck disable=SC2086 # ITRACE_ARGS, WORK_ARGS: words
	"$sw" /tmp/sw.txt "$it" record $ITRACE_ARGS -m "$2" -o /tmp/t.itrace -- "$WORK" "$ROUNDS" $WORK_ARGS \
		> /tmp/t.out 2> /tmp/t.log || { cat /tmp/t.log; exit 1; }
	sed "s/^/# run $1 itrace: /" /tmp/t.log
	bytes=$(sed -n 's/.*recorded \([0-9]*\) bytes.*/\1/p' /tmp/t.log)
	set -- "$1" "$2" $(sed -n 's/.*trace lost: \([0-9]*\) PERF_RECORD_ITRACE_LOST (\([0-9]*\) bytes counted), \([0-9]*\) PERF_RECORD_AUX truncated, \([0-9]*\) restarts.*/\1 \2 \3 \4/p' /tmp/t.log)
	[ "$1" = ref ] || mv /tmp/t.itrace "$OUT/last.itrace"
	echo "run=$1 tool=itrace pages=$2 work_ns=$(ns /tmp/t.out) wall_ns=$(wall) bytes=$bytes itrace_lost=${3:-0} lost_bytes=${4:-0} aux=- aux_truncated=${5:-0} aux_truncated_data=- restarts=${6:-0}" >> "$OUT/tfd.txt"
	rm -f /tmp/t.itrace
}

perf_run() {	# perf_run RUN PAGES
	rm -f /tmp/p.data
	# shellcheck disable=SC2086
	HOME=/tmp "$sw" /tmp/sw.txt "$perf" record -e "$PERF_EVENT" -m ",$2" -o /tmp/p.data \
		-- "$WORK" "$ROUNDS" $WORK_ARGS > /tmp/p.out 2> /tmp/p.log || { cat /tmp/p.log; exit 1; }
	sed "s/^/# run $1 perf: /" /tmp/p.log
	w=$(wall)
	HOME=/tmp "$perf" report -D --no-itrace -i /tmp/p.data > /tmp/p.dump 2> /tmp/p.rep || {
		cat /tmp/p.rep; exit 1; }
	sed "s/^/# run $1 perf report: /" /tmp/p.rep
	bytes=0
	for s in $(sed -n 's/.*PERF_RECORD_AUXTRACE size: \(0x[0-9a-f]*\) .*/\1/p' /tmp/p.dump); do
		bytes=$((bytes + s))
	done
	aux=$(grep -c 'PERF_RECORD_AUX offset' /tmp/p.dump)
	trunc=0 tdata=0
	sed -n 's/.*PERF_RECORD_AUX offset: [0-9a-fx]* size: \([0-9a-fx]*\) flags: \([0-9a-fx]*\).*/\1 \2/p' \
		/tmp/p.dump > /tmp/p.aux
	while read -r sz f; do
		[ $((f & 1)) -eq 1 ] || continue
		trunc=$((trunc + 1))
		[ $((sz)) -gt 0 ] && tdata=$((tdata + 1))
	done < /tmp/p.aux
	[ "$1" = ref ] && HOME=/tmp "$perf" evlist -v -i /tmp/p.data 2>&1 | sed 's/^/# perf evlist: /'
	echo "run=$1 tool=perf pages=$2 work_ns=$(ns /tmp/p.out) wall_ns=$w bytes=$bytes itrace_lost=- lost_bytes=- aux=$aux aux_truncated=$trunc aux_truncated_data=$tdata restarts=-" >> "$OUT/tfd.txt"
	rm -f /tmp/p.data /tmp/p.dump
}

: > "$OUT/tfd.txt"
"$WORK" "$ROUNDS" $WORK_ARGS > /dev/null	# warm up
itrace_run ref "$REF_PAGES"
perf_run ref "$REF_PAGES"
i=0
while [ "$i" -lt "$REPS" ]; do
	for p in $PAGES; do
		if [ $((i % 2)) -eq 0 ]; then
			itrace_run "$i" "$p"; perf_run "$i" "$p"
		else
			perf_run "$i" "$p"; itrace_run "$i" "$p"
		fi
	done
	i=$((i + 1))
done
grep -E 'itrace|intel_pt|ToPA|PMI' /proc/interrupts | sed 's/^/# interrupts: /'
cat "$OUT/tfd.txt"
