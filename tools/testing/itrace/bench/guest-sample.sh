#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the guest (busybox sh), for `make bench` (bench/sample.sh):
#  1. FAULTS page faults sampled with 4 KiB of trace each by
#     PERF_SAMPLE_ITRACE, by PERF_SAMPLE_AUX of an intel_pt group leader,
#     and without trace, REPS times each, interleaved;
#  2. the workload's user-mode instructions counted once, for the period
#     that samples it at about 1 kHz;
#  3. the workload sampled at that period with and without 4 KiB of trace
#     per sample, REPS times each, interleaved.
# Lines "faults MODE ns=..." and "run MODE NS samples=S trace=T" into
# $OUT/sample.txt.
. /in/params
o=$OUT/sample.txt
sc=/in/samplecost
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
echo 100000 > /proc/sys/kernel/perf_event_max_sample_rate
ns() { sed -n 's/.* ns=\([0-9]*\).*/\1/p'; }
for m in itrace aux none; do	# warm up
	$sc faults $m "$FAULTS" > /dev/null || exit 1
done
i=0
while [ "$i" -lt "$REPS" ]; do
	for m in itrace aux none; do
		$sc faults $m "$FAULTS" >> "$o" || exit 1
	done
	i=$((i + 1))
done
/in/work "$ROUNDS" > /dev/null || exit 1	# warm up
$sc count /in/work "$ROUNDS" > /tmp/count.out || exit 1
insns=$(sed -n 's/^count insns=//p' /tmp/count.out)
t=$(ns < /tmp/count.out)
period=$(awk -v i="$insns" -v t="$t" 'BEGIN { printf "%d", i * 1000000 / t }')
echo "period $period insns=$insns ns=$t" >> "$o"
run() {
	$sc run "$1" "$period" /in/work "$ROUNDS" > /tmp/run.out || exit 1
	echo "run $1 $(ns < /tmp/run.out) $(sed -n 's/^run [a-z]* //p' /tmp/run.out)" >> "$o"
}
i=0
while [ "$i" -lt "$REPS" ]; do
	if [ $((i % 2)) -eq 0 ]; then run itrace; run none; else run none; run itrace; fi
	i=$((i + 1))
done
cat "$o"
